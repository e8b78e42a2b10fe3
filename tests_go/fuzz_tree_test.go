package tests_go

import (
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/godevarrow/godevarrow/gosrc/cdevice"
	"github.com/godevarrow/godevarrow/gosrc/cschema"
	"github.com/godevarrow/godevarrow/gosrc/dlpack"
	"github.com/godevarrow/godevarrow/gosrc/errs"
	"github.com/godevarrow/godevarrow/gosrc/values"
	cb "github.com/godevarrow/godevarrow/tests_go/cboundary"
	"github.com/godevarrow/godevarrow/tests_go/cfuzz"
)

// castTargets are the types FuzzHostileTree asks every accepted array for,
// as a consumer's requested_schema would.
var castTargets = []string{"i", "l", "g", "u", "U", "z", "vu", "b", "c"}

// FuzzHostileTree: a schema and an array of any layout built from the
// fuzzer's bytes (cfuzz.Tree: formats, buffers, children, offsets, null
// counts, n_buffers, aliased children) are imported or rejected with an
// error, and every accepted array survives every follow-up a consumer can
// ask for: length, null count, slices, structural and full validation,
// casts, a host copy, export and re-import, a DLPack export, and (for data
// that passed full validation) conversion to Arrow Go. No input may reach a
// panic, every release runs exactly once, and nothing stays live.
func FuzzHostileTree(f *testing.F) {
	for kind := byte(0); kind < 24; kind++ {
		f.Add([]byte{kind, 3, 1, 0, 1, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17})
		f.Add([]byte{kind, 5, 0, 5, 2, 0, 4, 8, 12, 16, 20, 24, 28, 32, 1, 2, 3, 0, 0, 0, 4, 4, 4, 4, 4})
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		before := cdevice.LiveStats()
		s, a := cfuzz.Tree(data)
		defer cfuzz.FreeTree()
		schema, err := cschema.ImportSchema(s)
		if err != nil {
			cb.ReleaseArray(a) // what the array's capsule destructor would do
			if n := cfuzz.TreeReleases(); n != 2 {
				t.Fatalf("%d releases of schema and array, want 2 (schema rejected: %v)", n, err)
			}
			return
		}
		arr, err := cdevice.ImportArray(a, schema)
		if err == nil {
			followUps(t, arr, data)
			arr.Release()
		}
		after := cdevice.LiveStats()
		if after != before {
			t.Fatalf("live objects leaked: before %+v, after %+v", before, after)
		}
		if n := cfuzz.TreeReleases(); n != 2 {
			t.Fatalf("%d releases of schema and array, want 2 (err %v)", n, err)
		}
		if errs.Panics() != 0 {
			t.Fatal("a panic was recovered")
		}
	})
}

// followUps runs every operation a consumer can ask of an imported array.
func followUps(t *testing.T, arr *cdevice.Array, data []byte) {
	n := arr.Len()
	if nulls := arr.NullN(); nulls < 0 || nulls > n {
		t.Fatalf("null count %d of %d values", nulls, n)
	}
	if err := cdevice.Validate(arr, false); err != nil {
		t.Fatalf("an imported array fails the structural checks it passed at import: %v", err)
	}
	valid := cdevice.Validate(arr, true) == nil
	if n > 0 {
		sl, err := arr.Slice(1, int64(n-1))
		if err != nil {
			t.Fatalf("slice: %v", err)
		}
		if sl.NullN() < 0 {
			t.Fatal("a host slice has an unknown null count")
		}
		if err := cdevice.Validate(sl, valid); err != nil && valid {
			t.Fatalf("a slice of valid data is invalid: %v", err)
		}
		sl.Release()
	}
	target := castTargets[len(data)%len(castTargets)]
	if ts, err := cschema.NewSchema(target, "", cschema.FlagNullable, arrow.Metadata{}, nil, nil); err == nil {
		if c, err := cdevice.Cast(arr, ts); err == nil {
			c.NullN()
			c.Release()
		}
	}
	relabel, err := cschema.NewSchema(arr.Schema().Format, "renamed", arr.Schema().Flags&^cschema.FlagNullable,
		arr.Schema().Metadata, arr.Schema().Children, arr.Schema().Dictionary)
	if err == nil {
		if c, err := cdevice.Cast(arr, relabel); err == nil {
			c.Release()
		}
	}
	if c, err := cdevice.Copy(arr); err == nil {
		if err := cdevice.Validate(c, valid); err != nil && valid {
			t.Fatalf("a copy of valid data is invalid: %v", err)
		}
		c.Release()
	} else if valid {
		t.Fatalf("a copy of valid data failed: %v", err)
	}
	out := cb.NewArray()
	defer cb.Free(out)
	if err := cdevice.ExportArray(arr, out); err != nil {
		t.Fatalf("export: %v", err)
	}
	// Export passes data on as it came. A parent's offset can make a child's
	// exported range start at an offset that runs backwards in data that
	// fails full validation: a consumer's import may then refuse it.
	back, err := cdevice.ImportArray(out, arr.Schema())
	switch {
	case err != nil && valid:
		t.Fatalf("an exported valid array does not import back: %v", err)
	case err == nil:
		if back.Len() != n || back.NullN() != arr.NullN() {
			t.Fatalf("re-import changed length or nulls: %d/%d vs %d/%d", back.Len(), back.NullN(), n, arr.NullN())
		}
		back.Release()
	}
	if p, err := dlpack.Export(arr, dlpack.ExportOptions{Versioned: true}); err == nil {
		dlpack.Delete(p, true)
	}
	if ga, err := arr.ToArrow(); err == nil {
		if !valid {
			t.Fatal("ToArrow took data that fails full validation")
		}
		if ga.Len() != n || ga.NullN() != arr.NullN() {
			t.Fatalf("Arrow Go sees %d values and %d nulls, godevarrow %d and %d", ga.Len(), ga.NullN(), n, arr.NullN())
		}
		ga.Release()
	} else if valid {
		t.Fatalf("ToArrow refuses valid data: %v", err)
	}
	// the values as a binding sees them (to_pylist) and value equality:
	// invalid data is refused, valid data never panics
	if _, err := values.EncodeValues(arr, 0, int64(n)); err == nil && !valid {
		t.Fatal("EncodeValues read data that fails full validation")
	}
	if _, err := cdevice.Equal(arr, arr, true); err == nil && !valid {
		t.Fatal("Equal read data that fails full validation")
	}
}
