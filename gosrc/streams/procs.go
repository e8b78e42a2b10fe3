package streams

import (
	"os"
	"runtime"
	"sync"
)

// Processors for goroutines that wait in producers.
//
// A read-ahead goroutine (PrefetchReader) spends nearly all its life inside
// its producer's get_next, a call into C during which its thread holds no P
// for long: the runtime hands the P to other goroutines. When the call
// returns, the goroutine needs a P again to push the array and call the
// producer once more; with every P taken it parks and waits for the
// scheduler, on each array. Go's default GOMAXPROCS is the number of CPUs,
// so on a small machine a few read-aheads over producers that wait (for
// I/O, a device, a timer) queue behind each other there, although none of
// them uses a CPU while it waits: on 2 CPUs, four streams read together
// with asyncio, each waiting 100 µs per array, took 1.35x the time of one
// stream with GOMAXPROCS=2, 1.07x with 4 and 1.02x with 8.
//
// So while read-aheads run, GOMAXPROCS is raised to the value it had when
// the first began plus one per read-ahead (at most maxProducerProcs more):
// every read-ahead finds a P when its producer returns, and Go code never
// runs on more threads than before plus the read-aheads that would have run
// it. When the last read-ahead ends, GOMAXPROCS goes back to that first
// value, unless someone else changed it meanwhile (a Go program's own
// runtime.GOMAXPROCS call is then kept). Like any runtime.GOMAXPROCS call,
// this ends the runtime's automatic updates of GOMAXPROCS to a container's
// CPU limit. Changing GOMAXPROCS stops the world for a moment, so it
// happens only when a read-ahead for good begins, and when the last ends;
// not for a probe that found its producer fast. A GOMAXPROCS set in the
// environment is the user's choice, and is left alone.
const maxProducerProcs = 64

var producerProcs struct {
	mu       sync.Mutex
	readers  int  // read-aheads running
	base     int  // GOMAXPROCS when the first of them began
	raised   int  // what producerBegan set it to last (0: nothing)
	disabled bool // GOMAXPROCS was set in the environment
}

func init() {
	producerProcs.disabled = os.Getenv("GOMAXPROCS") != ""
}

// producerBegan counts a read-ahead in (see above).
func producerBegan() {
	pp := &producerProcs
	pp.mu.Lock()
	defer pp.mu.Unlock()
	if pp.disabled {
		return
	}
	if pp.readers == 0 {
		pp.base = runtime.GOMAXPROCS(0)
	}
	pp.readers++
	if pp.readers <= maxProducerProcs {
		pp.raised = pp.base + pp.readers
		runtime.GOMAXPROCS(pp.raised)
	}
}

// producerEnded counts a read-ahead out: GOMAXPROCS is lowered only when
// the last one ends (one stop of the world per burst of streams, not one
// per stream).
func producerEnded() {
	pp := &producerProcs
	pp.mu.Lock()
	defer pp.mu.Unlock()
	if pp.disabled {
		return
	}
	pp.readers--
	if pp.readers == 0 {
		if runtime.GOMAXPROCS(0) == pp.raised {
			runtime.GOMAXPROCS(pp.base)
		}
		pp.raised = 0
	}
}
