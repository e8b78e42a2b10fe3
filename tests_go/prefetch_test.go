package tests_go

import (
	"errors"
	"io"
	"strings"
	"sync/atomic"
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
)

// countingReader yields n int64 arrays [i], failing at failAt, and counts
// reads and its Close. With gated, each Next first announces itself on
// entered and then waits for a token on gate: the test decides when a read
// returns.
type countingReader struct {
	schema  *cschema.Schema
	n, i    int
	failAt  int
	entered chan struct{}
	gate    chan struct{}
	reads   atomic.Int64
	closed  atomic.Int64
}

func newCountingReader(t *testing.T, n, failAt int, gated bool) *countingReader {
	s, err := cschema.SchemaFromField(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true})
	if err != nil {
		t.Fatal(err)
	}
	r := &countingReader{schema: s, n: n, failAt: failAt}
	if gated {
		r.entered, r.gate = make(chan struct{}, n+1), make(chan struct{}, n+1)
	}
	return r
}

// hangGuard bounds a wait that only a hang can exceed.
const hangGuard = 30 * time.Second

// waitFor polls cond until it holds; the deadline only turns a hang into a
// failure.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func (r *countingReader) Schema() *cschema.Schema { return r.schema }
func (r *countingReader) DeviceType() device.Type { return device.CPU }
func (r *countingReader) Close() error            { r.closed.Add(1); return nil }
func (r *countingReader) Next() (*cdevice.Array, error) {
	if r.gate != nil {
		r.entered <- struct{}{}
		<-r.gate
	}
	if r.i == r.failAt {
		return nil, &errs.StreamError{Errno: syscall.EIO, Msg: "failed on purpose"}
	}
	if r.i == r.n {
		return nil, io.EOF
	}
	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	b.Append(int64(r.i))
	arr := b.NewArray()
	defer arr.Release()
	r.i++
	r.reads.Add(1)
	return cdevice.NewArray(r.schema, arr.Data(), device.Host)
}

func readAll(t *testing.T, r cdevice.ArrayReader) ([]int64, error) {
	var out []int64
	for {
		a, err := r.Next()
		if err != nil {
			return out, err
		}
		arr, err2 := a.ToArrow()
		if err2 != nil {
			t.Fatal(err2)
		}
		out = append(out, arr.(*array.Int64).Value(0))
		arr.Release()
		a.Release()
	}
}

func TestPrefetchDeliversInOrder(t *testing.T) {
	baseline(t)
	for _, depth := range []int{1, 3, 64} {
		src := newCountingReader(t, 20, -1, false)
		p := streams.Prefetch(src, depth)
		got, err := readAll(t, p)
		if !errors.Is(err, io.EOF) || len(got) != 20 || got[0] != 0 || got[19] != 19 {
			t.Fatalf("depth %d: got %v, %v", depth, got, err)
		}
		if _, err := p.Next(); !errors.Is(err, io.EOF) {
			t.Fatalf("EOF is sticky, got %v", err)
		}
		if err := p.Close(); err != nil || src.closed.Load() != 1 {
			t.Fatalf("close: %v, source closed %d times", err, src.closed.Load())
		}
		p.Close()
		if src.closed.Load() != 1 {
			t.Fatal("Close is idempotent")
		}
	}
}

func TestPrefetchErrorAfterEarlierArrays(t *testing.T) {
	baseline(t)
	p := streams.Prefetch(newCountingReader(t, 10, 4, false), 2)
	defer p.Close()
	got, err := readAll(t, p)
	var se *errs.StreamError
	if len(got) != 4 || !errors.As(err, &se) || se.Errno != syscall.EIO {
		t.Fatalf("got %v then %v", got, err)
	}
	// reported once; later reads say the stream ended with it
	if _, err2 := p.Next(); !errors.Is(err2, errs.ErrConsumed) || !strings.Contains(err2.Error(), err.Error()) {
		t.Fatalf("later reads report the end, got %v", err2)
	}
}

func TestPrefetchReadsAheadBoundedly(t *testing.T) {
	baseline(t)
	src := newCountingReader(t, 1000, -1, false)
	p := streams.Prefetch(src, 3)
	// 3 queued plus one read waiting for room
	waitFor(t, "4 reads ahead", func() bool { return src.reads.Load() >= 4 })
	// A bound that is too loose shows in this window as a fifth read; the
	// wait can only let a failure surface, never cause one.
	time.Sleep(50 * time.Millisecond)
	if n := src.reads.Load(); n != 4 {
		t.Fatalf("read %d arrays ahead with depth 3, want 4", n)
	}
	// two taken (the producer is woken once the queue is half empty): the
	// bound still holds, 2 taken + 3 queued + 1 waiting
	for range 2 {
		a, err := p.Next()
		if err != nil {
			t.Fatal(err)
		}
		a.Release()
	}
	waitFor(t, "6 reads after two were taken", func() bool { return src.reads.Load() >= 6 })
	p.Stop() // waits for the goroutine: every read it made is counted now
	if n := src.reads.Load(); n != 6 {
		t.Fatalf("read %d arrays after taking two with depth 3, want 6", n)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if src.closed.Load() != 1 {
		t.Fatal("the source is closed by Close")
	}
	if _, err := p.Next(); !errors.Is(err, errs.ErrConsumed) {
		t.Fatalf("after Close: %v", err)
	}
}

// Close while the producer's Next is running returns without waiting for
// it; the read, when it returns, releases its array and closes the source.
func TestPrefetchCloseDuringSlowRead(t *testing.T) {
	baseline(t)
	src := newCountingReader(t, 100, -1, true)
	p := streams.Prefetch(src, 1)
	select {
	case <-src.entered: // the goroutine is inside Next, held there by the gate
	case <-time.After(hangGuard):
		t.Fatal("the background read never started")
	}
	closed := make(chan error, 1)
	go func() { closed <- p.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(hangGuard):
		src.gate <- struct{}{}
		t.Fatal("Close waited for a read in progress")
	}
	if n := src.closed.Load(); n != 0 {
		t.Fatalf("the source was closed %d times under its own Next", n)
	}
	src.gate <- struct{}{} // the read returns
	waitFor(t, "the abandoned read to close the source", func() bool { return src.closed.Load() != 0 })
	if n := src.closed.Load(); n != 1 {
		t.Fatalf("the source was closed %d times", n)
	}
	if n := src.reads.Load(); n != 1 {
		t.Fatalf("%d reads after Close, want the 1 in progress", n)
	}
}
