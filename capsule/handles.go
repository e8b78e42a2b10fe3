package main

// Handles: Python holds Go objects through handles (a generational
// handle.Table); a handle capsule, an ArrayBase, or a stream capsule owns
// one handle each (handles.c makes and reads them). The helpers here turn
// handles back into values, and make the body of an export that maps one
// handle to a new one.

/*
#include "module.h"
*/
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/godevarrow/godevarrow/gosrc/cdevice"
	"github.com/godevarrow/godevarrow/gosrc/cschema"
	"github.com/godevarrow/godevarrow/gosrc/errs"
	"github.com/godevarrow/godevarrow/gosrc/handle"
	"github.com/godevarrow/godevarrow/gosrc/streams"
	"github.com/godevarrow/godevarrow/gosrc/values"
)

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

// cBool is C's 1 or 0.
func cBool(b bool) C.int32_t {
	if b {
		return 1
	}
	return 0
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
