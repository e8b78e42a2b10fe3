package tests_go

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/godevarrow/godevarrow/gosrc/cdevice"
	"github.com/godevarrow/godevarrow/gosrc/cschema"
	"github.com/godevarrow/godevarrow/gosrc/errs"
	cb "github.com/godevarrow/godevarrow/tests_go/cboundary"
	"github.com/godevarrow/godevarrow/tests_go/cfuzz"
)

// FuzzSchemaImport: a schema tree built from fuzz bytes by a C producer is
// imported or rejected with an error, never a crash; its release runs once;
// what imports exports and imports back equal.
func FuzzSchemaImport(f *testing.F) {
	for _, seed := range [][]byte{{}, {15, 1, 2, 0}, {34, 0, 2, 0, 2, 15, 0, 2, 0, 0, 6, 0, 2, 0, 0}, {29, 0, 2, 0, 1, 6, 0, 2, 0, 0}, {5, 1, 2, 0, 0}} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfuzz.Reset()
		s := cfuzz.Schema(data)
		defer cfuzz.Free(s)
		schema, err := cschema.ImportSchema(s)
		if n := cfuzz.Releases(); n != 1 {
			t.Fatalf("the schema was released %d times (err %v)", n, err)
		}
		if err != nil {
			return
		}
		out := cb.NewSchema()
		defer cb.Free(out)
		if err := cschema.ExportSchema(schema, out); err != nil {
			t.Fatalf("an imported schema does not export: %v", err)
		}
		back, err := cschema.ImportSchema(out)
		if err != nil || !back.Equal(schema) {
			t.Fatalf("schema %s does not survive export/import: %v", schema, err)
		}
	})
}

// FuzzArrayImport: arrays of several shapes whose buffers are honest in size
// but whose offsets, indices, type ids, counts and bitmaps are fuzzed are
// imported (structural checks) and fully validated, or rejected with an
// error; never a crash; the producer's release runs once. The C fast path of
// imports (held.c) is held to ImportArray on the same inputs: every pair it
// would take, ImportArray takes too (it may decline more; the Go import then
// reports why).
func FuzzArrayImport(f *testing.F) {
	for shape := byte(0); shape < 8; shape++ {
		f.Add([]byte{shape, 3, 0, 0, 1, 0xff, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
		f.Add([]byte{shape, 5, 2, 2, 0, 0, 4, 8, 12, 16, 20, 24, 28, 32, 1, 2, 3})
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		baseline(t)
		cfuzz.Reset()
		s, a := cfuzz.Array(data)
		defer cfuzz.Free(s)
		defer cfuzz.Free(a)
		schema, err := cschema.ImportSchema(s) // caches the schema: the fast path knows it
		if err != nil {
			t.Fatalf("the shapes' schemas are valid: %v", err)
		}
		accepted := heldImportAccepts(t, schema, a)
		arr, err := cdevice.ImportArray(a, schema)
		if accepted && err != nil {
			t.Fatalf("the fast path takes an array that ImportArray rejects: %v", err)
		}
		if err == nil {
			if cdevice.Validate(arr, true) == nil {
				// valid data must be usable by Arrow Go: every value is
				// read. (Not through String(): Arrow Go v17's Struct.String
				// panics on a null struct slot whose child has no validity
				// bitmap, valid data it formats wrongly; godevarrow never
				// calls it.)
				// (a format Arrow Go has no type for is the one refusal allowed)
				if ga, err := arr.ToArrow(); err == nil {
					readValues(t, ga)
					sl := array.NewSlice(ga, 0, int64(ga.Len()))
					readValues(t, sl)
					sl.Release()
					ga.Release()
				} else if !errors.Is(err, errs.ErrNotImplemented) {
					t.Fatalf("ToArrow refuses data that passed full validation: %v", err)
				}
			}
			arr.Release()
		}
		if n := cfuzz.Releases(); n != 2 {
			t.Fatalf("%d releases of schema and array, want 2 (err %v)", n, err)
		}
	})
}

// readValues reads every value of a through Arrow Go's accessors.
func readValues(t *testing.T, a arrow.Array) {
	if _, err := json.Marshal(a); err != nil {
		t.Fatalf("Arrow Go cannot read a valid %s: %v", a.DataType(), err)
	}
}

// heldImportAccepts asks the C fast path about schema (exported again, as a
// producer would hand it over) and a, touching neither.
func heldImportAccepts(t *testing.T, schema *cschema.Schema, a *cdevice.CArrowArray) bool {
	exported := cb.NewSchema()
	defer cb.Free(exported)
	if err := cschema.ExportSchema(schema, exported); err != nil {
		t.Fatal(err)
	}
	accepted := cdevice.HeldImportAccepts(exported, a)
	if _, err := cschema.ImportSchema(exported); err != nil { // releases it
		t.Fatal(err)
	}
	return accepted
}
