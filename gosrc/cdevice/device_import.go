package cdevice

/*
#include "gda.h"
*/
import "C"

import (
	"encoding/binary"
	"sync"
	"unsafe"

	"github.com/godevarrow/godevarrow/gosrc/device"
	"github.com/godevarrow/godevarrow/gosrc/errs"
)

// An import of device memory reads nothing from the device. The structs
// live on the host and are checked there; what only the device holds (the
// first and last offsets that bound variable-size data, hence the size of a
// binary data buffer and the part of a list's child that is used) is
// fetched when an operation first needs it (a copy, validation, values):
// all of an array's bounds at once, in one batched gather after one wait on
// the producer's sync_event (lazyBounds). Until then those data buffers have
// length 0, and nothing that reads their length runs before resolve.

// boundRead is one offsets range the import could not read: the offsets at
// first and last (width w), and check, which validates them and sizes the
// buffers they bound.
type boundRead struct {
	first, last unsafe.Pointer
	w           int64
	check       func(first, last int64) error
}

// lazyBounds are the pending bounds of one imported device array, shared by
// it and every Array derived from it (slices, columns, shares).
type lazyBounds struct {
	once  sync.Once
	err   error
	dev   device.Device
	event unsafe.Pointer // the producer's sync_event cell, or nil
	reads []boundRead
}

// resolve fetches and checks the bounds once; every later call returns the
// same result (a malformed array stays refused).
func (l *lazyBounds) resolve() error {
	if l == nil {
		return nil
	}
	l.once.Do(func() {
		p := make([]unsafe.Pointer, 0, 2*len(l.reads))
		n := make([]int64, 0, 2*len(l.reads))
		for _, r := range l.reads {
			p, n = append(p, r.first, r.last), append(n, r.w, r.w)
		}
		vals, err := deviceBytes(l.dev, l.event, p, n)
		for i := 0; err == nil && i < len(l.reads); i++ {
			err = l.reads[i].check(readInt(vals[2*i]), readInt(vals[2*i+1]))
		}
		l.err, l.reads = err, nil
	})
	return l.err
}

// readyBounds resolves the array's pending device bounds: operations that
// read buffer lengths call it first.
func (a *Array) readyBounds() error { return a.bounds.resolve() }

func readInt(b []byte) int64 {
	if len(b) == 4 {
		return int64(int32(binary.NativeEndian.Uint32(b)))
	}
	return int64(binary.NativeEndian.Uint64(b))
}

// readUnvouched copies n bytes of what should be host memory at p, although
// no driver vouched for it (a pointer the CUDA driver does not know, or
// pinned memory whose extent it does not report): a pointer into unmapped
// memory fails with errs.ErrInvalid instead of crashing the process.
func readUnvouched(p unsafe.Pointer, n int64) ([]byte, error) {
	b := make([]byte, n)
	if n == 0 {
		return b, nil
	}
	// b holds no Go pointers: C may write into it (cgo's rules)
	if rc := C.gda_read_host_checked(unsafe.Pointer(&b[0]), p, C.size_t(n)); rc != 0 {
		return nil, errs.Errorf(errs.ErrInvalid, "the variadic buffer sizes at %p (%d bytes) are neither device memory the driver knows nor readable host memory (errno %d)", p, n, int(rc))
	}
	return b, nil
}

// variadicSizes reads the variadic buffer sizes of a binary view array in
// device memory. They exist only in the C layout, and producers (godevarrow
// among them) keep them in host memory: only the driver's "not memory I
// know" answer, or pinned memory, means host memory; any other driver error
// is an error. Sizes kept on the device are fetched now: the buffers they
// size are exported with them.
func (im *importer) variadicSizes(p unsafe.Pointer, n int64) ([]byte, error) {
	b, err := device.BackendFor(im.lazy.dev.Type)
	if err != nil {
		return nil, err
	}
	at, err := b.PointerInfo(p)
	switch {
	case err != nil:
		return nil, errs.Errorf(errs.ErrInvalid, "cannot tell where the variadic buffer sizes at %p live: %v", p, err)
	case at.Kind == device.MemoryUnknown || at.Kind == device.MemoryPinned:
		return readUnvouched(p, n)
	}
	vals, err := deviceBytes(im.lazy.dev, im.lazy.event, []unsafe.Pointer{p}, []int64{n})
	if err != nil {
		return nil, err
	}
	return vals[0], nil
}

// prepareDeviceImport checks that the array's device can be used. Host-
// accessible memory of a backend (CUDA_HOST, CUDA_MANAGED) is read by the
// import on the host, after waiting there for the producer's sync_event;
// device memory is not read (see lazyBounds).
func prepareDeviceImport(cell *C.struct_ArrowDeviceArray, dev device.Device) error {
	b, err := device.BackendFor(dev.Type)
	if err != nil || !b.Traits().Streams {
		return device.Unavailable("cannot import an array on %s: godevarrow has no %s backend", dev, dev.Type)
	}
	if !b.Traits().HostAccessible {
		return b.CheckDevice(int(dev.ID))
	}
	if err := b.Open(); err != nil {
		return err
	}
	if cell.sync_event != nil {
		return b.SyncEventOnHost(int(max(dev.ID, 0)), *(*unsafe.Pointer)(cell.sync_event))
	}
	return nil
}
