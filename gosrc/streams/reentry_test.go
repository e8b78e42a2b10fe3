package streams_test

import (
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/godevarrow/godevarrow/gosrc/cdevice"
	"github.com/godevarrow/godevarrow/gosrc/cschema"
	"github.com/godevarrow/godevarrow/gosrc/device"
	"github.com/godevarrow/godevarrow/gosrc/errs"
	"github.com/godevarrow/godevarrow/gosrc/streams"
)

// selfReader is a producer whose second Next reads the stream it feeds, on
// its own thread, as a Python generator calling next() on that stream does.
type selfReader struct {
	g *gatedReader
	// the stream it feeds, set before published is closed: a read-ahead's
	// goroutine starts before the stream that reads ahead exists
	stream    *streams.OneShotStream
	published chan struct{}
	reads     int
	inner     chan error // what the producer's own read got
}

func (r *selfReader) Schema() *cschema.Schema { return r.g.schema }
func (r *selfReader) DeviceType() device.Type { return device.CPU }
func (r *selfReader) Close() error            { return nil }
func (r *selfReader) Next() (*cdevice.Array, error) {
	r.reads++
	if r.reads == 1 {
		return r.g.arr.Slice(0, 3)
	}
	<-r.published
	s := r.stream
	_, a, err, ready := s.NextHeld(100*time.Millisecond, streams.CurrentThread())
	for !ready { // another read in progress: it is ours, and ends only with this one
		_, a, err, ready = s.NextHeld(100*time.Millisecond, streams.CurrentThread())
	}
	if a != nil {
		a.Release()
	}
	r.inner <- err
	return nil, err
}

func readAll(t *testing.T, s *streams.OneShotStream) error {
	t.Helper()
	runtime.LockOSThread() // a binding's reads run locked to their thread
	defer runtime.UnlockOSThread()
	for {
		held, a, err, ready := s.NextHeld(100*time.Millisecond, streams.CurrentThread())
		if !ready {
			continue
		}
		if held != nil {
			cdevice.ReleaseHeld(held)
		}
		if a != nil {
			a.Release()
		}
		if err != nil {
			return err
		}
	}
}

// A producer that reads the stream it feeds gets an error instead of
// waiting for itself, on the plain read and on a read-ahead.
func TestAReadFromInsideTheStreamsOwnProducerFails(t *testing.T) {
	for _, ahead := range []bool{false, true} {
		r := &selfReader{g: newGatedReader(t), inner: make(chan error, 1), published: make(chan struct{})}
		s := streams.NewOneShotStream(r)
		if ahead {
			var err error
			if s, err = s.Prefetch(2); err != nil {
				t.Fatal(err)
			}
		}
		r.stream = s
		close(r.published)
		got := make(chan error, 1)
		go func() { got <- readAll(t, s) }()
		select {
		case err := <-got:
			if errors.Is(err, io.EOF) || !strings.Contains(err.Error(), "producer read the stream it feeds") {
				t.Fatalf("ahead=%v: the read ended with %v", ahead, err)
			}
		case <-time.After(60 * time.Second):
			t.Fatalf("ahead=%v: the read waits for itself (hang guard)", ahead)
		}
		if err := <-r.inner; !errors.Is(err, errs.ErrInvalid) {
			t.Fatalf("ahead=%v: the producer's own read got %v", ahead, err)
		}
		if closed, err := s.Close(); !closed || err != nil {
			t.Fatalf("close: %v %v", closed, err)
		}
	}
}

// Another goroutine's read is waited for in slices: a Next that waits
// longer than its wait reports not ready, and the read after it works.
func TestAReadWaitingForAnotherIsNotReadyAfterItsWait(t *testing.T) {
	g := newGatedReader(t)
	s := streams.NewOneShotStream(g)
	first := readInBackground(s, g)
	if _, _, ready := s.Next(time.Millisecond); ready {
		t.Fatal("a read behind another read in progress was ready")
	}
	g.tokens <- struct{}{}
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	g.tokens <- struct{}{}
	a, err, ready := s.Next(0)
	if !ready || err != nil {
		t.Fatalf("the next read: %v %v", ready, err)
	}
	a.Release()
	s.Close()
}
