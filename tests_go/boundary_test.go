package tests_go

import (
	"errors"
	"io"
	"strings"
	"syscall"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/godevarrow/godevarrow/gosrc/cdevice"
	"github.com/godevarrow/godevarrow/gosrc/cschema"
	"github.com/godevarrow/godevarrow/gosrc/device"
	"github.com/godevarrow/godevarrow/gosrc/errs"
	"github.com/godevarrow/godevarrow/gosrc/streams"
	cb "github.com/godevarrow/godevarrow/tests_go/cboundary"
)

// baseline records LiveStats and checks at the end that they came back.
func baseline(t *testing.T) {
	before := cdevice.LiveStats()
	t.Cleanup(func() {
		if after := cdevice.LiveStats(); after != before {
			t.Errorf("live objects leaked: before %+v, after %+v", before, after)
		}
	})
}

// exportImport sends a through C structs: Go exports, C walks the tree, Go imports back.
func exportImport(t *testing.T, a *cdevice.Array) *cdevice.Array {
	t.Helper()
	s, d := cb.NewSchema(), cb.NewDeviceArray()
	defer cb.Free(s)
	defer cb.Free(d)
	if err := cdevice.ExportDeviceArray(a, d); err != nil {
		t.Fatalf("export: %v", err)
	}
	if err := cschema.ExportSchema(a.Schema(), s); err != nil {
		t.Fatalf("export schema: %v", err)
	}
	if n, why := cb.Walk(s, d); n < 0 {
		t.Fatalf("C consumer rejected the export: %s", why)
	}
	schema, err := cschema.ImportSchema(s)
	if err != nil {
		t.Fatalf("import schema: %v", err)
	}
	back, err := cdevice.ImportDeviceArray(d, schema)
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	return back
}

func TestCorpusThroughC(t *testing.T) {
	withSlices := func(rec arrow.Record) []arrow.Record {
		if rec.NumRows() <= 1 {
			return nil
		}
		return []arrow.Record{rec.NewSlice(1, rec.NumRows()), rec.NewSlice(0, 0)}
	}
	forEachCorpusView(t, baseline, withSlices, func(t *testing.T, i int, view arrow.Record) {
		a, err := cdevice.FromRecord(view)
		if err != nil {
			t.Fatalf("FromRecord: %v", err)
		}
		defer a.Release()
		back := exportImport(t, a)
		defer back.Release()
		if err := cdevice.Validate(back, true); err != nil {
			t.Errorf("view %d: full validation of the imported array: %v", i, err)
		}
		got, err := back.ToRecord()
		if err != nil {
			t.Fatal(err)
		}
		defer got.Release()
		if !array.RecordEqual(got, view) {
			t.Errorf("view %d differs after the round trip:\n got %v\nwant %v", i, got, view)
		}
		if !back.Schema().Equal(a.Schema()) {
			t.Errorf("view %d: schema differs: %s vs %s", i, back.Schema(), a.Schema())
		}
	})
}

func importC(t *testing.T, p cb.Producer) *cdevice.Array {
	t.Helper()
	s, a := cb.NewSchema(), cb.NewArray()
	defer cb.Free(s)
	defer cb.Free(a)
	cb.Produce(p, s, a)
	schema, err := cschema.ImportSchema(s)
	if err != nil {
		t.Fatalf("import schema: %v", err)
	}
	arr, err := cdevice.ImportArray(a, schema)
	if err != nil {
		t.Fatalf("import array: %v", err)
	}
	return arr
}

func TestCProducerValues(t *testing.T) {
	baseline(t)
	check := func(p cb.Producer, want string) {
		cb.ResetReleases()
		a := importC(t, p)
		if n := cb.Releases(); n != 1 {
			t.Errorf("producer %d: %d releases after the import, want 1 (only the schema)", p, n)
		}
		if err := cdevice.Validate(a, true); err != nil {
			t.Errorf("producer %d: %v", p, err)
		}
		arr, err := a.ToArrow()
		if err != nil {
			t.Fatal(err)
		}
		if got := arr.String(); got != want {
			t.Errorf("producer %d: got %s, want %s", p, got, want)
		}
		arr.Release()
		a.Release()
		if n := cb.Releases(); n != 2 {
			t.Errorf("producer %d: %d releases after the last reference, want 2", p, n)
		}
	}
	check(cb.Int32, "[0 1 (null) 3 4 (null) 6 7 (null) 9]")
	check(cb.Utf8, `["alpha" (null) "" "delta"]`)
	check(cb.Struct, `{[0 1 2] ["alpha" (null) ""]}`)
	check(cb.List, "[[1 2] [] (null) [3]]")
	check(cb.Dictionary, `{ dictionary: ["x" "y"]
  indices: [1 0 (null) 1] }`)
}

func TestDecimal32FromC(t *testing.T) {
	baseline(t)
	a := importC(t, cb.Decimal32)
	defer a.Release()
	if a.Schema().Format != "d:9,2,32" {
		t.Fatalf("format %q", a.Schema().Format)
	}
	ft, ok := a.Data().DataType().(*cschema.ForeignFixedWidthType)
	if !ok || ft.TypeName != "decimal32" {
		t.Fatalf("Go type %T %v", a.Data().DataType(), a.Data().DataType())
	}
	values := a.Data().Buffers()[1].Bytes()
	if int32(values[0])|int32(values[1])<<8 != 123 {
		t.Errorf("first value bytes %v", values[:4])
	}
	back := exportImport(t, a)
	defer back.Release()
	if back.Schema().Format != "d:9,2,32" || back.NullN() != 1 {
		t.Errorf("round trip: format %q nulls %d", back.Schema().Format, back.NullN())
	}
}

func TestReleaseHappensAtTheLastReference(t *testing.T) {
	baseline(t)
	cb.ResetReleases()
	a := importC(t, cb.Struct) // 1 release: the schema
	col, err := a.Column(1)
	if err != nil {
		t.Fatal(err)
	}
	sl, err := a.Slice(1, 2)
	if err != nil {
		t.Fatal(err)
	}
	a.Release()
	if n := cb.Releases(); n != 1 {
		t.Fatalf("released while a column and a slice still use it (%d releases)", n)
	}
	col.Release()
	if n := cb.Releases(); n != 1 {
		t.Fatalf("released while a slice still uses it (%d releases)", n)
	}
	sl.Release()
	if n := cb.Releases(); n != 2 {
		t.Fatalf("%d releases after the last reference, want 2", n)
	}
}

func TestSlicedCArray(t *testing.T) {
	baseline(t)
	s, a := cb.NewSchema(), cb.NewArray()
	defer cb.Free(s)
	defer cb.Free(a)
	cb.ProduceInt32(s, a, 5, 3, true) // values 3..7, 5 and 8 are null
	schema, err := cschema.ImportSchema(s)
	if err != nil {
		t.Fatal(err)
	}
	arr, err := cdevice.ImportArray(a, schema)
	if err != nil {
		t.Fatal(err)
	}
	defer arr.Release()
	if arr.Offset() != 3 || arr.Len() != 5 || arr.NullN() != 1 {
		t.Fatalf("offset %d len %d nulls %d", arr.Offset(), arr.Len(), arr.NullN())
	}
	out := cb.NewArray()
	defer cb.Free(out)
	if err := cdevice.ExportArray(arr, out); err != nil {
		t.Fatal(err)
	}
	if sum := cb.SumInt32(out); sum != 3+4+6+7 {
		t.Errorf("C read sum %d", sum)
	}
	cb.ReleaseArray(out)
}

func TestIndependentExportsAndMovedChildren(t *testing.T) {
	baseline(t)
	a := importC(t, cb.Struct)
	first, second := cb.NewArray(), cb.NewArray()
	defer cb.Free(first)
	defer cb.Free(second)
	if err := cdevice.ExportArray(a, first); err != nil {
		t.Fatal(err)
	}
	if err := cdevice.ExportArray(a, second); err != nil {
		t.Fatal(err)
	}
	a.Release()
	cb.ReleaseArray(second) // in the other order than exported
	child := cb.NewArray()
	defer cb.Free(child)
	cb.MoveChild0AndRelease(first, child)
	if st := cdevice.LiveStats(); st.ExportedArrays != 1 {
		t.Fatalf("the moved child must keep its export alive: %+v", st)
	}
	if sum := cb.SumInt32(child); sum != 0+1+2 {
		t.Errorf("moved child reads %d", sum)
	}
	cb.ReleaseArray(child)
}

func TestImportMovesAndRejectsReleased(t *testing.T) {
	baseline(t)
	s, a := cb.NewSchema(), cb.NewArray()
	defer cb.Free(s)
	defer cb.Free(a)
	cb.ProduceInt32(s, a, 4, 0, false)
	schema, err := cschema.ImportSchema(s)
	if err != nil {
		t.Fatal(err)
	}
	arr, err := cdevice.ImportArray(a, schema)
	if err != nil {
		t.Fatal(err)
	}
	arr.Release()
	cb.ResetReleases()
	if _, err := cdevice.ImportArray(a, schema); !errors.Is(err, errs.ErrInvalid) || !strings.Contains(err.Error(), "released") {
		t.Errorf("re-import of a moved struct: %v", err)
	}
	if _, err := cschema.ImportSchema(s); !errors.Is(err, errs.ErrInvalid) {
		t.Errorf("re-import of a released schema: %v", err)
	}
	if n := cb.Releases(); n != 0 {
		t.Errorf("a released struct's callback was called %d times", n)
	}
}

func TestMalformedInput(t *testing.T) {
	baseline(t)
	wants := []string{"buffers", "NULL", "negative length", "negative offset", "exceeds length", "null_count",
		"overflows", "NULL format", "invalid format", "metadata", "children", "validity buffer is NULL", "flag"}
	for kind := 0; kind < cb.MalformedKinds(); kind++ {
		cb.ResetReleases()
		s, a := cb.NewSchema(), cb.NewArray()
		cb.ProduceMalformed(kind, s, a)
		schema, err := cschema.ImportSchema(s)
		if err == nil {
			_, err = cdevice.ImportArray(a, schema)
		} else {
			cb.ReleaseArray(a) // we were not handed the array: its owner releases it
		}
		if !errors.Is(err, errs.ErrInvalid) || !strings.Contains(err.Error(), wants[kind]) {
			t.Errorf("kind %d: got %v, want ErrInvalid mentioning %q", kind, err, wants[kind])
		}
		if n := cb.Releases(); n != 2 {
			t.Errorf("kind %d: %d releases, want exactly 2 (schema and array once each)", kind, n)
		}
		cb.Free(s)
		cb.Free(a)
	}
}

func TestDeviceFieldsOnImport(t *testing.T) {
	baseline(t)
	for _, tc := range []struct {
		name      string
		devType   int32
		event     bool
		wantError string
		kind      error
	}{
		{"cpu event", int32(device.CPU), true, "sync_event", errs.ErrInvalid},
		{"unknown device type", 99, false, "unknown device_type", errs.ErrInvalid},
		{"metal without backend", int32(device.Metal), false, "metal", device.ErrUnavailable},
	} {
		cb.ResetReleases()
		s, d := cb.NewSchema(), cb.NewDeviceArray()
		var ev [8]byte
		var evp = &ev[0]
		if !tc.event {
			evp = nil
		}
		cb.ProduceDeviceInt32(s, d, tc.devType, 0, unsafePointer(evp))
		schema, err := cschema.ImportSchema(s)
		if err != nil {
			t.Fatal(err)
		}
		_, err = cdevice.ImportDeviceArray(d, schema)
		if !errors.Is(err, tc.kind) || !strings.Contains(err.Error(), tc.wantError) {
			t.Errorf("%s: got %v", tc.name, err)
		}
		if n := cb.Releases(); n != 2 {
			t.Errorf("%s: %d releases, want 2", tc.name, n)
		}
		cb.Free(s)
		cb.Free(d)
	}
}

func TestCStreamIntoGo(t *testing.T) {
	baseline(t)
	cb.ResetReleases()
	s := cb.NewStream()
	defer cb.Free(s)
	cb.ProduceStream(s, 3, -1, false)
	r, err := streams.ImportArrayStream(s)
	if err != nil {
		t.Fatal(err)
	}
	var sums []int64
	eachArray(t, r.Next, func(_ int, a *cdevice.Array) {
		arr, _ := a.ToArrow()
		v := arr.(*array.Int32)
		sums = append(sums, int64(v.Value(0)+v.Value(1)))
		arr.Release()
	})
	if len(sums) != 3 || sums[0] != 1 || sums[2] != 5 {
		t.Errorf("batches %v", sums)
	}
	before := cb.Releases() // schema + 3 batches
	if before != 4 {
		t.Errorf("%d releases before Close, want 4", before)
	}
	r.Close()
	r.Close()
	if n := cb.Releases(); n != before+1 {
		t.Errorf("Close released the stream %d times", n-before)
	}
}

func TestCStreamErrors(t *testing.T) {
	baseline(t)
	cb.ResetReleases()
	s := cb.NewStream()
	defer cb.Free(s)
	cb.ProduceStream(s, 5, 2, false)
	r, err := streams.ImportArrayStream(s)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		a, err := r.Next()
		if err != nil {
			t.Fatalf("batch %d: %v", i, err)
		}
		a.Release()
	}
	// the producer's error is reported once; later reads say the stream ended with it
	_, err = r.Next()
	var se *errs.StreamError
	if !errors.As(err, &se) || se.Errno != syscall.EIO || se.Msg != "producer failed at batch 2" {
		t.Errorf("first read after the failure: got %v", err)
	}
	for i := 0; i < 2; i++ {
		_, err = r.Next()
		if !errors.Is(err, errs.ErrConsumed) || errors.As(err, &se) || !strings.Contains(err.Error(), "producer failed at batch 2") {
			t.Errorf("attempt %d: got %v", i, err)
		}
	}
	r.Close()

	cb.ResetReleases()
	cb.ProduceStream(s, 1, -1, true)
	if _, err := streams.ImportArrayStream(s); err == nil || !strings.Contains(err.Error(), "broken on purpose") {
		t.Errorf("get_schema failure: %v", err)
	}
	if n := cb.Releases(); n != 1 {
		t.Errorf("a stream whose get_schema failed was released %d times", n)
	}
}

func TestPeekedStreamTakesTheSchemaItIsGiven(t *testing.T) {
	baseline(t)
	cb.ResetReleases()
	s := cb.NewStream()
	defer cb.Free(s)
	schema := cb.NewSchema()
	defer cb.Free(schema)
	cb.ProduceStream(s, 2, -1, false)
	if rc := cb.GetSchema(s, schema); rc != 0 {
		t.Fatalf("get_schema: %d", rc)
	}
	r, err := streams.ImportPeekedArrayStream(s, schema, 0)
	if err != nil {
		t.Fatal(err)
	}
	if r.Schema().Format != "i" {
		t.Errorf("schema %q", r.Schema().Format)
	}
	if n := cb.Releases(); n != 1 {
		t.Errorf("the peeked schema was released %d times, want once (read, then released)", n)
	}
	for i := 0; i < 2; i++ {
		a, err := r.Next()
		if err != nil {
			t.Fatalf("batch %d: %v", i, err)
		}
		a.Release()
	}
	if _, err := r.Next(); !errors.Is(err, io.EOF) {
		t.Errorf("after the last batch: %v", err)
	}
	r.Close()
	if n := cb.Releases(); n != 4 { // schema, 2 batches, stream
		t.Errorf("%d releases, want 4", n)
	}

	// a failed get_schema is reported with the producer's message
	cb.ResetReleases()
	failed := cb.NewSchema()
	defer cb.Free(failed)
	cb.ProduceStream(s, 1, -1, true)
	rc := cb.GetSchema(s, failed)
	if rc == 0 {
		t.Fatal("get_schema did not fail")
	}
	if _, err := streams.ImportPeekedArrayStream(s, failed, rc); err == nil || !strings.Contains(err.Error(), "broken on purpose") {
		t.Errorf("get_schema failure: %v", err)
	}
	if n := cb.Releases(); n != 1 {
		t.Errorf("a stream whose get_schema failed was released %d times", n)
	}
}

func TestDeviceStreamWithWrongChunkDevice(t *testing.T) {
	baseline(t)
	s := cb.NewDeviceStream()
	defer cb.Free(s)
	cb.ProduceDeviceStream(s, int32(device.CPU), int32(device.Metal))
	r, err := streams.ImportDeviceArrayStream(s)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Next(); !errors.Is(err, errs.ErrInvalid) || !strings.Contains(err.Error(), "device type") {
		t.Errorf("got %v", err)
	}
}

type failingReader struct {
	*cdevice.ListReader
	n, failAt int
}

func (f *failingReader) Next() (*cdevice.Array, error) {
	if f.n == f.failAt {
		return nil, &errs.StreamError{Errno: syscall.EPROTO, Msg: "go producer failed on purpose"}
	}
	f.n++
	return f.ListReader.Next()
}

func TestGoStreamIntoC(t *testing.T) {
	baseline(t)
	a := importC(t, cb.Int32)
	defer a.Release()
	list := func() *cdevice.ListReader {
		r, err := cdevice.NewListReader(a.Schema(), device.CPU, a, a, a)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	s := cb.NewStream()
	defer cb.Free(s)
	if err := streams.ExportArrayStream(list(), s); err != nil {
		t.Fatal(err)
	}
	if rows, batches, errno, msg := cb.ConsumeStream(s); rows != 30 || batches != 3 || errno != 0 {
		t.Errorf("C read rows %d batches %d errno %d %s", rows, batches, errno, msg)
	}
	if err := streams.ExportArrayStream(&failingReader{ListReader: list(), failAt: 1}, s); err != nil {
		t.Fatal(err)
	}
	if _, batches, errno, msg := cb.ConsumeStream(s); batches != 1 || errno != int(syscall.EPROTO) || msg != "go producer failed on purpose" {
		t.Errorf("C saw batches %d errno %d msg %q", batches, errno, msg)
	}
	ds := cb.NewDeviceStream()
	defer cb.Free(ds)
	if err := streams.ExportDeviceArrayStream(list(), ds); err != nil {
		t.Fatal(err)
	}
	if rows, _, errno, msg := cb.ConsumeDeviceStream(ds); rows != 30 || errno != 0 {
		t.Errorf("C read %d rows from the device stream (errno %d %s)", rows, errno, msg)
	}
}
