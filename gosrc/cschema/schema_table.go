package cschema

/*
#include "gda.h"
*/
import "C"
import (
	"unsafe"

	"github.com/godevarrow/godevarrow/gosrc/errs"
	"github.com/godevarrow/godevarrow/gosrc/handle"
)

// gateNodes returns the C gate's preorder view of s, or false when a node's
// layout is one the gate does not check (those imports take the Go path).
func gateNodes(s *Schema, out []C.gda_gate_node) ([]C.gda_gate_node, bool) {
	info := s.info
	n := C.gda_gate_node{
		n_buffers:  C.int32_t(info.BufferCount()),
		n_children: C.int64_t(len(s.Children)),
	}
	if s.Dictionary != nil {
		n.has_dictionary = 1
	}
	if info.HasValidity() {
		n.has_validity = 1
	}
	switch info.Layout {
	case LayoutNull:
		n.kind = C.GDA_GATE_NULL
	case LayoutBool:
		n.kind = C.GDA_GATE_BOOL
	case LayoutFixedWidth:
		n.kind, n.width = C.GDA_GATE_FIXED, C.int64_t(info.ByteWidth)
	case LayoutBinary:
		n.kind, n.width = C.GDA_GATE_BINARY, 4
	case LayoutLargeBinary:
		n.kind, n.width = C.GDA_GATE_BINARY, 8
	case LayoutList, LayoutMap:
		n.kind, n.width = C.GDA_GATE_LIST, 4
	case LayoutLargeList:
		n.kind, n.width = C.GDA_GATE_LIST, 8
	case LayoutFixedSizeList:
		n.kind, n.width = C.GDA_GATE_FIXED_LIST, C.int64_t(info.ListSize)
	case LayoutStruct:
		n.kind = C.GDA_GATE_STRUCT
	default:
		return out, false
	}
	if _, err := s.DataType(); err != nil {
		return out, false // the Go import would fail: let it say why
	}
	out = append(out, n)
	for _, c := range s.Children {
		var ok bool
		if out, ok = gateNodes(c, out); !ok {
			return out, false
		}
	}
	if s.Dictionary != nil {
		return gateNodes(s.Dictionary, out)
	}
	return out, true
}

// heldSchemas holds the Go Schema of each entry of the held-schema table,
// which is the schema import cache (schema_cache.go): the C entry keeps the
// handle, and tells us when it goes (gdaHeldSchemaDropped).
var heldSchemas handle.Table

// addHeldSchema adds s (imported from a tree of the given hash, its template
// built) to the held-schema table.
func addHeldSchema(hash uint64, s *Schema) {
	nodes, ok := gateNodes(s, nil)
	if !ok {
		nodes = nil // known, but its arrays take the Go import
	}
	isRecordBatch := C.int(0)
	if s.IsRecordBatch() {
		isRecordBatch = 1
	}
	h := heldSchemas.Put(s)
	if C.gda_held_schema_add(C.uint64_t(hash), C.uintptr_t(h), s.template, isRecordBatch, unsafe.SliceData(nodes), C.int64_t(len(nodes))) != 0 {
		heldSchemas.Delete(h) // not cached: the next import reads the schema again
	}
}

// Hold enters s in the held-schema table, as an import of an equal C tree
// would (readSchemaCached), so that a C fast path that looks up an equal
// tree finds it (dlpack's hold.c: the schemas it gives tensors). It reports
// whether an equal schema is in the table now: false when s is not
// cacheable, or the table refused it (its bounds).
func Hold(s *Schema) bool {
	tmpl, err := s.cTemplate()
	if err != nil {
		return false
	}
	var hash C.uint64_t
	if e := C.gda_held_schema_lookup(tmpl, &hash); e != nil {
		C.gda_held_schema_unref(e)
		return true
	}
	if hash == 0 {
		return false
	}
	addHeldSchema(uint64(hash), s)
	e := C.gda_held_schema_lookup(tmpl, nil)
	if e != nil {
		C.gda_held_schema_unref(e)
	}
	return e != nil
}

// HeldSchema returns the Go Schema of a held-schema entry's handle (the
// go_schema of gda.h's entry, e.g. of a held import).
func HeldSchema(h uintptr) *Schema {
	v, ok := heldSchemas.Get(handle.Handle(h))
	if !ok {
		panic("cschema: a held-schema entry outlived its Go Schema")
	}
	return v.(*Schema)
}

//export gdaHeldSchemaDropped
func gdaHeldSchemaDropped(h C.uintptr_t) {
	defer errs.RecoverInto(func(error) {})
	heldSchemas.Delete(handle.Handle(h))
}
