package main

/*
#include "module.h"
*/
import "C"

import (
	"unsafe"

	"github.com/godevarrow/godevarrow/gosrc/cdevice"
	"github.com/godevarrow/godevarrow/gosrc/dlpack"
)

//export gdaDLPackExport
func gdaDLPackExport(h C.uintptr_t, versioned C.int, out *unsafe.Pointer, e *C.gda_error) C.int {
	return call(e, func() error {
		a, err := valueOf[*cdevice.Array](h)
		if err != nil {
			return err
		}
		p, err := dlpack.Export(a, versioned != 0)
		if err == nil {
			*out = p
		}
		return err
	})
}

//export gdaDLPackImport
func gdaDLPackImport(p unsafe.Pointer, versioned C.int, out *C.uintptr_t, e *C.gda_error) C.int {
	return call(e, func() error {
		a, err := dlpack.Import(p, versioned != 0)
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
