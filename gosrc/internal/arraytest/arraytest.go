// Package arraytest makes the small arrays the gosrc packages' tests share.
package arraytest

import (
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/godevarrow/godevarrow/gosrc/cdevice"
)

// Int64Batch is a record batch of one nullable int64 column "x" holding xs
// (no nulls), on the host; the caller releases it.
func Int64Batch(t testing.TB, xs ...int64) *cdevice.Array {
	t.Helper()
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
