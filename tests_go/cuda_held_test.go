package tests_go

import (
	"testing"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/godevarrow/godevarrow/gosrc/cdevice"
	"github.com/godevarrow/godevarrow/gosrc/cschema"
)

// importDevicePair exports a (on any device) and imports it again through
// ImportDevicePair, twice: the first import fills the held-schema table, so
// the second is held whenever the gate takes the array. It returns the second
// import as an Array (built from the held record when held) and whether it
// was held.
func importDevicePair(t *testing.T, a *cdevice.Array) (*cdevice.Array, bool) {
	t.Helper()
	var back *cdevice.Array
	var held unsafe.Pointer
	for round := 0; round < 2; round++ {
		var cs cschema.CArrowSchema
		var ca cdevice.CArrowDeviceArray
		if err := cschema.ExportSchema(a.Schema(), &cs); err != nil {
			t.Fatal(err)
		}
		if err := cdevice.ExportDeviceArray(a, &ca); err != nil {
			t.Fatal(err)
		}
		h, got, err := cdevice.ImportDevicePair(&cs, &ca)
		if err != nil {
			t.Fatalf("import: %v", err)
		}
		if back != nil {
			back.Release()
		}
		if held != nil {
			cdevice.ReleaseHeld(held)
		}
		back, held = got, h
	}
	if held == nil {
		return back, false
	}
	got, err := cdevice.ImportHeld(held)
	cdevice.ReleaseHeld(held)
	if err != nil {
		t.Fatalf("building the held import: %v", err)
	}
	return got, true
}

// TestCUDAHeldImportsOfTheCorpus: every corpus view on cuda:0 comes back
// through the held path equal to what was sent; the layouts the C gate checks
// are held, the others take the Go import.
func TestCUDAHeldImportsOfTheCorpus(t *testing.T) {
	middle := func(rec arrow.Record) []arrow.Record {
		if rec.NumRows() <= 2 {
			return nil
		}
		return []arrow.Record{rec.NewSlice(1, rec.NumRows()-1)}
	}
	heldCount := 0
	forEachCorpusView(t, deviceBaseline, middle, func(t *testing.T, i int, view arrow.Record) {
		a, err := cdevice.FromRecord(view)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Release()
		d0 := mustCopy(t, a, cuda0)
		defer d0.Release()
		back, held := importDevicePair(t, d0)
		defer back.Release()
		if held {
			heldCount++
		}
		if back.Device() != cuda0 {
			t.Fatalf("came back on %s", back.Device())
		}
		host := mustCopy(t, back, a.Device())
		defer host.Release()
		got, err := host.ToRecord()
		if err != nil {
			t.Fatal(err)
		}
		defer got.Release()
		if !array.RecordEqual(got, view) {
			t.Errorf("view %d differs after a held CUDA import (held %v)", i, held)
		}
	})
	if heldCount == 0 {
		t.Error("no corpus view was held: the CUDA gate takes nothing")
	}
}
