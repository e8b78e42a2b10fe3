package cdevice

/*
#include "cdevice.h"
*/
import "C"

import (
	"sync"
	"unsafe"
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

// schemaCacheSize bounds the memory the cache keeps: when full it is emptied
// (a program cycling through more distinct schemas than this gains little
// from any policy).
const schemaCacheSize = 256

type schemaCache struct {
	mu sync.Mutex
	m  map[uint64]*Schema
}

var importedSchemas schemaCache

// lookup returns the cached Schema equal to c, or nil; hash is c's hash (0:
// not cacheable).
func (sc *schemaCache) lookup(c *C.struct_ArrowSchema) (s *Schema, hash uint64) {
	hash = uint64(C.gda_schema_hash(c))
	if hash == 0 {
		return nil, 0
	}
	sc.mu.Lock()
	s = sc.m[hash]
	sc.mu.Unlock()
	if s != nil && C.gda_schema_matches(c, s.template) == 0 {
		s = nil
	}
	return s, hash
}

// add caches s (imported from a tree of the given hash) once its C template
// exists; the template is what lookups compare against.
func (sc *schemaCache) add(hash uint64, s *Schema) {
	if hash == 0 {
		return
	}
	if _, err := s.cTemplate(); err != nil {
		return
	}
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.m == nil || len(sc.m) >= schemaCacheSize {
		sc.m = make(map[uint64]*Schema, schemaCacheSize)
	}
	sc.m[hash] = s
	addHeldSchema(hash, s)
}

// readSchemaCached is readSchema through the cache.
func readSchemaCached(c *C.struct_ArrowSchema) (*Schema, error) {
	s, hash := importedSchemas.lookup(c)
	if s != nil {
		return s, nil
	}
	if hash == 0 && !withinNodeBudget(c, 0, new(int64)) {
		// said before the walk that builds the Schema: a DAG of aliased
		// children is found in milliseconds, not after a second and half a
		// gigabyte of nodes
		return nil, errorf(ErrInvalid, "schema has more than %d nodes (children aliased many times?)", maxSchemaNodes)
	}
	s, err := readSchema(c, 0, "", newSchemaBudget())
	if err != nil {
		return nil, err
	}
	importedSchemas.add(hash, s)
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
	if depth > maxNesting || c.n_children < 0 || c.n_children > 1<<20 || (c.n_children > 0 && c.children == nil) {
		return true
	}
	for _, k := range unsafe.Slice(c.children, c.n_children) {
		if k != nil && !withinNodeBudget(k, depth+1, seen) {
			return false
		}
	}
	return c.dictionary == nil || withinNodeBudget(c.dictionary, depth+1, seen)
}
