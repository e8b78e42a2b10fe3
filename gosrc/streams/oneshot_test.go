package streams_test

import (
	"errors"
	"io"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/godevarrow/godevarrow/gosrc/cdevice"
	"github.com/godevarrow/godevarrow/gosrc/cschema"
	"github.com/godevarrow/godevarrow/gosrc/device"
	"github.com/godevarrow/godevarrow/gosrc/errs"
	"github.com/godevarrow/godevarrow/gosrc/streams"
)

// hangGuard bounds a wait that only a hang can exceed: a read or a settle
// that the test has let finish (a loaded machine can take seconds).
const hangGuard = 30 * time.Second

// gatedReader is a producer whose every Next waits for a token, as a foreign
// producer waits for data (or for a lock its caller holds).
type gatedReader struct {
	schema  *cschema.Schema
	arr     *cdevice.Array
	tokens  chan struct{}
	entered chan struct{}
	closes  atomic.Int32
}

func newGatedReader(t *testing.T) *gatedReader {
	t.Helper()
	b := array.NewInt64Builder(memory.DefaultAllocator)
	b.AppendValues([]int64{1, 2, 3}, nil)
	a := b.NewArray()
	b.Release()
	defer a.Release()
	arr, err := cdevice.FromArrow(arrow.Field{Name: "x", Type: a.DataType(), Nullable: true}, a)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(arr.Release)
	return &gatedReader{schema: arr.Schema(), arr: arr, tokens: make(chan struct{}, 8), entered: make(chan struct{}, 8)}
}

func (g *gatedReader) Schema() *cschema.Schema { return g.schema }
func (g *gatedReader) DeviceType() device.Type { return device.CPU }
func (g *gatedReader) Next() (*cdevice.Array, error) {
	g.entered <- struct{}{}
	<-g.tokens
	return g.arr.Slice(0, 3) // a fresh Array each time, so live counts tell

}
func (g *gatedReader) Close() error { g.closes.Add(1); return nil }

// readInBackground starts a Next and waits until it is inside the producer.
func readInBackground(s *streams.OneShotStream, g *gatedReader) chan error {
	done := make(chan error, 1)
	go func() {
		a, err, _ := s.Next(hangGuard)
		if a != nil {
			a.Release()
		}
		done <- err
	}()
	<-g.entered
	return done
}

func TestOneShotCloseDuringReadWaitsForTheReader(t *testing.T) {
	g := newGatedReader(t)
	s := streams.NewOneShotStream(g)
	done := readInBackground(s, g)

	if closed, err := s.Close(); closed || err != nil {
		t.Fatalf("Close during a read = (%v, %v), want (false, nil): it must not release under the reader", closed, err)
	}
	if s.Settle(5 * time.Millisecond) {
		t.Fatal("Settle reported idle while the producer is still inside Next")
	}
	if g.closes.Load() != 0 {
		t.Fatal("the producer was closed while inside Next")
	}
	g.tokens <- struct{}{}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !s.Settle(hangGuard) {
		t.Fatal("Settle did not see the read end")
	}
	if closed, err := s.Close(); !closed || err != nil {
		t.Fatalf("Close after the read = (%v, %v)", closed, err)
	}
	if closed, _ := s.Close(); !closed || g.closes.Load() != 1 {
		t.Fatalf("a second Close must be a no-op; producer closed %d times", g.closes.Load())
	}
	if _, err, _ := s.Next(0); !errors.Is(err, errs.ErrConsumed) {
		t.Fatalf("Next after Close: %v, want errs.ErrConsumed", err)
	}
}

func TestOneShotMovesRefuseDuringARead(t *testing.T) {
	g := newGatedReader(t)
	s := streams.NewOneShotStream(g)
	done := readInBackground(s, g)
	if _, err := s.Prefetch(2); err == nil {
		t.Fatal("Prefetch during a read succeeded")
	}
	if _, err := s.Cast(g.schema); err == nil {
		t.Fatal("Cast during a read succeeded")
	}
	var out streams.CArrowDeviceArrayStream
	if err := s.Export(nil, unsafe.Pointer(&out), true); err == nil {
		t.Fatal("Export during a read succeeded")
	}
	g.tokens <- struct{}{}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// the refused moves left the stream readable
	g.tokens <- struct{}{}
	a, err, _ := s.Next(0)
	if err != nil {
		t.Fatal(err)
	}
	a.Release()
	<-g.entered
	if closed, err := s.Close(); !closed || err != nil {
		t.Fatal(closed, err)
	}
}

func TestOneShotSecondReaderWaitsItsTurn(t *testing.T) {
	g := newGatedReader(t)
	s := streams.NewOneShotStream(g)
	first := readInBackground(s, g)
	second := make(chan error, 1)
	go func() {
		a, err, _ := s.Next(0)
		if a != nil {
			a.Release()
		}
		second <- err
	}()
	select {
	case <-g.entered:
		t.Fatal("two reads were inside the producer at once")
	case <-time.After(20 * time.Millisecond):
	}
	g.tokens <- struct{}{}
	g.tokens <- struct{}{}
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	<-g.entered
	if err := <-second; err != nil {
		t.Fatal(err)
	}
	s.Close()
}

func TestOneShotUnreadIsReadAgainOrReleased(t *testing.T) {
	g := newGatedReader(t)
	s := streams.NewOneShotStream(g)
	g.tokens <- struct{}{}
	a, err, _ := s.Next(0)
	if err != nil {
		t.Fatal(err)
	}
	<-g.entered
	s.Unread(a)
	if _, err := s.Prefetch(1); err == nil {
		t.Fatal("moving a stream with an undelivered array succeeded")
	}
	again, err, _ := s.Next(0)
	if err != nil || again != a {
		t.Fatalf("Next after Unread = %p, %v; want the same array %p", again, err, a)
	}
	s.Unread(again)
	before := cdevice.LiveStats().Arrays
	s.Close()
	if after := cdevice.LiveStats().Arrays; after != before-1 {
		t.Fatalf("Close did not release the undelivered array (%d -> %d live arrays)", before, after)
	}
}

func TestOneShotPrefetchDepthMustBePositive(t *testing.T) {
	for _, depth := range []int64{0, -1, -1 << 40} {
		s := streams.NewOneShotStream(newGatedReader(t))
		if _, err := s.Prefetch(depth); !errors.Is(err, errs.ErrInvalid) {
			t.Errorf("Prefetch(%d) = %v, want errs.ErrInvalid", depth, err)
		}
		s.Close()
	}
}

func TestOneShotSettleStopsTheReadAhead(t *testing.T) {
	g := newGatedReader(t)
	s, err := streams.NewOneShotStream(g).Prefetch(4)
	if err != nil {
		t.Fatal(err)
	}
	<-g.entered // the read-ahead is inside the producer
	settled := make(chan bool, 1)
	go func() { settled <- s.Settle(hangGuard) }()
	close(g.tokens) // the producer answers every read from now on
	if !<-settled {
		t.Fatal("Settle did not settle a prefetching stream")
	}
	if closed, err := s.Close(); !closed || err != nil {
		t.Fatal(closed, err)
	}
	if g.closes.Load() != 1 {
		t.Fatalf("producer closed %d times, want 1", g.closes.Load())
	}
	if _, err, _ := s.Next(0); !errors.Is(err, errs.ErrConsumed) && !errors.Is(err, io.EOF) {
		t.Fatalf("Next after Close: %v", err)
	}
}
