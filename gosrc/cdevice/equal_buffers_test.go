package cdevice_test

import (
	"math"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/godevarrow/godevarrow/gosrc/cdevice"
)

// fromArrow wraps an Arrow Go array (released here) as a cdevice.Array.
func fromArrow(t *testing.T, arr arrow.Array) *cdevice.Array {
	t.Helper()
	defer arr.Release()
	a, err := cdevice.FromArrow(arrow.Field{Name: "v", Type: arr.DataType(), Nullable: true}, arr)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// float64sWithSlots keeps values in the null slots too: what a null slot
// holds is the producer's business, never part of equality.
func float64sWithSlots(t *testing.T, values []float64, valid []bool) *cdevice.Array {
	b := array.NewFloat64Builder(memory.DefaultAllocator)
	defer b.Release()
	b.AppendValues(values, valid) // the builder keeps the values of null slots
	return fromArrow(t, b.NewArray())
}

func stringsWithSlots(t *testing.T, values []string, valid []bool) *cdevice.Array {
	b := array.NewStringBuilder(memory.DefaultAllocator)
	defer b.Release()
	for i, v := range values {
		if valid[i] {
			b.Append(v)
		} else {
			b.AppendNull()
		}
	}
	return fromArrow(t, b.NewArray())
}

func equal(t *testing.T, a, b *cdevice.Array) bool {
	t.Helper()
	eq, err := cdevice.Equal(a, b, false)
	if err != nil {
		t.Fatal(err)
	}
	return eq
}

func TestEqualComparesValidSlotsAsPyarrowDoes(t *testing.T) {
	valid := []bool{true, false, true, true}
	a := float64sWithSlots(t, []float64{1, 7, math.Copysign(0, -1), 2}, valid)
	defer a.Release()
	b := float64sWithSlots(t, []float64{1, 99, 0, 2}, valid) // another null slot, 0.0 for -0.0
	defer b.Release()
	if !equal(t, a, b) {
		t.Error("the values of null slots, or -0.0 against 0.0, made equal arrays unequal")
	}
	nan := float64sWithSlots(t, []float64{1, 7, math.NaN(), 2}, valid)
	defer nan.Release()
	if equal(t, nan, nan) {
		t.Error("an array holding a NaN equals itself; a NaN equals nothing")
	}
	moved := float64sWithSlots(t, []float64{1, 7, 0, 2}, []bool{true, true, false, true})
	defer moved.Release()
	if equal(t, a, moved) {
		t.Error("arrays whose nulls are in different slots are equal")
	}
}

func TestEqualComparesStringsAtAnyOffset(t *testing.T) {
	valid := []bool{true, true, false, true, true, true, true, true, true, true}
	words := []string{"a", "bc", "", "def", "g", "hi", "jkl", "m", "no", "pqr"}
	a := stringsWithSlots(t, words, valid)
	defer a.Release()
	// b holds the same words after three others: slices of both at bit offsets 3 apart
	b := stringsWithSlots(t, append([]string{"x", "y", "z"}, words...), append([]bool{true, true, true}, valid...))
	defer b.Release()
	for start := 0; start < len(words); start++ {
		x, err := a.Slice(int64(start), int64(len(words)-start))
		if err != nil {
			t.Fatal(err)
		}
		y, err := b.Slice(int64(start+3), int64(len(words)-start))
		if err != nil {
			t.Fatal(err)
		}
		if !equal(t, x, y) {
			t.Errorf("the slices from %d differ", start)
		}
		z, err := b.Slice(int64(start+2), int64(len(words)-start))
		if err != nil {
			t.Fatal(err)
		}
		if equal(t, x, z) {
			t.Errorf("the slice from %d equals the other shifted by one", start)
		}
		z.Release()
		x.Release()
		y.Release()
	}
	other := stringsWithSlots(t, append(append([]string{}, words[:9]...), "pqs"), valid)
	defer other.Release()
	if equal(t, a, other) {
		t.Error("strings that differ in their last byte are equal")
	}
}
