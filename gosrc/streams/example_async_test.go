package streams_test

import (
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/godevarrow/godevarrow/gosrc/cdevice"
	"github.com/godevarrow/godevarrow/gosrc/cschema"
	"github.com/godevarrow/godevarrow/gosrc/device"
	"github.com/godevarrow/godevarrow/gosrc/streams"
)

// An async device stream crosses the C ABI: NewAsyncReader makes a C
// ArrowAsyncDeviceStreamHandler that any producer (here godevarrow's own)
// drives from its own goroutine, with back-pressure through request(n).
func ExampleExportAsyncDeviceStream() {
	schema, _ := cschema.SchemaFromField(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int64})
	var arrays []*cdevice.Array
	for k := int64(0); k < 3; k++ {
		b := array.NewInt64Builder(memory.DefaultAllocator)
		b.AppendValues([]int64{k, k * 10}, nil)
		arr := b.NewArray()
		a, _ := cdevice.NewArray(schema, arr.Data(), device.Host)
		arrays = append(arrays, a)
		arr.Release()
		b.Release()
	}
	source, _ := cdevice.NewListReader(schema, device.CPU, arrays...)
	for _, a := range arrays {
		a.Release()
	}

	reader, handler, _ := streams.NewAsyncReader(2) // at most 2 arrays requested ahead
	_ = streams.ExportAsyncDeviceStream(source, handler, streams.AsyncExportOptions{
		AdditionalMetadata: map[string]string{"batches": "3"},
	})
	fmt.Println("metadata:", reader.AdditionalMetadata()["batches"])
	for {
		a, err := reader.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		values, _ := a.ToArrow()
		fmt.Println(values)
		values.Release()
		a.Release()
	}
	reader.Close()
	// Output:
	// metadata: 3
	// [0 0]
	// [1 10]
	// [2 20]
}
