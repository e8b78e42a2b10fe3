package streams

import (
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// handoff is the queue between a PrefetchReader's goroutine and its
// consumer. A buffered channel wakes the other side for every array, and on
// a fast producer that wake (a futex call on each side) cost several times
// the read itself (the figures: docs/performance.md, "Reading a stream").
// Here each side wakes the other
// once per group of arrays:
//
//   - a waiting consumer is woken when half the queue is ready, when a read
//     took longer than slowRead (a slow producer: each array matters more
//     than the wake), or when the stream ended; a consumer that waits
//     longer than groupWait takes what is there;
//   - a producer that found the queue full is woken when it is half empty.
//
// Before either side sleeps it polls for up to spinFor: on a virtual machine
// a wake crosses CPUs and costs tens of microseconds, while a fast producer
// makes an array every microsecond or two (prefetch(8) read 100k arrays/s
// when every wait slept, 400k with depth 64).
//
// The zero value is not usable; make one with newHandoff.
type handoff struct {
	mu            sync.Mutex
	ring          []prefetched
	head, n       int
	queued        atomic.Int64 // n, readable without the lock (for polling)
	consumerWaits bool
	producerWaits bool
	data          chan struct{} // a token for a waiting consumer (capacity 1)
	space         chan struct{} // a token for a waiting producer (capacity 1)
	// an asynchronous consumer (an event loop) waiting for the next push:
	// it is told by a byte written to wakeFD, a pipe the consumer owns (see
	// PrefetchReader.SetWakeFD); -1 when there is none
	armed  bool
	wakeFD int
}

const (
	slowRead  = 20 * time.Microsecond
	groupWait = 200 * time.Microsecond
	spinFor   = 20 * time.Microsecond
)

func newHandoff(depth int) *handoff {
	return &handoff{
		ring:   make([]prefetched, depth),
		data:   make(chan struct{}, 1),
		space:  make(chan struct{}, 1),
		wakeFD: -1,
	}
}

func notify(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// push queues res, waiting for room; false (res not queued) when stop is
// closed first. urgent wakes a waiting consumer at once.
func (h *handoff) push(res prefetched, urgent bool, stop <-chan struct{}) bool {
	full := int64(len(h.ring))
	for spun := time.Now(); h.queued.Load() == full && time.Since(spun) < spinFor; {
	}
	h.mu.Lock()
	for h.n == len(h.ring) {
		h.producerWaits = true
		h.mu.Unlock()
		select {
		case <-h.space:
		case <-stop:
			return false
		}
		h.mu.Lock()
	}
	h.ring[(h.head+h.n)%len(h.ring)] = res
	h.n++
	h.queued.Store(int64(h.n))
	if h.consumerWaits && (urgent || h.n >= max(1, len(h.ring)/2)) {
		h.consumerWaits = false
		notify(h.data)
	}
	h.wakeArmedLocked()
	h.mu.Unlock()
	return true
}

// wakeArmedLocked tells an armed asynchronous consumer that there is news.
func (h *handoff) wakeArmedLocked() {
	if h.armed && h.wakeFD >= 0 {
		h.armed = false
		writeWake(h.wakeFD)
	}
}

// writeWake writes the one byte that wakes an event loop waiting on its pipe.
func writeWake(fd int) {
	// a full pipe already says "ready": the error is ignored
	_, _ = syscall.Write(fd, []byte{1})
}

// tryPop is pop without polling or waiting (an event loop's call).
func (h *handoff) tryPop() (prefetched, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.n == 0 {
		return prefetched{}, false
	}
	return h.popLocked(), true
}

// pop takes the oldest queued read, polling for up to spinFor when there is
// none; false when none came (the caller then waits on h.data, and is woken
// as described above).
func (h *handoff) pop() (prefetched, bool) {
	for spun := time.Now(); h.queued.Load() == 0 && time.Since(spun) < spinFor; {
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.n == 0 {
		h.consumerWaits = true
		return prefetched{}, false
	}
	return h.popLocked(), true
}

func (h *handoff) popLocked() prefetched {
	res := h.ring[h.head]
	h.ring[h.head] = prefetched{}
	h.head = (h.head + 1) % len(h.ring)
	h.n--
	h.queued.Store(int64(h.n))
	if h.producerWaits && h.n <= len(h.ring)/2 {
		h.producerWaits = false
		notify(h.space)
	}
	return res
}

// wait waits for a consumer's wake, at most groupWait or until deadline
// (zero: none) or done: false when the deadline passed.
func (h *handoff) wait(deadline time.Time, done <-chan struct{}) bool {
	d := groupWait
	if !deadline.IsZero() {
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		d = min(d, left)
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-h.data:
	case <-done:
	case <-timer.C:
	}
	return true
}

// setWake sets (fd >= 0) or forgets (-1) the consumer's wake pipe, disarmed.
func (h *handoff) setWake(fd int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.wakeFD, h.armed = fd, false
}
