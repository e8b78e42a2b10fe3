// Package gotests holds the Go functions tests_py/gofuncs/goext/test_in_build.py
// calls: a user's package, outside gosrc, built into godevarrow with
// `python -m godevarrow build-ext` by tests_py/gofuncs/test_go_functions.py.
package gotests

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/godevarrow/godevarrow/gosrc/cdevice"
	"github.com/godevarrow/godevarrow/gosrc/device"
	"github.com/godevarrow/godevarrow/gosrc/pyfunc"
)

func init() {
	pyfunc.Register("add", func(a, b int64) int64 { return a + b })
	pyfunc.Register("halve", func(x float64) float64 { return x / 2 })
	pyfunc.Register("negate", func(b bool) bool { return !b })
	pyfunc.Register("shout", Shout)
	pyfunc.Register("max_uint", func() uint64 { return 1<<64 - 1 })
	pyfunc.Register("small", func(n int8) int8 { return n })
	pyfunc.Register("describe_args", DescribeArgs)
	pyfunc.Register("fail", Fail)
	pyfunc.Register("explode", Explode)
	pyfunc.Register("explode_later", ExplodeLater)
	pyfunc.Register("nil_array", func() (*cdevice.Array, error) { return nil, nil })
	pyfunc.Register("wait_for_cancel", WaitForCancel)
	pyfunc.Register("wait_for_cancel_calls", WaitForCancelCalls)
	pyfunc.Register("rendezvous", Rendezvous)
	pyfunc.Register("device_of", DeviceOf, pyfunc.Devices(device.CPU, device.CUDA))
	pyfunc.Register("cpu_only", DeviceOf)
	pyfunc.Register("has_event", HasEvent, pyfunc.Devices(device.CUDA), pyfunc.OwnEvents())
	pyfunc.Register("slice_of", SliceOf, pyfunc.Devices(device.CPU, device.CUDA))
	pyfunc.Register("rows", func(t *cdevice.ChunkedArray) int64 { return t.Len() })
	pyfunc.Register("same_table", SameTable)
	pyfunc.Register("first_rows", FirstRows)
	pyfunc.Register("count_rows", CountRows)
}

// Shout returns s in upper case with an exclamation mark.
func Shout(s string) string { return strings.ToUpper(s) + "!" }

// DescribeArgs formats its arguments, converted to their Go types.
func DescribeArgs(b bool, i int, u uint32, f float32, s string) string {
	return fmt.Sprintf("%v %v %v %v %q", b, i, u, f, s)
}

// Fail returns an error with the message msg.
func Fail(msg string) error { return errors.New(msg) }

// Explode panics with msg.
func Explode(msg string) int64 { panic(msg) }

// ExplodeLater returns a stream that panics when it is read.
func ExplodeLater(batches cdevice.ArrayReader) cdevice.ArrayReader { return exploding{batches} }

type exploding struct{ cdevice.ArrayReader }

func (exploding) Next() (*cdevice.Array, error) { panic("a reader's Next panicked") }

var waitCalls struct{ entered, cancelled atomic.Int64 }

// WaitForCancel waits until its context is cancelled (at most 60 s).
func WaitForCancel(ctx context.Context) error {
	waitCalls.entered.Add(1)
	select {
	case <-ctx.Done():
		waitCalls.cancelled.Add(1)
		return ctx.Err()
	case <-time.After(60 * time.Second):
		return errors.New("not cancelled within 60 s")
	}
}

// WaitForCancelCalls counts the WaitForCancel calls that began to wait
// (what "entered": a test interrupts the call only then) or saw their
// context cancelled (what "cancelled").
func WaitForCancelCalls(what string) (int64, error) {
	switch what {
	case "entered":
		return waitCalls.entered.Load(), nil
	case "cancelled":
		return waitCalls.cancelled.Load(), nil
	}
	return 0, fmt.Errorf("wait_for_cancel_calls: %q is neither \"entered\" nor \"cancelled\"", what)
}

var meeting struct {
	sync.Mutex
	arrived int64
	all     chan struct{}
}

// Rendezvous returns true once n calls are in it at the same time (false
// after 20 s): it needs n threads running Go at once, so the GIL must be
// released while Go runs.
func Rendezvous(n int64) bool {
	meeting.Lock()
	if meeting.all == nil {
		meeting.all = make(chan struct{})
	}
	all := meeting.all
	meeting.arrived++
	if meeting.arrived == n {
		close(all)
		meeting.arrived, meeting.all = 0, nil
	}
	meeting.Unlock()
	select {
	case <-all:
		return true
	case <-time.After(20 * time.Second):
		return false
	}
}

// DeviceOf names the array's device.
func DeviceOf(a *cdevice.Array) string { return a.Device().String() }

// HasEvent reports whether the array came with a sync event (it declares
// OwnEvents: the event is not waited on for it).
func HasEvent(a *cdevice.Array) bool { return a.SyncEvent() != nil }

// SliceOf returns a zero-copy slice of the array, on its device.
func SliceOf(a *cdevice.Array, offset, length int64) (*cdevice.Array, error) {
	return a.Slice(offset, length)
}

// SameTable returns its argument.
func SameTable(t *cdevice.ChunkedArray) *cdevice.ChunkedArray {
	t.Retain()
	return t
}

// FirstRows returns the first n rows of a table; its result is written
// *cdevice.Table, so the generated stub says Table.
func FirstRows(t *cdevice.Table, n int64) (*cdevice.Table, error) {
	return t.Slice(0, min(n, t.Len()))
}

// CountRows reads a stream to its end and counts the rows.
func CountRows(ctx context.Context, batches cdevice.ArrayReader) (int64, error) {
	var n int64
	for {
		a, err := batches.Next()
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		n += int64(a.Len())
		a.Release()
		if err := ctx.Err(); err != nil {
			return n, err
		}
	}
}
