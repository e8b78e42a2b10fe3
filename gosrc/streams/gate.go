package streams

/*
// The gate keeps no Go pointer and calls no Go: its calls are the cheap kind
// (a Go-made stream makes two per read).
#cgo noescape gda_gate_begin
#cgo nocallback gda_gate_begin
#cgo noescape gda_gate_try_begin
#cgo nocallback gda_gate_try_begin
#cgo noescape gda_gate_end
#cgo nocallback gda_gate_end
#cgo noescape gda_gate_unread
#cgo nocallback gda_gate_unread
#cgo noescape gda_gate_close
#cgo nocallback gda_gate_close
#cgo noescape gda_gate_take
#cgo nocallback gda_gate_take
#cgo noescape gda_gate_wait_idle
#cgo nocallback gda_gate_wait_idle
#cgo noescape gda_gate_closed
#cgo nocallback gda_gate_closed
#cgo noescape gda_gate_waiters
#cgo nocallback gda_gate_waiters
#cgo nocallback gda_gates_new
#cgo noescape gda_gate_watch_producer
#cgo nocallback gda_gate_watch_producer
#include <stdlib.h>
#include "gate.h"
*/
import "C"

import (
	"runtime"
	"runtime/cgo"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/godevarrow/godevarrow/gosrc/cdevice"
	"github.com/godevarrow/godevarrow/gosrc/errs"
)

// readGate is Go's handle on a read gate (gate.h), the bookkeeping of a
// stream that is read once: busy flag, reader thread, unread slot, closed
// flag. The C struct is reference-counted: Go's reference goes when the
// gate's slab is collected, a binding takes its own (ref) to keep the
// stream's bookkeeping in C.
type readGate struct {
	c    *C.gda_read_gate
	slab *gateSlab // keeps Go's reference to c
}

// Gates are made in slabs (gda_gates_new), with one cleanup per slab, which
// drops Go's reference to the slab once no readGate of it is reachable: an
// allocation and a cleanup per gate would cost more than the rest of a
// short stream's set-up.
const gateSlabSize = 64

type gateSlab struct {
	gates [gateSlabSize]*C.gda_read_gate
	used  int
}

var (
	gateSlabMu  sync.Mutex
	gateSlabNow *gateSlab
)

// gateResult is what a gate operation answers (GDA_GATE_*).
type gateResult int

const (
	gateGo        = gateResult(C.GDA_GATE_GO)
	gateUnread    = gateResult(C.GDA_GATE_UNREAD)
	gateBusy      = gateResult(C.GDA_GATE_BUSY)
	gateClosed    = gateResult(C.GDA_GATE_CLOSED)
	gateReentrant = gateResult(C.GDA_GATE_REENTRANT)
)

// gateSlot is an array in the gate's unread slot: a held record or an Array.
type gateSlot struct {
	held unsafe.Pointer
	a    *cdevice.Array
}

func (s gateSlot) empty() bool { return s.held == nil && s.a == nil }

// release drops what s holds.
func (s gateSlot) release() {
	if s.a != nil {
		s.a.Release()
	}
	if s.held != nil {
		cdevice.ReleaseHeld(s.held)
	}
}

// slotFromC takes an array out of a C slot: an Array there is a cgo handle,
// which is deleted.
func slotFromC(c C.gda_gate_slot) gateSlot {
	s := gateSlot{held: c.held}
	if c.array != 0 {
		h := cgo.Handle(c.array)
		s.a = h.Value().(*cdevice.Array)
		h.Delete()
	}
	return s
}

func newReadGate() *readGate {
	gateSlabMu.Lock()
	defer gateSlabMu.Unlock()
	s := gateSlabNow
	if s == nil || s.used == gateSlabSize {
		s = &gateSlab{}
		if C.gda_gates_new(&s.gates[0], gateSlabSize) != 0 {
			panic(errs.Errorf(errs.ErrNoMemory, "out of memory making a stream's read gate"))
		}
		runtime.AddCleanup(s, func(c *C.gda_read_gate) { C.gda_gate_unref(c) }, s.gates[0])
		gateSlabNow = s
	}
	g := &readGate{c: s.gates[s.used], slab: s}
	s.used++
	return g
}

// waitMs is a wait for the gate: whole milliseconds, rounded up; 0 (none,
// or as long as it takes, as the call says) stays 0.
func waitMs(d time.Duration) C.int64_t {
	if d <= 0 {
		return 0
	}
	return C.int64_t((d + time.Millisecond - 1) / time.Millisecond)
}

// begin begins a read (gda_gate_begin); wait 0 waits as long as it takes.
func (g *readGate) begin(wait time.Duration, thread ThreadID) (gateResult, gateSlot) {
	var c C.gda_gate_slot
	r := gateResult(C.gda_gate_begin(g.c, waitMs(wait), C.uint64_t(thread), &c))
	runtime.KeepAlive(g)
	return r, slotFromC(c)
}

// tryBegin begins a read without waiting (gda_gate_try_begin).
func (g *readGate) tryBegin(mayRead bool) (gateResult, gateSlot) {
	var c C.gda_gate_slot
	r := gateResult(C.gda_gate_try_begin(g.c, cBool(mayRead), &c))
	runtime.KeepAlive(g)
	return r, slotFromC(c)
}

// end ends the read that begin or tryBegin let go ahead.
func (g *readGate) end() {
	C.gda_gate_end(g.c)
	runtime.KeepAlive(g)
}

// unread puts s in the unread slot, or releases it when the gate will not
// keep it (closed, or an array already waits).
func (g *readGate) unread(s gateSlot) {
	c := C.gda_gate_slot{held: s.held}
	var h cgo.Handle
	if s.a != nil {
		h = cgo.NewHandle(s.a)
		c.array = C.uintptr_t(h)
	}
	kept := C.gda_gate_unread(g.c, c) != 0
	runtime.KeepAlive(g)
	if !kept {
		if h != 0 {
			h.Delete()
		}
		s.release()
	}
}

// close closes the gate (gda_gate_close); on gateGo the caller releases the
// slot's array along with the stream.
func (g *readGate) close() (gateResult, gateSlot) {
	var c C.gda_gate_slot
	r := gateResult(C.gda_gate_close(g.c, &c))
	runtime.KeepAlive(g)
	return r, slotFromC(c)
}

// take closes the gate for a stream moved out whole (gda_gate_take).
func (g *readGate) take() gateResult {
	r := gateResult(C.gda_gate_take(g.c))
	runtime.KeepAlive(g)
	return r
}

// waitIdle waits up to d for the read in progress: whether the gate is idle.
func (g *readGate) waitIdle(d time.Duration) bool {
	idle := C.gda_gate_wait_idle(g.c, waitMs(d)) != 0
	runtime.KeepAlive(g)
	return idle
}

// watchProducer makes reads from the thread in p refused (gateReentrant).
func (g *readGate) watchProducer(p *producerCell) {
	var cell *C.uint64_t // nil: none
	if p != nil {
		cell = p.c
	}
	C.gda_gate_watch_producer(g.c, cell)
	runtime.KeepAlive(g)
}

// producerCell is a read-ahead's producer thread, in C memory so that a read
// gate can read it: the thread its goroutine is on while inside the
// producer, 0 otherwise. Freed when the read-ahead is collected.
type producerCell struct{ c *C.uint64_t }

func newProducerCell() *producerCell {
	c := (*C.uint64_t)(C.calloc(1, C.sizeof_uint64_t))
	if c == nil {
		panic(errs.Errorf(errs.ErrNoMemory, "out of memory starting a read-ahead"))
	}
	p := &producerCell{c: c}
	runtime.AddCleanup(p, func(c *C.uint64_t) { C.free(unsafe.Pointer(c)) }, c)
	return p
}

// set stores the thread inside the producer (0: none).
func (p *producerCell) set(t ThreadID) {
	(*atomic.Uint64)(unsafe.Pointer(p.c)).Store(uint64(t))
	runtime.KeepAlive(p)
}

func (g *readGate) closed() bool {
	closed := C.gda_gate_closed(g.c) != 0
	runtime.KeepAlive(g)
	return closed
}

// waiters is how many callers wait in begin (tests order races with it).
func (g *readGate) waiters() int {
	n := int(C.gda_gate_waiters(g.c))
	runtime.KeepAlive(g)
	return n
}

// pointer is the C gate, valid while g is reachable (see
// OneShotStream.CRead).
func (g *readGate) pointer() unsafe.Pointer { return unsafe.Pointer(g.c) }

func cBool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// GateSlotArray is the Array of a read gate's unread slot that a binding's
// C read took (gda_gate_slot.array, see OneShotStream.CRead): the caller
// owns its reference.
func GateSlotArray(c uintptr) *cdevice.Array {
	return slotFromC(C.gda_gate_slot{array: C.uintptr_t(c)}).a
}
