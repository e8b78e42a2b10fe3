package streams_test

import (
	"testing"
	"time"

	"github.com/godevarrow/godevarrow/gosrc/streams"
)

// A stream made by PrefetchWhenSlow is read by its caller until the binding
// starts the read-ahead; from then on a goroutine reads the producer ahead
// (here: it asks for the next array while nobody reads the stream).
func TestPrefetchWhenSlowReadsInlineUntilStarted(t *testing.T) {
	g := newGatedReader(t)
	lazy, err := streams.NewOneShotStream(g).PrefetchWhenSlow(2)
	if err != nil {
		t.Fatal(err)
	}
	defer lazy.Close()
	defer func() { g.tokens <- struct{}{} }() // the read-ahead's last read returns, and it stops
	if !lazy.AheadWhenSlow() {
		t.Fatal("a read-ahead put off is not reported")
	}
	if _, _, ahead, over := lazy.CRead(); ahead || over {
		t.Fatal("the stream reads ahead before it was started")
	}
	g.tokens <- struct{}{}
	a, err, ready := lazy.Next(time.Second)
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
	a, err, ready = lazy.Next(10 * time.Second)
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
