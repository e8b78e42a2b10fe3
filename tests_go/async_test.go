package tests_go

import (
	"errors"
	"io"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/godevarrow/godevarrow/gosrc/cdevice"
	"github.com/godevarrow/godevarrow/gosrc/cschema"
	"github.com/godevarrow/godevarrow/gosrc/device"
	"github.com/godevarrow/godevarrow/gosrc/errs"
	"github.com/godevarrow/godevarrow/gosrc/streams"
	"github.com/godevarrow/godevarrow/tests_go/casync"
	cb "github.com/godevarrow/godevarrow/tests_go/cboundary"
)

// int64Reader is a stream of n one-value int64 arrays [0], [1], ...; with
// failAt >= 0 it fails there.
func int64Reader(t *testing.T, n, failAt int) cdevice.ArrayReader {
	t.Helper()
	s, err := cschema.SchemaFromField(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true})
	if err != nil {
		t.Fatal(err)
	}
	var arrays []*cdevice.Array
	for k := 0; k < n; k++ {
		b := array.NewInt64Builder(memory.DefaultAllocator)
		b.Append(int64(k))
		arr := b.NewArray()
		a, err := cdevice.NewArray(s, arr.Data(), device.Host)
		if err != nil {
			t.Fatal(err)
		}
		arr.Release()
		b.Release()
		arrays = append(arrays, a)
	}
	r, err := cdevice.NewListReader(s, device.CPU, arrays...)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range arrays {
		a.Release()
	}
	if failAt < 0 {
		return r
	}
	return &failingReader{ListReader: r, failAt: failAt}
}

func waitRelease(t *testing.T, c *casync.Consumer) casync.Observed {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	for time.Now().Before(deadline) {
		if o := c.Observed(); o.Release > 0 {
			time.Sleep(5 * time.Millisecond) // nothing may follow release
			return c.Observed()
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("the producer never called release")
	return casync.Observed{}
}

func produceInto(t *testing.T, cfg casync.Config, n, failAt int, opts streams.AsyncExportOptions) casync.Observed {
	t.Helper()
	c := casync.NewConsumer(cfg)
	defer c.Free()
	if err := streams.ExportAsyncDeviceStream(int64Reader(t, n, failAt), c.Handler(), opts); err != nil {
		t.Fatal(err)
	}
	o := waitRelease(t, c)
	if o.Release != 1 || o.CallsAfterRelease != 0 || o.Overlap != 0 {
		t.Errorf("release %d times, %d calls after it, %d overlapping callbacks", o.Release, o.CallsAfterRelease, o.Overlap)
	}
	return o
}

func TestAsyncProducerSchemaFirstWithProducerSet(t *testing.T) {
	baseline(t)
	o := produceInto(t, casync.Config{InitialRequest: 100, FailAtTask: -1, CancelAtTask: -1}, 5, -1, streams.AsyncExportOptions{})
	if o.OnSchema != 1 || !o.ProducerSetBeforeSchema {
		t.Errorf("on_schema %d times, producer set before it: %v", o.OnSchema, o.ProducerSetBeforeSchema)
	}
	if o.OnNextTask != 5 || o.EndMarker != 1 || o.OnError != 0 || o.Rows != 0+1+2+3+4 {
		t.Errorf("observed %+v", o)
	}
}

func TestAsyncProducerHonoursBackPressure(t *testing.T) {
	baseline(t)
	c := casync.NewConsumer(casync.Config{InitialRequest: 2, FailAtTask: -1, CancelAtTask: -1})
	defer c.Free()
	if err := streams.ExportAsyncDeviceStream(int64Reader(t, 10, -1), c.Handler(), streams.AsyncExportOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the 2 requested tasks", func() bool { return c.Observed().OnNextTask >= 2 })
	// A producer that ignores the request shows in this window as a third
	// task; the wait can only let a failure surface, never cause one.
	time.Sleep(50 * time.Millisecond)
	if o := c.Observed(); o.OnNextTask != 2 || o.TasksBeyondRequest != 0 {
		t.Fatalf("requested 2, got %d tasks (%d beyond the request)", o.OnNextTask, o.TasksBeyondRequest)
	}
	// the consumer may never ask again; the test cancels through the producer it was given
	// the consumer extracts each task inside on_next_task, after counting it
	waitFor(t, "both tasks extracted", func() bool { return streams.LiveStats().AsyncTasks == 0 })
	h := c.Handler()
	streams.CancelAsyncProducer(h)
	o := waitRelease(t, c)
	if o.OnError != 0 {
		t.Errorf("a cancel must not call on_error: %+v", o)
	}
}

func TestAsyncProducerRequestFromInsideCallbacks(t *testing.T) {
	baseline(t)
	o := produceInto(t, casync.Config{InitialRequest: 1, RequestInTask: true, FailAtTask: -1, CancelAtTask: -1}, 20, -1, streams.AsyncExportOptions{})
	if o.OnNextTask != 20 || o.EndMarker != 1 || o.TasksBeyondRequest != 0 {
		t.Errorf("observed %+v", o)
	}
}

func TestAsyncProducerRejectsNonPositiveRequests(t *testing.T) {
	for _, n := range []int64{0, -1} {
		baseline(t)
		o := produceInto(t, casync.Config{InitialRequest: n, FailAtTask: -1, CancelAtTask: -1}, 3, -1, streams.AsyncExportOptions{})
		if o.OnError != 1 || o.ErrorCode != int(syscall.EINVAL) || !strings.Contains(o.ErrorMessage, "positive") || o.OnNextTask != 0 {
			t.Errorf("request(%d): %+v", n, o)
		}
	}
}

func TestAsyncProducerCancelIsIdempotentAndQuiet(t *testing.T) {
	baseline(t)
	o := produceInto(t, casync.Config{InitialRequest: 100, FailAtTask: -1, CancelAtTask: 1}, 50, -1, streams.AsyncExportOptions{})
	if o.OnError != 0 || o.EndMarker != 0 || o.OnNextTask >= 50 {
		t.Errorf("after cancel: %+v", o)
	}
}

func TestAsyncProducerCancelFromManyThreads(t *testing.T) {
	baseline(t)
	c := casync.NewConsumer(casync.Config{InitialRequest: 1, FailAtTask: -1, CancelAtTask: -1})
	defer c.Free()
	if err := streams.ExportAsyncDeviceStream(int64Reader(t, 1000, -1), c.Handler(), streams.AsyncExportOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
	h := c.Handler()
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); streams.CancelAsyncProducer(h) }()
	}
	wg.Wait()
	if o := waitRelease(t, c); o.OnError != 0 {
		t.Errorf("%+v", o)
	}
}

func TestAsyncProducerErrorThenRelease(t *testing.T) {
	baseline(t)
	o := produceInto(t, casync.Config{InitialRequest: 100, FailAtTask: -1, CancelAtTask: -1}, 10, 3, streams.AsyncExportOptions{})
	if o.OnNextTask != 3 || o.OnError != 1 || o.ErrorCode != int(syscall.EPROTO) || !strings.Contains(o.ErrorMessage, "on purpose") {
		t.Errorf("%+v", o)
	}
}

func TestAsyncProducerStopsWhenTheConsumerFails(t *testing.T) {
	baseline(t)
	o := produceInto(t, casync.Config{InitialRequest: 100, FailAtTask: 2, CancelAtTask: -1}, 10, -1, streams.AsyncExportOptions{})
	if o.OnNextTask != 3 || o.OnError != 0 || o.EndMarker != 0 {
		t.Errorf("after a failing on_next_task only release may follow: %+v", o)
	}
	o = produceInto(t, casync.Config{InitialRequest: 100, FailSchema: true, FailAtTask: -1, CancelAtTask: -1}, 10, -1, streams.AsyncExportOptions{})
	if o.OnNextTask != 0 || o.OnError != 0 {
		t.Errorf("after a failing on_schema only release may follow: %+v", o)
	}
}

func TestAsyncProducerMetadata(t *testing.T) {
	baseline(t)
	o := produceInto(t, casync.Config{InitialRequest: 100, FailAtTask: -1, CancelAtTask: -1}, 3, -1, streams.AsyncExportOptions{
		AdditionalMetadata: map[string]string{"rows": "3"},
		TaskMetadata:       func(k int) map[string]string { return map[string]string{"k": string(rune('0' + k))} },
	})
	if !o.AdditionalMetadata || !o.TaskMetadata {
		t.Errorf("metadata not seen: %+v", o)
	}
}

func TestAsyncConsumerFromACProducer(t *testing.T) {
	baseline(t)
	r, h, err := streams.NewAsyncReader(2)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan casync.ProducerResult)
	go func() { done <- casync.RunProducer(h, 7, -1) }()
	var got []int64
	eachArray(t, r.Next, func(_ int, a *cdevice.Array) {
		arr, _ := a.ToArrow()
		got = append(got, arr.(*array.Int64).Value(0))
		arr.Release()
	})
	res := <-done
	if len(got) != 7 || got[6] != 6 {
		t.Fatalf("got %v", got)
	}
	if res.Requests < 2 || res.Cancels != 0 {
		t.Errorf("producer saw %+v", res)
	}
	r.Close()
}

func TestAsyncConsumerErrorArrivesAfterEarlierArrays(t *testing.T) {
	baseline(t)
	r, h, err := streams.NewAsyncReader(1)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan casync.ProducerResult)
	go func() { done <- casync.RunProducer(h, 10, 4) }()
	defer func() { <-done }() // its release, before the baseline check
	n := 0
	for {
		var a *cdevice.Array
		if a, err = r.Next(); err != nil {
			break
		}
		a.Release()
		n++
	}
	var se *errs.StreamError
	if n != 4 || !errors.As(err, &se) || se.Errno != 5 || !strings.Contains(se.Msg, "on purpose") {
		t.Fatalf("%d arrays then %v", n, err)
	}
	r.Close()
}

func TestAsyncConsumerCloseCancels(t *testing.T) {
	baseline(t)
	r, h, err := streams.NewAsyncReader(1)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan casync.ProducerResult)
	go func() { done <- casync.RunProducer(h, 1000, -1) }()
	a, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	a.Release()
	r.Close()
	select {
	case res := <-done:
		if res.Cancels != 1 {
			t.Errorf("cancel called %d times", res.Cancels)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the producer did not stop after Close")
	}
}

func TestAsyncOurProducerFeedsOurConsumer(t *testing.T) {
	baseline(t)
	for _, p := range []cb.Producer{cb.Int32, cb.Utf8, cb.Struct, cb.List, cb.Dictionary} {
		a := importC(t, p)
		r, err := cdevice.NewListReader(a.Schema(), device.CPU, a, a, a)
		if err != nil {
			t.Fatal(err)
		}
		reader, h, err := streams.NewAsyncReader(2)
		if err != nil {
			t.Fatal(err)
		}
		if err := streams.ExportAsyncDeviceStream(r, h, streams.AsyncExportOptions{AdditionalMetadata: map[string]string{"n": "3"}}); err != nil {
			t.Fatal(err)
		}
		if !reader.Schema().Equal(a.Schema()) || reader.AdditionalMetadata()["n"] != "3" {
			t.Errorf("schema %s, metadata %v", reader.Schema(), reader.AdditionalMetadata())
		}
		want, _ := a.ToArrow()
		for i := 0; i < 3; i++ {
			b, err := reader.Next()
			if err != nil {
				t.Fatal(err)
			}
			got, _ := b.ToArrow()
			if !array.Equal(got, want) {
				t.Errorf("array %d differs", i)
			}
			got.Release()
			b.Release()
		}
		if _, err := reader.Next(); !errors.Is(err, io.EOF) {
			t.Errorf("end: %v", err)
		}
		want.Release()
		reader.Close()
		a.Release()
	}
	waitAsyncIdle(t)
}

// waitAsyncIdle waits for the producers' goroutines to finish their releases.
func waitAsyncIdle(t *testing.T) {
	deadline := time.Now().Add(hangGuard)
	for time.Now().Before(deadline) {
		if st := streams.LiveStats(); st.AsyncHandlers == 0 && st.AsyncTasks == 0 {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Errorf("async handlers/tasks still live: %+v", cdevice.LiveStats())
}

func TestAsyncStreamOfCUDAArraysKeepsTheirDevice(t *testing.T) {
	deviceBaseline(t)
	host := stringArray(t, 20)
	defer host.Release()
	r := cudaListReader(t, host, 3)
	reader, h, err := streams.NewAsyncReader(2)
	if err != nil {
		t.Fatal(err)
	}
	if err := streams.ExportAsyncDeviceStream(r, h, streams.AsyncExportOptions{}); err != nil {
		t.Fatal(err)
	}
	if reader.DeviceType() != device.CUDA {
		t.Fatalf("producer device type %s", reader.DeviceType())
	}
	n := eachArray(t, reader.Next, func(i int, a *cdevice.Array) {
		// copies to a device carry the event they are ordered by, handed on
		if a.Device() != cuda1 || a.SyncEvent() == nil {
			t.Errorf("array %d on %s with event %v", i, a.Device(), a.SyncEvent())
		}
		if !sameOnHost(t, host, a) {
			t.Errorf("array %d differs", i)
		}
	})
	if n != 3 {
		t.Fatalf("%d arrays", n)
	}
	reader.Close()
	waitAsyncIdle(t)
}
