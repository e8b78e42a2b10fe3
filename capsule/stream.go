package main

// The stream exports (stream.c and stream_read.c call them): import, export, reads, wake
// pipes, close, and the streams made from arrays, casts and read-ahead.
// Python holds a stream as a streams.OneShotStream handle.

/*
#include "module.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"io"
	"time"
	"unsafe"

	"github.com/godevarrow/godevarrow/gosrc/cdevice"
	"github.com/godevarrow/godevarrow/gosrc/cschema"
	"github.com/godevarrow/godevarrow/gosrc/errs"
	"github.com/godevarrow/godevarrow/gosrc/handle"
	"github.com/godevarrow/godevarrow/gosrc/streams"
)

// gdaStreamImport takes the stream in cell (an ArrowDeviceArrayStream when
// isDevice, else an ArrowArrayStream), which the binding moved out of its
// capsule; the cell itself stays the caller's. Called without the GIL: it
// asks the producer for its schema. *gate, *src and *flags are what
// gdaStreamCRead gives, in the same call.
//
//export gdaStreamImport
func gdaStreamImport(cell unsafe.Pointer, isDevice C.int, out *C.uintptr_t, gate, src *unsafe.Pointer, flags *C.int, e *C.gda_error) C.int {
	importStream := func() (*streams.StreamReader, error) { return streams.ImportArrayStream(streams.StreamAt(cell)) }
	if isDevice != 0 {
		importStream = func() (*streams.StreamReader, error) {
			return streams.ImportDeviceArrayStream(streams.DeviceStreamAt(cell))
		}
	}
	return call(e, func() error {
		r, err := importStream()
		if err == nil {
			s := streams.NewOneShotStream(r)
			newHandle(s, out)
			*gate, *src, *flags = cRead(s)
		}
		return err
	})
}

// cRead is what gdaStreamCRead gives: the gate, the C source, and the
// flags (module.h).
func cRead(s *streams.OneShotStream) (unsafe.Pointer, unsafe.Pointer, C.int) {
	gate, src, ahead, over := s.CRead()
	flags := C.int(0)
	if ahead {
		flags |= C.GDA_READS_AHEAD
	}
	if over {
		flags |= C.GDA_OVER_READ_AHEAD
	}
	if s.AheadWhenSlow() && !ahead {
		flags |= C.GDA_AHEAD_WHEN_SLOW
	}
	if s.Probing() {
		flags |= C.GDA_PROBING
	}
	if s.ProbeDue() {
		flags |= C.GDA_PROBE_DUE
	}
	if s.Schema().IsRecordBatch() {
		flags |= C.GDA_OF_STRUCTS
	}
	return gate, src, flags
}

//export gdaExportStream
func gdaExportStream(h, requested C.uintptr_t, out unsafe.Pointer, isDevice C.int, e *C.gda_error) C.int {
	return call(e, func() error {
		s, target, err := valuesOf[*streams.OneShotStream, *cschema.Schema](h, requested, true)
		if err != nil {
			return err
		}
		return s.Export(target, out, isDevice != 0)
	})
}

//export gdaStreamInfo
func gdaStreamInfo(h C.uintptr_t, info *C.gda_stream_info, e *C.gda_error) C.int {
	return call(e, func() error {
		s, err := valueOf[*streams.OneShotStream](h)
		if err != nil {
			return err
		}
		newHandle(s.Schema(), &info.schema)
		info.device_type = C.int32_t(s.DeviceType())
		info.is_struct = cBool(s.Schema().IsRecordBatch())
		return nil
	})
}

// gdaStreamNext is Go's whole read, gate included, for what the binding's C
// read leaves to Go (stream_read.c, c_read): a read the gate refuses (Go words
// why), or a stream whose capsule has no read gate in C. Called without the
// GIL: it may block in a producer. It returns the next array (0 in *out at
// the end), or GDA_PENDING when a read-ahead stream, or another thread's
// read, had not delivered within timeoutMs (the caller checks for signals
// and calls again). thread is the caller's pthread_self, for the re-entry
// check (streams.ThreadID).
//
//export gdaStreamNext
func gdaStreamNext(h C.uintptr_t, timeoutMs C.int, thread C.uint64_t, out *C.uintptr_t, held *unsafe.Pointer, e *C.gda_error) C.int {
	return streamRead(h, out, held, e, func(s *streams.OneShotStream) (unsafe.Pointer, *cdevice.Array, error, bool) {
		return s.NextHeld(time.Duration(timeoutMs)*time.Millisecond, streams.ThreadID(thread))
	})
}

// gdaStreamTryNext is gdaStreamNext for a caller holding the GIL in an event
// loop: GDA_PENDING at once when nothing is ready (it never calls a producer).
//
//export gdaStreamTryNext
func gdaStreamTryNext(h C.uintptr_t, out *C.uintptr_t, held *unsafe.Pointer, e *C.gda_error) C.int {
	return streamRead(h, out, held, e, (*streams.OneShotStream).TryNextHeld)
}

// gdaStreamCRead gives the binding's C what it needs to keep a stream's
// bookkeeping itself (streams.OneShotStream.CRead): the read gate (the
// binding takes its own reference), the C source of a foreign stream, and its
// flags (GDA_READS_AHEAD, GDA_OVER_READ_AHEAD). *gate stays NULL for a
// handle that holds no stream.
//
//export gdaStreamCRead
func gdaStreamCRead(h C.uintptr_t, gate, src *unsafe.Pointer, flags *C.int) {
	call(nil, func() error {
		s, err := valueOf[*streams.OneShotStream](h)
		if err != nil {
			return nil // the reads go through Go, which words the error
		}
		*gate, *src, *flags = cRead(s)
		return nil
	})
}

// gdaStreamReadInGate is the read of a stream made in Go (a cast, a
// read-ahead, a stream of arrays) that the binding let in through the
// stream's read gate, and ends there after: GDA_PENDING when a read-ahead
// had nothing within timeoutMs. Called without the GIL.
//
//export gdaStreamReadInGate
func gdaStreamReadInGate(h C.uintptr_t, timeoutMs C.int, out *C.uintptr_t, held *unsafe.Pointer, e *C.gda_error) C.int {
	return streamRead(h, out, held, e, func(s *streams.OneShotStream) (unsafe.Pointer, *cdevice.Array, error, bool) {
		return s.ReadHeld(time.Duration(timeoutMs) * time.Millisecond)
	})
}

// gdaStreamProbeInGate is an event loop's first read of a stream, which the
// binding let in through the stream's read gate (streams.OneShotStream.ProbeHeld):
// GDA_PENDING when the probe had nothing within waitNs. Called without the GIL.
//
//export gdaStreamProbeInGate
func gdaStreamProbeInGate(h C.uintptr_t, waitNs C.int64_t, out *C.uintptr_t, held *unsafe.Pointer, e *C.gda_error) C.int {
	return streamRead(h, out, held, e, func(s *streams.OneShotStream) (unsafe.Pointer, *cdevice.Array, error, bool) {
		return s.ProbeHeld(time.Duration(waitNs))
	})
}

// gdaStreamTryReadInGate is gdaStreamReadInGate for a caller that must not
// wait (stream_try_next, with the GIL): GDA_PENDING when nothing is ready.
//
//export gdaStreamTryReadInGate
func gdaStreamTryReadInGate(h C.uintptr_t, out *C.uintptr_t, held *unsafe.Pointer, e *C.gda_error) C.int {
	return streamRead(h, out, held, e, (*streams.OneShotStream).TryReadHeld)
}

// gdaStreamFinishRead finishes a read that the binding's C made of a foreign
// stream (stream_read.c, c_read) when its outcome needs Go: a producer error to
// word, an array the held fast path declined, or a source that failed
// earlier (got NULL: nothing was read). Called without the GIL, inside the
// stream's read gate.
//
//export gdaStreamFinishRead
func gdaStreamFinishRead(h C.uintptr_t, got unsafe.Pointer, out *C.uintptr_t, held *unsafe.Pointer, e *C.gda_error) C.int {
	return streamRead(h, out, held, e, func(s *streams.OneShotStream) (unsafe.Pointer, *cdevice.Array, error, bool) {
		hp, a, err := s.FinishRead(got)
		return hp, a, err, true
	})
}

// gdaStreamAdoptUnread gives a handle to the Go array that the binding's C
// read took from a stream's unread slot (gda_gate_slot.array).
//
//export gdaStreamAdoptUnread
func gdaStreamAdoptUnread(array C.uintptr_t, out *C.uintptr_t) {
	call(nil, func() error {
		newHandle(streams.GateSlotArray(uintptr(array)), out)
		return nil
	})
}

// streamRead is the body of the reads: read's result is an array held in C
// (into *held), a Go array (a new handle in *out), the end (0 in *out), an
// error, or nothing yet (ready false: GDA_PENDING).
func streamRead(h C.uintptr_t, out *C.uintptr_t, held *unsafe.Pointer, e *C.gda_error,
	read func(*streams.OneShotStream) (unsafe.Pointer, *cdevice.Array, error, bool)) C.int {
	pending := false
	rc := call(e, func() error {
		s, err := valueOf[*streams.OneShotStream](h)
		if err != nil {
			return err
		}
		hp, a, err, ready := read(s)
		switch {
		case !ready:
			pending = true
		case errors.Is(err, io.EOF):
			*out = 0
		case err != nil:
			return err
		case hp != nil:
			*held = hp
		default:
			newHandle(a, out)
		}
		return nil
	})
	return pendingUnlessFailed(rc, pending)
}

// pendingUnlessFailed is rc, or GDA_PENDING for a call that succeeded
// without its result yet.
func pendingUnlessFailed(rc C.int, pending bool) C.int {
	if rc == 0 && pending {
		return C.GDA_PENDING
	}
	return rc
}

// gdaStreamSetWake gives the stream's read-ahead the write end of the
// caller's wake pipe.
//
//export gdaStreamSetWake
func gdaStreamSetWake(h C.uintptr_t, fd C.int64_t, e *C.gda_error) C.int {
	return call(e, func() error {
		s, err := valueOf[*streams.OneShotStream](h)
		if err != nil {
			return err
		}
		return s.SetWakeFD(int(fd))
	})
}

// gdaStreamArmWake arms (or disarms) the wake pipe for the next news.
//
//export gdaStreamArmWake
func gdaStreamArmWake(h C.uintptr_t, on C.int, e *C.gda_error) C.int {
	return call(e, func() error {
		s, err := valueOf[*streams.OneShotStream](h)
		if err != nil {
			return err
		}
		s.ArmWake(on != 0)
		return nil
	})
}

// gdaStreamUnread gives back an array that was read but could not be handed
// to Python (a signal arrived): the next read returns it. The array's handle
// (or its held record, when held is not NULL) is released.
//
//export gdaStreamUnread
func gdaStreamUnread(h, array C.uintptr_t, held unsafe.Pointer) {
	call(nil, func() error {
		s, err := valueOf[*streams.OneShotStream](h)
		if held != nil {
			if err != nil {
				cdevice.ReleaseHeld(held)
				return err
			}
			s.UnreadHeld(held)
			return nil
		}
		a, ok := handles.Delete(handle.Handle(array))
		if !ok {
			return fmt.Errorf("%w: unread of a stale array handle", errs.ErrInternal)
		}
		if err != nil {
			a.(*cdevice.Array).Release()
			return err
		}
		s.Unread(a.(*cdevice.Array))
		return nil
	})
}

// gdaStreamSettle stops a stream's read-ahead and waits up to timeoutMs for
// a read in progress; 1 when the stream is idle. Called without the GIL,
// which that read may need.
//
//export gdaStreamSettle
func gdaStreamSettle(h C.uintptr_t, timeoutMs C.int) C.int {
	idle := C.int(1)
	call(nil, func() error {
		if s, err := valueOf[*streams.OneShotStream](h); err == nil && !s.Settle(time.Duration(timeoutMs)*time.Millisecond) {
			idle = 0
		}
		return nil
	})
	return idle
}

// gdaStreamClose releases the stream with the GIL held; GDA_PENDING while
// another thread reads it (settle, then call again).
//
//export gdaStreamClose
func gdaStreamClose(h C.uintptr_t, e *C.gda_error) C.int {
	pending := false
	rc := call(e, func() error {
		s, err := valueOf[*streams.OneShotStream](h)
		if err != nil {
			return err
		}
		closed, err := s.Close()
		pending = !closed
		return err
	})
	return pendingUnlessFailed(rc, pending)
}

//export gdaStreamFromArrays
func gdaStreamFromArrays(hs *C.uintptr_t, n C.int64_t, schema C.uintptr_t, out *C.uintptr_t, e *C.gda_error) C.int {
	return call(e, func() error {
		arrays, s, err := arraysAndSchema(hs, n, schema)
		if err != nil {
			return err
		}
		r, err := cdevice.ReaderOver(s, arrays)
		if err == nil {
			newHandle(streams.NewOneShotStream(r), out)
		}
		return err
	})
}

// streamOp is transform from a stream to the new stream it moves into.
func streamOp(h C.uintptr_t, out *C.uintptr_t, e *C.gda_error, op func(*streams.OneShotStream) (*streams.OneShotStream, error)) C.int {
	return transform(h, out, e, op)
}

//export gdaStreamCast
func gdaStreamCast(h, schema C.uintptr_t, out *C.uintptr_t, e *C.gda_error) C.int {
	target, err := valueOf[*cschema.Schema](schema)
	return streamOp(h, out, e, func(s *streams.OneShotStream) (*streams.OneShotStream, error) {
		if err != nil {
			return nil, err
		}
		return s.Cast(target)
	})
}

//export gdaStreamPrefetch
func gdaStreamPrefetch(h C.uintptr_t, depth C.int64_t, out *C.uintptr_t, e *C.gda_error) C.int {
	return streamOp(h, out, e, func(s *streams.OneShotStream) (*streams.OneShotStream, error) {
		return s.Prefetch(int64(depth))
	})
}

//export gdaStreamPrefetchWhenSlow
func gdaStreamPrefetchWhenSlow(h C.uintptr_t, depth C.int64_t, out *C.uintptr_t, e *C.gda_error) C.int {
	return streamOp(h, out, e, func(s *streams.OneShotStream) (*streams.OneShotStream, error) {
		return s.PrefetchWhenSlow(int64(depth))
	})
}

// gdaStreamStartReadAhead starts the read-ahead of a stream made by
// gdaStreamPrefetchWhenSlow, from inside a read the binding began in the
// stream's read gate (after a read that blocked). Called without the GIL.
//
//export gdaStreamStartReadAhead
func gdaStreamStartReadAhead(h C.uintptr_t) {
	call(nil, func() error {
		if s, err := valueOf[*streams.OneShotStream](h); err == nil {
			s.StartReadAhead()
		}
		return nil
	})
}
