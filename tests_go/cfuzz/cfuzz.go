// Package cfuzz builds C Data Interface structs from fuzz bytes (an honest
// producer with hostile contents) and counts the releases of their roots.
package cfuzz

/*
#cgo CFLAGS: -O1 -std=c11 -D_POSIX_C_SOURCE=200809L
#include <stdlib.h>
#include "cfuzz.h"
*/
import "C"

import (
	"unsafe"

	"github.com/godevarrow/godevarrow/gosrc/cdevice"
	"github.com/godevarrow/godevarrow/gosrc/cschema"
)

// Releases returns how many root structs were released since Reset.
func Releases() int64 { return int64(C.cfz_releases()) }

// Reset zeroes the release counter.
func Reset() { C.cfz_reset() }

// Schema builds a schema tree from data into a new C struct (free it with Free).
func Schema(data []byte) *cschema.CArrowSchema {
	out := C.calloc(1, C.sizeof_struct_ArrowSchema)
	p := C.CBytes(data)
	defer C.free(p)
	C.cfz_build_schema((*C.uchar)(p), C.size_t(len(data)), (*C.struct_ArrowSchema)(out))
	return cschema.SchemaAt(out)
}

// Array builds a schema and a matching-shape array with fuzzed contents.
func Array(data []byte) (*cschema.CArrowSchema, *cdevice.CArrowArray) {
	s := C.calloc(1, C.sizeof_struct_ArrowSchema)
	a := C.calloc(1, C.sizeof_struct_ArrowArray)
	p := C.CBytes(data)
	defer C.free(p)
	C.cfz_build_array((*C.uchar)(p), C.size_t(len(data)), (*C.struct_ArrowSchema)(s), (*C.struct_ArrowArray)(a))
	return cschema.SchemaAt(s), cdevice.ArrayAt(a)
}

// Free frees a struct allocated here (after its release).
func Free[T any](p *T) { C.free(unsafe.Pointer(p)) }

// Tree builds a schema and an array of any layout from data (tree.c):
// fuzzed formats, lengths, offsets, null counts, bitmaps, offsets, type ids,
// run ends, views, n_buffers and aliased children, with buffers honest about
// their sizes. Both live until FreeTree; TreeReleases counts their releases.
func Tree(data []byte) (*cschema.CArrowSchema, *cdevice.CArrowArray) {
	var s *C.struct_ArrowSchema
	var a *C.struct_ArrowArray
	p := C.CBytes(data)
	defer C.free(p)
	C.cfz_build_tree((*C.uchar)(p), C.size_t(len(data)), &s, &a)
	return cschema.SchemaAt(unsafe.Pointer(s)), cdevice.ArrayAt(unsafe.Pointer(a))
}

// TreeReleases returns how many roots of the last Tree were released.
func TreeReleases() int64 { return int64(C.cfz_tree_releases()) }

// FreeTree frees everything the last Tree built.
func FreeTree() { C.cfz_tree_free() }
