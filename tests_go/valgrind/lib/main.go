// Package main is built with -buildmode=c-shared for the valgrind harness:
// a C program exports, walks, imports and releases Arrow data through
// godevarrow's C Data Interface, under memcheck.
package main

/*
#include "../../../gosrc/include/arrow-c-abi.h"
*/
import "C"

import (
	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/godevarrow/godevarrow/gosrc/cdevice"
	"github.com/godevarrow/godevarrow/gosrc/cschema"
)

func batch() *cdevice.Array {
	mem := cdevice.Allocator
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "i", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64), Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, sch)
	defer b.Release()
	for r := 0; r < 100; r++ {
		b.Field(0).(*array.Int32Builder).Append(int32(r))
		if r%7 == 0 {
			b.Field(1).(*array.StringBuilder).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append("value")
		}
		lb := b.Field(2).(*array.ListBuilder)
		lb.Append(true)
		lb.ValueBuilder().(*array.Int64Builder).AppendValues([]int64{int64(r), 2}, nil)
	}
	rec := b.NewRecord()
	defer rec.Release()
	a, err := cdevice.FromRecord(rec)
	if err != nil {
		panic(err)
	}
	return a
}

//export vgExport
func vgExport(s *C.struct_ArrowSchema, a *C.struct_ArrowArray) C.int {
	arr := batch()
	defer arr.Release()
	if cdevice.ExportArray(arr, cdevice.ArrayAt(unsafePointer(a))) != nil {
		return 1
	}
	if cschema.ExportSchema(arr.Schema(), cschema.SchemaAt(unsafePointer(s))) != nil {
		return 1
	}
	return 0
}

//export vgImport
func vgImport(s *C.struct_ArrowSchema, a *C.struct_ArrowArray) C.int {
	schema, err := cschema.ImportSchema(cschema.SchemaAt(unsafePointer(s)))
	if err != nil {
		return 1
	}
	arr, err := cdevice.ImportArray(cdevice.ArrayAt(unsafePointer(a)), schema)
	if err != nil {
		return 2
	}
	defer arr.Release()
	if cdevice.Validate(arr, true) != nil {
		return 3
	}
	return 0
}

//export vgLive
func vgLive() C.longlong {
	st := cdevice.LiveStats()
	return C.longlong(st.Arrays + st.ExportedArrays + st.ExportedSchemas + st.ImportedArrays + st.AllocatedBytes)
}

func main() {}
