package cdevice

import (
	"errors"
	"testing"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/godevarrow/godevarrow/gosrc/errs"
)

// A host allocation sized by input that fails is an errs.ErrNoMemory error (the
// Python layer raises MemoryError), never a panic.
func TestFailedHostAllocationIsAnError(t *testing.T) {
	b := array.NewInt32Builder(memory.DefaultAllocator)
	b.AppendValues([]int32{1, 2, 3}, nil)
	values := b.NewArray()
	defer values.Release()
	a, err := FromArrow(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int32, Nullable: true}, values)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Release()
	defer func(saved func(int64) unsafe.Pointer) { hostAlloc = saved }(hostAlloc)
	hostAlloc = func(int64) unsafe.Pointer { return nil }
	before := LiveStats()
	if c, err := Copy(a); !errors.Is(err, errs.ErrNoMemory) {
		t.Fatalf("a copy whose allocation fails gave %v, %v", c, err)
	}
	if after := LiveStats(); after != before {
		t.Fatalf("a failed copy leaked: %+v, then %+v", before, after)
	}
	if _, err := NewHostBuffer(-1); !errors.Is(err, errs.ErrNoMemory) {
		t.Fatalf("a negative size gave %v", err)
	}
	if errs.Panics() != 0 {
		t.Fatal("a panic was recovered")
	}
}
