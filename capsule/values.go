package main

// The value exports (values.c calls them): an array's values encoded for
// values.c to turn into Python objects, and value equality.

/*
#include "module.h"
*/
import "C"

import (
	"github.com/godevarrow/godevarrow/gosrc/cdevice"
	"github.com/godevarrow/godevarrow/gosrc/values"
)

// gdaArrayValues is called without the GIL: it encodes the values of
// [start, start+length) (values.EncodeValuesC); the caller releases the
// handle in *keep once it has read the encoding, or, when *keep is 0, frees
// the encoding itself.
//
//export gdaArrayValues
func gdaArrayValues(h C.uintptr_t, start, length C.int64_t, byColumn C.int, out **C.char, outLen *C.int64_t, keep *C.uintptr_t, e *C.gda_error) C.int {
	return call(e, func() error {
		a, err := valueOf[*cdevice.Array](h)
		if err != nil {
			return err
		}
		enc, err := values.EncodeValuesC(a, int64(start), int64(length), byColumn != 0)
		if err != nil {
			return err
		}
		*out, *outLen = (*C.char)(enc.Data), C.int64_t(enc.Len)
		if enc.Detach() == nil { // it points into data: keep it until read
			newHandle(enc, keep)
		}
		return nil
	})
}

// gdaEqual is called without the GIL (device data is copied to the host):
// value equality of two arrays or of two chunked arrays.
//
//export gdaEqual
func gdaEqual(h1, h2 C.uintptr_t, checkMetadata C.int, out *C.int32_t, e *C.gda_error) C.int {
	return call(e, func() error {
		var eq bool
		var err error
		if a, b, aerr := valuesOf[*cdevice.Array, *cdevice.Array](h1, h2, false); aerr == nil {
			eq, err = cdevice.Equal(a, b, checkMetadata != 0)
		} else if c, d, cerr := valuesOf[*cdevice.ChunkedArray, *cdevice.ChunkedArray](h1, h2, false); cerr == nil {
			eq, err = c.Equal(d, checkMetadata != 0)
		} else {
			return aerr
		}
		*out = cBool(eq)
		return err
	})
}
