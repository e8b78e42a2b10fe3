package pyfunc_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/godevarrow/godevarrow/gosrc/cdevice"
	"github.com/godevarrow/godevarrow/gosrc/pyfunc"
)

// A function's mistakes with the references of its arguments and result are
// reported as the function's errors, and the caller's array stays intact.
func TestMistakesWithReferencesStayInsideTheCall(t *testing.T) {
	pyfunc.Register("test_return_argument", func(b *cdevice.Array) *cdevice.Array { return b })
	pyfunc.Register("test_return_argument_retained", func(b *cdevice.Array) *cdevice.Array { b.Retain(); return b })
	pyfunc.Register("test_release_argument", func(b *cdevice.Array) int64 { b.Release(); return 1 })
	pyfunc.Register("test_release_and_return_argument", func(b *cdevice.Array) *cdevice.Array { b.Release(); return b })
	pyfunc.Register("test_slice_released_argument", func(b *cdevice.Array) (*cdevice.Array, error) {
		b.Release()
		return b.Slice(0, 1)
	})
	pyfunc.Register("test_return_released", func(b *cdevice.Array) (*cdevice.Array, error) {
		s, err := b.Slice(0, 1)
		if err == nil {
			s.Release()
		}
		return s, err
	})
	pyfunc.Register("test_return_table_argument", func(t *cdevice.ChunkedArray) *cdevice.ChunkedArray { return t })
	pyfunc.Register("test_release_table_argument", func(t *cdevice.ChunkedArray) int64 { t.Release(); return 0 })

	before := cdevice.LiveStats()
	b := batch(t, 1, 2, 3)
	for _, name := range []string{"test_return_argument", "test_return_argument_retained"} {
		for i := 0; i < 3; i++ {
			got, err := call(name, b)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			r := got.(*cdevice.Array)
			if r.RefCount() != 1 {
				t.Fatalf("%s: the result has %d references, want the caller's one", name, r.RefCount())
			}
			if eq, err := cdevice.Equal(r, b, true); err != nil || !eq {
				t.Fatalf("%s: the result is not the argument: %v %v", name, eq, err)
			}
			r.Release()
		}
	}
	misuses := map[string]string{
		"test_release_argument":            "released argument 1 (arg1), which it does not own",
		"test_release_and_return_argument": "released argument 1 (arg1), which it does not own",
		"test_slice_released_argument":     "released argument 1 (arg1), which it does not own",
		"test_return_released":             "returned a *cdevice.Array that was already released",
	}
	for name, want := range misuses {
		_, err := call(name, b)
		var fe *pyfunc.Error
		if !errors.As(err, &fe) || fe.Func != name || fe.IsPanic() || !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: got %v, want an *Error saying %q", name, err, want)
		}
	}
	if b.RefCount() != 1 {
		t.Fatalf("the caller's array has %d references after the calls, want 1", b.RefCount())
	}
	want := batch(t, 1, 2, 3)
	if eq, err := cdevice.Equal(b, want, true); err != nil || !eq {
		t.Fatalf("the caller's array changed: %v %v", eq, err)
	}
	want.Release()

	table, err := cdevice.NewTable(nil, []*cdevice.Array{b})
	if err != nil {
		t.Fatal(err)
	}
	got, err := call("test_return_table_argument", table)
	if err != nil || got.(*cdevice.ChunkedArray).RefCount() != 1 {
		t.Fatalf("a table returned as is: %v %v", got, err)
	}
	got.(*cdevice.ChunkedArray).Release()
	if _, err := call("test_release_table_argument", table); err == nil || !strings.Contains(err.Error(), "released argument 1 (arg1)") {
		t.Fatalf("a table released by the function: %v", err)
	}
	table.Release()
	b.Release()
	if after := cdevice.LiveStats(); after.Arrays != before.Arrays {
		t.Fatalf("arrays live before %d, after %d", before.Arrays, after.Arrays)
	}
}
