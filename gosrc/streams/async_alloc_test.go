package streams

import (
	"errors"
	"io"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/godevarrow/godevarrow/gosrc/cdevice"
	"github.com/godevarrow/godevarrow/gosrc/cschema"
	"github.com/godevarrow/godevarrow/gosrc/device"
	"github.com/godevarrow/godevarrow/gosrc/errs"
)

func int64ListReader(t *testing.T, n int) *cdevice.ListReader {
	t.Helper()
	schema, err := cschema.NewSchema("l", "", cschema.FlagNullable, arrow.Metadata{}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	arrays := make([]*cdevice.Array, n)
	for k := range arrays {
		b := array.NewInt64Builder(cdevice.Allocator)
		b.Append(int64(k))
		data := b.NewArray()
		b.Release()
		if arrays[k], err = cdevice.NewArray(schema, data.Data(), device.Host); err != nil {
			t.Fatal(err)
		}
		data.Release()
	}
	r, err := cdevice.NewListReader(schema, device.CPU, arrays...)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range arrays {
		a.Release()
	}
	return r
}

// readAll runs our producer into our consumer and returns the first error
// either side reported (nil for a complete stream of n arrays).
func readAll(t *testing.T, n int) error {
	t.Helper()
	reader, handler, err := NewAsyncReader(1)
	if err != nil {
		return err
	}
	defer reader.Close()
	opts := AsyncExportOptions{AdditionalMetadata: map[string]string{"k": "v"}}
	if err := ExportAsyncDeviceStream(int64ListReader(t, n), handler, opts); err != nil {
		t.Fatalf("ExportAsyncDeviceStream: %v", err) // only for a NULL or incomplete handler
	}
	got := 0
	for {
		a, err := reader.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		a.Release()
		got++
	}
	if got != n {
		t.Fatalf("%d arrays, want %d", got, n)
	}
	return nil
}

// waitReleased waits until the producer goroutine released the handler
// and every task was extracted.
func waitReleased(t *testing.T) {
	t.Helper()
	for i := 0; liveAsyncHandlers.Load() != 0 || liveAsyncTasks.Load() != 0; i++ {
		if i > 1e6 {
			t.Fatalf("handlers %d, tasks %d still live", liveAsyncHandlers.Load(), liveAsyncTasks.Load())
		}
		runtime.Gosched()
	}
}

// waitAsyncAllocations waits up to 30 s for the live async C blocks to come
// back to want, and returns how many are live.
func waitAsyncAllocations(want int64) int64 {
	deadline := time.Now().Add(30 * time.Second)
	for liveAsyncAllocations() != want && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	return liveAsyncAllocations()
}

// waitNoLiveArrays waits up to 30 s until the producers of earlier tests,
// which release on their own threads after Close returns, released every
// array (a deadline only guards a leak).
func waitNoLiveArrays(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for cdevice.LiveStats().Arrays != 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if s := cdevice.LiveStats(); s.Arrays != 0 {
		t.Fatalf("arrays of earlier tests are still live: %+v", s)
	}
}

// Every C allocation of an async stream (handler, producer slot, producer
// metadata, schema, each task and its cell, the consumer's device array)
// fails in turn: the failure reaches the Go caller as ENOMEM, and nothing
// stays allocated.
func TestAsyncAllocationFailuresAreReported(t *testing.T) {
	const arrays = 2
	waitReleased(t)
	if err := readAll(t, arrays); err != nil { // warm up: one idle producer slot exists from now on
		t.Fatal(err)
	}
	waitReleased(t)
	before := liveAsyncAllocations()
	panics := errs.Panics()
	failures := 0
	for n := 1; ; n++ {
		failAsyncAllocation(n)
		err := readAll(t, arrays)
		failAsyncAllocation(0)
		waitReleased(t)
		// the producer frees its last blocks on its own thread after the
		// handler's release: wait for them (a deadline only guards a leak)
		if live := waitAsyncAllocations(before); live != before {
			t.Errorf("allocation %d failed: %d async C blocks live, want %d", n, live, before)
		}
		if err == nil {
			break // the stream needed fewer than n allocations
		}
		var se *errs.StreamError
		if !errors.As(err, &se) || se.Errno != syscall.ENOMEM {
			t.Errorf("allocation %d failed: error %v, want ENOMEM", n, err)
		}
		failures++
	}
	// handler (2), metadata, schema, two tasks (2 each), two arrays; the
	// producer slot is reused here, so its own failure is tested below
	if want := 2 + 1 + 1 + 2*2 + arrays; failures != want {
		t.Errorf("%d allocations failed in turn, want %d", failures, want)
	}
	if n := errs.Panics() - panics; n != 0 {
		t.Errorf("%d panics", n)
	}
}

// With every idle producer slot held by an open stream, the next stream
// must allocate a slot; when that fails the handler hears ENOMEM.
func TestAsyncProducerSlotAllocationFailure(t *testing.T) {
	var open []*AsyncReader
	defer func() {
		for _, r := range open {
			r.Close()
		}
		waitReleased(t)
	}()
	for range 1000 {
		reader, handler, err := NewAsyncReader(1)
		if err != nil {
			t.Fatal(err)
		}
		open = append(open, reader)
		failAsyncAllocation(1)
		if err := ExportAsyncDeviceStream(int64ListReader(t, 2), handler, AsyncExportOptions{}); err != nil {
			t.Fatal(err)
		}
		err = reader.Wait()
		failAsyncAllocation(0)
		var se *errs.StreamError
		switch {
		case err == nil:
			t.Fatal("the armed allocation did not fail")
		case !errors.As(err, &se) || se.Errno != syscall.ENOMEM:
			t.Fatalf("error %v, want ENOMEM", err)
		case strings.Contains(err.Error(), "ArrowAsyncProducer"):
			return
		}
		// an idle slot was reused and the schema's allocation failed
		// instead: keep a stream open that holds a slot, and try again
		reader, handler, err = NewAsyncReader(1)
		if err != nil {
			t.Fatal(err)
		}
		open = append(open, reader)
		if err := ExportAsyncDeviceStream(int64ListReader(t, 2), handler, AsyncExportOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := reader.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	t.Fatal("no stream had to allocate a producer slot")
}
