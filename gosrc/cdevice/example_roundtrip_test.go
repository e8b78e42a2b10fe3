package cdevice_test

import (
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/godevarrow/godevarrow/gosrc/cdevice"
	"github.com/godevarrow/godevarrow/gosrc/cschema"
)

// An Arrow Go record goes out through the C Device Data Interface and comes
// back: the structs could equally be handed to any C, C++ or Python consumer.
func Example() {
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	b.Field(0).(*array.Int64Builder).AppendValues([]int64{1, 2, 3}, nil)
	rec := b.NewRecord()
	b.Release()
	defer rec.Release()

	batch, err := cdevice.FromRecord(rec)
	if err != nil {
		panic(err)
	}
	var cSchema cschema.CArrowSchema
	var cArray cdevice.CArrowDeviceArray
	if err := cschema.ExportSchema(batch.Schema(), &cSchema); err != nil {
		panic(err)
	}
	if err := cdevice.ExportDeviceArray(batch, &cArray); err != nil {
		panic(err)
	}
	batch.Release() // the exported structs keep the data alive

	imported, err := cschema.ImportSchema(&cSchema)
	if err != nil {
		panic(err)
	}
	back, err := cdevice.ImportDeviceArray(&cArray, imported)
	if err != nil {
		panic(err)
	}
	defer back.Release()
	out, _ := back.ToRecord()
	defer out.Release()
	fmt.Println(back.Schema(), back.Device())
	fmt.Println(out.Column(0))
	// Output:
	// struct<x: int64> not null cpu
	// [1 2 3]
}

// Cast applies a requested schema, as a PyCapsule producer does.
func ExampleCast() {
	b := array.NewInt32Builder(memory.DefaultAllocator)
	b.AppendValues([]int32{7, 8}, nil)
	arr := b.NewArray()
	b.Release()
	defer arr.Release()
	a, _ := cdevice.FromArrow(arrow.Field{Name: "n", Type: arrow.PrimitiveTypes.Int32, Nullable: true}, arr)
	defer a.Release()
	target, _ := cschema.NewSchema("l", "n", cschema.FlagNullable, arrow.Metadata{}, nil, nil)
	cast, err := cdevice.Cast(a, target)
	if err != nil {
		panic(err)
	}
	defer cast.Release()
	values, _ := cast.ToArrow()
	defer values.Release()
	fmt.Println(cast.Schema(), values)
	// Output: n: int64 [7 8]
}
