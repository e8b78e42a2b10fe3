package streams_test

import (
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/godevarrow/godevarrow/gosrc/streams"
)

// procsBecome waits (at most hangGuard) until GOMAXPROCS is want: a
// read-ahead counts itself out as its goroutine ends, after Stop returned.
func procsBecome(t *testing.T, want int, when string) {
	t.Helper()
	for deadline := time.Now().Add(hangGuard); runtime.GOMAXPROCS(0) != want; {
		if time.Now().After(deadline) {
			t.Fatalf("%s: GOMAXPROCS is %d, want %d", when, runtime.GOMAXPROCS(0), want)
		}
		time.Sleep(time.Millisecond)
	}
}

// While read-aheads run, GOMAXPROCS is one higher per read-ahead (each
// waits in its producer and needs a P the moment the producer returns), and
// it is back when the last one ended (not lowered before: one stop of the
// world per burst of streams). A probe's first read is not a
// read-ahead; a probe that read ahead after it is. A GOMAXPROCS set in the
// environment is left as it is.
func TestReadAheadsRaiseGOMAXPROCSWhileTheyRun(t *testing.T) {
	for deadline := time.Now().Add(hangGuard); streams.ProducerReaders() > 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d read-aheads of earlier tests never ended", streams.ProducerReaders())
		}
	}
	base := runtime.GOMAXPROCS(0)
	per := 1
	if os.Getenv("GOMAXPROCS") != "" {
		per = 0
	}

	g1, g2 := newGatedReader(t), newGatedReader(t)
	p1 := streams.Prefetch(g1, 2)
	<-g1.entered
	procsBecome(t, base+per, "one read-ahead in its producer")
	p2 := streams.Prefetch(g2, 2)
	<-g2.entered
	procsBecome(t, base+2*per, "two read-aheads")
	for range 3 { // a read for each array p1 may make before it sees the stop
		g1.tokens <- struct{}{}
	}
	p1.Stop()
	p1.Close()
	if got := runtime.GOMAXPROCS(0); got != base+2*per {
		t.Fatalf("GOMAXPROCS %d after one of two ended, want %d (lowered with the last)", got, base+2*per)
	}
	for range 3 {
		g2.tokens <- struct{}{}
	}
	p2.Stop()
	procsBecome(t, base, "after both stopped")
	p2.Close()

	g, s := whenSlowStream(t)
	if _, _, _, ready := s.ProbeHeld(time.Millisecond); ready {
		t.Fatal("a probe with no token was ready")
	}
	<-g.entered
	if got := runtime.GOMAXPROCS(0); got != base {
		t.Fatalf("GOMAXPROCS %d during a probe's first read, want %d", got, base)
	}
	g.tokens <- struct{}{} // the probe's read waited: the stream reads ahead from now on
	a, err, ready := s.Next(hangGuard)
	if err != nil || !ready {
		t.Fatal(err, ready)
	}
	a.Release()
	<-g.entered
	procsBecome(t, base+per, "the probe reading ahead")
	g.tokens <- struct{}{}
	s.Close()
	procsBecome(t, base, "after the probe's stream closed")
}
