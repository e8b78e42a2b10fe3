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
	"github.com/godevarrow/godevarrow/gosrc/device"
)

// countingReader yields n int64 arrays [i], optionally slowly and failing at
// failAt, and counts reads and its Close.
type countingReader struct {
	schema *cdevice.Schema
	n, i   int
	failAt int
	delay  time.Duration
	reads  atomic.Int64
	closed atomic.Int64
}

func newCountingReader(t *testing.T, n, failAt int, delay time.Duration) *countingReader {
	s, err := cdevice.SchemaFromField(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true})
	if err != nil {
		t.Fatal(err)
	}
	return &countingReader{schema: s, n: n, failAt: failAt, delay: delay}
}

func (r *countingReader) Schema() *cdevice.Schema { return r.schema }
func (r *countingReader) DeviceType() device.Type { return device.CPU }
func (r *countingReader) Close() error            { r.closed.Add(1); return nil }
func (r *countingReader) Next() (*cdevice.Array, error) {
	time.Sleep(r.delay)
	if r.i == r.failAt {
		return nil, &cdevice.StreamError{Errno: syscall.EIO, Msg: "failed on purpose"}
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
		src := newCountingReader(t, 20, -1, 0)
		p := cdevice.Prefetch(src, depth)
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
	p := cdevice.Prefetch(newCountingReader(t, 10, 4, 0), 2)
	defer p.Close()
	got, err := readAll(t, p)
	var se *cdevice.StreamError
	if len(got) != 4 || !errors.As(err, &se) || se.Errno != syscall.EIO {
		t.Fatalf("got %v then %v", got, err)
	}
	// reported once; later reads say the stream ended with it
	if _, err2 := p.Next(); !errors.Is(err2, cdevice.ErrConsumed) || !strings.Contains(err2.Error(), err.Error()) {
		t.Fatalf("later reads report the end, got %v", err2)
	}
}

func TestPrefetchReadsAheadBoundedly(t *testing.T) {
	baseline(t)
	src := newCountingReader(t, 1000, -1, 0)
	p := cdevice.Prefetch(src, 3)
	time.Sleep(50 * time.Millisecond)
	// 3 queued plus one read waiting for room
	if n := src.reads.Load(); n > 4 {
		t.Fatalf("read %d arrays ahead with depth 3", n)
	}
	p.Stop()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if src.closed.Load() != 1 {
		t.Fatal("the source is closed by Close")
	}
	if _, err := p.Next(); !errors.Is(err, cdevice.ErrConsumed) {
		t.Fatalf("after Close: %v", err)
	}
}

func TestPrefetchCloseDuringSlowRead(t *testing.T) {
	baseline(t)
	src := newCountingReader(t, 100, -1, 30*time.Millisecond)
	p := cdevice.Prefetch(src, 1)
	time.Sleep(5 * time.Millisecond)  // the goroutine is inside the slow Next
	if err := p.Close(); err != nil { // does not wait for it
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for src.closed.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if src.closed.Load() != 1 {
		t.Fatal("the abandoned read closes the source when it returns")
	}
}
