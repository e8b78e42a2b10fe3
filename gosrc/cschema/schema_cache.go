package cschema

/*
#include "gda.h"
*/
import "C"

import (
	"unsafe"

	"github.com/godevarrow/godevarrow/gosrc/errs"
)

// The schema import cache. A program that exchanges data imports the same
// schema again and again (every batch of a stream, every call of a Python
// API), and building a Schema — parsing format strings, decoding metadata,
// and later building the C template that exports copy — is most of the fixed
// cost of an exchange. Schemas are immutable, so an import whose C tree
// equals one imported before returns that Schema: one C pass hashes the tree,
// a second compares it member by member with the cached Schema's C template
// (a hash collision can never return a wrong Schema). Trees the hash declines
// (malformed, or beyond the import's limits) take the full import, which
// reports their errors.

// The cache is the held-schema table of held.c, whose entries hold the Go
// Schema's handle (heldSchemas): one table serves the Go import and the C
// fast path, so they cannot disagree about what is known.

// CacheSize is the size of the schema import cache: its entries, and their
// bytes as counted against its budget (GDA_HELD_SCHEMA_BYTES in cdevice.h,
// listed in SECURITY.md).
type CacheSize struct {
	Entries, Bytes int64
}

// Bounds of the schema import cache (cdevice.h): it is emptied before an
// entry would pass either, and a schema larger than the byte budget by
// itself is not cached.
const (
	SchemaCacheMaxEntries = C.GDA_HELD_SCHEMAS
	SchemaCacheMaxBytes   = C.GDA_HELD_SCHEMA_BYTES
)

// SchemaCacheSize returns the current size of the schema import cache.
func SchemaCacheSize() CacheSize {
	var entries, bytes C.int64_t
	C.gda_held_schemas_size(&entries, &bytes)
	return CacheSize{Entries: int64(entries), Bytes: int64(bytes)}
}

// readSchemaCached is readSchema through the cache.
func readSchemaCached(c *C.struct_ArrowSchema) (*Schema, error) {
	var hash C.uint64_t
	if e := C.gda_held_schema_find(c, &hash); e != nil {
		s := HeldSchema(uintptr(C.gda_held_schema_go(e)))
		C.gda_held_schema_unref(e)
		return s, nil
	}
	if hash == 0 && !withinNodeBudget(c, 0, new(int64)) {
		// said before the walk that builds the Schema: a DAG of aliased
		// children is found in milliseconds, not after a second and half a
		// gigabyte of nodes
		return nil, errs.Errorf(errs.ErrInvalid, "schema has more than %d nodes (children aliased many times?)", maxSchemaNodes)
	}
	s, err := readSchema(c, 0, "", newSchemaBudget())
	if err != nil {
		return nil, err
	}
	if _, err := s.cTemplate(); hash != 0 && err == nil {
		addHeldSchema(uint64(hash), s)
	}
	return s, nil
}

// withinNodeBudget counts the nodes of the C tree at c into *seen and
// reports whether they stay within maxSchemaNodes. It reads only the tree's
// pointers and leaves every other problem (NULL children, absurd counts,
// depth) to readSchema, which reports it.
func withinNodeBudget(c *C.struct_ArrowSchema, depth int, seen *int64) bool {
	if *seen++; *seen > maxSchemaNodes {
		return false
	}
	if depth > MaxNesting || c.n_children < 0 || c.n_children > 1<<20 || (c.n_children > 0 && c.children == nil) {
		return true
	}
	for _, k := range unsafe.Slice(c.children, c.n_children) {
		if k != nil && !withinNodeBudget(k, depth+1, seen) {
			return false
		}
	}
	return c.dictionary == nil || withinNodeBudget(c.dictionary, depth+1, seen)
}
