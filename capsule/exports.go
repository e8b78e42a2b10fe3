// Command capsule is the CPython extension module godevarrow._godevarrow,
// built with -buildmode=c-shared. It is a binding: the C files hold the
// Python side (module init, method table, PyCapsules, the GIL), the Go
// files hold the exports they call. Each export unpacks plain C arguments,
// makes one call into gosrc, and packs the result or the error through
// call() (errors.go). No Arrow decision and no state lives here: streams
// are streams.OneShotStream, held imports and the schema table are held.h.
//
// Python holds Go objects through handles (a generational handle.Table): a
// handle capsule, an ArrayBase, or a stream capsule owns one handle each.
//
// Device backends register themselves when their package is imported
// (gosrc/device, "Backend"): the blank import of gosrc/device/cuda below is
// what gives this build its CUDA backend.
package main

/*
#cgo CFLAGS: -O2 -std=c11 -Werror=implicit-function-declaration -I${SRCDIR}/../gosrc/include -I${SRCDIR}/../gosrc/values -I${SRCDIR}/../gosrc/streams
#include <stdlib.h>
#include "module.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
	"time"
	"unsafe"

	"github.com/godevarrow/godevarrow/gosrc/cdevice"
	"github.com/godevarrow/godevarrow/gosrc/checksum"
	"github.com/godevarrow/godevarrow/gosrc/cschema"
	"github.com/godevarrow/godevarrow/gosrc/device"
	"github.com/godevarrow/godevarrow/gosrc/device/cuda" // the CUDA backend registers itself
	"github.com/godevarrow/godevarrow/gosrc/dlpack"
	"github.com/godevarrow/godevarrow/gosrc/errs"
	"github.com/godevarrow/godevarrow/gosrc/handle"
	"github.com/godevarrow/godevarrow/gosrc/streams"
	"github.com/godevarrow/godevarrow/gosrc/values"
)

func main() {}

// handles holds the Go objects Python holds (one per handle).
var handles handle.Table

func newHandle(v any, out *C.uintptr_t) {
	*out = C.uintptr_t(handles.Put(v))
}

// valueOf returns the value of a live handle, of type T.
func valueOf[T any](h C.uintptr_t) (T, error) {
	var zero T
	v, ok := handles.Get(handle.Handle(h))
	if !ok {
		return zero, fmt.Errorf("%w: stale or invalid handle %#x", errType, uintptr(h))
	}
	t, ok := v.(T)
	if !ok {
		return zero, fmt.Errorf("%w: handle holds %T, not %T", errType, v, zero)
	}
	return t, nil
}

// valuesOf returns the values of two live handles, of types A and B; with
// optional, h2 may be 0 (none: the zero B).
func valuesOf[A, B any](h1, h2 C.uintptr_t, optional bool) (a A, b B, err error) {
	if a, err = valueOf[A](h1); err != nil {
		return a, b, err
	}
	if optional && h2 == 0 {
		return a, b, nil
	}
	b, err = valueOf[B](h2)
	return a, b, err
}

// optionalValue is valueOf for a handle that may be 0 (none: the zero T).
func optionalValue[T any](h C.uintptr_t) (T, error) {
	if h == 0 {
		var zero T
		return zero, nil
	}
	return valueOf[T](h)
}

//export gdaHandleRelease
func gdaHandleRelease(h C.uintptr_t) {
	call(nil, func() error {
		v, ok := handles.Delete(handle.Handle(h))
		if !ok {
			return fmt.Errorf("%w: handle %#x released twice", errs.ErrInternal, uintptr(h))
		}
		switch v := v.(type) {
		case *cdevice.Array:
			v.Release()
		case *ownedStream:
			_ = v.b.ReleaseStream(v.s)
		case *streams.OneShotStream:
			_, _ = v.Close() // its capsule settled it first (stream_handle_destructor)
		case *cdevice.ChunkedArray:
			v.Release()
		case *values.EncodedValues:
			v.Free()
		}
		return nil
	})
}

// gdaPoisonedError fills e with the refusal of a poisoned library.
//
//export gdaPoisonedError
func gdaPoisonedError(e *C.gda_error) C.int {
	return call(e, func() error { return nil })
}

// ------------------------------------------------------------------ schemas

//export gdaImportSchema
func gdaImportSchema(p unsafe.Pointer, consume C.int, out *C.uintptr_t, e *C.gda_error) C.int {
	read := cschema.CopySchema // the capsule keeps the struct
	if consume != 0 {
		read = cschema.ImportSchema
	}
	return call(e, func() error {
		s, err := read(cschema.SchemaAt(p))
		if err == nil {
			newHandle(s, out)
		}
		return err
	})
}

//export gdaSchemaBorrow
func gdaSchemaBorrow(src, out unsafe.Pointer, e *C.gda_error) C.int {
	return call(e, func() error { return cschema.BorrowSchema(cschema.SchemaAt(src), cschema.SchemaAt(out)) })
}

//export gdaDeviceArrayStampDeviceOfData
func gdaDeviceArrayStampDeviceOfData(d unsafe.Pointer, e *C.gda_error) C.int {
	return call(e, func() error { return cdevice.StampDeviceOfData(cdevice.DeviceArrayAt(d)) })
}

//export gdaExportSchema
func gdaExportSchema(h C.uintptr_t, out unsafe.Pointer, e *C.gda_error) C.int {
	return call(e, func() error {
		s, err := schemaOf(h)
		if err != nil {
			return err
		}
		return cschema.ExportSchema(s, cschema.SchemaAt(out))
	})
}

// schemaOf accepts a Schema, Array or stream handle.
func schemaOf(h C.uintptr_t) (*cschema.Schema, error) {
	v, ok := handles.Get(handle.Handle(h))
	switch v := v.(type) {
	case *cschema.Schema:
		return v, nil
	case *cdevice.Array:
		return v.Schema(), nil
	case *streams.OneShotStream:
		return v.Schema(), nil
	case *cdevice.ChunkedArray:
		return v.Schema(), nil
	}
	if !ok {
		return nil, fmt.Errorf("%w: stale or invalid handle %#x", errType, uintptr(h))
	}
	return nil, fmt.Errorf("%w: handle holds no schema", errType)
}

//export gdaSchemaOf
func gdaSchemaOf(h C.uintptr_t, out *C.uintptr_t, e *C.gda_error) C.int {
	return call(e, func() error {
		s, err := schemaOf(h)
		if err == nil {
			newHandle(s, out)
		}
		return err
	})
}

//export gdaSchemaInfo
func gdaSchemaInfo(h C.uintptr_t, info *C.gda_schema_info, e *C.gda_error) C.int {
	return call(e, func() error {
		s, err := valueOf[*cschema.Schema](h)
		if err != nil {
			return err
		}
		info.format = C.CString(s.Format)
		info.name = C.CString(s.Name)
		info.flags = C.int64_t(s.Flags)
		info.metadata = C.gda_bytes{}
		if md := cschema.EncodeMetadata(s.Metadata); len(md) > 0 {
			info.metadata = C.gda_bytes{data: (*C.char)(C.CBytes(md)), len: C.int64_t(len(md))}
		}
		info.n_children = C.int64_t(len(s.Children))
		info.has_dictionary = cBool(s.Dictionary != nil)
		return nil
	})
}

//export gdaSchemaChild
func gdaSchemaChild(h C.uintptr_t, i C.int64_t, out *C.uintptr_t, e *C.gda_error) C.int {
	return transform(h, out, e, func(s *cschema.Schema) (*cschema.Schema, error) { return s.Child(int(i)) })
}

//export gdaSchemaEqual
func gdaSchemaEqual(h1, h2 C.uintptr_t, out *C.int, e *C.gda_error) C.int {
	return call(e, func() error {
		a, b, err := valuesOf[*cschema.Schema, *cschema.Schema](h1, h2, false)
		if err != nil {
			return err
		}
		*out = C.int(cBool(a.Equal(b)))
		return nil
	})
}

//export gdaSchemaString
func gdaSchemaString(h C.uintptr_t, out **C.char, e *C.gda_error) C.int {
	return call(e, func() error {
		s, err := valueOf[*cschema.Schema](h)
		if err == nil {
			*out = C.CString(s.String())
		}
		return err
	})
}

// ------------------------------------------------------------------- arrays

//export gdaImportArray
func gdaImportArray(schemaPtr, arrayPtr unsafe.Pointer, isDevice C.int, out *C.uintptr_t, e *C.gda_error) C.int {
	return call(e, func() error {
		s, err := cschema.ImportSchema(cschema.SchemaAt(schemaPtr))
		if err != nil {
			return err // the array stays with its capsule, which releases it
		}
		var a *cdevice.Array
		if isDevice != 0 {
			a, err = cdevice.ImportDeviceArray(cdevice.DeviceArrayAt(arrayPtr), s)
		} else {
			a, err = cdevice.ImportArray(cdevice.ArrayAt(arrayPtr), s)
		}
		if err == nil {
			newHandle(a, out)
		}
		return err
	})
}

// gdaImportDevicePair imports a pair moved out of its capsules (both
// consumed): held in C (*held) or as a Go array (*out).
//
//export gdaImportDevicePair
func gdaImportDevicePair(schemaPtr, arrayPtr unsafe.Pointer, held *unsafe.Pointer, out *C.uintptr_t, e *C.gda_error) C.int {
	return call(e, func() error {
		h, a, err := cdevice.ImportDevicePair(cschema.SchemaAt(schemaPtr), cdevice.DeviceArrayAt(arrayPtr))
		if err == nil && a != nil {
			newHandle(a, out)
		}
		*held = h
		return err
	})
}

// gdaImportHeld builds the Go array of a held import (held.h) when Go code
// first needs it.
//
//export gdaImportHeld
func gdaImportHeld(held unsafe.Pointer, out *C.uintptr_t, e *C.gda_error) C.int {
	return call(e, func() error {
		a, err := cdevice.ImportHeld(held)
		if err == nil {
			newHandle(a, out)
		}
		return err
	})
}

// gdaCacheSchema reads a schema into the held-schema table without consuming it.
//
//export gdaCacheSchema
func gdaCacheSchema(schemaPtr unsafe.Pointer, e *C.gda_error) C.int {
	return call(e, func() error {
		_, err := cschema.CopySchema(cschema.SchemaAt(schemaPtr))
		return err
	})
}

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

// cBool is C's 1 or 0.
func cBool(b bool) C.int32_t {
	if b {
		return 1
	}
	return 0
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

// transform is the body of an export that makes a new handle (out) from the
// value of one (h).
func transform[T, R any](h C.uintptr_t, out *C.uintptr_t, e *C.gda_error, op func(T) (R, error)) C.int {
	return call(e, func() error {
		v, err := valueOf[T](h)
		if err != nil {
			return err
		}
		r, err := op(v)
		if err == nil {
			newHandle(r, out)
		}
		return err
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

// ------------------------------------------------------------------ streams

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
	pending := false
	rc := call(e, func() error {
		s, err := valueOf[*streams.OneShotStream](h)
		if err != nil {
			return err
		}
		hp, a, err, ready := s.NextHeld(time.Duration(timeoutMs)*time.Millisecond, streams.ThreadID(thread))
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
	if rc == 0 && pending {
		return C.GDA_PENDING
	}
	return rc
}

// gdaStreamTryNext is gdaStreamNext for a caller holding the GIL in an event
// loop: GDA_PENDING at once when nothing is ready (it never calls a producer).
//
//export gdaStreamTryNext
func gdaStreamTryNext(h C.uintptr_t, out *C.uintptr_t, held *unsafe.Pointer, e *C.gda_error) C.int {
	pending := false
	rc := call(e, func() error {
		s, err := valueOf[*streams.OneShotStream](h)
		if err != nil {
			return err
		}
		hp, a, err, ok := s.TryNextHeld()
		switch {
		case !ok:
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
	if rc == 0 && pending {
		return C.GDA_PENDING
	}
	return rc
}

// arraysAndSchema are the arrays of n array handles and an optional schema.
func arraysAndSchema(hs *C.uintptr_t, n C.int64_t, schema C.uintptr_t) ([]*cdevice.Array, *cschema.Schema, error) {
	arrays := make([]*cdevice.Array, int(n))
	for i, h := range unsafe.Slice(hs, int(n)) {
		a, err := valueOf[*cdevice.Array](h)
		if err != nil {
			return nil, nil, err
		}
		arrays[i] = a
	}
	s, err := optionalValue[*cschema.Schema](schema)
	return arrays, s, err
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

// -------------------------------------------------------------- the process

//export gdaCUDAStatus
func gdaCUDAStatus(st *C.gda_cuda_status, e *C.gda_error) C.int {
	return call(e, func() error {
		// the status of one backend: CUDA's, which this binding links
		b, err := device.BackendFor(device.CUDA)
		if err != nil {
			st.library, st.message = C.CString(""), C.CString(err.Error())
			return nil
		}
		st.library = C.CString(b.Library())
		if err := b.Open(); err != nil {
			st.message = C.CString(err.Error())
			return nil
		}
		n := b.DeviceCount()
		msg := fmt.Sprintf("%d device(s)", n)
		if v, err := b.DriverVersion(); err == nil {
			msg += fmt.Sprintf(", driver API %d.%d", v/1000, v%1000/10)
		}
		if name, err := b.DeviceName(0); err == nil && n > 0 {
			msg += ", device 0: " + name
		}
		st.available, st.device_count, st.message = 1, C.int64_t(n), C.CString(msg)
		return nil
	})
}

// gdaBuildInfo reports versions as "key=value" lines (the caller frees
// them); modules lists every module linked in, as path@version.
//
//export gdaBuildInfo
func gdaBuildInfo(out **C.char, e *C.gda_error) C.int {
	return call(e, func() error {
		lines := []string{"go=" + runtime.Version(), "goarch=" + runtime.GOOS + "/" + runtime.GOARCH}
		if bi, ok := debug.ReadBuildInfo(); ok {
			var modules []string // what a rebuild (godevarrow build-ext) must match
			for _, dep := range bi.Deps {
				if dep.Replace != nil {
					dep = dep.Replace
				}
				modules = append(modules, dep.Path+"@"+dep.Version)
				if strings.HasPrefix(dep.Path, "github.com/apache/arrow/go/") {
					lines = append(lines, "arrow_go="+dep.Path+"@"+dep.Version)
				}
			}
			lines = append(lines, "modules="+strings.Join(modules, ","))
		}
		*out = C.CString(strings.Join(lines, "\n"))
		return nil
	})
}

//export gdaDebugCounters
func gdaDebugCounters(out *C.gda_counters, e *C.gda_error) C.int {
	return call(e, func() error {
		st, ss := cdevice.LiveStats(), streams.LiveStats()
		cache := cschema.SchemaCacheSize()
		streams, events, hostBuffers := cuda.Pooled()
		*out = C.gda_counters{
			handles:          C.int64_t(handles.Len()),
			exported_schemas: C.int64_t(st.ExportedSchemas),
			exported_arrays:  C.int64_t(st.ExportedArrays),
			exported_streams: C.int64_t(ss.ExportedStreams),
			imported_arrays:  C.int64_t(st.ImportedArrays),
			imported_streams: C.int64_t(ss.ImportedStreams),
			bytes_held:       C.int64_t(st.AllocatedBytes),
			arrays:           C.int64_t(st.Arrays),
			exported_tensors: C.int64_t(dlpack.LiveExports()),
			held_imports:     C.int64_t(st.HeldImports),

			schema_cache_entries: C.int64_t(cache.Entries),
			schema_cache_bytes:   C.int64_t(cache.Bytes),

			pooled_streams:      C.int64_t(streams),
			pooled_events:       C.int64_t(events),
			pooled_host_buffers: C.int64_t(hostBuffers),
		}
		return nil
	})
}

// gdaDebugPanic panics inside an export, to prove that panics become Python
// exceptions and that the library then refuses work. It only runs when the
// environment variable GODEVARROW_ALLOW_PANIC_TEST=1 (read with C getenv).
//
//export gdaDebugPanic
func gdaDebugPanic(e *C.gda_error) C.int {
	return call(e, func() error {
		name := C.CString("GODEVARROW_ALLOW_PANIC_TEST")
		defer C.free(unsafe.Pointer(name))
		if v := C.getenv(name); v == nil || C.GoString(v) != "1" {
			return &errs.Error{Kind: errs.ErrInvalid, Msg: "debug_panic() needs GODEVARROW_ALLOW_PANIC_TEST=1"}
		}
		panic("deliberate panic from debug_panic()")
	})
}
