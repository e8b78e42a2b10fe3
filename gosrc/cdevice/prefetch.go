package cdevice

import (
	"errors"
	"io"
	"sync"
	"time"

	"github.com/godevarrow/godevarrow/gosrc/device"
)

// PrefetchReader reads another ArrayReader ahead on a goroutine, keeping up
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
	r       ArrayReader
	results chan prefetched
	stop    chan struct{}
	done    chan struct{}

	stopOnce sync.Once

	mu        sync.Mutex
	inNext    bool       // the goroutine is inside r.Next
	stopping  bool       // Stop or Close was called
	abandoned bool       // Close returned while r.Next was running
	leftover  *Array     // an array read after stop was requested
	cleaned   bool       // the producer's arrays and stream were released
	final     error      // the sticky end: io.EOF or the producer's error
	readerMu  sync.Mutex // serializes Next callers
}

type prefetched struct {
	a   *Array
	err error
}

// MaxPrefetchDepth bounds the read-ahead: the queue is allocated up front,
// so a depth taken from a caller (prefetch(10**12)) must not size it.
const MaxPrefetchDepth = 1 << 10

// Prefetch starts reading r ahead, keeping up to depth arrays ready, depth
// clamped to [1, MaxPrefetchDepth]. The PrefetchReader owns r from now on.
func Prefetch(r ArrayReader, depth int) *PrefetchReader {
	depth = min(max(depth, 1), MaxPrefetchDepth)
	p := &PrefetchReader{
		r:       r,
		results: make(chan prefetched, depth),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	go p.run()
	return p
}

func (p *PrefetchReader) run() {
	defer close(p.done)
	for {
		p.mu.Lock()
		if p.stopping {
			p.mu.Unlock()
			return
		}
		p.inNext = true
		p.mu.Unlock()

		a, err := p.nextFromProducer()

		p.mu.Lock()
		p.inNext = false
		abandoned := p.abandoned
		p.mu.Unlock()
		if abandoned {
			if a != nil {
				a.Release()
			}
			p.cleanup()
			return
		}
		select {
		case p.results <- prefetched{a, err}:
		case <-p.stop:
			p.mu.Lock()
			p.leftover = a
			p.mu.Unlock()
			return
		}
		if err != nil {
			return
		}
	}
}

// nextFromProducer turns a panic in the producer's Next into an error, so
// that the background goroutine never takes the process down.
func (p *PrefetchReader) nextFromProducer() (a *Array, err error) {
	defer recoverInto(func(e error) { a, err = nil, e })
	return p.r.Next()
}

// Schema returns the stream's schema.
func (p *PrefetchReader) Schema() *Schema { return p.r.Schema() }

// DeviceType returns the stream's device type.
func (p *PrefetchReader) DeviceType() device.Type { return p.r.DeviceType() }

// Next returns the next array, waiting for the background read if none is
// ready; (nil, io.EOF) at the end. After Stop or Close it reports
// ErrConsumed.
func (p *PrefetchReader) Next() (*Array, error) {
	p.readerMu.Lock()
	defer p.readerMu.Unlock()
	if p.final != nil {
		return nil, p.final
	}
	select {
	case res := <-p.results:
		if res.err != nil {
			p.final = endedBy(res.err)
		}
		return res.a, res.err
	case <-p.done:
		// the goroutine ended: take what it left in the queue first
		select {
		case res := <-p.results:
			if res.err != nil {
				p.final = endedBy(res.err)
			}
			return res.a, res.err
		default:
		}
		p.mu.Lock()
		stopped := p.stopping
		p.mu.Unlock()
		if stopped {
			return nil, errorf(ErrConsumed, "the stream was closed")
		}
		p.final = io.EOF
		return nil, io.EOF
	}
}

// Stop ends the background reading and waits for a read in progress to
// return. Arrays already read stay queued until Close. Idempotent.
func (p *PrefetchReader) Stop() {
	p.mu.Lock()
	p.stopping = true
	p.mu.Unlock()
	p.stopOnce.Do(func() { close(p.stop) })
	<-p.done
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
	p.leftover = nil
	p.mu.Unlock()
	if left != nil {
		left.Release()
	}
	for {
		select {
		case res := <-p.results:
			if res.a != nil {
				res.a.Release()
			}
			continue
		default:
		}
		break
	}
	err := p.r.Close()
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return err
}

// NextWithin is Next waiting at most d: ready is false when nothing arrived
// in time (then call again; nothing is lost).
func (p *PrefetchReader) NextWithin(d time.Duration) (a *Array, err error, ready bool) {
	p.readerMu.Lock()
	final := p.final
	p.readerMu.Unlock()
	if final != nil {
		return nil, final, true
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case res := <-p.results:
		p.readerMu.Lock()
		if res.err != nil {
			p.final = endedBy(res.err)
		}
		p.readerMu.Unlock()
		return res.a, res.err, true
	case <-p.done:
		a, err := p.Next()
		return a, err, true
	case <-timer.C:
		return nil, nil, false
	}
}
