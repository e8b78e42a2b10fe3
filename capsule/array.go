package main

// The array exports (array.c calls them): export, facts, the zero-copy
// views and the operations that make a new array, and checksums.

/*
#include "module.h"
*/
import "C"

import (
	"unsafe"

	"github.com/godevarrow/godevarrow/gosrc/cdevice"
	"github.com/godevarrow/godevarrow/gosrc/checksum"
	"github.com/godevarrow/godevarrow/gosrc/cschema"
	"github.com/godevarrow/godevarrow/gosrc/device"
	"github.com/godevarrow/godevarrow/gosrc/errs"
)

//export gdaExportArray
func gdaExportArray(h, requested C.uintptr_t, outSchema, outArray unsafe.Pointer, isDevice C.int, e *C.gda_error) C.int {
	return call(e, func() error {
		a, target, err := valuesOf[*cdevice.Array, *cschema.Schema](h, requested, true)
		if err != nil {
			return err
		}
		return cdevice.ExportPair(a, target, outSchema, outArray, isDevice != 0)
	})
}

//export gdaArrayInfo
func gdaArrayInfo(h C.uintptr_t, info *C.gda_array_info, e *C.gda_error) C.int {
	return call(e, func() error {
		a, err := valueOf[*cdevice.Array](h)
		if err != nil {
			return err
		}
		info.length = C.int64_t(a.Len())
		info.offset = C.int64_t(a.Offset())
		info.null_count = C.int64_t(a.NullN())
		info.device_type = C.int32_t(a.Device().Type)
		info.device_id = C.int64_t(a.Device().ID)
		info.n_children = C.int64_t(a.NumChildren())
		info.is_struct = cBool(a.Schema().IsRecordBatch())
		return nil
	})
}

// arrayOp is transform from an array to an array.
func arrayOp(h C.uintptr_t, out *C.uintptr_t, e *C.gda_error, op func(*cdevice.Array) (*cdevice.Array, error)) C.int {
	return transform(h, out, e, op)
}

//export gdaArraySlice
func gdaArraySlice(h C.uintptr_t, offset, length C.int64_t, out *C.uintptr_t, e *C.gda_error) C.int {
	return arrayOp(h, out, e, func(a *cdevice.Array) (*cdevice.Array, error) {
		return a.Slice(int64(offset), int64(length))
	})
}

//export gdaArrayColumn
func gdaArrayColumn(h C.uintptr_t, i C.int64_t, out *C.uintptr_t, e *C.gda_error) C.int {
	return arrayOp(h, out, e, func(a *cdevice.Array) (*cdevice.Array, error) { return a.Column(int(i)) })
}

//export gdaArrayValidate
func gdaArrayValidate(h C.uintptr_t, full C.int, e *C.gda_error) C.int {
	return call(e, func() error {
		a, err := valueOf[*cdevice.Array](h)
		if err != nil {
			return err
		}
		return cdevice.Validate(a, full != 0)
	})
}

//export gdaArrayCast
func gdaArrayCast(h, schema C.uintptr_t, out *C.uintptr_t, e *C.gda_error) C.int {
	target, err := valueOf[*cschema.Schema](schema)
	return arrayOp(h, out, e, func(a *cdevice.Array) (*cdevice.Array, error) {
		if err != nil {
			return nil, err
		}
		return cdevice.Cast(a, target)
	})
}

//export gdaArrayToDevice
func gdaArrayToDevice(h C.uintptr_t, devType C.int32_t, devID C.int64_t, out *C.uintptr_t, e *C.gda_error) C.int {
	return arrayOp(h, out, e, func(a *cdevice.Array) (*cdevice.Array, error) {
		return cdevice.CopyToDevice(a, device.Device{Type: device.Type(devType), ID: int64(devID)})
	})
}

//export gdaArrayWithValidity
func gdaArrayWithValidity(h, validity C.uintptr_t, nullCount C.int64_t, out *C.uintptr_t, e *C.gda_error) C.int {
	v, err := valueOf[*cdevice.Array](validity)
	return arrayOp(h, out, e, func(a *cdevice.Array) (*cdevice.Array, error) {
		if err != nil {
			return nil, err
		}
		return cdevice.WithValidity(a, v, int64(nullCount))
	})
}

//export gdaArrayAsBatch
func gdaArrayAsBatch(h C.uintptr_t, out *C.uintptr_t, e *C.gda_error) C.int {
	return arrayOp(h, out, e, cdevice.AsRecordBatch)
}

//export gdaArrayCopy
func gdaArrayCopy(h C.uintptr_t, out *C.uintptr_t, e *C.gda_error) C.int {
	return arrayOp(h, out, e, cdevice.Copy)
}

//export gdaArrayKnownNullCounts
func gdaArrayKnownNullCounts(h C.uintptr_t, out *C.uintptr_t, e *C.gda_error) C.int {
	return arrayOp(h, out, e, cdevice.WithKnownNullCounts)
}

// gdaChecksums returns the column checksums of a record batch in a malloc'd
// array of *n values (the caller frees it).
//
//export gdaChecksums
func gdaChecksums(h C.uintptr_t, out **C.uint32_t, n *C.int64_t, e *C.gda_error) C.int {
	return call(e, func() error {
		a, err := valueOf[*cdevice.Array](h)
		if err != nil {
			return err
		}
		sums, err := checksum.Batch(a)
		if err != nil {
			return err
		}
		p := (*C.uint32_t)(C.malloc(C.size_t(max(len(sums), 1)) * C.sizeof_uint32_t))
		if p == nil {
			return &errs.Error{Kind: errs.ErrInvalid, Msg: "out of memory"}
		}
		for i, v := range sums {
			unsafe.Slice(p, len(sums))[i] = C.uint32_t(v)
		}
		*out, *n = p, C.int64_t(len(sums))
		return nil
	})
}

//export gdaDeviceArrayStampDeviceOfData
func gdaDeviceArrayStampDeviceOfData(d unsafe.Pointer, e *C.gda_error) C.int {
	return call(e, func() error { return cdevice.StampDeviceOfData(cdevice.DeviceArrayAt(d)) })
}
