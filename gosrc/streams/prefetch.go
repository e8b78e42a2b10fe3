package streams

/*
#include "gate.h"
*/
import "C"

import (
	"errors"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/godevarrow/godevarrow/gosrc/cdevice"
	"github.com/godevarrow/godevarrow/gosrc/cschema"
	"github.com/godevarrow/godevarrow/gosrc/device"
	"github.com/godevarrow/godevarrow/gosrc/errs"
)

// PrefetchReader reads another cdevice.ArrayReader ahead on a goroutine, keeping up
// to a fixed number of arrays ready, so that a slow producer (a foreign
// stream's get_next, say) and a slow consumer overlap.
//
// Arrays and errors arrive in the producer's order: an error at array k is
// returned by Next after arrays 0..k-1; every later call reports that the
// stream ended with it (endedBy).
//
// Releasing what the producer gave us (its arrays and its stream) happens on
// the goroutine that calls Stop or Close, never on the background goroutine,
// so that a foreign release callback runs where its owner expects it
// (ARCHITECTURE rule 8). The one exception: Close called while the background
// goroutine is inside the producer's Next cannot wait for it without risking
// a deadlock with a producer that needs a lock the caller holds (a Python
// producer needs the GIL); the goroutine then releases everything itself when
// the producer returns. Call Stop first, without such locks, to avoid that.
type PrefetchReader struct {
	r       cdevice.ArrayReader
	results *handoff
	stop    chan struct{}
	done    chan struct{}

	stopOnce sync.Once

	mu        sync.Mutex
	inNext    bool       // the goroutine is inside r.Next
	stopping  bool       // Stop or Close was called
	abandoned bool       // Close returned while r.Next was running
	leftover  prefetched // an array read after stop was requested
	cleaned   bool       // the producer's arrays and stream were released
	final     error      // the sticky end: io.EOF or the producer's error
	readerMu  sync.Mutex // serializes Next callers
	// producer holds the thread the goroutine is on while it is inside the
	// producer's Next (0 otherwise): a read of this stream from that thread
	// is the producer reading what it feeds, which the read gate of every
	// stream over this one refuses (OneShotStream.NextHeld).
	producer *producerCell

	// A probe (probeAhead) measures whether its first read blocked: if so it
	// reads ahead from then on, like any PrefetchReader; if not, its
	// goroutine ends and later reads call the producer on the reading
	// goroutine. probeOutcome is probeUnread until that read is in.
	probe        bool
	probeStarted chan struct{} // a probe's: closed when its first read begins
	probeOutcome atomic.Int32
	detached     bool // the producer's reader was taken back (detach): Close leaves it
}

// prefetched is one read: an array (a held record when the reader holds
// arrays in C, see heldReader, else an cdevice.Array), or the error that ended the
// stream.
type prefetched struct {
	a    *cdevice.Array
	held unsafe.Pointer
	err  error
}

func (r prefetched) release() {
	if r.a != nil {
		r.a.Release()
	}
	if r.held != nil {
		cdevice.ReleaseHeld(r.held)
	}
}

// array is r as an cdevice.Array (a held record is built into one).
func (r prefetched) array() (*cdevice.Array, error) {
	if r.held == nil {
		return r.a, r.err
	}
	a, err := cdevice.ImportHeld(r.held)
	cdevice.ReleaseHeld(r.held)
	return a, err
}

// MaxPrefetchDepth bounds the read-ahead: the queue is allocated up front,
// so a depth taken from a caller (prefetch(10**12)) must not size it.
const MaxPrefetchDepth = 1 << 10

// Prefetch starts reading r ahead, keeping up to depth arrays ready, depth
// clamped to [1, MaxPrefetchDepth]. The PrefetchReader owns r from now on.
func Prefetch(r cdevice.ArrayReader, depth int) *PrefetchReader {
	p := newPrefetch(r, depth)
	go p.run()
	return p
}

func newPrefetch(r cdevice.ArrayReader, depth int) *PrefetchReader {
	depth = min(max(depth, 1), MaxPrefetchDepth)
	return &PrefetchReader{
		r:        r,
		results:  newHandoff(depth),
		producer: newProducerCell(),
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
	}
}

// probeAhead reads r's first array on a goroutine: a stream read from an
// event loop learns from that read whether its producer waits
// (OneShotStream.ProbeHeld) without the loop's thread waiting on it. When
// the read blocked, the goroutine reads on, up to depth arrays ahead, as
// Prefetch's does (at once: a producer that waits for the loop, or for other
// streams the loop reads, must not wait for the loop to take that first
// array); when it did not, the goroutine ends and the rest are read on the
// reader's goroutine (Next calls r.Next once the first was taken). Blocked
// reports, once the first read is in, whether it blocked.
func probeAhead(r cdevice.ArrayReader, depth int) *PrefetchReader {
	p := newPrefetch(r, depth)
	p.probe = true
	p.probeStarted = make(chan struct{})
	go p.run()
	return p
}

// A probe's outcome (probeOutcome).
const (
	probeUnread  = iota // its first read is not in yet
	probeFast           // it did not block: the goroutine ended after it
	probeBlocked        // it blocked: the goroutine reads ahead
)

// Blocked reports whether a probe's first read blocked (gda_read_blocked).
func (p *PrefetchReader) Blocked() bool { return p.probeOutcome.Load() == probeBlocked }

// fastProbe reports whether the reader is a probe whose first read did not
// block: its goroutine ended after that read.
func (p *PrefetchReader) fastProbe() bool { return p.probeOutcome.Load() == probeFast }

// detach gives back the reader of a probe whose first read did not block,
// once its one array was taken: its goroutine has ended (or is ending: it
// waits for that) and Close no longer touches the reader, which the caller
// owns again.
func (p *PrefetchReader) detach() cdevice.ArrayReader {
	<-p.done
	p.mu.Lock()
	p.detached = true
	p.mu.Unlock()
	p.results.setWake(-1)
	return p.r
}

func (p *PrefetchReader) run() {
	counted := false // in producerProcs: from its first read, or a probe's second
	defer func() {
		if counted {
			producerEnded()
		}
		close(p.done)
		p.results.mu.Lock()
		p.results.wakeArmedLocked()
		p.results.mu.Unlock()
	}()
	for {
		p.mu.Lock()
		if p.stopping {
			p.mu.Unlock()
			return
		}
		p.inNext = true
		p.mu.Unlock()
		if !counted && (!p.probe || p.probeOutcome.Load() != probeUnread) {
			producerBegan()
			counted = true
		}

		start := time.Now()
		runtime.LockOSThread() // so that the thread named is the producer's (and the one measured)
		p.producer.set(CurrentThread())
		var res prefetched
		if p.probe && p.probeOutcome.Load() == probeUnread {
			close(p.probeStarted)
			var blocked bool
			res, blocked = p.measuredFromProducer()
			outcome := int32(probeFast)
			if blocked {
				outcome = probeBlocked
			}
			p.probeOutcome.Store(outcome)
		} else {
			res = p.nextFromProducer()
		}
		p.producer.set(0)
		runtime.UnlockOSThread()
		urgent := res.err != nil || time.Since(start) > slowRead
		p.mu.Lock()
		p.inNext = false
		abandoned := p.abandoned
		p.mu.Unlock()
		if abandoned {
			res.release()
			p.cleanup()
			return
		}
		if !p.results.push(res, urgent, p.stop) {
			p.mu.Lock()
			p.leftover = res
			p.mu.Unlock()
			return
		}
		if res.err != nil || p.fastProbe() {
			return
		}
	}
}

// nextFromProducer reads one array (held in C when the reader can, which
// saves building Go data on this goroutine and on the consumer's), and turns
// a panic in the producer's Next into an error, so that the background
// goroutine never takes the process down.
func (p *PrefetchReader) nextFromProducer() (res prefetched) {
	defer errs.RecoverInto(func(e error) { res = prefetched{err: e} })
	if hr, ok := p.r.(heldReader); ok {
		res.held, res.a, res.err = hr.NextHeld()
	} else {
		res.a, res.err = p.r.Next()
	}
	return res
}

// measuredFromProducer is nextFromProducer that also says whether the read
// blocked (gda_read_blocked): measured in C around a foreign stream's read,
// else here around the reader's Next (the goroutine is locked to its thread).
func (p *PrefetchReader) measuredFromProducer() (res prefetched, blocked bool) {
	defer errs.RecoverInto(func(e error) { res = prefetched{err: e} })
	if sr, ok := p.r.(*StreamReader); ok {
		res.held, res.a, res.err, blocked = sr.nextHeldMeasured()
	} else {
		t0 := C.gda_read_clock_now(1)
		res = p.nextFromProducer()
		blocked = C.gda_read_blocked(t0, C.gda_read_clock_now(1), 1) != 0
	}
	if v := probeVerdict.Load(); v != nil {
		blocked = *v
	}
	return res, blocked
}

// probeVerdict, when set, replaces the measure of every probe's read: the
// tests of what follows a probe set it (export_test.go), since no test can
// make a loaded machine measure a read as it wants.
var probeVerdict atomic.Pointer[bool]

// Schema returns the stream's schema.
func (p *PrefetchReader) Schema() *cschema.Schema { return p.r.Schema() }

// DeviceType returns the stream's device type.
func (p *PrefetchReader) DeviceType() device.Type { return p.r.DeviceType() }

// Next returns the next array, waiting for the background read if none is
// ready; (nil, io.EOF) at the end. After Stop or Close it reports
// errs.ErrConsumed.
func (p *PrefetchReader) Next() (*cdevice.Array, error) {
	return p.next().array()
}

func (p *PrefetchReader) next() prefetched {
	_, res := p.take(time.Time{})
	return res
}

// take returns the next read, waiting until deadline (zero: as long as it
// takes): false when the deadline passed first.
func (p *PrefetchReader) take(deadline time.Time) (bool, prefetched) {
	p.readerMu.Lock()
	defer p.readerMu.Unlock()
	for {
		if p.final != nil {
			return true, prefetched{err: p.final}
		}
		if res, ok := p.results.pop(); ok {
			if res.err != nil {
				p.final = EndedBy(res.err)
			}
			return true, res
		}
		select {
		case <-p.done:
			// the goroutine ended: take what it left in the queue first
			if res, ok := p.results.pop(); ok {
				if res.err != nil {
					p.final = EndedBy(res.err)
				}
				return true, res
			}
			p.mu.Lock()
			stopped := p.stopping
			p.mu.Unlock()
			if stopped {
				return true, prefetched{err: errs.Errorf(errs.ErrConsumed, "the stream was closed")}
			}
			if p.fastProbe() {
				// its one read ahead was taken: the rest are the caller's
				res := p.nextFromProducer()
				if res.err != nil {
					p.final = EndedBy(res.err)
				}
				return true, res
			}
			p.final = io.EOF
			continue
		default:
		}
		if !p.results.wait(deadline, p.done) {
			return false, prefetched{}
		}
	}
}

// TryNextHeld is NextWithinHeld for a caller that must not wait, such as an
// event loop holding Python's GIL: ok is false when no read is ready now
// (then arm the wake, see WakeFD). It never calls the producer.
func (p *PrefetchReader) TryNextHeld() (held unsafe.Pointer, a *cdevice.Array, err error, ok bool) {
	if !p.readerMu.TryLock() {
		return nil, nil, nil, false // another reader is waiting
	}
	final := p.final
	var res prefetched
	if final == nil {
		res, ok = p.results.tryPop()
		if ok && res.err != nil {
			p.final = EndedBy(res.err)
		}
	}
	p.readerMu.Unlock()
	switch {
	case final != nil:
		return nil, nil, final, true
	case ok:
		return res.held, res.a, res.err, true
	}
	select {
	case <-p.done: // the end, or a stop: the waiting read answers at once
		if p.fastProbe() && !p.stopped() {
			return nil, nil, nil, false // what follows a probe's one read is the producer's to make
		}
		ok, res = p.take(time.Now())
		return res.held, res.a, res.err, ok
	default:
		return nil, nil, nil, false
	}
}

// SetWakeFD gives the write end of a pipe (non-blocking) on which an
// asynchronous consumer, such as an event loop, is told that a read is ready
// or the stream ended, instead of blocking a thread in Next: after ArmWake(true)
// one byte is written at the next push, or at once when a read is ready or
// the goroutine has ended. The consumer owns the pipe: nothing is written to
// it after Close (or after SetWakeFD(-1)), so the consumer closes it once the
// stream is closed.
func (p *PrefetchReader) SetWakeFD(fd int) {
	p.results.setWake(fd)
}

// ArmWake arms (or disarms) the wake of SetWakeFD: a consumer disarms it when
// it stops waiting, so that no byte arrives for a wait that was given up.
func (p *PrefetchReader) ArmWake(on bool) {
	h := p.results
	h.mu.Lock()
	defer h.mu.Unlock()
	h.armed = on && h.wakeFD >= 0
	if !h.armed {
		return
	}
	select {
	case <-p.done:
		h.wakeArmedLocked()
		return
	default:
	}
	if h.n > 0 {
		h.wakeArmedLocked()
	}
}

func (p *PrefetchReader) stopped() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stopping
}

// Stop ends the background reading and waits for a read in progress to
// return. Arrays already read stay queued until Close. Idempotent.
func (p *PrefetchReader) Stop() { p.StopWithin(0) }

// StopWithin is Stop that waits at most d (0: as long as it takes) for the
// read in progress: false when that read had not ended by then (the reading
// stops when it does; call again to wait for it).
func (p *PrefetchReader) StopWithin(d time.Duration) bool {
	p.mu.Lock()
	p.stopping = true
	p.mu.Unlock()
	p.stopOnce.Do(func() { close(p.stop) })
	if d <= 0 {
		<-p.done
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.done:
		return true
	case <-t.C:
		return false
	}
}

// Close stops the background reading and releases the queued arrays and the
// producer's stream (see the type's documentation for a read in progress).
// Idempotent.
func (p *PrefetchReader) Close() error {
	p.mu.Lock()
	p.stopping = true
	if p.inNext {
		p.abandoned = true
		p.mu.Unlock()
		p.stopOnce.Do(func() { close(p.stop) })
		return nil
	}
	p.mu.Unlock()
	p.Stop()
	return p.cleanup()
}

// cleanup releases everything still held, once.
func (p *PrefetchReader) cleanup() error {
	p.mu.Lock()
	if p.cleaned {
		p.mu.Unlock()
		return nil
	}
	p.cleaned = true
	left := p.leftover
	p.leftover = prefetched{}
	p.mu.Unlock()
	left.release()
	for {
		res, ok := p.results.tryPop()
		if !ok {
			break
		}
		res.release()
	}
	p.results.setWake(-1) // the consumer may close its pipe once Close returns
	if p.detached {
		return nil
	}
	err := p.r.Close()
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return err
}

// NextWithin is Next waiting at most d: ready is false when nothing arrived
// in time (then call again; nothing is lost).
func (p *PrefetchReader) NextWithin(d time.Duration) (a *cdevice.Array, err error, ready bool) {
	held, a, err, ready := p.NextWithinHeld(d)
	if held != nil {
		a, err = prefetched{held: held}.array()
	}
	return a, err, ready
}

// NextWithinHeld is NextWithin for a binding that holds arrays in C: an array
// read as a held record comes back as one (the caller owns its reference).
func (p *PrefetchReader) NextWithinHeld(d time.Duration) (held unsafe.Pointer, a *cdevice.Array, err error, ready bool) {
	ok, res := p.take(time.Now().Add(d))
	return res.held, res.a, res.err, ok
}
