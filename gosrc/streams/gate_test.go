package streams

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/godevarrow/godevarrow/gosrc/cdevice"
)

// gateArray is a fresh one-value Array for the gate's unread slot.
func gateArray(t *testing.T) *cdevice.Array {
	t.Helper()
	b := array.NewInt64Builder(memory.DefaultAllocator)
	b.Append(1)
	data := b.NewArray()
	b.Release()
	defer data.Release()
	a, err := cdevice.FromArrow(arrow.Field{Name: "l", Type: data.DataType(), Nullable: true}, data)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// waitForWaiters returns once n callers wait in the gate's begin: the
// handshake that orders a race without sleeping (it hangs, and the test
// times out, if they never arrive).
func waitForWaiters(g *readGate, n int) {
	for g.waiters() < n {
		runtime.Gosched()
	}
}

func TestGateReadIsExclusiveAndAWaitRunsOut(t *testing.T) {
	g := newReadGate()
	if r, _ := g.begin(0, 0); r != gateGo {
		t.Fatalf("first begin = %d, want go", r)
	}
	if r, _ := g.begin(time.Millisecond, 0); r != gateBusy {
		t.Fatalf("begin during a read, with a wait = %d, want busy once the wait runs out", r)
	}
	g.end()
	if r, _ := g.begin(time.Millisecond, 0); r != gateGo {
		t.Fatalf("begin after the read ended = %d, want go", r)
	}
	g.end()
}

func TestGateWaiterGoesAheadWhenTheReadEnds(t *testing.T) {
	g := newReadGate()
	if r, _ := g.begin(0, 0); r != gateGo {
		t.Fatalf("first begin = %d, want go", r)
	}
	got := make(chan gateResult, 1)
	go func() {
		r, _ := g.begin(0, 0) // waits as long as it takes
		got <- r
	}()
	waitForWaiters(g, 1)
	select {
	case r := <-got:
		t.Fatalf("the waiter went ahead (%d) during the read", r)
	default:
	}
	g.end()
	if r := <-got; r != gateGo {
		t.Fatalf("the waiter got %d when the read ended, want go", r)
	}
	if g.waitIdle(time.Millisecond) {
		t.Fatal("idle while the waiter's read is in progress")
	}
	g.end()
	if !g.waitIdle(0) {
		t.Fatal("not idle after every read ended")
	}
}

func TestGateRefusesAReadFromTheReadersOwnThread(t *testing.T) {
	g := newReadGate()
	if r, _ := g.begin(0, 7); r != gateGo {
		t.Fatalf("first begin = %d, want go", r)
	}
	// an endless wait would hang here: the read in progress is this thread's
	if r, _ := g.begin(0, 7); r != gateReentrant {
		t.Fatalf("begin from the reader's thread = %d, want reentrant", r)
	}
	if r, _ := g.begin(time.Millisecond, 8); r != gateBusy {
		t.Fatalf("begin from another thread = %d, want busy", r)
	}
	if r, _ := g.begin(time.Millisecond, 0); r != gateBusy {
		t.Fatalf("unnamed begin = %d, want busy", r)
	}
	g.end()
}

func TestGateRefusesAReadFromTheReadAheadProducersThread(t *testing.T) {
	g := newReadGate()
	p := newProducerCell()
	g.watchProducer(p)
	p.set(9)
	if r, _ := g.begin(0, 9); r != gateReentrant {
		t.Fatalf("begin from the producer's thread = %d, want reentrant", r)
	}
	if r, _ := g.begin(time.Millisecond, 8); r != gateGo {
		t.Fatalf("begin from another thread = %d, want go", r)
	}
	g.end()
	p.set(0) // the producer returned
	if r, _ := g.begin(0, 9); r != gateGo {
		t.Fatalf("begin from the producer's old thread = %d, want go", r)
	}
	g.end()
	runtime.KeepAlive(p)
}

func TestGateUnreadArrayIsTheNextReadsAndASecondIsReleased(t *testing.T) {
	g := newReadGate()
	first, second := gateArray(t), gateArray(t)
	second.Retain() // to watch its count after the gate releases it
	defer second.Release()
	g.unread(gateSlot{a: first})
	g.unread(gateSlot{a: second})
	if n := second.RefCount(); n != 1 {
		t.Fatalf("an array unread while another waits has %d references, want 1 (released)", n)
	}
	r, s := g.begin(0, 0)
	if r != gateUnread || s.a != first || s.held != nil {
		t.Fatalf("begin = (%d, %+v), want the unread array", r, s)
	}
	s.release()
	if r, _ := g.begin(0, 0); r != gateGo {
		t.Fatalf("begin after the unread array was taken = %d, want go", r)
	}
	g.end()
}

func TestGateCloseDuringAReadIsRefusedAndCloseGivesBackTheUnreadArray(t *testing.T) {
	g := newReadGate()
	if r, _ := g.begin(0, 0); r != gateGo {
		t.Fatalf("begin = %d, want go", r)
	}
	if r, _ := g.close(); r != gateBusy {
		t.Fatalf("close during a read = %d, want busy", r)
	}
	if r := g.take(); r != gateBusy {
		t.Fatalf("take during a read = %d, want busy", r)
	}
	if g.closed() {
		t.Fatal("a refused close closed the gate")
	}
	g.end()
	a := gateArray(t)
	g.unread(gateSlot{a: a})
	r, s := g.close()
	if r != gateGo || s.a != a {
		t.Fatalf("close = (%d, %+v), want go with the unread array", r, s)
	}
	s.release()
	if r, _ := g.close(); r != gateClosed {
		t.Fatalf("second close = %d, want closed", r)
	}
	if r, _ := g.begin(0, 0); r != gateClosed {
		t.Fatalf("begin after close = %d, want closed", r)
	}
	if r, _ := g.tryBegin(true); r != gateClosed {
		t.Fatalf("tryBegin after close = %d, want closed", r)
	}
	late := gateArray(t)
	late.Retain()
	defer late.Release()
	g.unread(gateSlot{a: late})
	if n := late.RefCount(); n != 1 {
		t.Fatalf("an array unread after close has %d references, want 1 (released)", n)
	}
}

func TestGateTakeWaitsForAnInterruptedReadsArray(t *testing.T) {
	g := newReadGate()
	g.unread(gateSlot{a: gateArray(t)})
	if r := g.take(); r != gateUnread {
		t.Fatalf("take with an unread array = %d, want unread", r)
	}
	r, s := g.begin(0, 0)
	if r != gateUnread {
		t.Fatalf("begin = %d, want unread", r)
	}
	s.release()
	if r := g.take(); r != gateGo {
		t.Fatalf("take = %d, want go", r)
	}
	if r := g.take(); r != gateClosed {
		t.Fatalf("second take = %d, want closed", r)
	}
}

func TestGateTryBeginNeverWaits(t *testing.T) {
	g := newReadGate()
	if r, _ := g.begin(0, 0); r != gateGo {
		t.Fatalf("begin = %d, want go", r)
	}
	if r, _ := g.tryBegin(true); r != gateBusy {
		t.Fatalf("tryBegin during a read = %d, want busy", r)
	}
	g.end()
	a := gateArray(t)
	g.unread(gateSlot{a: a})
	if r, _ := g.tryBegin(false); r != gateBusy {
		t.Fatalf("tryBegin of a stream whose reads call the producer = %d, want busy", r)
	}
	r, s := g.tryBegin(true)
	if r != gateUnread || s.a != a {
		t.Fatalf("tryBegin = (%d, %+v), want the unread array", r, s)
	}
	s.release()
	if r, _ := g.tryBegin(true); r != gateGo {
		t.Fatalf("tryBegin = %d, want go", r)
	}
	if r, _ := g.begin(time.Millisecond, 0); r != gateBusy {
		t.Fatalf("begin during tryBegin's read = %d, want busy", r)
	}
	g.end()
}

func TestGateLetsOneReaderInAtATime(t *testing.T) {
	g := newReadGate()
	var inside, most atomic.Int32
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 500 {
				if r, _ := g.begin(0, 0); r != gateGo {
					t.Errorf("begin = %d, want go", r)
					return
				}
				n := inside.Add(1)
				if n > most.Load() {
					most.Store(n)
				}
				runtime.Gosched()
				inside.Add(-1)
				g.end()
			}
		}()
	}
	wg.Wait()
	if m := most.Load(); m != 1 {
		t.Fatalf("%d readers were inside at once, want 1", m)
	}
}
