package cdevice_test

import (
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/godevarrow/godevarrow/gosrc/cdevice"
	"github.com/godevarrow/godevarrow/gosrc/cschema"
)

func benchArray(b *testing.B) *cdevice.Array {
	bld := array.NewInt64Builder(cdevice.Allocator)
	defer bld.Release()
	for i := 0; i < 1000; i++ {
		bld.Append(int64(i))
	}
	arr := bld.NewArray()
	defer arr.Release()
	a, err := cdevice.FromArrow(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, arr)
	if err != nil {
		b.Fatal(err)
	}
	return a
}

// BenchmarkRoundTrip measures export + import + release of a one-column array,
// the fixed cost of one exchange.
func BenchmarkRoundTrip(b *testing.B) {
	a := benchArray(b)
	defer a.Release()
	var cs cschema.CArrowSchema
	var ca cdevice.CArrowDeviceArray
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := cdevice.ExportDeviceArray(a, &ca); err != nil {
			b.Fatal(err)
		}
		if err := cschema.ExportSchema(a.Schema(), &cs); err != nil {
			b.Fatal(err)
		}
		s, err := cschema.ImportSchema(&cs)
		if err != nil {
			b.Fatal(err)
		}
		back, err := cdevice.ImportDeviceArray(&ca, s)
		if err != nil {
			b.Fatal(err)
		}
		back.Release()
	}
}
