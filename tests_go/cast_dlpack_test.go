package tests_go

import (
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/godevarrow/godevarrow/gosrc/cdevice"
	"github.com/godevarrow/godevarrow/gosrc/cschema"
	"github.com/godevarrow/godevarrow/gosrc/dlpack"
	"github.com/godevarrow/godevarrow/gosrc/errs"
	cb "github.com/godevarrow/godevarrow/tests_go/cboundary"
)

func schemaOf(t *testing.T, f arrow.Field) *cschema.Schema {
	t.Helper()
	s, err := cschema.SchemaFromField(f)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestCasts(t *testing.T) {
	baseline(t)
	ints := importC(t, cb.Int32)
	defer ints.Release()
	same, err := cdevice.Cast(ints, ints.Schema())
	if err != nil || same != ints {
		t.Fatalf("the same schema must give the same array: %v", err)
	}
	same.Release()
	wide, err := cdevice.Cast(ints, schemaOf(t, arrow.Field{Name: "ints", Type: arrow.PrimitiveTypes.Int64, Nullable: true}))
	if err != nil {
		t.Fatal(err)
	}
	arr, _ := wide.ToArrow()
	if arr.String() != "[0 1 (null) 3 4 (null) 6 7 (null) 9]" || arr.DataType().ID() != arrow.INT64 {
		t.Errorf("int32->int64 gave %s %s", arr.DataType(), arr)
	}
	arr.Release()
	wide.Release()

	words := importC(t, cb.Utf8)
	defer words.Release()
	large, err := cdevice.Cast(words, schemaOf(t, arrow.Field{Name: "words", Type: arrow.BinaryTypes.LargeString, Nullable: true}))
	if err != nil {
		t.Fatal(err)
	}
	arr, _ = large.ToArrow()
	if arr.(*array.LargeString).Value(3) != "delta" {
		t.Errorf("utf8->large_utf8 gave %s", arr)
	}
	arr.Release()
	large.Release()

	st := importC(t, cb.Struct)
	defer st.Release()
	for _, target := range []arrow.DataType{
		arrow.StructOf(arrow.Field{Name: "i", Type: arrow.PrimitiveTypes.Int32, Nullable: true}),
		arrow.StructOf(arrow.Field{Name: "i", Type: arrow.PrimitiveTypes.Int32, Nullable: true}, arrow.Field{Name: "z", Type: arrow.BinaryTypes.String, Nullable: true}),
		arrow.PrimitiveTypes.Int64,
	} {
		if _, err := cdevice.Cast(st, schemaOf(t, arrow.Field{Type: target})); !errors.Is(err, errs.ErrInvalid) {
			t.Errorf("struct -> %s: got %v, want ErrInvalid", target, err)
		}
	}
	if _, err := cdevice.Cast(ints, schemaOf(t, arrow.Field{Type: arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int64})})); !errors.Is(err, errs.ErrInvalid) {
		t.Errorf("int32 -> struct: got %v", err)
	}
}

func TestDLPackRoundTrip(t *testing.T) {
	baseline(t)
	cb.ResetReleases()
	s, a := cb.NewSchema(), cb.NewArray()
	defer cb.Free(s)
	defer cb.Free(a)
	cb.ProduceInt32(s, a, 6, 2, false)
	schema, _ := cschema.ImportSchema(s)
	arr, err := cdevice.ImportArray(a, schema)
	if err != nil {
		t.Fatal(err)
	}
	tensor, err := dlpack.Export(arr, dlpack.ExportOptions{Versioned: true})
	if err != nil {
		t.Fatal(err)
	}
	arr.Release()
	back, err := dlpack.Import(tensor, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	values, _ := back.ToArrow()
	if values.String() != "[2 3 4 5 6 7]" {
		t.Errorf("round trip gave %s", values)
	}
	values.Release()
	if cb.Releases() != 1 || dlpack.LiveExports() != 1 {
		t.Errorf("released too early: %d C releases, %d live tensors", cb.Releases(), dlpack.LiveExports())
	}
	back.Release()
	if cb.Releases() != 2 || dlpack.LiveExports() != 0 {
		t.Errorf("after the last reference: %d C releases, %d live tensors", cb.Releases(), dlpack.LiveExports())
	}

	withNulls := importC(t, cb.Int32)
	defer withNulls.Release()
	if _, err := dlpack.Export(withNulls, dlpack.ExportOptions{}); err == nil || !strings.Contains(err.Error(), "null") {
		t.Errorf("export of an array with nulls: %v", err)
	}
}
