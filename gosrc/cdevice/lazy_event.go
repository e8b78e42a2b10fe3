package cdevice

import (
	"sync"
	"unsafe"

	"github.com/godevarrow/godevarrow/gosrc/device"
)

// A put-off event. A DLPack or CUDA Array Interface import on the caller's
// default stream (the legacy default stream of the device's primary
// context, the stream a DLPack consumer names when it can:
// dlpack.StreamForProducer) needs an event only when the array is read on
// another queue or exported with a sync_event; most imports are released
// after a consumer on that very queue used them. So the event is recorded
// when first needed, on the same stream: an event recorded later on a queue
// completes after everything queued there before, the producer's writes
// included, so it orders readers as one recorded at the import would (it
// may complete later, never earlier). A wait on the same queue needs no
// event at all (Backend.SameQueue). The rules:
//   - only a stream the backend says is one queue for good (SameQueue of the
//     stream with itself) may be put off; any other gets its event at once;
//   - every reader of an array's event asks syncEvent, which records it on
//     first use (and keeps it: every later reader gets the same one);
//   - the record is shared by the arrays derived from the import (slices,
//     columns), and released with the producer's array (the owner).
type lazyEvent struct {
	b       device.Backend
	s       device.Stream
	mu      sync.Mutex
	cell    unsafe.Pointer // the recorded event's cell; nil until recorded
	release func()
}

// canPutOff says whether an event on s may be recorded when first needed.
func canPutOff(b device.Backend, s device.Stream) bool { return b.SameQueue(s, s) }

// get records the event on first use and returns its cell.
func (l *lazyEvent) get() (unsafe.Pointer, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cell == nil {
		cell, release, err := recordEvent(l.b, l.s)
		if err != nil {
			return nil, err
		}
		l.cell, l.release = cell, release
	}
	return l.cell, nil
}

// waitOnHost waits on the host for the work queued on the stream so far,
// which covers what the event would mark: SyncEvent's way out when the event
// cannot be recorded. A stream that cannot be synchronized either leaves
// nothing else to do (the device has failed).
func (l *lazyEvent) waitOnHost() { _ = l.b.SyncStream(l.s) }

// free releases the event if it was recorded (the owner's release).
func (l *lazyEvent) free() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.release != nil {
		l.release()
		l.cell, l.release = nil, nil
	}
}

// hasEvent says whether readers of a must be ordered after an event.
func (a *Array) hasEvent() bool { return a.event != nil || a.lazy != nil }

// syncEvent is the cell of a's event (nil when there is none), recorded now
// if it was put off.
func (a *Array) syncEvent() (unsafe.Pointer, error) {
	if a.event != nil || a.lazy == nil {
		return a.event, nil
	}
	return a.lazy.get()
}
