package streams_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/godevarrow/godevarrow/gosrc/cdevice"
	"github.com/godevarrow/godevarrow/gosrc/streams"
)

// A stream made by PrefetchWhenSlow is read by its caller until the binding
// starts the read-ahead; from then on a goroutine reads the producer ahead
// (here: it asks for the next array while nobody reads the stream).
func TestPrefetchWhenSlowReadsInlineUntilStarted(t *testing.T) {
	g, lazy := whenSlowStream(t)
	defer func() { g.tokens <- struct{}{} }() // the read-ahead's last read returns, and it stops
	if !lazy.AheadWhenSlow() {
		t.Fatal("a read-ahead put off is not reported")
	}
	if _, _, ahead, over := lazy.CRead(); ahead || over {
		t.Fatal("the stream reads ahead before it was started")
	}
	g.tokens <- struct{}{}
	a, err, ready := lazy.Next(hangGuard)
	if err != nil || !ready {
		t.Fatal(err, ready)
	}
	a.Release()
	<-g.entered // the read was the caller's
	select {
	case <-g.entered:
		t.Fatal("the producer was asked ahead before the read-ahead was started")
	default:
	}
	lazy.StartReadAhead()
	if lazy.AheadWhenSlow() {
		t.Fatal("still put off after StartReadAhead")
	}
	if _, _, ahead, over := lazy.CRead(); !ahead || !over {
		t.Fatal("the stream does not read ahead once started")
	}
	<-g.entered // the goroutine asks for the next array with no read in progress
	g.tokens <- struct{}{}
	a, err, ready = lazy.Next(hangGuard)
	if err != nil || !ready {
		t.Fatal(err, ready)
	}
	a.Release()
}

func TestPrefetchWhenSlowChecksTheDepth(t *testing.T) {
	g := newGatedReader(t)
	s := streams.NewOneShotStream(g)
	defer s.Close()
	if _, err := s.PrefetchWhenSlow(0); err == nil {
		t.Fatal("depth 0 accepted")
	}
}

// An event loop's first read of a PrefetchWhenSlow stream is a probe on a
// goroutine: when its read does not block, the reads after it are the
// caller's again (nothing reads ahead).
func TestAFastProbeLeavesTheStreamReadByItsCaller(t *testing.T) {
	g, s := whenSlowStream(t)
	g.tokens <- struct{}{} // the probe's read returns at once
	_, a, err, ready := s.ProbeHeld(hangGuard)
	if err != nil || !ready || a == nil {
		t.Fatal(err, ready, a)
	}
	a.Release()
	<-g.entered
	if s.Probing() {
		t.Fatal("still probing after the probe's array was taken")
	}
	if _, _, ahead, over := s.CRead(); ahead || over {
		t.Fatal("the stream reads ahead after a fast probe")
	}
	select {
	case <-g.entered:
		t.Fatal("the producer was asked ahead after a fast probe")
	default:
	}
	g.tokens <- struct{}{}
	if a, err, ready = s.Next(hangGuard); err != nil || !ready {
		t.Fatal(err, ready)
	}
	a.Release()
	<-g.entered
}

// A probe whose read waits (here for a token sent after the caller gave up
// waiting) answers "not ready"; its array comes with a later read, and from
// then on the stream reads ahead.
func TestAProbeThatWaitsMovesTheStreamAhead(t *testing.T) {
	g, s := whenSlowStream(t)
	defer func() { g.tokens <- struct{}{} }() // the read-ahead's last read returns, and it stops
	if _, _, _, ready := s.ProbeHeld(time.Millisecond); ready {
		t.Fatal("a probe with no token was ready")
	}
	if !s.Probing() {
		t.Fatal("not probing while the probe's read waits")
	}
	<-g.entered
	g.tokens <- struct{}{} // the read waited through ProbeHeld's wait, at least
	a, err, ready := s.Next(hangGuard)
	if err != nil || !ready {
		t.Fatal(err, ready)
	}
	a.Release()
	if _, _, ahead, over := s.CRead(); !ahead || !over || s.Probing() {
		t.Fatal("the stream does not read ahead after a probe that waited")
	}
	<-g.entered // the goroutine asks for the next array with no read in progress
}

// A probe whose read works (never waits) past its caller's wait, as a
// producer's that waits for the caller's event loop and then works can, is
// not trusted: the caller's next read is a probe again, and after four such
// probes in a row the stream reads ahead. A probe in time ends the probing.
func TestAFastProbeTheCallerGaveUpOnIsProbedAgain(t *testing.T) {
	for _, inTimeAt := range []int{2, -1} {
		w := &workingReader{gatedReader: newGatedReader(t)}
		s, err := streams.NewOneShotStream(w).PrefetchWhenSlow(2)
		if err != nil {
			t.Fatal(err)
		}
		if !s.ProbeDue() {
			t.Fatal("no probe due before the first read")
		}
		for k := 0; k < 4; k++ {
			var a *cdevice.Array
			var ready bool
			if k == inTimeAt {
				w.done.Add(1) // the read works no longer than it takes
				_, a, err, ready = s.ProbeHeld(hangGuard)
			} else {
				_, a, err, ready = s.ProbeHeld(10 * time.Microsecond)
				if ready {
					t.Fatalf("probe %d: ready while its read was still working", k)
				}
				w.done.Add(1)
				a, err, ready = s.Next(hangGuard)
			}
			if err != nil || !ready || a == nil {
				t.Fatal(k, err, ready, a)
			}
			a.Release()
			_, _, ahead, _ := s.CRead()
			switch {
			case k == inTimeAt:
				if s.ProbeDue() || ahead {
					t.Fatalf("probe %d was in time: due %v, ahead %v; want the caller's reads", k, s.ProbeDue(), ahead)
				}
				s.Close()
				return
			case k < 3:
				if !s.ProbeDue() || ahead {
					t.Fatalf("probe %d was missed: due %v, ahead %v; want another probe", k, s.ProbeDue(), ahead)
				}
			default:
				if s.ProbeDue() || !ahead {
					t.Fatalf("the fourth missed probe: due %v, ahead %v; want the read-ahead", s.ProbeDue(), ahead)
				}
			}
		}
		w.done.Add(2) // the read-ahead reads on; closing stops it
		s.Close()
	}
}

// workingReader's reads work (spin, never waiting) until done counts them
// released: a producer busy past its caller's wait.
type workingReader struct {
	*gatedReader
	done  atomic.Int64
	reads int64
}

func (w *workingReader) Next() (*cdevice.Array, error) {
	w.reads++
	for w.done.Load() < w.reads {
	}
	return w.arr.Slice(0, 3)
}

// whenSlowStream is a PrefetchWhenSlow(2) stream over a gated reader, closed
// when the test ends.
func whenSlowStream(t *testing.T) (*gatedReader, *streams.OneShotStream) {
	t.Helper()
	g := newGatedReader(t)
	s, err := streams.NewOneShotStream(g).PrefetchWhenSlow(2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return g, s
}
