package cdevice

/*
#include "cdevice.h"
*/
import "C"

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

// readSchemaCached is readSchema through the cache.
func readSchemaCached(c *C.struct_ArrowSchema) (*Schema, error) {
	var hash C.uint64_t
	if e := C.gda_held_schema_find(c, &hash); e != nil {
		s := heldSchema(C.gda_held_schema_go(e))
		C.gda_held_schema_unref(e)
		return s, nil
	}
	s, err := readSchema(c, 0, "")
	if err != nil {
		return nil, err
	}
	if _, err := s.cTemplate(); hash != 0 && err == nil {
		addHeldSchema(uint64(hash), s)
	}
	return s, nil
}
