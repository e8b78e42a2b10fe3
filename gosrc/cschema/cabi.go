package cschema

/*
#include "gda.h"
*/
import "C"

import "unsafe"

// CArrowSchema is the canonical ArrowSchema struct of arrow-c-abi.h. The
// other structs are cdevice's (CArrowArray, ...): a cgo type belongs to the
// package that declares it, so each package reads the structs it owns and
// the others pass pointers on.
type CArrowSchema = C.struct_ArrowSchema

// SchemaAt views a pointer obtained elsewhere (a PyCapsule, another cgo
// package) as an ArrowSchema.
func SchemaAt(p unsafe.Pointer) *CArrowSchema { return (*CArrowSchema)(p) }

// SizeofArrowSchema is the struct's size, for callers that allocate it.
const SizeofArrowSchema = C.sizeof_struct_ArrowSchema
