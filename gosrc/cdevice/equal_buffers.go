package cdevice

import (
	"bytes"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
)

// dataEqual compares n elements of x from logical index xi with y's from
// yi (types already known equal, data already validated). Arrow Go's
// array.Equal reads value by value through its accessors (for strings, a
// Go string per value); the common layouts are compared here from their
// buffers instead, whole where there are no nulls, which is what keeps a
// table's Equal near pyarrow's. Everything else goes to array.Equal.
func dataEqual(x arrow.ArrayData, xi int, y arrow.ArrayData, yi int, n int) bool {
	if n == 0 {
		return true
	}
	if eq, decided := buffersEqual(x, xi, y, yi, n); decided {
		return eq
	}
	xs := array.NewSliceData(x, int64(xi), int64(xi+n))
	defer xs.Release()
	ys := array.NewSliceData(y, int64(yi), int64(yi+n))
	defer ys.Release()
	xa, ya := array.MakeFromData(xs), array.MakeFromData(ys)
	defer xa.Release()
	defer ya.Release()
	return array.Equal(xa, ya)
}

// buffersEqual decides equality from the buffers when it can (decided):
// the same validity, then the same values in the valid slots, for
// fixed-width types, strings and binaries, booleans, and structs without
// nulls of those (each field by dataEqual). Values are compared as pyarrow
// compares them: a NaN equals nothing, 0.0 equals -0.0.
func buffersEqual(x arrow.ArrayData, xi int, y arrow.ArrayData, yi int, n int) (eq, decided bool) {
	xo, yo := x.Offset()+xi, y.Offset()+yi
	xvalid, ok1 := validityOf(x)
	yvalid, ok2 := validityOf(y)
	if !ok1 || !ok2 {
		return false, false
	}
	if same, ok := bitsEqual(xvalid, xo, yvalid, yo, n); !ok {
		return false, false
	} else if !same {
		return false, true
	}
	// the same validity: x's bits (nil: all valid) say which slots to compare
	switch x.DataType().ID() {
	case arrow.STRUCT:
		xc, yc := x.Children(), y.Children()
		if xvalid != nil || len(xc) != len(yc) {
			return false, false // a null struct's fields: as Arrow Go compares them
		}
		for i := range xc {
			if !dataEqual(xc[i], xo, yc[i], yo, n) {
				return false, true
			}
		}
		return true, true
	case arrow.INT8, arrow.UINT8:
		return fixedEqual[uint8](x, xo, y, yo, n, xvalid)
	case arrow.INT16, arrow.UINT16:
		return fixedEqual[uint16](x, xo, y, yo, n, xvalid)
	case arrow.INT32, arrow.UINT32, arrow.DATE32, arrow.TIME32:
		return fixedEqual[uint32](x, xo, y, yo, n, xvalid)
	case arrow.INT64, arrow.UINT64, arrow.DATE64, arrow.TIME64, arrow.TIMESTAMP, arrow.DURATION:
		return fixedEqual[uint64](x, xo, y, yo, n, xvalid)
	case arrow.FLOAT32:
		return fixedEqual[float32](x, xo, y, yo, n, xvalid)
	case arrow.FLOAT64:
		return fixedEqual[float64](x, xo, y, yo, n, xvalid)
	case arrow.DECIMAL128, arrow.DECIMAL256, arrow.FIXED_SIZE_BINARY:
		return wideEqual(x, xo, y, yo, n, xvalid)
	case arrow.STRING, arrow.BINARY:
		return varEqual(arrow.Int32Traits.CastFromBytes, x, xo, y, yo, n, xvalid)
	case arrow.LARGE_STRING, arrow.LARGE_BINARY:
		return varEqual(arrow.Int64Traits.CastFromBytes, x, xo, y, yo, n, xvalid)
	case arrow.BOOL:
		xb, ok1 := buffer(x, 1, (xo+n+7)/8)
		yb, ok2 := buffer(y, 1, (yo+n+7)/8)
		if !ok1 || !ok2 {
			return false, false
		}
		if xvalid == nil {
			return bitsEqual(xb, xo, yb, yo, n)
		}
		for i := 0; i < n; i++ {
			if bitutil.BitIsSet(xb, xo+i) != bitutil.BitIsSet(yb, yo+i) && bitutil.BitIsSet(xvalid, xo+i) {
				return false, true
			}
		}
		return true, true
	}
	return false, false
}

// validityOf is d's validity bitmap, nil when it has no nulls (ok false
// when the null count is unknown or the bitmap is missing or short).
func validityOf(d arrow.ArrayData) (bits []byte, ok bool) {
	switch nulls := d.NullN(); {
	case nulls == 0:
		return nil, true
	case nulls < 0:
		return nil, false
	}
	return buffer(d, 0, (d.Offset()+d.Len()+7)/8)
}

// buffer is buffer i of d when it holds at least size bytes.
func buffer(d arrow.ArrayData, i, size int) ([]byte, bool) {
	bufs := d.Buffers()
	if len(bufs) <= i || bufs[i] == nil || bufs[i].Len() < size {
		return nil, false
	}
	return bufs[i].Bytes(), true
}

// bitsEqual compares n bits of x from bit xo with y's from yo; a nil
// bitmap is all ones (ok false only when it cannot tell).
func bitsEqual(x []byte, xo int, y []byte, yo int, n int) (eq, ok bool) {
	switch {
	case x == nil && y == nil:
		return true, true
	case x == nil:
		return bitutil.CountSetBits(y, yo, n) == n, true
	case y == nil:
		return bitutil.CountSetBits(x, xo, n) == n, true
	case xo%8 != yo%8:
		for i := 0; i < n; i++ {
			if bitutil.BitIsSet(x, xo+i) != bitutil.BitIsSet(y, yo+i) {
				return false, true
			}
		}
		return true, true
	}
	// the same position within their bytes: whole bytes in the middle
	first, last, shift := xo, xo+n, yo-xo
	for ; first < last && first%8 != 0; first++ {
		if bitutil.BitIsSet(x, first) != bitutil.BitIsSet(y, first+shift) {
			return false, true
		}
	}
	whole := (last - first) / 8
	if !bytes.Equal(x[first/8:first/8+whole], y[(first+shift)/8:(first+shift)/8+whole]) {
		return false, true
	}
	for i := first + whole*8; i < last; i++ {
		if bitutil.BitIsSet(x, i) != bitutil.BitIsSet(y, i+shift) {
			return false, true
		}
	}
	return true, true
}

// fixedEqual compares n values of a fixed-width type, as T (an unsigned
// integer of the type's width, or the float type), in the slots valid marks
// (nil: all). Integers without nulls are compared as whole buffers.
func fixedEqual[T uint8 | uint16 | uint32 | uint64 | float32 | float64](
	x arrow.ArrayData, xo int, y arrow.ArrayData, yo int, n int, valid []byte,
) (eq, decided bool) {
	w := int(unsafe.Sizeof(*new(T)))
	xb, ok1 := buffer(x, 1, (xo+n)*w)
	yb, ok2 := buffer(y, 1, (yo+n)*w)
	if !ok1 || !ok2 || fixedBitWidth(x) != 8*w {
		return false, false
	}
	xs, ys := xb[xo*w:(xo+n)*w], yb[yo*w:(yo+n)*w]
	var zero T
	isFloat := any(zero) == any(float32(0)) || any(zero) == any(float64(0))
	if valid == nil && !isFloat {
		return bytes.Equal(xs, ys), true
	}
	xp, yp := uintptr(unsafe.Pointer(unsafe.SliceData(xs))), uintptr(unsafe.Pointer(unsafe.SliceData(ys)))
	if xp%uintptr(w) != 0 || yp%uintptr(w) != 0 {
		return false, false // a foreign buffer need not be aligned: array.Equal reads it
	}
	xv := unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(xs))), n)
	yv := unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(ys))), n)
	for i := range xv {
		// a NaN differs from itself: unequal when valid, as in pyarrow
		if xv[i] != yv[i] && (valid == nil || bitutil.BitIsSet(valid, xo+i)) {
			return false, true
		}
	}
	return true, true
}

func fixedBitWidth(d arrow.ArrayData) int {
	if fw, ok := d.DataType().(arrow.FixedWidthDataType); ok {
		return fw.BitWidth()
	}
	return -1
}

// wideEqual compares values wider than 8 bytes (decimals, fixed-size
// binaries) byte by byte, in the valid slots.
func wideEqual(x arrow.ArrayData, xo int, y arrow.ArrayData, yo int, n int, valid []byte) (eq, decided bool) {
	bits := fixedBitWidth(x)
	if bits <= 0 || bits%8 != 0 {
		return false, false
	}
	w := bits / 8
	xb, ok1 := buffer(x, 1, (xo+n)*w)
	yb, ok2 := buffer(y, 1, (yo+n)*w)
	if !ok1 || !ok2 {
		return false, false
	}
	xs, ys := xb[xo*w:(xo+n)*w], yb[yo*w:(yo+n)*w]
	if valid == nil {
		return bytes.Equal(xs, ys), true
	}
	for i := 0; i < n; i++ {
		if bitutil.BitIsSet(valid, xo+i) && !bytes.Equal(xs[i*w:(i+1)*w], ys[i*w:(i+1)*w]) {
			return false, true
		}
	}
	return true, true
}

// varEqual compares strings or binaries in the valid slots: at once when
// both sides have the same value lengths (offsets relative to each side's
// first) and bytes everywhere, else value by value.
func varEqual[O int32 | int64](
	offsetsOf func([]byte) []O, x arrow.ArrayData, xo int, y arrow.ArrayData, yo int, n int, valid []byte,
) (eq, decided bool) {
	w := int(unsafe.Sizeof(O(0)))
	xob, ok1 := buffer(x, 1, (xo+n+1)*w)
	yob, ok2 := buffer(y, 1, (yo+n+1)*w)
	if !ok1 || !ok2 {
		return false, false
	}
	xoff, yoff := offsetsOf(xob)[xo:xo+n+1], offsetsOf(yob)[yo:yo+n+1]
	var xd, yd []byte
	if b := x.Buffers(); len(b) > 2 && b[2] != nil {
		xd = b[2].Bytes()
	}
	if b := y.Buffers(); len(b) > 2 && b[2] != nil {
		yd = b[2].Bytes()
	}
	in := func(d []byte, s, e O) bool { return 0 <= s && s <= e && int64(e) <= int64(len(d)) }
	x0, y0, xe, ye := xoff[0], yoff[0], xoff[n], yoff[n]
	if !in(xd, x0, xe) || !in(yd, y0, ye) {
		return false, false
	}
	if xe-x0 == ye-y0 && bytes.Equal(xd[x0:xe], yd[y0:ye]) {
		same := true
		for i := range xoff {
			if xoff[i]-x0 != yoff[i]-y0 {
				same = false
				break
			}
		}
		if same {
			return true, true
		}
	}
	if valid == nil && xe-x0 != ye-y0 {
		return false, true
	}
	for i := 0; i < n; i++ {
		if valid != nil && !bitutil.BitIsSet(valid, xo+i) {
			continue
		}
		xs, xe, ys, ye := xoff[i], xoff[i+1], yoff[i], yoff[i+1]
		if !in(xd, xs, xe) || !in(yd, ys, ye) {
			return false, false
		}
		if !bytes.Equal(xd[xs:xe], yd[ys:ye]) {
			return false, true
		}
	}
	return true, true
}
