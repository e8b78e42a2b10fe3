package cdevice

import (
	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/godevarrow/godevarrow/gosrc/cschema"
)

// nullCount returns the null count of d (described by s), counting the
// validity bitmap when the producer left it unknown (-1): an unknown count
// is legal everywhere. It builds no Arrow Go array, whose constructors check
// invariants with panics. Host memory only; -1 when a bitmap is too short
// to count (an inconsistent array built in Go).
func nullCount(s *cschema.Schema, d arrow.ArrayData) int {
	if n := d.NullN(); n >= 0 {
		return n
	}
	switch {
	case s.Info().Layout == cschema.LayoutNull:
		return d.Len()
	case !s.Info().HasValidity():
		return 0 // unions and run-end encodings have no validity of their own
	}
	bufs := d.Buffers()
	if len(bufs) == 0 || bufs[0] == nil {
		return 0
	}
	off, n := d.Offset(), d.Len()
	if int64(bufs[0].Len()) < (int64(off)+int64(n)+7)/8 {
		return -1
	}
	return n - bitutil.CountSetBits(bufs[0].Bytes(), off, n)
}

// withKnownNullCounts returns d (a new reference, zero-copy) with the null
// count of every node of the tree known, so that Arrow Go's array
// constructors can take it: they reject a map whose entries count -1 nulls.
// With bitmaps set, every node that may have a validity bitmap gets one
// (all valid, in Go memory, where the producer left it out): some of Arrow
// Go v17's cast kernels read the bitmap unchecked (fixed-size binary to
// binary), on a goroutine of their own where no recover reaches the panic.
func withKnownNullCounts(s *cschema.Schema, d arrow.ArrayData, bitmaps bool) arrow.ArrayData {
	children := make([]arrow.ArrayData, len(d.Children()))
	for i, c := range d.Children() {
		children[i] = withKnownNullCounts(s.Children[i], c, bitmaps)
	}
	buffers := d.Buffers()
	if bitmaps && s.Info().HasValidity() && len(buffers) > 0 && buffers[0] == nil {
		buffers = append([]*memory.Buffer{allValid(int64(d.Offset()) + int64(d.Len()))}, buffers[1:]...)
	}
	if bitmaps && s.Dictionary != nil {
		buffers = kernelSafeIndices(s, d, buffers)
	}
	out := array.NewData(d.DataType(), d.Len(), buffers, children, nullCount(s, d), d.Offset())
	for _, c := range children {
		c.Release()
	}
	if s.Dictionary != nil && hasDictionary(d) {
		dict := withKnownNullCounts(s.Dictionary, d.Dictionary(), bitmaps)
		if bitmaps {
			dict = kernelSafeDictionary(dict)
		}
		out.SetDictionary(dict)
		dict.Release()
	}
	return out
}

// Arrow Go v17's take kernel (dictionary decoding in casts) reads the
// dictionary value of every index, null slots included, while valid data may
// have any index in a null slot, and an all-null array an empty dictionary.
// kernelSafeIndices gives null slots index 0 (in a Go copy of the indices);
// kernelSafeDictionary gives an empty dictionary one null value.
func kernelSafeIndices(s *cschema.Schema, d arrow.ArrayData, buffers []*memory.Buffer) []*memory.Buffer {
	if d.Len() == 0 || buffers[0] == nil {
		return buffers
	}
	w := int64(s.Info().ByteWidth)
	off, n := int64(d.Offset()), int64(d.Len())
	indices := append([]byte(nil), buffers[1].Bytes()[:(off+n)*w]...)
	for i := off; i < off+n; i++ {
		if !bitutil.BitIsSet(buffers[0].Bytes(), int(i)) {
			clear(indices[i*w : (i+1)*w])
		}
	}
	return []*memory.Buffer{buffers[0], memory.NewBufferBytes(indices)}
}

func kernelSafeDictionary(dict arrow.ArrayData) arrow.ArrayData {
	if dict.Len() != 0 {
		return dict
	}
	one := array.MakeArrayOfNull(memory.DefaultAllocator, dict.DataType(), 1)
	defer one.Release()
	dict.Release()
	out := one.Data()
	out.Retain()
	return out
}

// allValid is a validity bitmap of n set bits.
func allValid(n int64) *memory.Buffer {
	b := make([]byte, (n+7)/8)
	for i := range b {
		b[i] = 0xff
	}
	return memory.NewBufferBytes(b)
}
