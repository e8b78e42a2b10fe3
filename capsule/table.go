package main

// The chunked-array exports (table.c calls them): a chunked array (a table
// when its chunks are record batches) from arrays or a stream, its facts,
// chunks, views, copies and validation.

/*
#include "module.h"
*/
import "C"

import (
	"github.com/godevarrow/godevarrow/gosrc/cdevice"
	"github.com/godevarrow/godevarrow/gosrc/device"
	"github.com/godevarrow/godevarrow/gosrc/streams"
)

//export gdaChunkedFromArrays
func gdaChunkedFromArrays(hs *C.uintptr_t, n C.int64_t, schema C.uintptr_t, out *C.uintptr_t, e *C.gda_error) C.int {
	return call(e, func() error {
		arrays, s, err := arraysAndSchema(hs, n, schema)
		if err != nil {
			return err
		}
		c, err := cdevice.NewChunkedArray(s, arrays)
		if err == nil {
			newHandle(c, out)
		}
		return err
	})
}

// gdaChunkedRead is called without the GIL: it reads the stream to its end.
//
//export gdaChunkedRead
func gdaChunkedRead(h C.uintptr_t, out *C.uintptr_t, e *C.gda_error) C.int {
	return transform(h, out, e, (*streams.OneShotStream).ReadAll)
}

//export gdaChunkedInfo
func gdaChunkedInfo(h C.uintptr_t, info *C.gda_chunked_info, e *C.gda_error) C.int {
	return call(e, func() error {
		c, err := valueOf[*cdevice.ChunkedArray](h)
		if err != nil {
			return err
		}
		newHandle(c.Schema(), &info.schema)
		info.length = C.int64_t(c.Len())
		info.n_chunks = C.int64_t(c.NumChunks())
		info.device_type = C.int32_t(c.DeviceType())
		info.is_struct = cBool(c.Schema().IsRecordBatch())
		return nil
	})
}

//export gdaChunkedChunk
func gdaChunkedChunk(h C.uintptr_t, i C.int64_t, out *C.uintptr_t, e *C.gda_error) C.int {
	return transform(h, out, e, func(c *cdevice.ChunkedArray) (*cdevice.Array, error) {
		a, err := c.Chunk(int(i))
		if err == nil {
			a.Retain() // the new handle's reference
		}
		return a, err
	})
}

//export gdaChunkedStream
func gdaChunkedStream(h C.uintptr_t, out *C.uintptr_t, e *C.gda_error) C.int {
	return transform(h, out, e, func(c *cdevice.ChunkedArray) (*streams.OneShotStream, error) {
		return streams.NewOneShotStream(c.Reader()), nil
	})
}

//export gdaChunkedSlice
func gdaChunkedSlice(h C.uintptr_t, offset, length C.int64_t, out *C.uintptr_t, e *C.gda_error) C.int {
	return transform(h, out, e, func(c *cdevice.ChunkedArray) (*cdevice.ChunkedArray, error) {
		return c.Slice(int64(offset), int64(length))
	})
}

//export gdaChunkedColumn
func gdaChunkedColumn(h C.uintptr_t, i C.int64_t, out *C.uintptr_t, e *C.gda_error) C.int {
	return transform(h, out, e, func(c *cdevice.ChunkedArray) (*cdevice.ChunkedArray, error) {
		return c.Column(int(i))
	})
}

//export gdaChunkedToDevice
func gdaChunkedToDevice(h C.uintptr_t, devType C.int32_t, devID C.int64_t, out *C.uintptr_t, e *C.gda_error) C.int {
	return transform(h, out, e, func(c *cdevice.ChunkedArray) (*cdevice.ChunkedArray, error) {
		return c.CopyToDevice(device.Device{Type: device.Type(devType), ID: int64(devID)})
	})
}

//export gdaChunkedValidate
func gdaChunkedValidate(h C.uintptr_t, full C.int, e *C.gda_error) C.int {
	return call(e, func() error {
		c, err := valueOf[*cdevice.ChunkedArray](h)
		if err != nil {
			return err
		}
		return c.Validate(full != 0)
	})
}
