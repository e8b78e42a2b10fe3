package cdevice

/*
#include "cdevice.h"
*/
import "C"

import "sync"

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
	s, err := readSchema(c, 0, "", newSchemaBudget())
	if err != nil {
		return nil, err
	}
	importedSchemas.add(hash, s)
	return s, nil
}
