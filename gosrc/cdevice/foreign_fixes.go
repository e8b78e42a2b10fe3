package cdevice

/*
#include "gda.h"
*/
import "C"

import (
	"unsafe"

	"github.com/godevarrow/godevarrow/gosrc/cschema"
	"github.com/godevarrow/godevarrow/gosrc/device"
	"github.com/godevarrow/godevarrow/gosrc/errs"
)

// Two operations on a foreign producer's structs that a binding needs to
// work around what a known consumer or producer gets wrong (the cuDF bridge:
// docs/cuda.md, "cuDF as it really is"). Neither moves anything.

// StampDeviceOfData sets the device_id of the CUDA device array at d (still
// its producer's) to the device that owns its first buffer. It is for a
// producer that stamps the calling thread's current device instead of the
// data's (libcudf's create_device_array does), which the import's device
// check would refuse. Arrays on other device types, and arrays without
// buffers, are left as they are.
func StampDeviceOfData(d *CArrowDeviceArray) error {
	if d.array.release == nil {
		return errs.Errorf(errs.ErrInvalid, "cannot stamp a device array that was released")
	}
	b, err := device.BackendFor(device.Type(d.device_type))
	if err != nil || !b.Traits().DeviceMemory {
		return nil
	}
	p := firstBuffer(&d.array, 0)
	if p == nil {
		return nil
	}
	at, err := b.PointerInfo(p)
	if err != nil {
		return err
	}
	if at.Kind != device.MemoryUnknown {
		d.device_id = C.int64_t(at.Device.ID)
	}
	return nil
}

// firstBuffer is the first non-NULL buffer pointer of the tree at c (its
// own buffers, then its children's, then its dictionary's), reading only the
// structs, which live in host memory.
func firstBuffer(c *C.struct_ArrowArray, depth int) unsafe.Pointer {
	if c == nil || depth > cschema.MaxNesting || c.n_buffers < 0 || c.n_buffers > 1<<20 || c.n_children < 0 || c.n_children > 1<<20 {
		return nil
	}
	if c.n_buffers > 0 && c.buffers != nil {
		for _, b := range unsafe.Slice((*unsafe.Pointer)(unsafe.Pointer(c.buffers)), int(c.n_buffers)) {
			if b != nil {
				return b
			}
		}
	}
	if c.n_children > 0 && c.children != nil {
		for _, k := range unsafe.Slice(c.children, int(c.n_children)) {
			if p := firstBuffer(k, depth+1); p != nil {
				return p
			}
		}
	}
	return firstBuffer(c.dictionary, depth+1)
}
