package streams

/*
#cgo CFLAGS: -O2 -std=c11 -I${SRCDIR}/../include
#include "gda.h"
*/
import "C"

import (
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/godevarrow/godevarrow/gosrc/cdevice"
	"github.com/godevarrow/godevarrow/gosrc/cschema"
	"github.com/godevarrow/godevarrow/gosrc/device"
	"github.com/godevarrow/godevarrow/gosrc/errs"
)

// OneShotStream is a stream that is read once: its arrays go to whoever
// calls Next, in order, or the whole stream is moved out once (Export, Cast,
// Prefetch). It is what a language binding holds for a stream its user may
// read from several threads and close from yet another.
//
// No lock is held while the producer works. A producer may need a lock its
// caller holds elsewhere (a Python producer needs the GIL, which a thread
// calling Close holds), so holding one across a read would deadlock. Instead
// a read marks the stream busy, in its read gate (gate.h, the one
// implementation of this bookkeeping, which a binding's C also uses to read a
// foreign stream without Go: see CRead):
//
//   - a second Next waits for the first to end, in slices of at most its
//     wait, so that its caller can attend to signals between them;
//   - a read from the thread that is inside this stream's producer (the
//     producer reads the stream it feeds, which would wait for itself) fails
//     at once, when the caller says which thread it is (NextHeld);
//   - Close during a read changes nothing and reports false: the caller waits
//     with Settle, without its own locks, and calls Close again, so that the
//     producer's release runs on the caller's thread (never on the reader's);
//   - Export, Cast and Prefetch during a read fail and leave the stream as
//     it was.
//
// States: open → (reading ⇄ open) → closed, where "closed" covers moved out,
// closed and released; every use after that reports ErrConsumed.
//
// The zero value is not usable; make one with NewOneShotStream.
type OneShotStream struct {
	reader   cdevice.ArrayReader
	prefetch *PrefetchReader // the read-ahead under reader, if any (see Settle)

	// gate keeps the busy flag, the thread of the read in progress (as its
	// caller named it; see NextHeld), the closed flag, and the unread slot:
	// an array read but not delivered (its reader was interrupted, by Ctrl-C
	// say), which the next read returns, so that nothing is lost.
	gate *readGate

	// whenSlow is the depth of a read-ahead that a binding starts once a
	// read blocks (PrefetchWhenSlow, StartReadAhead); 0: none pending.
	whenSlow int64
	// probing: prefetch is a probe of the next read (ProbeHeld), whose
	// outcome decides where the reads after it run; it changes inside a read.
	probing bool
	// probeMissed: the probe out (probing) was not in within its caller's
	// wait; missedProbes counts the fast probes in a row that were missed
	// (both inside a read). probeDue: an event loop's next read is a probe
	// (under swap; see ProbeDue).
	probeMissed  bool
	missedProbes int
	probeDue     bool
	// wakeFD is the event loop's wake pipe (SetWakeFD) while hasWake, given
	// to every read-ahead the stream starts; under swap.
	wakeFD  int
	hasWake bool
	// swap guards reader and prefetch while StartReadAhead changes them, for
	// those who look at them outside a read (Settle, the wake, TryNextHeld);
	// a read holds the gate, as StartReadAhead does. schema and devType are
	// the reader's, kept so that asking for them needs neither.
	swap    sync.Mutex
	schema  *cschema.Schema
	devType device.Type
	// closed: a Close found the gate closed, or closed it: the gate never
	// opens again, so later Closes (a handle's release after the binding's
	// close) return without a call into C.
	closed atomic.Bool
}

// heldReader is a reader that can hand out arrays held in C (StreamReader).
type heldReader interface {
	NextHeld() (unsafe.Pointer, *cdevice.Array, error)
}

// NewOneShotStream makes a OneShotStream that owns r.
func NewOneShotStream(r cdevice.ArrayReader) *OneShotStream {
	return &OneShotStream{reader: r, gate: newReadGate(), schema: r.Schema(), devType: r.DeviceType()}
}

func errStreamConsumed() error {
	return errs.Errorf(errs.ErrConsumed, "the stream was already consumed (exported or closed); a stream can be read only once")
}

// Schema returns the schema of every array of the stream.
func (s *OneShotStream) Schema() *cschema.Schema { return s.schema }

// DeviceType returns the device type of every array of the stream.
func (s *OneShotStream) DeviceType() device.Type { return s.devType }

// Next returns the next array (the caller owns one reference), or (nil,
// io.EOF) at the end. A read-ahead stream (Prefetch), or a read of another
// goroutine in progress, is waited on for at most wait (0: as long as it
// takes): ready is false when nothing arrived in time (call again; nothing
// is lost), so that a caller can attend to signals while a producer blocks.
// Other streams are read on the calling goroutine, where a foreign producer
// expects its reads.
func (s *OneShotStream) Next(wait time.Duration) (a *cdevice.Array, err error, ready bool) {
	held, a, err, ready := s.next(wait, false, 0)
	if held != nil {
		a, err = cdevice.ImportHeld(held)
		cdevice.ReleaseHeld(held)
	}
	return a, err, ready
}

// NextHeld is Next for a binding that holds arrays in C (held.h): an array
// of a foreign stream that the held gate takes comes back as a held record
// (the caller owns its reference), any other as an Array. Per array that
// saves building Go data, which is most of the cost of reading a stream of
// small batches (docs/performance.md).
//
// thread names the calling OS thread (CurrentThread; 0: unnamed). A named
// read from the thread on which this stream's producer is running — a
// producer that reads the stream it feeds — fails with ErrInvalid instead
// of waiting for itself.
func (s *OneShotStream) NextHeld(wait time.Duration, thread ThreadID) (held unsafe.Pointer, a *cdevice.Array, err error, ready bool) {
	return s.next(wait, true, thread)
}

func errReentrantRead() error {
	return errs.Errorf(errs.ErrInvalid, "the stream's producer read the stream it feeds: a read from inside its own get_next would wait for itself")
}

func (s *OneShotStream) next(wait time.Duration, wantHeld bool, thread ThreadID) (held unsafe.Pointer, a *cdevice.Array, err error, ready bool) {
	switch r, slot := s.gate.begin(wait, thread); r {
	case gateReentrant:
		return nil, nil, errReentrantRead(), true
	case gateBusy:
		return nil, nil, nil, false
	case gateClosed:
		return nil, nil, errStreamConsumed(), true
	case gateUnread:
		return slot.held, slot.a, nil, true
	}
	defer s.gate.end()
	return s.read(wait, wantHeld)
}

// read is a read the gate let in: from the read-ahead's queue (waiting at
// most wait), or from the producer.
func (s *OneShotStream) read(wait time.Duration, wantHeld bool) (held unsafe.Pointer, a *cdevice.Array, err error, ready bool) {
	if s.readsAhead() {
		if wantHeld {
			held, a, err, ready = s.prefetch.NextWithinHeld(wait)
		} else {
			a, err, ready = s.prefetch.NextWithin(wait)
		}
		if ready {
			s.afterProbe(err)
		}
		return held, a, err, ready
	}
	if hr, ok := s.reader.(heldReader); ok && wantHeld {
		held, a, err = hr.NextHeld()
		return held, a, err, true
	}
	a, err = s.reader.Next()
	return nil, a, err, true
}

// readsAheadNow is readsAhead for a caller outside a read.
func (s *OneShotStream) readsAheadNow() bool {
	s.swap.Lock()
	defer s.swap.Unlock()
	return s.readsAhead()
}

// readsAhead reports whether the stream's reads take arrays its read-ahead
// queued (Prefetch), not the producer's. Inside a read, or under swap.
func (s *OneShotStream) readsAhead() bool {
	return s.prefetch != nil && s.reader == cdevice.ArrayReader(s.prefetch)
}

// TryNextHeld is NextHeld for a caller that must not wait (an event loop):
// ok is false when nothing is ready now, and always for a stream that does
// not read ahead (see Prefetch), whose reads call the producer. It never
// calls the producer.
func (s *OneShotStream) TryNextHeld() (held unsafe.Pointer, a *cdevice.Array, err error, ok bool) {
	switch r, slot := s.gate.tryBegin(s.readsAheadNow()); r {
	case gateClosed:
		return nil, nil, errStreamConsumed(), true
	case gateBusy:
		return nil, nil, nil, false
	case gateUnread:
		return slot.held, slot.a, nil, true
	}
	defer s.gate.end()
	return s.TryReadHeld()
}

// ReadHeld is NextHeld for a binding that began the read in the stream's
// read gate itself (see CRead) and ends it after: the read alone.
func (s *OneShotStream) ReadHeld(wait time.Duration) (held unsafe.Pointer, a *cdevice.Array, err error, ready bool) {
	return s.read(wait, true)
}

// TryReadHeld is TryNextHeld for a binding that began the read in the
// stream's read gate itself (gda_gate_try_begin, which lets a read in only
// for a stream that reads ahead): the read alone.
func (s *OneShotStream) TryReadHeld() (held unsafe.Pointer, a *cdevice.Array, err error, ok bool) {
	if !s.readsAhead() {
		return nil, nil, nil, false
	}
	held, a, err, ok = s.prefetch.TryNextHeld()
	if ok {
		s.afterProbe(err)
	}
	return held, a, err, ok
}

// ProbeHeld is the read an event loop makes first (the binding began it in
// the stream's read gate, as for ReadHeld). A stream that PrefetchWhenSlow
// made reads its next array on a goroutine (a probe), waited for here for
// at most wait once the read began: ready is false when it had not arrived
// (the loop then waits for its wake, see SetWakeFD). When the probe's read
// did not block (gda_read_blocked, measured on the goroutine's thread, so
// that a loaded machine's scheduling delays do not count), the reads after
// it run on the reader's thread again, as fast reads of PrefetchWhenSlow's
// stream do; after a read that blocked the probe reads ahead, for good
// (without waiting for this array to be taken). So a producer that
// waits for the event loop before its first array is not waited for on the
// loop's thread for longer than wait.
//
// A probe that was not in within wait is not trusted to have been fast: a
// producer that waits for the loop can only finish once the loop gave up
// waiting, and one that also works (CPU) for over half of that time passes
// the measure for fast. So after such a probe the loop's next read is a
// probe again (ProbeDue), and after missedProbesBeforeReadAhead of them in
// a row the stream reads ahead for good. A fast producer that a loaded
// machine delayed past wait once is read on the loop's thread after its
// next probe. Other streams read as ReadHeld.
func (s *OneShotStream) ProbeHeld(wait time.Duration) (held unsafe.Pointer, a *cdevice.Array, err error, ready bool) {
	if s.whenSlow <= 0 || s.readsAhead() {
		return s.read(wait, true)
	}
	p := probeAhead(s.reader, int(s.whenSlow))
	s.swap.Lock()
	s.reader, s.prefetch, s.probing = p, p, true
	if s.hasWake {
		p.SetWakeFD(s.wakeFD)
	}
	s.swap.Unlock()
	s.gate.watchProducer(p.producer)
	// the goroutine's start is the scheduler's, not the producer's: waited
	// for apart (bounded, as a guard)
	select {
	case <-p.probeStarted:
	case <-time.After(probeStartGuard):
	}
	s.probeMissed = false // what a read in time finds (afterProbe, inside it)
	held, a, err, ready = s.read(wait, true)
	s.probeMissed = !ready
	return held, a, err, ready
}

// missedProbesBeforeReadAhead: after this many fast probes in a row that
// their event loop gave up waiting for (see ProbeHeld), the stream reads
// ahead for good.
const missedProbesBeforeReadAhead = 4

// ProbeDue reports whether an event loop's next read of the stream is a
// probe (ProbeHeld): its first, and the one after a probe the loop gave up
// waiting for.
func (s *OneShotStream) ProbeDue() bool {
	s.swap.Lock()
	defer s.swap.Unlock()
	return s.probeDue && s.whenSlow > 0
}

// probeStartGuard bounds ProbeHeld's wait for its goroutine to begin the read.
const probeStartGuard = 100 * time.Millisecond

// Probing reports whether the stream's next read takes a probe's array
// (ProbeHeld), after which where it reads changes.
func (s *OneShotStream) Probing() bool {
	s.swap.Lock()
	defer s.swap.Unlock()
	return s.probing
}

// afterProbe is called inside a read that took an array or an end (err)
// from the stream's read-ahead: when that was a probe's, the stream reads on
// the reader's thread from now on if the probe's read did not block (an
// event loop's next read probing again if this probe was missed), else
// ahead (see ProbeHeld). A stream that ended stays as it is: its reads
// report the end.
func (s *OneShotStream) afterProbe(err error) {
	if !s.probing {
		return
	}
	p := s.prefetch
	if err != nil || p.Blocked() {
		// the stream ended, or the probe reads ahead already, for good
		s.swap.Lock()
		s.probing, s.whenSlow = false, 0
		s.swap.Unlock()
		return
	}
	r := p.detach()
	if s.probeMissed {
		s.missedProbes++
	} else {
		s.missedProbes = 0
	}
	s.swap.Lock()
	s.probing = false
	s.reader, s.prefetch = r, nil
	s.probeDue = s.probeMissed
	s.swap.Unlock()
	s.gate.watchProducer(nil)
	if s.missedProbes >= missedProbesBeforeReadAhead {
		s.StartReadAhead()
	}
}

// CRead is what a binding needs to keep the stream's bookkeeping in C: its
// read gate (gate.h), valid while the stream is reachable (a binding that
// keeps it longer takes a reference, gda_gate_ref, and drops it with
// gda_gate_unref); for a foreign stream read as it is (not cast, not read
// ahead) the StreamReader's C half (held.h), else nil; whether the stream
// reads ahead (what gda_gate_try_begin asks); and whether a read-ahead is
// under it (then Settle must stop it; without one, Settle is
// gda_gate_wait_idle). A read the gate lets in is then, for a foreign
// stream, gda_stream_source_next, any outcome but a held array or the end
// going to FinishRead; for others ReadHeld or TryReadHeld; and
// gda_gate_end after it.
func (s *OneShotStream) CRead() (gate, source unsafe.Pointer, readsAhead, overReadAhead bool) {
	s.swap.Lock()
	defer s.swap.Unlock()
	if r, ok := s.reader.(*StreamReader); ok {
		source = r.CSource()
	}
	return s.gate.pointer(), source, s.readsAhead(), s.prefetch != nil
}

// FinishRead finishes a read that a binding began in C (see CRead): got is
// its gda_stream_read, or nil when the source had failed and nothing was
// read. The binding holds the read gate meanwhile.
func (s *OneShotStream) FinishRead(got unsafe.Pointer) (held unsafe.Pointer, a *cdevice.Array, err error) {
	r, ok := s.reader.(*StreamReader)
	if !ok {
		return nil, nil, errs.Errorf(errs.ErrInternal, "FinishRead of a stream that is not read in C")
	}
	return r.FinishRead(got)
}

// SetWakeFD and ArmWake are those of the stream's read-ahead (see
// PrefetchReader.SetWakeFD); a stream that does not read ahead has none.
//
// A stream that PrefetchWhenSlow made keeps the pipe for the read-ahead it
// may start; while it reads on the reader's thread there is nothing to wait
// for, and an armed wake is answered at once (the waiter then reads).
func (s *OneShotStream) SetWakeFD(fd int) error {
	s.swap.Lock()
	defer s.swap.Unlock()
	if s.gate.closed() || (!s.readsAhead() && s.whenSlow <= 0) {
		return errs.Errorf(errs.ErrInvalid, "only an open stream that reads ahead (prefetch) can wake an event loop")
	}
	s.wakeFD, s.hasWake = fd, fd >= 0
	if s.readsAhead() {
		s.prefetch.SetWakeFD(fd)
	}
	return nil
}

// ArmWake: see SetWakeFD.
func (s *OneShotStream) ArmWake(on bool) {
	if p, ok := s.readAhead(); ok {
		p.ArmWake(on)
		return
	}
	s.swap.Lock()
	fd, wake := s.wakeFD, s.hasWake && on && !s.gate.closed()
	s.swap.Unlock()
	if wake {
		writeWake(fd)
	}
}

func (s *OneShotStream) readAhead() (*PrefetchReader, bool) {
	s.swap.Lock()
	defer s.swap.Unlock()
	return s.prefetch, s.readsAhead() && !s.gate.closed()
}

// Unread gives back an array that Next returned but that could not be
// delivered: the next Next returns it. It is released when the stream is
// closed first, or when an array is already waiting.
func (s *OneShotStream) Unread(a *cdevice.Array) { s.gate.unread(gateSlot{a: a}) }

// UnreadHeld is Unread for a held record that NextHeld returned.
func (s *OneShotStream) UnreadHeld(held unsafe.Pointer) { s.gate.unread(gateSlot{held: held}) }

// Settle stops the stream's read-ahead (waiting for its read in progress)
// and waits up to d for a Next in progress to end. It reports whether the
// stream is idle. Call it without the locks a producer may need (a binding:
// without the GIL) before Close.
func (s *OneShotStream) Settle(d time.Duration) bool {
	deadline := time.Now().Add(d)
	s.swap.Lock()
	p := s.prefetch
	s.swap.Unlock()
	if p != nil && !p.StopWithin(d) {
		return false
	}
	return s.gate.waitIdle(time.Until(deadline))
}

// Close releases the stream: queued arrays and the producer's stream, on the
// calling goroutine. It returns false, and does nothing, while another
// goroutine is reading: call Settle and then Close again. Closing twice is
// not an error.
func (s *OneShotStream) Close() (closed bool, err error) {
	if s.closed.Load() {
		return true, nil
	}
	switch r, slot := s.gate.close(); r {
	case gateBusy:
		return false, nil
	case gateClosed:
		s.closed.Store(true)
		return true, nil
	default:
		slot.release()
		err = s.reader.Close()
		s.closed.Store(true)
		return true, err
	}
}

// Take moves the reader out: the caller owns it (and closes it), and the
// stream is consumed. It fails, leaving the stream as it was, during a read
// or after an interrupted one.
func (s *OneShotStream) Take() (cdevice.ArrayReader, error) { return s.take() }

// take moves the reader out (the stream is then consumed).
func (s *OneShotStream) take() (cdevice.ArrayReader, error) {
	switch s.gate.take() {
	case gateBusy:
		return nil, errs.Errorf(errs.ErrInvalid, "the stream is being read in another thread; it can be moved only between reads")
	case gateClosed:
		return nil, errStreamConsumed()
	case gateUnread:
		return nil, errs.Errorf(errs.ErrInvalid, "a read of this stream was interrupted; read the next array before moving the stream")
	}
	return s.reader, nil
}

// castTarget checks a requested schema against the stream (nil: none)
// before anything moves, so a bad request leaves the stream usable.
func (s *OneShotStream) castTarget(target *cschema.Schema) error {
	if target == nil {
		return nil
	}
	_, err := cdevice.CastReader(schemaOnly{s.schema, s.devType}, target)
	return err
}

// Export moves the stream out into out: an ArrowDeviceArrayStream when
// isDevice, else an ArrowArrayStream, whose consumer gets arrays on another
// device copied to the host (the C stream interface carries CPU memory).
// With target not nil every array is cast to it (see Cast). An unread
// imported stream exported unchanged is the producer's own stream (see
// ExportArrayStream). On error the stream is as it was, unless it had
// already been moved.
func (s *OneShotStream) Export(target *cschema.Schema, out unsafe.Pointer, isDevice bool) error {
	if err := s.castTarget(target); err != nil {
		return err
	}
	r, err := s.take()
	if err != nil {
		return err
	}
	if p := s.startedReadAhead(r); p != nil {
		r = p
	}
	if target != nil {
		if r, err = cdevice.CastReader(r, target); err != nil {
			r.Close()
			return err
		}
	}
	if isDevice {
		err = ExportDeviceArrayStream(r, DeviceStreamAt(out))
	} else {
		err = ExportArrayStream(cdevice.ToHostReader(r), StreamAt(out))
	}
	if err != nil {
		r.Close()
	}
	return err
}

// Cast moves the stream into a new one whose arrays are cast to target.
func (s *OneShotStream) Cast(target *cschema.Schema) (*OneShotStream, error) {
	if err := s.castTarget(target); err != nil {
		return nil, err
	}
	r, err := s.take()
	if err != nil {
		return nil, err
	}
	prefetch := s.prefetch
	if p := s.startedReadAhead(r); p != nil {
		r, prefetch = p, p
	}
	cast, err := cdevice.CastReader(r, target)
	if err != nil {
		r.Close()
		return nil, err
	}
	out := NewOneShotStream(cast)
	if out.prefetch = prefetch; out.prefetch != nil {
		out.gate.watchProducer(out.prefetch.producer)
	}
	return out, nil
}

// Prefetch moves the stream into a new one that reads up to depth arrays
// ahead on a goroutine (see PrefetchReader; depth is at least 1, and more
// than MaxPrefetchDepth reads that many).
func (s *OneShotStream) Prefetch(depth int64) (*OneShotStream, error) {
	if depth < 1 {
		return nil, errs.Errorf(errs.ErrInvalid, "prefetch depth must be at least 1, got %d", depth)
	}
	depth = min(depth, MaxPrefetchDepth)
	r, err := s.take()
	if err != nil {
		return nil, err
	}
	p := Prefetch(r, int(depth))
	out := NewOneShotStream(p)
	out.prefetch = p
	out.gate.watchProducer(p.producer)
	return out, nil
}

// PrefetchWhenSlow moves the stream into a new one that is read on the
// reading thread, like this one, until its binding sees a read block and
// calls StartReadAhead, which makes it read depth arrays ahead from then on.
// A producer that needs a lock its reader holds (a Python producer needs the
// GIL) thus never gets a thread of its own while its reads are fast: handing
// that lock between two threads for every array costs more than the read.
// depth is checked as Prefetch checks it.
func (s *OneShotStream) PrefetchWhenSlow(depth int64) (*OneShotStream, error) {
	if depth < 1 {
		return nil, errs.Errorf(errs.ErrInvalid, "prefetch depth must be at least 1, got %d", depth)
	}
	r, err := s.take()
	if err != nil {
		return nil, err
	}
	out := NewOneShotStream(r)
	out.whenSlow = min(depth, MaxPrefetchDepth)
	out.probeDue = true
	return out, nil
}

// AheadWhenSlow reports whether a read-ahead waits to be started
// (PrefetchWhenSlow) and has not been.
func (s *OneShotStream) AheadWhenSlow() bool { return s.whenSlow > 0 }

// StartReadAhead starts the read-ahead that PrefetchWhenSlow put off: the
// stream's reads take its queue from now on (for good). The binding calls it
// inside a read it began in the stream's read gate, after the read that
// blocked, so that nobody else reads or moves the stream meanwhile. It does
// nothing for a stream with no read-ahead pending.
func (s *OneShotStream) StartReadAhead() {
	if s.whenSlow <= 0 || s.readsAhead() {
		return
	}
	p := Prefetch(s.reader, int(s.whenSlow))
	s.whenSlow = 0
	s.swap.Lock()
	s.reader, s.prefetch = p, p
	if s.hasWake {
		p.SetWakeFD(s.wakeFD)
	}
	s.swap.Unlock()
	s.gate.watchProducer(p.producer)
}

// startedReadAhead is, for a stream moved out (r, from take) into a reader
// that the binding does not time (an export, a cast), the read-ahead that
// PrefetchWhenSlow put off, started over r; nil when none was put off.
func (s *OneShotStream) startedReadAhead(r cdevice.ArrayReader) *PrefetchReader {
	if s.whenSlow <= 0 {
		return nil
	}
	return Prefetch(r, int(s.whenSlow))
}

// schemaOnly lets CastReader check a request against a stream without touching it.
type schemaOnly struct {
	schema  *cschema.Schema
	devType device.Type
}

func (o schemaOnly) Schema() *cschema.Schema       { return o.schema }
func (o schemaOnly) DeviceType() device.Type       { return o.devType }
func (o schemaOnly) Next() (*cdevice.Array, error) { return nil, io.EOF }
func (o schemaOnly) Close() error                  { return nil }

// String describes the stream for debugging.
func (s *OneShotStream) String() string {
	return fmt.Sprintf("OneShotStream<%s> on %s", s.Schema(), s.DeviceType())
}

// ReadAll moves the stream into a ChunkedArray holding every remaining
// array (see ReadChunkedArray).
func (s *OneShotStream) ReadAll() (*cdevice.ChunkedArray, error) {
	r, err := s.take()
	if err != nil {
		return nil, err
	}
	return cdevice.ReadChunkedArray(r)
}

// ThreadID names an OS thread for the re-entry check of NextHeld: what
// CurrentThread returns on it. 0 names none.
type ThreadID uint64

// CurrentThread names the calling goroutine's OS thread. The name is stable
// only while the goroutine is locked to its thread (runtime.LockOSThread, or
// a call from C, which runs locked).
func CurrentThread() ThreadID { return ThreadID(C.gda_current_thread()) }
