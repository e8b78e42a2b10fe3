// Command capsule is the CPython extension module godevarrow._godevarrow,
// built with -buildmode=c-shared. module.c holds the Python side (method
// table, PyCapsules, GIL); this file holds the Go exports it calls. Each
// export unpacks plain C arguments, calls into gosrc, and reports errors
// through call() — no Arrow logic lives here.
package main

/*
#cgo CFLAGS: -O2 -std=c11 -I${SRCDIR}/../gosrc/cdevice
#include <stdlib.h>
#include "module.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/godevarrow/godevarrow/gosrc/cdevice"
	"github.com/godevarrow/godevarrow/gosrc/checksum"
	"github.com/godevarrow/godevarrow/gosrc/device"
	"github.com/godevarrow/godevarrow/gosrc/dlpack"
	"github.com/godevarrow/godevarrow/gosrc/handle"
)

func main() {}

// pyStream is a stream held by Python. Exporting it moves the reader out.
type pyStream struct {
	mu       sync.Mutex
	reader   cdevice.ArrayReader
	schema   *cdevice.Schema
	devType  device.Type
	consumed bool
	// prefetcher is the read-ahead under reader, if any, while this handle
	// owns it: Stop is called on it without the GIL before a close.
	prefetcher atomic.Pointer[cdevice.PrefetchReader]
	// held is an array read but not delivered because a signal (Ctrl-C)
	// arrived meanwhile: the next read returns it, so nothing is lost.
	// Guarded by mu.
	held *cdevice.Array
}

// close ends the stream once.
func (s *pyStream) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.consumed {
		return nil
	}
	s.consumed = true
	if s.held != nil {
		s.held.Release()
		s.held = nil
	}
	return s.reader.Close()
}

func (s *pyStream) take() (cdevice.ArrayReader, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.consumed {
		return nil, errStreamConsumed()
	}
	if s.held != nil {
		return nil, &cdevice.Error{Kind: cdevice.ErrInvalid, Msg: "a read of this stream was interrupted; read the next array before moving the stream"}
	}
	s.consumed = true
	s.prefetcher.Store(nil)
	return s.reader, nil
}

// handles holds the Go objects Python holds (one per handle capsule).
var handles handle.Table

func newHandle(v any, out *C.uintptr_t) {
	*out = C.uintptr_t(handles.Put(v))
}

// lookup returns the value of a live handle.
func lookup(h C.uintptr_t) (any, error) {
	v, ok := handles.Get(handle.Handle(h))
	if !ok {
		return nil, fmt.Errorf("%w: stale or invalid handle %#x", errType, uintptr(h))
	}
	return v, nil
}

func valueOf[T any](h C.uintptr_t) (T, error) {
	var zero T
	v, err := lookup(h)
	if err != nil {
		return zero, err
	}
	t, ok := v.(T)
	if !ok {
		return zero, fmt.Errorf("%w: handle holds %T, not %T", errType, v, zero)
	}
	return t, nil
}

//export gdaHandleRelease
func gdaHandleRelease(h C.uintptr_t) {
	call(nil, func() error {
		v, ok := handles.Delete(handle.Handle(h))
		if !ok {
			return fmt.Errorf("%w: handle %#x released twice", cdevice.ErrInternal, uintptr(h))
		}
		switch v := v.(type) {
		case *cdevice.Array:
			v.Release()
		case *device.Stream:
			_ = v.Destroy()
		case *pyStream:
			_ = v.close()
		}
		return nil
	})
}

//export gdaImportSchema
func gdaImportSchema(p unsafe.Pointer, consume C.int, out *C.uintptr_t, e *C.gda_error) C.int {
	return call(e, func() error {
		var s *cdevice.Schema
		var err error
		if consume != 0 {
			s, err = cdevice.ImportSchema(cdevice.SchemaAt(p))
		} else {
			s, err = cdevice.CopySchema(cdevice.SchemaAt(p))
		}
		if err == nil {
			newHandle(s, out)
		}
		return err
	})
}

//export gdaImportArray
func gdaImportArray(schemaPtr, arrayPtr unsafe.Pointer, isDevice C.int, out *C.uintptr_t, e *C.gda_error) C.int {
	return call(e, func() error {
		s, err := cdevice.ImportSchema(cdevice.SchemaAt(schemaPtr))
		if err != nil {
			return err
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

// gdaImportHeld builds the Go array of a held import (the C fast path of
// import_from) when Go code first needs it.
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

// gdaCacheSchema imports a schema into the import cache without consuming it.
//
//export gdaCacheSchema
func gdaCacheSchema(schemaPtr unsafe.Pointer, e *C.gda_error) C.int {
	return call(e, func() error {
		_, err := cdevice.CopySchema(cdevice.SchemaAt(schemaPtr))
		return err
	})
}

//export gdaImportStream
func gdaImportStream(p unsafe.Pointer, isDevice C.int, out *C.uintptr_t, e *C.gda_error) C.int {
	return call(e, func() error {
		var r *cdevice.StreamReader
		var err error
		if isDevice != 0 {
			r, err = cdevice.ImportDeviceArrayStream(cdevice.DeviceStreamAt(p))
		} else {
			r, err = cdevice.ImportArrayStream(cdevice.StreamAt(p))
		}
		if err == nil {
			newHandle(&pyStream{reader: r, schema: r.Schema(), devType: r.DeviceType()}, out)
		}
		return err
	})
}

// gdaImportPeekedStream imports a plain stream whose get_schema the caller
// has already called (getSchemaErrno, and the schema when that is 0): both
// structs are moved in. It calls no producer callback except a release.
//
//export gdaImportPeekedStream
func gdaImportPeekedStream(p, schema unsafe.Pointer, getSchemaErrno C.int, out *C.uintptr_t, e *C.gda_error) C.int {
	return call(e, func() error {
		r, err := cdevice.ImportPeekedArrayStream(cdevice.StreamAt(p), cdevice.SchemaAt(schema), int(getSchemaErrno))
		if err == nil {
			newHandle(&pyStream{reader: r, schema: r.Schema(), devType: r.DeviceType()}, out)
		}
		return err
	})
}

// errStreamConsumed is the error of every use of a stream after it was moved
// out or closed.
func errStreamConsumed() error {
	return &cdevice.Error{Kind: cdevice.ErrConsumed, Msg: "the stream was already consumed (exported or closed); a stream can be read only once"}
}

// gdaStreamConsumed fills e with errStreamConsumed, for a stream the C layer
// handed over or closed before Go saw it.
//
//export gdaStreamConsumed
func gdaStreamConsumed(e *C.gda_error) C.int {
	return call(e, errStreamConsumed)
}

//export gdaExportSchema
func gdaExportSchema(h C.uintptr_t, out unsafe.Pointer, e *C.gda_error) C.int {
	return call(e, func() error {
		s, err := schemaOf(h)
		if err != nil {
			return err
		}
		return cdevice.ExportSchema(s, cdevice.SchemaAt(out))
	})
}

// schemaOf accepts a Schema, Array or stream handle.
func schemaOf(h C.uintptr_t) (*cdevice.Schema, error) {
	v, err := lookup(h)
	if err != nil {
		return nil, err
	}
	switch v := v.(type) {
	case *cdevice.Schema:
		return v, nil
	case *cdevice.Array:
		return v.Schema(), nil
	case *pyStream:
		return v.schema, nil
	}
	return nil, fmt.Errorf("%w: handle holds no schema", errType)
}

// withRequested returns a cast to the requested schema handle (0: none);
// the caller releases the result.
func withRequested(a *cdevice.Array, requested C.uintptr_t) (*cdevice.Array, error) {
	if requested == 0 {
		a.Retain()
		return a, nil
	}
	target, err := valueOf[*cdevice.Schema](requested)
	if err != nil {
		return nil, err
	}
	return cdevice.Cast(a, target)
}

//export gdaExportArray
func gdaExportArray(h, requested C.uintptr_t, outSchema, outArray unsafe.Pointer, isDevice C.int, e *C.gda_error) C.int {
	return call(e, func() error {
		a, err := valueOf[*cdevice.Array](h)
		if err != nil {
			return err
		}
		if a, err = withRequested(a, requested); err != nil {
			return err
		}
		defer a.Release()
		if isDevice != 0 {
			err = cdevice.ExportDeviceArray(a, cdevice.DeviceArrayAt(outArray))
		} else {
			err = cdevice.ExportArray(a, cdevice.ArrayAt(outArray))
		}
		if err != nil {
			return err
		}
		if err = cdevice.ExportSchema(a.Schema(), cdevice.SchemaAt(outSchema)); err != nil {
			// undo the array export: the consumer never sees it
			cdevice.ReleaseExportedArray(outArray, isDevice != 0)
		}
		return err
	})
}

//export gdaExportStream
func gdaExportStream(h, requested C.uintptr_t, out unsafe.Pointer, isDevice C.int, e *C.gda_error) C.int {
	return call(e, func() error {
		s, err := valueOf[*pyStream](h)
		if err != nil {
			return err
		}
		var target *cdevice.Schema
		if requested != 0 {
			if target, err = valueOf[*cdevice.Schema](requested); err != nil {
				return err
			}
		}
		// check the request before moving the stream out, so a bad request
		// leaves the stream usable
		if target != nil {
			if _, err := cdevice.CastReader(schemaOnly{s}, target); err != nil {
				return err
			}
		}
		r, err := s.take()
		if err != nil {
			return err
		}
		if target != nil {
			if r, err = cdevice.CastReader(r, target); err != nil {
				r.Close()
				return err
			}
		}
		if isDevice != 0 {
			err = cdevice.ExportDeviceArrayStream(r, cdevice.DeviceStreamAt(out))
		} else {
			// the C stream interface carries CPU memory: copy device chunks
			err = cdevice.ExportArrayStream(cdevice.ToHostReader(r), cdevice.StreamAt(out))
		}
		if err != nil {
			r.Close()
		}
		return err
	})
}

// schemaOnly lets CastReader check a request against a stream without touching it.
type schemaOnly struct{ s *pyStream }

func (o schemaOnly) Schema() *cdevice.Schema       { return o.s.schema }
func (o schemaOnly) DeviceType() device.Type       { return o.s.devType }
func (o schemaOnly) Next() (*cdevice.Array, error) { return nil, io.EOF }
func (o schemaOnly) Close() error                  { return nil }

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
func gdaSchemaInfo(h C.uintptr_t, format, name, metadata **C.char, metadataLen *C.int64_t, flags, nChildren *C.int64_t, hasDictionary *C.int, e *C.gda_error) C.int {
	return call(e, func() error {
		s, err := valueOf[*cdevice.Schema](h)
		if err != nil {
			return err
		}
		*format = C.CString(s.Format)
		*name = C.CString(s.Name)
		md := cdevice.EncodeMetadata(s.Metadata)
		*metadataLen = C.int64_t(len(md))
		*metadata = nil
		if len(md) > 0 {
			*metadata = (*C.char)(C.CBytes(md))
		}
		*flags = C.int64_t(s.Flags)
		*nChildren = C.int64_t(len(s.Children))
		*hasDictionary = 0
		if s.Dictionary != nil {
			*hasDictionary = 1
		}
		return nil
	})
}

//export gdaSchemaChild
func gdaSchemaChild(h C.uintptr_t, i C.int64_t, out *C.uintptr_t, e *C.gda_error) C.int {
	return call(e, func() error {
		s, err := valueOf[*cdevice.Schema](h)
		if err != nil {
			return err
		}
		switch {
		case i == -1 && s.Dictionary != nil:
			newHandle(s.Dictionary, out)
		case i >= 0 && int(i) < len(s.Children):
			newHandle(s.Children[i], out)
		default:
			return &cdevice.Error{Kind: cdevice.ErrInvalid, Msg: fmt.Sprintf("child index %d out of range for %d children", int64(i), len(s.Children))}
		}
		return nil
	})
}

//export gdaSchemaEqual
func gdaSchemaEqual(h1, h2 C.uintptr_t) C.int {
	a, err1 := valueOf[*cdevice.Schema](h1)
	b, err2 := valueOf[*cdevice.Schema](h2)
	if err1 != nil || err2 != nil || !a.Equal(b) {
		return 0
	}
	return 1
}

//export gdaSchemaString
func gdaSchemaString(h C.uintptr_t, out **C.char, e *C.gda_error) C.int {
	return call(e, func() error {
		s, err := valueOf[*cdevice.Schema](h)
		if err == nil {
			*out = C.CString(s.String())
		}
		return err
	})
}

//export gdaArraySlice
func gdaArraySlice(h C.uintptr_t, offset, length C.int64_t, out *C.uintptr_t, e *C.gda_error) C.int {
	return call(e, func() error {
		a, err := valueOf[*cdevice.Array](h)
		if err != nil {
			return err
		}
		s, err := a.Slice(int64(offset), int64(length))
		if err == nil {
			newHandle(s, out)
		}
		return err
	})
}

//export gdaArrayColumn
func gdaArrayColumn(h C.uintptr_t, i C.int64_t, out *C.uintptr_t, e *C.gda_error) C.int {
	return call(e, func() error {
		a, err := valueOf[*cdevice.Array](h)
		if err != nil {
			return err
		}
		c, err := a.Column(int(i))
		if err == nil {
			newHandle(c, out)
		}
		return err
	})
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
	return call(e, func() error {
		a, err := valueOf[*cdevice.Array](h)
		if err != nil {
			return err
		}
		c, err := withRequested(a, schema)
		if err == nil {
			newHandle(c, out)
		}
		return err
	})
}

//export gdaStreamInfo
func gdaStreamInfo(h C.uintptr_t, schema *C.uintptr_t, devType *C.int32_t, isStruct *C.int32_t, e *C.gda_error) C.int {
	return call(e, func() error {
		s, err := valueOf[*pyStream](h)
		if err != nil {
			return err
		}
		newHandle(s.schema, schema)
		*devType = C.int32_t(s.devType)
		*isStruct = cBool(s.schema.IsRecordBatch())
		return nil
	})
}

// gdaStreamNext is called without the GIL: it may block in a producer.
//
// gdaStreamNext returns the next array (0 in *out at the end). A stream that
// reads ahead (prefetch) is waited on for at most timeoutMs, returning
// GDA_PENDING when the time ran out so that the caller can check for signals
// (Ctrl-C) and call again. Other streams are read on the calling thread,
// where a Python producer finds its thread state: reading them elsewhere
// costs a thread switch and a new thread state per array.
//
//export gdaStreamNext
func gdaStreamNext(h C.uintptr_t, timeoutMs C.int, out *C.uintptr_t, e *C.gda_error) C.int {
	pending := false
	rc := call(e, func() error {
		s, err := valueOf[*pyStream](h)
		if err != nil {
			return err
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.consumed {
			return errStreamConsumed()
		}
		if a := s.held; a != nil {
			s.held = nil
			newHandle(a, out)
			return nil
		}
		if p, ok := s.reader.(*cdevice.PrefetchReader); ok {
			a, err, ready := p.NextWithin(time.Duration(timeoutMs) * time.Millisecond)
			if !ready {
				pending = true
				return nil
			}
			return deliver(a, err)(out)
		}
		return deliver(s.reader.Next())(out)
	})
	if rc == 0 && pending {
		return C.GDA_PENDING
	}
	return rc
}

// gdaStreamUnread puts back an array that was read but could not be handed
// to Python (a signal arrived): the next read returns it.
//
//export gdaStreamUnread
func gdaStreamUnread(h, array C.uintptr_t) {
	call(nil, func() error {
		s, err := valueOf[*pyStream](h)
		if err != nil {
			return err
		}
		a, err := valueOf[*cdevice.Array](array)
		if err != nil {
			return err
		}
		a.Retain()
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.held != nil || s.consumed {
			a.Release()
			return nil
		}
		s.held = a
		return nil
	})
}

// deliver turns a reader's result into a handle (0 at the end).
func deliver(a *cdevice.Array, err error) func(*C.uintptr_t) error {
	return func(out *C.uintptr_t) error {
		if errors.Is(err, io.EOF) {
			*out = 0
			return nil
		}
		if err != nil {
			return err
		}
		newHandle(a, out)
		return nil
	}
}

//export gdaStreamClose
func gdaStreamClose(h C.uintptr_t, e *C.gda_error) C.int {
	return call(e, func() error {
		s, err := valueOf[*pyStream](h)
		if err != nil {
			return err
		}
		return s.close()
	})
}

//export gdaStreamFromArrays
func gdaStreamFromArrays(handles *C.uintptr_t, n C.int64_t, schema C.uintptr_t, out *C.uintptr_t, e *C.gda_error) C.int {
	return call(e, func() error {
		arrays := make([]*cdevice.Array, int(n))
		for i, h := range unsafe.Slice(handles, int(n)) {
			a, err := valueOf[*cdevice.Array](h)
			if err != nil {
				return err
			}
			arrays[i] = a
		}
		var s *cdevice.Schema
		devType := device.CPU
		if schema != 0 {
			var err error
			if s, err = valueOf[*cdevice.Schema](schema); err != nil {
				return err
			}
		} else if len(arrays) > 0 {
			s = arrays[0].Schema()
		} else {
			return &cdevice.Error{Kind: cdevice.ErrInvalid, Msg: "a stream of no arrays needs a schema"}
		}
		if len(arrays) > 0 {
			devType = arrays[0].Device().Type
		}
		r, err := cdevice.NewListReader(s, devType, arrays...)
		if err == nil {
			newHandle(&pyStream{reader: r, schema: s, devType: devType}, out)
		}
		return err
	})
}

//export gdaDebugCounters
func gdaDebugCounters(out *C.int64_t) {
	st := cdevice.LiveStats()
	vals := []int64{int64(handles.Len()), st.ExportedSchemas, st.ExportedArrays, st.ExportedStreams,
		st.ImportedArrays, st.ImportedStreams, st.AllocatedBytes, st.Arrays, dlpack.LiveExports(), st.HeldImports}
	for i, v := range vals {
		unsafe.Slice(out, len(vals))[i] = C.int64_t(v)
	}
}

//export gdaChecksums
func gdaChecksums(h C.uintptr_t, out *C.uint32_t, n C.int64_t, e *C.gda_error) C.int {
	return call(e, func() error {
		a, err := valueOf[*cdevice.Array](h)
		if err != nil {
			return err
		}
		if err := cdevice.Validate(a, true); err != nil {
			return err
		}
		rec, err := a.ToRecord()
		if err != nil {
			return err
		}
		defer rec.Release()
		if int(n) != int(rec.NumCols()) {
			return &cdevice.Error{Kind: cdevice.ErrInvalid, Msg: "checksum output has the wrong size"}
		}
		sums := unsafe.Slice(out, int(n))
		for i, col := range rec.Columns() {
			v, err := checksum.Column(col)
			if err != nil {
				return fmt.Errorf("column %q: %w", rec.ColumnName(i), err)
			}
			sums[i] = C.uint32_t(v)
		}
		return nil
	})
}

//export gdaStreamCast
func gdaStreamCast(h, schema C.uintptr_t, out *C.uintptr_t, e *C.gda_error) C.int {
	return call(e, func() error {
		s, err := valueOf[*pyStream](h)
		if err != nil {
			return err
		}
		target, err := valueOf[*cdevice.Schema](schema)
		if err != nil {
			return err
		}
		if _, err := cdevice.CastReader(schemaOnly{s}, target); err != nil {
			return err
		}
		pf := s.prefetcher.Load()
		r, err := s.take()
		if err != nil {
			return err
		}
		cast, err := cdevice.CastReader(r, target)
		if err != nil {
			r.Close()
			return err
		}
		ps := &pyStream{reader: cast, schema: target, devType: s.devType}
		ps.prefetcher.Store(pf)
		newHandle(ps, out)
		return nil
	})
}

// gdaStreamPrefetch moves the stream into a reader that reads up to depth
// arrays ahead on a background goroutine.
//
//export gdaStreamPrefetch
func gdaStreamPrefetch(h C.uintptr_t, depth C.int64_t, out *C.uintptr_t, e *C.gda_error) C.int {
	return call(e, func() error {
		s, err := valueOf[*pyStream](h)
		if err != nil {
			return err
		}
		if depth < 1 {
			return &cdevice.Error{Kind: cdevice.ErrInvalid, Msg: fmt.Sprintf("prefetch depth must be at least 1, got %d", int64(depth))}
		}
		r, err := s.take()
		if err != nil {
			return err
		}
		p := cdevice.Prefetch(r, int(depth))
		ps := &pyStream{reader: p, schema: s.schema, devType: s.devType}
		ps.prefetcher.Store(p)
		newHandle(ps, out)
		return nil
	})
}

// gdaStreamStop stops a stream's read-ahead, waiting for a read in progress
// (called without the GIL, which that read may need); a no-op for other
// handles.
//
//export gdaStreamStop
func gdaStreamStop(h C.uintptr_t) {
	call(nil, func() error {
		if s, err := valueOf[*pyStream](h); err == nil {
			if p := s.prefetcher.Load(); p != nil {
				p.Stop()
			}
		}
		return nil
	})
}

//export gdaCUDAStatus
func gdaCUDAStatus(count *C.int64_t, library, message **C.char) C.int {
	var ok C.int
	call(nil, func() error {
		*library = C.CString(device.CUDALibrary())
		if err := device.OpenCUDA(); err != nil {
			*message = C.CString(err.Error())
			*count = 0
			return nil
		}
		n := device.CUDADeviceCount()
		*count = C.int64_t(n)
		msg := fmt.Sprintf("%d device(s)", n)
		if v, err := device.CUDADriverVersion(); err == nil {
			msg += fmt.Sprintf(", driver API %d.%d", v/1000, v%1000/10)
		}
		if name, err := device.CUDADeviceName(0); err == nil && n > 0 {
			msg += ", device 0: " + name
		}
		*message = C.CString(msg)
		ok = 1
		return nil
	})
	return ok
}

//export gdaArrayToDevice
func gdaArrayToDevice(h C.uintptr_t, devType C.int32_t, devID C.int64_t, out *C.uintptr_t, e *C.gda_error) C.int {
	return call(e, func() error {
		a, err := valueOf[*cdevice.Array](h)
		if err != nil {
			return err
		}
		c, err := cdevice.CopyToDevice(a, device.Device{Type: device.Type(devType), ID: int64(devID)})
		if err == nil {
			newHandle(c, out)
		}
		return err
	})
}

//export gdaArrayWithValidity
func gdaArrayWithValidity(h, validity C.uintptr_t, nullCount C.int64_t, out *C.uintptr_t, e *C.gda_error) C.int {
	return call(e, func() error {
		a, err := valueOf[*cdevice.Array](h)
		if err != nil {
			return err
		}
		v, err := valueOf[*cdevice.Array](validity)
		if err != nil {
			return err
		}
		r, err := cdevice.WithValidity(a, v, int64(nullCount))
		if err == nil {
			newHandle(r, out)
		}
		return err
	})
}

//export gdaArrayAsBatch
func gdaArrayAsBatch(h C.uintptr_t, out *C.uintptr_t, e *C.gda_error) C.int {
	return call(e, func() error {
		a, err := valueOf[*cdevice.Array](h)
		if err != nil {
			return err
		}
		b, err := cdevice.AsRecordBatch(a)
		if err == nil {
			newHandle(b, out)
		}
		return err
	})
}

//export gdaArrayCopy
func gdaArrayCopy(h C.uintptr_t, out *C.uintptr_t, e *C.gda_error) C.int {
	return call(e, func() error {
		a, err := valueOf[*cdevice.Array](h)
		if err != nil {
			return err
		}
		c, err := cdevice.Copy(a)
		if err == nil {
			newHandle(c, out)
		}
		return err
	})
}

//export gdaArrayKnownNullCounts
func gdaArrayKnownNullCounts(h C.uintptr_t, out *C.uintptr_t, e *C.gda_error) C.int {
	return call(e, func() error {
		a, err := valueOf[*cdevice.Array](h)
		if err != nil {
			return err
		}
		c, err := cdevice.WithKnownNullCounts(a)
		if err == nil {
			newHandle(c, out)
		}
		return err
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
			return &cdevice.Error{Kind: cdevice.ErrInvalid, Msg: "debug_panic() needs GODEVARROW_ALLOW_PANIC_TEST=1"}
		}
		panic("deliberate panic from debug_panic()")
	})
}
