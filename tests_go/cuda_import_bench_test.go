package tests_go

import (
	"fmt"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/godevarrow/godevarrow/gosrc/cdevice"
	"github.com/godevarrow/godevarrow/gosrc/cschema"
	fc "github.com/godevarrow/godevarrow/tests_go/fakecudactl"
)

// wideBatch is the bench's 100-column batch: int64, float64 and string
// columns in turn, 1,000 rows each.
func wideBatch(tb testing.TB) *cdevice.Array {
	fields := make([]arrow.Field, 100)
	cols := make([]arrow.Array, 100)
	for i := range cols {
		switch i % 3 {
		case 0:
			b := array.NewInt64Builder(cdevice.Allocator)
			for j := 0; j < 1000; j++ {
				b.Append(int64(j))
			}
			cols[i], fields[i] = b.NewArray(), arrow.Field{Name: fmt.Sprintf("c%d", i), Type: arrow.PrimitiveTypes.Int64, Nullable: true}
			b.Release()
		case 1:
			b := array.NewFloat64Builder(cdevice.Allocator)
			for j := 0; j < 1000; j++ {
				b.Append(float64(j))
			}
			cols[i], fields[i] = b.NewArray(), arrow.Field{Name: fmt.Sprintf("c%d", i), Type: arrow.PrimitiveTypes.Float64, Nullable: true}
			b.Release()
		default:
			b := array.NewStringBuilder(cdevice.Allocator)
			for j := 0; j < 1000; j++ {
				b.Append(fmt.Sprintf("s%d", j))
			}
			cols[i], fields[i] = b.NewArray(), arrow.Field{Name: fmt.Sprintf("c%d", i), Type: arrow.BinaryTypes.String, Nullable: true}
			b.Release()
		}
	}
	rec := array.NewRecord(arrow.NewSchema(fields, nil), cols, 1000)
	for _, c := range cols {
		c.Release()
	}
	defer rec.Release()
	a, err := cdevice.FromRecord(rec)
	if err != nil {
		tb.Fatal(err)
	}
	return a
}

func benchImport(b *testing.B, a *cdevice.Array) {
	s := a.Schema()
	var ca cdevice.CArrowDeviceArray
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := cdevice.ExportDeviceArray(a, &ca); err != nil {
			b.Fatal(err)
		}
		back, err := cdevice.ImportDeviceArray(&ca, s)
		if err != nil {
			b.Fatal(err)
		}
		back.Release()
	}
}

// benchHeldImport: export + ImportDevicePair (held in C once the schema is
// in the table) + release.
func benchHeldImport(b *testing.B, a *cdevice.Array) {
	var cs cschema.CArrowSchema
	var ca cdevice.CArrowDeviceArray
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := cschema.ExportSchema(a.Schema(), &cs); err != nil {
			b.Fatal(err)
		}
		if err := cdevice.ExportDeviceArray(a, &ca); err != nil {
			b.Fatal(err)
		}
		held, back, err := cdevice.ImportDevicePair(&cs, &ca)
		switch {
		case err != nil:
			b.Fatal(err)
		case held != nil:
			cdevice.ReleaseHeld(held)
		default:
			back.Release()
		}
	}
}

// BenchmarkImportWide: export + import + release of the 100-column batch,
// on the CPU and on (fake) CUDA, through the Go import and the held one.
func BenchmarkImportWide(b *testing.B) {
	fc.Require(b)
	host := wideBatch(b)
	defer host.Release()
	b.Run("cpu", func(b *testing.B) { benchImport(b, host) })
	dev, err := cdevice.CopyToDevice(host, cuda0)
	if err != nil {
		b.Fatal(err)
	}
	defer dev.Release()
	b.Run("cuda", func(b *testing.B) { benchImport(b, dev) })
	b.Run("cuda-held", func(b *testing.B) { benchHeldImport(b, dev) })
}
