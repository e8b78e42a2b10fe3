package main

/*
#include "module.h"
*/
import "C"

import (
	"unsafe"

	"github.com/godevarrow/godevarrow/gosrc/cdevice"
	"github.com/godevarrow/godevarrow/gosrc/device"
	"github.com/godevarrow/godevarrow/gosrc/dlpack"
)

// consumerStream is the stream a DLPack consumer named: nil for -1 (no
// synchronization) and for arrays whose memory the host reads.
func consumerStream(a *cdevice.Array, stream C.int64_t) (*device.Stream, error) {
	if stream < 0 || a.Device().Type != device.CUDA {
		return nil, nil
	}
	return device.ForeignStream(int(a.Device().ID), uintptr(stream))
}

//export gdaDLPackExport
func gdaDLPackExport(h C.uintptr_t, versioned, copied C.int, stream C.int64_t, out *unsafe.Pointer, e *C.gda_error) C.int {
	return call(e, func() error {
		a, err := valueOf[*cdevice.Array](h)
		if err != nil {
			return err
		}
		s, err := consumerStream(a, stream)
		if err != nil {
			return err
		}
		p, err := dlpack.Export(a, dlpack.ExportOptions{Versioned: versioned != 0, Copied: copied != 0, Stream: s})
		if err == nil {
			*out = p
		}
		return err
	})
}

//export gdaDLPackImport
func gdaDLPackImport(p unsafe.Pointer, versioned C.int, streamHandle C.uintptr_t, out *C.uintptr_t, e *C.gda_error) C.int {
	return call(e, func() error {
		var s *device.Stream
		if streamHandle != 0 {
			var err error
			if s, err = valueOf[*device.Stream](streamHandle); err != nil {
				dlpack.Delete(p, versioned != 0)
				return err
			}
		}
		a, err := dlpack.Import(p, versioned != 0, s)
		if err == nil {
			newHandle(a, out)
		}
		return err
	})
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

//export gdaDLPackDelete
func gdaDLPackDelete(p unsafe.Pointer, versioned C.int) {
	call(nil, func() error {
		dlpack.Delete(p, versioned != 0)
		return nil
	})
}

//export gdaCUDAStreamNew
func gdaCUDAStreamNew(dev C.int64_t, out *C.uintptr_t, stream *C.uintptr_t, e *C.gda_error) C.int {
	return call(e, func() error {
		s, err := device.NewStream(int(dev))
		if err == nil {
			*stream = C.uintptr_t(s.Handle())
			newHandle(s, out)
		}
		return err
	})
}

// gdaTensorInfo describes a tensor-shaped array for the CUDA Array Interface.
// With ready != 0, *stream is what Array.CUDAArrayInterfaceStream says.
//
//export gdaTensorInfo
func gdaTensorInfo(h C.uintptr_t, ready C.int, info *C.gda_tensor_info, e *C.gda_error) C.int {
	return call(e, func() error {
		a, err := valueOf[*cdevice.Array](h)
		if err != nil {
			return err
		}
		t, err := dlpack.Describe(a)
		if err != nil {
			return err
		}
		info.data, info.length = C.uintptr_t(t.Data), C.int64_t(t.Length)
		info.code, info.bits = C.int(t.Code), C.int(t.Bits)
		info.device_type, info.device_id = C.int32_t(t.Device), C.int64_t(t.DeviceID)
		info.stream = 0
		if ready != 0 {
			stream, err := a.CUDAArrayInterfaceStream()
			info.stream = C.uintptr_t(stream)
			return err
		}
		return nil
	})
}

// gdaWrapCUDAPointer makes an Array over length values of format at ptr, CUDA
// memory owned by obj (a Python object exposing __cuda_array_interface__);
// obj is released, with the GIL, when the Array's last reference goes.
// stream != 0 is the interface's stream: the Array's event is recorded on it.
//
//export gdaWrapCUDAPointer
func gdaWrapCUDAPointer(obj unsafe.Pointer, format *C.char, ptr C.uintptr_t, length C.int64_t, stream C.uintptr_t, out *C.uintptr_t, e *C.gda_error) C.int {
	C.gda_py_incref(obj)
	release := func() { C.gda_py_decref(obj) }
	return call(e, func() error {
		a, err := wrapCUDAPointer(C.GoString(format), uintptr(ptr), int64(length), uintptr(stream), release)
		if err == nil {
			newHandle(a, out)
		}
		return err
	})
}
