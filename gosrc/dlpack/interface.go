package dlpack

/*
#include <stdint.h>
static void* gda_device_address(uintptr_t p) { return (void*)p; }
*/
import "C"

import (
	"errors"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/godevarrow/godevarrow/gosrc/cdevice"
	"github.com/godevarrow/godevarrow/gosrc/cschema"
	"github.com/godevarrow/godevarrow/gosrc/device"
	"github.com/godevarrow/godevarrow/gosrc/errs"
)

// The consumer side of the tensor protocols' synchronization: which stream a
// DLPack consumer named, and the stream a CUDA Array Interface consumer must
// order its work after.

// ConsumerStream is the stream a DLPack consumer passed to __dlpack__ for
// an export of a, checked by DLPack's stream rules (given false: the
// consumer passed None). nil means none: -1 (no synchronization), any CPU
// array, and None for pinned or managed memory (a host reader such as
// NumPy: Export then waits on the host). On device memory None is the
// legacy default stream (1); 0 is refused as ambiguous, and so is anything
// below -1. Pinned and managed memory take a stream as device memory does
// (DLPack python_spec, "stream"; CuPy passes its current stream for
// kDLCUDAManaged, cupy/_core/dlpack.pyx).
func ConsumerStream(a *cdevice.Array, stream int64, given bool) (device.Stream, error) {
	dev := a.Device()
	if dev.Type == device.CPU {
		if given && stream != -1 {
			return nil, errorf(errs.ErrInvalid, "stream must be None for an array on the CPU, got %d", stream)
		}
		return nil, nil
	}
	if !given {
		if dev.Type.HostAccessible() {
			return nil, nil
		}
		stream = legacyDefaultStream
	}
	switch {
	case stream == 0:
		return nil, errorf(errs.ErrInvalid, "stream 0 is ambiguous (DLPack): pass 1 for the legacy default stream, 2 for per-thread")
	case stream < -1:
		return nil, errorf(errs.ErrInvalid, "stream must be -1, None or a positive CUDA stream handle, got %d", stream)
	case stream == -1:
		return nil, nil
	}
	b, err := device.BackendFor(dev.Type)
	if err != nil || !b.Traits().Streams {
		return nil, nil
	}
	id := int(max(dev.ID, 0))
	// the caller's default stream, when its context is the device's, as the
	// backend's own value: a wait on the queue an import's event was (or
	// would be) recorded on is then known to be none (Backend.SameQueue)
	if s, ok := b.CallerDefaultStream(id); ok && s.Handle() == uintptr(stream) {
		return s, nil
	}
	return b.ForeignStream(id, uintptr(stream))
}

// legacyDefaultStream is DLPack's handle of CUDA's legacy default stream.
const legacyDefaultStream = 1

// StreamForProducer is the stream a consumer names to a producer's __dlpack__
// for a tensor on device id of backend b, and then passes to Import.
//
// When the calling thread's current context is the device's own, that is
// the caller's default stream (the legacy default stream, handle 1): a
// producer whose current stream is its default one (CuPy's and PyTorch's
// default) then has nothing to order, while any other stream makes it
// create, record and wait on an event on every call (CuPy's
// ndarray.__dlpack__, PyTorch's Tensor.__dlpack__), which costs more than
// the whole import. Otherwise (no context, or another device's) a stream
// from the backend's pool (pooled): handle 1 would then name another
// context's stream. Give a pooled stream back with b.ReleaseStream.
func StreamForProducer(b device.Backend, id int) (s device.Stream, pooled bool, err error) {
	if s, ok := b.CallerDefaultStream(id); ok {
		return s, false, nil
	}
	s, err = b.AcquireStream(id)
	return s, err == nil, err
}

// DescribeReady is Describe for a consumer of the CUDA Array Interface:
// stream is what the interface publishes (Array.CUDAArrayInterfaceStream:
// 1 when the legacy default stream of the caller's context was made to wait
// for the array's event, 0 when the data is ready).
func DescribeReady(a *cdevice.Array) (t Tensor, stream uintptr, err error) {
	if t, err = Describe(a); err != nil {
		return t, 0, err
	}
	stream, err = a.CUDAArrayInterfaceStream()
	return t, stream, err
}

// WrapCUDAArrayInterface makes an Array over length values of the Arrow
// format at ptr, a buffer described by a CUDA Array Interface, zero-copy.
// The device and kind of memory come from the driver, not from the
// producer's word. stream (0: none) is the interface's stream: device memory
// gets an event recorded on it, host-visible memory waits for it here.
// release is called exactly once: on error, or when the Array's last
// reference goes. cuda is the backend of the memory the interface describes
// (CUDA's by definition: the caller names it, e.g. with cuda.Backend()).
func WrapCUDAArrayInterface(cuda device.Backend, format string, ptr uintptr, length int64, stream uintptr, release func()) (*cdevice.Array, error) {
	fail := func(err error) (*cdevice.Array, error) {
		release()
		return nil, err
	}
	schema, err := cschema.NewSchema(format, "", cschema.FlagNullable, arrow.Metadata{}, nil, nil)
	if err != nil {
		return fail(err)
	}
	info, err := cschema.ParseFormat(format)
	if err != nil || info.Layout != cschema.LayoutFixedWidth {
		return fail(&errs.Error{Kind: errs.ErrInvalid, Msg: "the CUDA Array Interface carries fixed-width numbers only, not " + format})
	}
	if length < 0 {
		return fail(&errs.Error{Kind: errs.ErrInvalid, Msg: "__cuda_array_interface__ has a negative length"})
	}
	if err := cuda.Open(); err != nil {
		return fail(err)
	}
	dev := device.Device{Type: cuda.Type(), ID: 0}
	b := cuda
	p := C.gda_device_address(C.uintptr_t(ptr)) // a device address: never dereferenced here
	if ptr != 0 {
		at, err := cuda.PointerInfo(p)
		if err == nil && at.Kind == device.MemoryUnknown {
			err = errors.New("the pointer is not memory the driver allocated, mapped or registered")
		}
		if err != nil {
			return fail(&errs.Error{Kind: errs.ErrInvalid, Msg: "__cuda_array_interface__ data pointer is not memory the CUDA driver knows: " + err.Error()})
		}
		// pinned or managed memory has its own device type (and backend)
		dev = at.Device
		if b, err = device.BackendFor(dev.Type); err != nil {
			return fail(err)
		}
	} else if length != 0 {
		return fail(&errs.Error{Kind: errs.ErrInvalid, Msg: "__cuda_array_interface__ has a NULL data pointer for a non-empty array"})
	}
	var ready device.Stream
	if stream != 0 {
		s, err := b.ForeignStream(int(dev.ID), stream)
		if err != nil {
			return fail(err)
		}
		if b.Traits().DeviceMemory {
			ready = s
		} else if err := b.SyncStream(s); err != nil {
			// host-visible memory: wait for the producer's work here
			return fail(err)
		}
	}
	return cdevice.WrapForeign(schema, dev, length, 0, []unsafe.Pointer{nil, p}, []int64{0, length * int64(info.ByteWidth)}, ready, release)
}
