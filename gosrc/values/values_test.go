package values_test

import (
	"errors"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/godevarrow/godevarrow/gosrc/cdevice"
	"github.com/godevarrow/godevarrow/gosrc/errs"
	"github.com/godevarrow/godevarrow/gosrc/values"
)

func batchOf(t testing.TB, xs ...int64) *cdevice.Array {
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues(xs, nil)
	rec := b.NewRecord()
	defer rec.Release()
	a, err := cdevice.FromRecord(rec)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestEncodeValuesRefusesOutOfRange(t *testing.T) {
	a := batchOf(t, 1, 2)
	defer a.Release()
	if _, err := values.EncodeValues(a, 1, 2); !errors.Is(err, errs.ErrInvalid) {
		t.Fatalf("values [1, 3) of 2: %v", err)
	}
	b, err := values.EncodeValues(a, 0, 2)
	if err != nil || b[0] != values.GDAValueList {
		t.Fatalf("%v %v", b, err)
	}
}
