package tests_go

import (
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/godevarrow/godevarrow/gosrc/cdevice"
	"github.com/godevarrow/godevarrow/gosrc/cschema"
	"github.com/godevarrow/godevarrow/gosrc/device"
	"github.com/godevarrow/godevarrow/gosrc/dlpack"
	fc "github.com/godevarrow/godevarrow/tests_go/fakecudactl"
)

// A DLPack exchange of a 1,000-value CUDA array with the producer and the
// consumer both in Go: the export (the consumer's stream made to wait for
// the array's event) and the import (an event recorded on that stream), the
// Go part of `gda.array(x)` and `cupy.from_dlpack(array)` (docs/benchmarks.md's
// DLPack rows).
func BenchmarkDLPackExchangeCUDA(b *testing.B) {
	fc.Require(b)
	bld := array.NewInt64Builder(memory.DefaultAllocator)
	for i := 0; i < 1000; i++ {
		bld.Append(int64(i))
	}
	values := bld.NewArray()
	bld.Release()
	schema, err := cschema.NewSchema("l", "", cschema.FlagNullable, arrow.Metadata{}, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	host, err := cdevice.NewArray(schema, values.Data(), device.Host)
	values.Release()
	if err != nil {
		b.Fatal(err)
	}
	defer host.Release()
	a, err := cdevice.CopyToDevice(host, cuda0)
	if err != nil {
		b.Fatal(err)
	}
	defer a.Release()
	backend, err := device.BackendFor(device.CUDA)
	if err != nil {
		b.Fatal(err)
	}
	s, err := backend.ForeignStream(0, 1)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p, err := dlpack.Export(a, dlpack.ExportOptions{Versioned: true, Stream: s})
		if err != nil {
			b.Fatal(err)
		}
		got, err := dlpack.Import(p, true, s)
		if err != nil {
			b.Fatal(err)
		}
		got.Release()
	}
}
