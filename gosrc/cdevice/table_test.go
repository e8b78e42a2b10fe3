package cdevice_test

import (
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/godevarrow/godevarrow/gosrc/cdevice"
	"github.com/godevarrow/godevarrow/gosrc/internal/arraytest"
)

func tableOf(t testing.TB, chunks ...[]int64) *cdevice.Table {
	var batches []*cdevice.Array
	for _, c := range chunks {
		batches = append(batches, arraytest.Int64Batch(t, c...))
	}
	tab, err := cdevice.NewTable(nil, batches)
	for _, b := range batches {
		b.Release() // the table holds its own references
	}
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// readAll reads a stream to its end and returns each array's length.
func readLengths(t *testing.T, r cdevice.ArrayReader) []int {
	defer r.Close()
	var out []int
	for {
		a, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, a.Len())
		a.Release()
	}
}

// A Table holds its batches and hands out a fresh stream each time.
func ExampleTable() {
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil)
	var batches []*cdevice.Array
	for _, xs := range [][]int64{{1, 2, 3}, {4, 5}} {
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		b.Field(0).(*array.Int64Builder).AppendValues(xs, nil)
		rec := b.NewRecord()
		a, _ := cdevice.FromRecord(rec)
		rec.Release()
		b.Release()
		batches = append(batches, a)
	}
	tab, err := cdevice.NewTable(nil, batches)
	for _, a := range batches {
		a.Release()
	}
	if err != nil {
		panic(err)
	}
	defer tab.Release()
	x, _ := tab.Column(0)
	defer x.Release()
	middle, _ := tab.Slice(2, 2)
	defer middle.Release()
	fmt.Println(tab.Len(), tab.NumChunks(), x.Schema(), middle.NumChunks())
	// Output: 5 2 x: int64 not null 2
}

func TestTableSliceColumnAndEqualAcrossChunkings(t *testing.T) {
	a := tableOf(t, []int64{1, 2, 3}, []int64{}, []int64{4, 5})
	defer a.Release()
	b := tableOf(t, []int64{1}, []int64{2, 3, 4, 5})
	defer b.Release()
	if eq, err := a.Equal(b, true); err != nil || !eq {
		t.Fatalf("equal tables of different chunking: %v %v", eq, err)
	}
	s, err := a.Slice(2, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Release()
	if got := readLengths(t, s.Reader()); fmt.Sprint(got) != "[1 2]" {
		t.Fatalf("slice chunks %v, want [1 2]", got)
	}
	tail, err := b.Slice(2, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer tail.Release()
	if eq, err := s.Equal(tail, false); err != nil || !eq {
		t.Fatalf("slices of equal values differ: %v %v", eq, err)
	}
	head, err := b.Slice(0, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer head.Release()
	if eq, err := s.Equal(head, false); err != nil || eq {
		t.Fatalf("[3 4 5] equals [1 2 3]: %v %v", eq, err)
	}
	if _, err := a.Slice(4, 2); err == nil {
		t.Fatal("a slice past the end was accepted")
	}
	col, err := a.Column(0)
	if err != nil {
		t.Fatal(err)
	}
	defer col.Release()
	if _, err := col.Column(0); err == nil {
		t.Fatal("a column of a non-struct chunked array was given")
	}
	for range 2 { // a fresh stream each time
		if got := readLengths(t, a.Reader()); fmt.Sprint(got) != "[3 0 2]" {
			t.Fatalf("chunks %v, want [3 0 2]", got)
		}
	}
}

func TestReadChunkedArrayHoldsTheArraysOfAStream(t *testing.T) {
	src := tableOf(t, []int64{1, 2}, []int64{3})
	defer src.Release()
	got, err := cdevice.ReadChunkedArray(src.Reader())
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	c0, err := got.Chunk(0)
	if err != nil {
		t.Fatal(err)
	}
	s0, err := src.Chunk(0)
	if err != nil {
		t.Fatal(err)
	}
	if got.NumChunks() != 2 || c0 != s0 {
		t.Fatal("the stream's arrays were not held as they came")
	}
}
