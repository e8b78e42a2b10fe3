package main

// The schema exports (schema.c calls them): import, export, the members
// of a schema node, equality and the text form, and the borrowed copy of a
// producer's schema.

/*
#include "module.h"
*/
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/godevarrow/godevarrow/gosrc/cdevice"
	"github.com/godevarrow/godevarrow/gosrc/cschema"
	"github.com/godevarrow/godevarrow/gosrc/handle"
	"github.com/godevarrow/godevarrow/gosrc/streams"
)

//export gdaImportSchema
func gdaImportSchema(p unsafe.Pointer, consume C.int, out *C.uintptr_t, e *C.gda_error) C.int {
	read := cschema.CopySchema // the capsule keeps the struct
	if consume != 0 {
		read = cschema.ImportSchema
	}
	return call(e, func() error {
		s, err := read(cschema.SchemaAt(p))
		if err == nil {
			newHandle(s, out)
		}
		return err
	})
}

//export gdaSchemaBorrow
func gdaSchemaBorrow(src, out unsafe.Pointer, e *C.gda_error) C.int {
	return call(e, func() error { return cschema.BorrowSchema(cschema.SchemaAt(src), cschema.SchemaAt(out)) })
}

//export gdaExportSchema
func gdaExportSchema(h C.uintptr_t, out unsafe.Pointer, e *C.gda_error) C.int {
	return call(e, func() error {
		s, err := schemaOf(h)
		if err != nil {
			return err
		}
		return cschema.ExportSchema(s, cschema.SchemaAt(out))
	})
}

// schemaOf accepts a Schema, Array or stream handle.
func schemaOf(h C.uintptr_t) (*cschema.Schema, error) {
	v, ok := handles.Get(handle.Handle(h))
	switch v := v.(type) {
	case *cschema.Schema:
		return v, nil
	case *cdevice.Array:
		return v.Schema(), nil
	case *streams.OneShotStream:
		return v.Schema(), nil
	case *cdevice.ChunkedArray:
		return v.Schema(), nil
	}
	if !ok {
		return nil, fmt.Errorf("%w: stale or invalid handle %#x", errType, uintptr(h))
	}
	return nil, fmt.Errorf("%w: handle holds no schema", errType)
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
func gdaSchemaInfo(h C.uintptr_t, info *C.gda_schema_info, e *C.gda_error) C.int {
	return call(e, func() error {
		s, err := valueOf[*cschema.Schema](h)
		if err != nil {
			return err
		}
		info.format = C.CString(s.Format)
		info.name = C.CString(s.Name)
		info.flags = C.int64_t(s.Flags)
		info.metadata = C.gda_bytes{}
		if md := cschema.EncodeMetadata(s.Metadata); len(md) > 0 {
			info.metadata = C.gda_bytes{data: (*C.char)(C.CBytes(md)), len: C.int64_t(len(md))}
		}
		info.n_children = C.int64_t(len(s.Children))
		info.has_dictionary = cBool(s.Dictionary != nil)
		return nil
	})
}

//export gdaSchemaChild
func gdaSchemaChild(h C.uintptr_t, i C.int64_t, out *C.uintptr_t, e *C.gda_error) C.int {
	return transform(h, out, e, func(s *cschema.Schema) (*cschema.Schema, error) { return s.Child(int(i)) })
}

//export gdaSchemaEqual
func gdaSchemaEqual(h1, h2 C.uintptr_t, out *C.int, e *C.gda_error) C.int {
	return call(e, func() error {
		a, b, err := valuesOf[*cschema.Schema, *cschema.Schema](h1, h2, false)
		if err != nil {
			return err
		}
		*out = C.int(cBool(a.Equal(b)))
		return nil
	})
}

//export gdaSchemaString
func gdaSchemaString(h C.uintptr_t, out **C.char, e *C.gda_error) C.int {
	return call(e, func() error {
		s, err := valueOf[*cschema.Schema](h)
		if err == nil {
			*out = C.CString(s.String())
		}
		return err
	})
}
