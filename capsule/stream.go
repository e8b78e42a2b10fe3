package main

// The stream exports (stream.c calls them): import, export, reads, wake
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
// asks the producer for its schema.
//
//export gdaStreamImport
func gdaStreamImport(cell unsafe.Pointer, isDevice C.int, out *C.uintptr_t, e *C.gda_error) C.int {
	importStream := func() (*streams.StreamReader, error) { return streams.ImportArrayStream(streams.StreamAt(cell)) }
	if isDevice != 0 {
		importStream = func() (*streams.StreamReader, error) {
			return streams.ImportDeviceArrayStream(streams.DeviceStreamAt(cell))
		}
	}
	return call(e, func() error {
		r, err := importStream()
		if err == nil {
			newHandle(streams.NewOneShotStream(r), out)
		}
		return err
	})
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

// gdaStreamNext is called without the GIL: it may block in a producer. It
// returns the next array (0 in *out at the end), or GDA_PENDING when a
// read-ahead stream, or another thread's read, had not delivered within
// timeoutMs (the caller checks for signals and calls again). thread is the
// caller's pthread_self, for the re-entry check (streams.ThreadID).
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

// streamRead is the body of both reads: read's result is an array held in C
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
