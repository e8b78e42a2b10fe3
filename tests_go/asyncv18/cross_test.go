package asyncv18

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"
	"unsafe"

	v18 "github.com/apache/arrow-go/v18/arrow"
	a18 "github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/cdata"
	m18 "github.com/apache/arrow-go/v18/arrow/memory"
	v17 "github.com/apache/arrow/go/v17/arrow"
	a17 "github.com/apache/arrow/go/v17/arrow/array"
	m17 "github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/godevarrow/godevarrow/gosrc/cdevice"
	"github.com/godevarrow/godevarrow/gosrc/device"
	"github.com/godevarrow/godevarrow/gosrc/streams"
)

const batches = 5

// rows of batch k: ids k*10..k*10+2, names "r<id>", a null every third row
func want(k int) []string {
	var out []string
	for i := 0; i < 3; i++ {
		id := k*10 + i
		if id%3 == 0 {
			out = append(out, fmt.Sprintf("%d:null", id))
		} else {
			out = append(out, fmt.Sprintf("%d:r%d", id, id))
		}
	}
	return out
}

func ourStream(t *testing.T) cdevice.ArrayReader {
	sch := v17.NewSchema([]v17.Field{{Name: "id", Type: v17.PrimitiveTypes.Int64}, {Name: "name", Type: v17.BinaryTypes.String, Nullable: true}}, nil)
	var arrays []*cdevice.Array
	for k := 0; k < batches; k++ {
		b := a17.NewRecordBuilder(m17.DefaultAllocator, sch)
		for i := 0; i < 3; i++ {
			id := k*10 + i
			b.Field(0).(*a17.Int64Builder).Append(int64(id))
			if id%3 == 0 {
				b.Field(1).(*a17.StringBuilder).AppendNull()
			} else {
				b.Field(1).(*a17.StringBuilder).Append(fmt.Sprintf("r%d", id))
			}
		}
		rec := b.NewRecord()
		a, err := cdevice.FromRecord(rec)
		if err != nil {
			t.Fatal(err)
		}
		rec.Release()
		b.Release()
		arrays = append(arrays, a)
	}
	r, err := cdevice.NewListReader(arrays[0].Schema(), device.CPU, arrays...)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range arrays {
		a.Release()
	}
	return r
}

func rows18(rec v18.Record) []string {
	ids := rec.Column(0).(*a18.Int64)
	names := rec.Column(1).(*a18.String)
	var out []string
	for i := 0; i < int(rec.NumRows()); i++ {
		if names.IsNull(i) {
			out = append(out, fmt.Sprintf("%d:null", ids.Value(i)))
		} else {
			out = append(out, fmt.Sprintf("%d:%s", ids.Value(i), names.Value(i)))
		}
	}
	return out
}

func rows17(rec v17.Record) []string {
	ids := rec.Column(0).(*a17.Int64)
	names := rec.Column(1).(*a17.String)
	var out []string
	for i := 0; i < int(rec.NumRows()); i++ {
		if names.IsNull(i) {
			out = append(out, fmt.Sprintf("%d:null", ids.Value(i)))
		} else {
			out = append(out, fmt.Sprintf("%d:%s", ids.Value(i), names.Value(i)))
		}
	}
	return out
}

func TestOurProducerIntoArrowGoV18Consumer(t *testing.T) {
	h := NewHandler()
	ch := cdata.CreateAsyncDeviceStreamHandler(context.Background(), 2, (*cdata.CArrowAsyncDeviceStreamHandler)(h))
	if err := streams.ExportAsyncDeviceStream(ourStream(t), streams.AsyncHandlerAt(h), streams.AsyncExportOptions{}); err != nil {
		t.Fatal(err)
	}
	stream := <-ch
	if stream.Err != nil {
		t.Fatal(stream.Err)
	}
	if stream.Schema.NumFields() != 2 || stream.Schema.Field(1).Name != "name" {
		t.Fatalf("schema %s", stream.Schema)
	}
	k := 0
	for msg := range stream.Stream {
		if msg.Err != nil {
			t.Fatal(msg.Err)
		}
		if got := rows18(msg.Record); fmt.Sprint(got) != fmt.Sprint(want(k)) {
			t.Errorf("batch %d: %v, want %v", k, got, want(k))
		}
		msg.Record.Release()
		k++
	}
	if k != batches {
		t.Fatalf("%d batches", k)
	}
	waitIdle(t)
	Free(h)
}

func TestArrowGoV18ProducerIntoOurConsumer(t *testing.T) {
	sch := v18.NewSchema([]v18.Field{{Name: "id", Type: v18.PrimitiveTypes.Int64}, {Name: "name", Type: v18.BinaryTypes.String, Nullable: true}}, nil)
	recs := make(chan cdata.RecordMessage, batches)
	for k := 0; k < batches; k++ {
		b := a18.NewRecordBuilder(m18.DefaultAllocator, sch)
		for i := 0; i < 3; i++ {
			id := k*10 + i
			b.Field(0).(*a18.Int64Builder).Append(int64(id))
			if id%3 == 0 {
				b.Field(1).(*a18.StringBuilder).AppendNull()
			} else {
				b.Field(1).(*a18.StringBuilder).Append(fmt.Sprintf("r%d", id))
			}
		}
		recs <- cdata.RecordMessage{Record: b.NewRecord()}
		b.Release()
	}
	close(recs)
	reader, h, err := streams.NewAsyncReader(2)
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		errc <- cdata.ExportAsyncRecordBatchStream(sch, recs, (*cdata.CArrowAsyncDeviceStreamHandler)(unsafe.Pointer(h)))
	}()
	if err := reader.Wait(); err != nil {
		t.Fatal(err)
	}
	k := 0
	for {
		a, err := reader.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		rec, err := a.ToRecord()
		if err != nil {
			t.Fatal(err)
		}
		if got := rows17(rec); fmt.Sprint(got) != fmt.Sprint(want(k)) {
			t.Errorf("batch %d: %v, want %v", k, got, want(k))
		}
		rec.Release()
		a.Release()
		k++
	}
	if k != batches {
		t.Fatalf("%d batches", k)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	reader.Close()
	waitIdle(t)
}

func waitIdle(t *testing.T) {
	deadline := time.Now().Add(30 * time.Second) // a hang guard: a loaded machine can take seconds
	for time.Now().Before(deadline) {
		st, as := cdevice.LiveStats(), streams.LiveStats()
		if as.AsyncHandlers == 0 && as.AsyncTasks == 0 && st.Arrays == 0 && st.ImportedArrays == 0 && st.ExportedArrays == 0 {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Errorf("still live: %+v", cdevice.LiveStats())
}
