package streams_test

import (
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

// A fast probe that its caller gave up waiting for (a producer that waits
// for the caller's event loop and then works passes the measure for fast)
// is not trusted: the caller's next read is a probe again, and after four
// such probes in a row the stream reads ahead. A probe in time ends the
// probing. The probes' verdict is set (SetProbeVerdict): what is tested is
// the bookkeeping after them, which a loaded machine's measure must not sway.
func TestAFastProbeTheCallerGaveUpOnIsProbedAgain(t *testing.T) {
	defer streams.SetProbeVerdict(false)()
	for _, inTimeAt := range []int{2, -1} {
		g, s := whenSlowStream(t)
		if !s.ProbeDue() {
			t.Fatal("no probe due before the first read")
		}
		for k := 0; k < 4; k++ {
			var a *cdevice.Array
			var err error
			var ready bool
			if k == inTimeAt {
				g.tokens <- struct{}{} // the read returns at once
				_, a, err, ready = s.ProbeHeld(hangGuard)
			} else {
				if _, _, _, ready = s.ProbeHeld(time.Millisecond); ready {
					t.Fatalf("probe %d: ready before its read could end", k)
				}
				g.tokens <- struct{}{}
				a, err, ready = s.Next(hangGuard)
			}
			<-g.entered
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
			case k < 3:
				if !s.ProbeDue() || ahead {
					t.Fatalf("probe %d was missed: due %v, ahead %v; want another probe", k, s.ProbeDue(), ahead)
				}
			default:
				if s.ProbeDue() || !ahead {
					t.Fatalf("the fourth missed probe: due %v, ahead %v; want the read-ahead", s.ProbeDue(), ahead)
				}
				// the read-ahead reads the next array; taken, so that no read
				// is in progress but one that waits for a token (Close leaves
				// it: it never touches the reader's array), then let go, so
				// that the read-ahead ends (procs_test.go counts them)
				<-g.entered
				g.tokens <- struct{}{}
				if a, err, ready = s.Next(hangGuard); err != nil || !ready {
					t.Fatal(err, ready)
				}
				a.Release()
				<-g.entered
				s.Close()
				g.tokens <- struct{}{}
			}
			if k == inTimeAt {
				break
			}
		}
	}
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
