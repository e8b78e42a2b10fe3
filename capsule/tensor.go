package main

// The exports of the tensor protocols (tensor.c calls them): DLPack and the
// CUDA Array Interface.

/*
#include "module.h"
*/
import "C"

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/godevarrow/godevarrow/gosrc/cdevice"
	"github.com/godevarrow/godevarrow/gosrc/device"
	"github.com/godevarrow/godevarrow/gosrc/device/cuda"
	"github.com/godevarrow/godevarrow/gosrc/dlpack"
	"github.com/godevarrow/godevarrow/gosrc/handle"
)

//export gdaDLPackExport
func gdaDLPackExport(h C.uintptr_t, versioned, copied C.int, stream C.int64_t, streamGiven C.int, keeperRelease, keeper, template unsafe.Pointer, out *unsafe.Pointer, e *C.gda_error) C.int {
	return call(e, func() error {
		a, err := valueOf[*cdevice.Array](h)
		if err != nil {
			return err
		}
		s, err := dlpack.ConsumerStream(a, int64(stream), streamGiven != 0)
		if err != nil {
			return err
		}
		p, err := dlpack.Export(a, dlpack.ExportOptions{
			Versioned: versioned != 0, Copied: copied != 0, Stream: s, KeeperRelease: keeperRelease, Keeper: keeper,
			Template: template, TemplateStream: int64(stream), TemplateGiven: streamGiven != 0,
		})
		if err == nil {
			*out = p
		}
		return err
	})
}

// gdaDLPackImport takes the tensor p, whose capsule the caller has already
// marked used: from here on it is deleted exactly once, on every path. The
// stream is the one gdaDLPackConsumerStream named to the producer (0: none
// was named): owned, when not 0, is the handle of a pooled stream, given
// back here on every path; otherwise stream is a handle the caller owns (its
// default stream) on device devID of type devType.
//
//export gdaDLPackImport
func gdaDLPackImport(p unsafe.Pointer, versioned C.int, devType, devID C.int64_t, stream, owned C.uintptr_t, out *C.uintptr_t, e *C.gda_error) C.int {
	return call(e, func() error {
		s, giveBack, err := consumerStream(devType, devID, stream, owned)
		if err != nil {
			dlpack.Delete(p, versioned != 0)
			return err
		}
		defer giveBack()
		a, err := dlpack.Import(p, versioned != 0, s)
		if err == nil {
			newHandle(a, out)
		}
		return err
	})
}

// consumerStream is the stream named to a producer, as gdaDLPackImport takes
// it, and what gives it back: a pooled one (owned) goes back to its backend
// once the import recorded its event on it (work queued on a pooled stream
// stays ordered before its next user's).
func consumerStream(devType, devID C.int64_t, stream, owned C.uintptr_t) (device.Stream, func(), error) {
	nothing := func() {}
	if owned != 0 {
		v, ok := handles.Delete(handle.Handle(owned))
		s, isStream := v.(*ownedStream)
		if !ok || !isStream {
			return nil, nothing, fmt.Errorf("%w: handle %#x is not a stream named to a producer", errType, uintptr(owned))
		}
		return s.s, func() { _ = s.b.ReleaseStream(s.s) }, nil
	}
	if stream == 0 {
		return nil, nothing, nil
	}
	b, err := device.BackendFor(device.Type(devType))
	if err != nil {
		return nil, nothing, err
	}
	// still the caller's default stream (its context is still the device's):
	// the backend's own value, whose event may be put off (cdevice's
	// lazy_event.go)
	if s, ok := b.CallerDefaultStream(int(devID)); ok && s.Handle() == uintptr(stream) {
		return s, nothing, nil
	}
	s, err := b.ForeignStream(int(devID), uintptr(stream))
	return s, nothing, err
}

//export gdaDLPackDevice
func gdaDLPackDevice(h C.uintptr_t, devType *C.int32_t, devID *C.int64_t, e *C.gda_error) C.int {
	return call(e, func() error {
		a, err := valueOf[*cdevice.Array](h)
		if err == nil {
			t, id := dlpack.DeviceOf(a)
			*devType, *devID = C.int32_t(t), C.int64_t(id)
		}
		return err
	})
}

// ownedStream is a pooled stream the binding named to a producer
// (dlpack.StreamForProducer): the import, or the handle's release when no
// import follows, gives it back to its backend.
type ownedStream struct {
	b device.Backend
	s device.Stream
}

// gdaDLPackConsumerStream is the stream a consumer names to the __dlpack__
// of a producer whose tensor is on device dev of type devType
// (dlpack.StreamForProducer): *named is 0 when the device type has no
// streams (no stream argument); else *stream is the handle to pass, and
// *owned, when not 0, the handle of the pooled stream it is, which
// gdaDLPackImport (or gdaHandleRelease, when the producer fails) gives back.
//
//export gdaDLPackConsumerStream
func gdaDLPackConsumerStream(devType, dev C.int64_t, named *C.int, stream, owned *C.uintptr_t, e *C.gda_error) C.int {
	return call(e, func() error {
		*named, *stream, *owned = 0, 0, 0
		if devType < math.MinInt32 || devType > math.MaxInt32 || !device.TraitsOf(device.Type(devType)).Streams {
			return nil
		}
		b, err := device.BackendFor(device.Type(devType))
		if err != nil {
			return err
		}
		s, pooled, err := dlpack.StreamForProducer(b, int(dev))
		if err != nil {
			return err
		}
		*named, *stream = 1, C.uintptr_t(s.Handle())
		if pooled {
			newHandle(&ownedStream{b: b, s: s}, owned)
		}
		return nil
	})
}

// gdaDeviceTraits reports the traits of a device type's backend (all false
// without one), for the Python layer's choices.
//
//export gdaDeviceTraits
func gdaDeviceTraits(devType C.int64_t, host, streams, deviceMemory *C.int) {
	var t device.Traits
	if devType >= math.MinInt32 && devType <= math.MaxInt32 {
		t = device.TraitsOf(device.Type(devType))
	}
	*host, *streams, *deviceMemory = cBool(t.HostAccessible), cBool(t.Streams), cBool(t.DeviceMemory)
}

// gdaDeviceCount is the number of devices of a device type's backend: 0
// without a backend or a driver.
//
//export gdaDeviceCount
func gdaDeviceCount(devType C.int64_t) C.int64_t {
	if devType < math.MinInt32 || devType > math.MaxInt32 {
		return 0
	}
	b, err := device.BackendFor(device.Type(devType))
	if err != nil {
		return 0
	}
	return C.int64_t(b.DeviceCount())
}

// gdaTensorInfo describes a tensor-shaped array; with ready != 0 the legacy
// default stream is made ready to read it (dlpack.DescribeReady).
//
//export gdaTensorInfo
func gdaTensorInfo(h C.uintptr_t, ready C.int, info *C.gda_tensor_info, e *C.gda_error) C.int {
	return call(e, func() error {
		a, err := valueOf[*cdevice.Array](h)
		if err != nil {
			return err
		}
		var t dlpack.Tensor
		var stream uintptr
		if ready != 0 {
			t, stream, err = dlpack.DescribeReady(a)
		} else {
			t, err = dlpack.Describe(a)
		}
		if err != nil {
			return err
		}
		*info = C.gda_tensor_info{
			data: C.uintptr_t(t.Data), length: C.int64_t(t.Length), code: C.int32_t(t.Code), bits: C.int32_t(t.Bits),
			device_type: C.int32_t(t.Device), device_id: C.int64_t(t.DeviceID), stream: C.uintptr_t(stream),
		}
		return nil
	})
}

// gdaWrapCUDAPointer makes an Array over a CUDA Array Interface buffer
// owned by obj (a Python object), which it takes a reference on: the
// reference is dropped, with the GIL, when the Array's last reference goes
// (or at once on error).
//
//export gdaWrapCUDAPointer
func gdaWrapCUDAPointer(obj unsafe.Pointer, format *C.char, ptr C.uintptr_t, length C.int64_t, stream C.uintptr_t, out *C.uintptr_t, e *C.gda_error) C.int {
	return call(e, func() error {
		C.gda_py_incref(obj)
		a, err := dlpack.WrapCUDAArrayInterface(cuda.Backend(), C.GoString(format), uintptr(ptr), int64(length), uintptr(stream), func() { C.gda_py_decref(obj) })
		if err == nil {
			newHandle(a, out)
		}
		return err
	})
}
