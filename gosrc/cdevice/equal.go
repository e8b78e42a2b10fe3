package cdevice

import (
	"bytes"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/godevarrow/godevarrow/gosrc/device"
)

// Equal reports whether a and b hold the same values of the same type, as
// Arrow's array equality has it: the same length, type (formats, field
// names and nullability, all the way down), nulls and values (a NaN equals
// no value). Physical layout does not matter: offsets, slicing and the
// contents of null slots are ignored. With checkMetadata the metadata of
// every field must match too. Data on a device the host cannot read is
// copied to the host first.
func Equal(a, b *Array, checkMetadata bool) (bool, error) {
	if a.Len() != b.Len() || !sameType(a.schema, b.schema, checkMetadata, true) {
		return false, nil
	}
	x, err := hostArrowOf(a)
	if err != nil {
		return false, err
	}
	defer x.release()
	y, err := hostArrowOf(b)
	if err != nil {
		return false, err
	}
	defer y.release()
	return dataEqual(x.arr.Data(), 0, y.arr.Data(), 0, a.Len()), nil
}

// dataEqual compares n elements of x from logical index xi with y's from
// yi (types already known equal). Arrow Go's array.Equal reads value by
// value (for strings, a Go string per value); the common cases without
// nulls are compared here as whole buffers, which is what keeps a table's
// Equal near pyarrow's. Everything else goes to array.Equal.
func dataEqual(x arrow.ArrayData, xi int, y arrow.ArrayData, yi int, n int) bool {
	if n == 0 {
		return true
	}
	if x.NullN() == 0 && y.NullN() == 0 {
		if eq, decided := buffersEqual(x, xi, y, yi, n); decided {
			return eq
		}
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

// buffersEqual decides equality of null-free data from its buffers when it
// can: fixed-width values, strings and binaries, booleans at the same bit
// alignment, and structs of those (each field by dataEqual).
func buffersEqual(x arrow.ArrayData, xi int, y arrow.ArrayData, yi int, n int) (eq, decided bool) {
	xo, yo := x.Offset()+xi, y.Offset()+yi
	switch x.DataType().ID() {
	case arrow.STRUCT:
		xc, yc := x.Children(), y.Children()
		if len(xc) != len(yc) {
			return false, false
		}
		for i := range xc {
			if !dataEqual(xc[i], xo, yc[i], yo, n) {
				return false, true
			}
		}
		return true, true
	case arrow.INT8, arrow.UINT8, arrow.INT16, arrow.UINT16, arrow.INT32, arrow.UINT32, arrow.INT64, arrow.UINT64,
		arrow.DATE32, arrow.DATE64, arrow.TIME32, arrow.TIME64, arrow.TIMESTAMP, arrow.DURATION,
		arrow.DECIMAL128, arrow.DECIMAL256, arrow.FIXED_SIZE_BINARY:
		xb, yb, ok := fixedValues(x, xo, y, yo, n)
		return ok && bytes.Equal(xb, yb), ok
	case arrow.FLOAT32, arrow.FLOAT64:
		xb, yb, ok := fixedValues(x, xo, y, yo, n)
		if !ok || !bytes.Equal(xb, yb) {
			return false, false // different bits may still be equal values (0.0 and -0.0)
		}
		// equal bits are equal values unless one is a NaN, which equals nothing
		return !hasNaN(x.DataType().ID(), xb), true
	case arrow.STRING, arrow.BINARY:
		return varEqual(arrow.Int32Traits.CastFromBytes, x, xo, y, yo, n)
	case arrow.LARGE_STRING, arrow.LARGE_BINARY:
		return varEqual(arrow.Int64Traits.CastFromBytes, x, xo, y, yo, n)
	case arrow.BOOL:
		if xo%8 != yo%8 || len(x.Buffers()) < 2 || len(y.Buffers()) < 2 || x.Buffers()[1] == nil || y.Buffers()[1] == nil {
			return false, false
		}
		xb, yb := x.Buffers()[1].Bytes(), y.Buffers()[1].Bytes()
		first, last := xo, xo+n // bits of x; y's are at the same positions within their bytes
		for ; first < last && first%8 != 0; first++ {
			if bitutil.BitIsSet(xb, first) != bitutil.BitIsSet(yb, first-xo+yo) {
				return false, true
			}
		}
		whole := (last - first) / 8
		if !bytes.Equal(xb[first/8:first/8+whole], yb[(first-xo+yo)/8:(first-xo+yo)/8+whole]) {
			return false, true
		}
		for i := first + whole*8; i < last; i++ {
			if bitutil.BitIsSet(xb, i) != bitutil.BitIsSet(yb, i-xo+yo) {
				return false, true
			}
		}
		return true, true
	}
	return false, false
}

// fixedValues is the bytes of n fixed-width values of x from element xo and
// of y from yo (ok false when the buffers are missing or short).
func fixedValues(x arrow.ArrayData, xo int, y arrow.ArrayData, yo int, n int) (xb, yb []byte, ok bool) {
	fw, isFixed := x.DataType().(arrow.FixedWidthDataType)
	if !isFixed || fw.BitWidth()%8 != 0 || len(x.Buffers()) < 2 || len(y.Buffers()) < 2 ||
		x.Buffers()[1] == nil || y.Buffers()[1] == nil {
		return nil, nil, false
	}
	w := fw.BitWidth() / 8
	xv, yv := x.Buffers()[1].Bytes(), y.Buffers()[1].Bytes()
	if len(xv) < (xo+n)*w || len(yv) < (yo+n)*w {
		return nil, nil, false
	}
	return xv[xo*w : (xo+n)*w], yv[yo*w : (yo+n)*w], true
}

func hasNaN(id arrow.Type, b []byte) bool {
	if id == arrow.FLOAT32 {
		for _, v := range arrow.Float32Traits.CastFromBytes(b) {
			if v != v {
				return true
			}
		}
		return false
	}
	for _, v := range arrow.Float64Traits.CastFromBytes(b) {
		if v != v {
			return true
		}
	}
	return false
}

// varEqual compares strings or binaries: the same value lengths (offsets
// relative to each side's first) and the same bytes.
func varEqual[O int32 | int64](offsetsOf func([]byte) []O, x arrow.ArrayData, xo int, y arrow.ArrayData, yo int, n int) (eq, decided bool) {
	if len(x.Buffers()) < 3 || len(y.Buffers()) < 3 || x.Buffers()[1] == nil || y.Buffers()[1] == nil {
		return false, false
	}
	xoff, yoff := offsetsOf(x.Buffers()[1].Bytes()), offsetsOf(y.Buffers()[1].Bytes())
	if len(xoff) < xo+n+1 || len(yoff) < yo+n+1 {
		return false, false
	}
	xoff, yoff = xoff[xo:xo+n+1], yoff[yo:yo+n+1]
	x0, y0 := xoff[0], yoff[0]
	for i := range xoff {
		if xoff[i]-x0 != yoff[i]-y0 {
			return false, true
		}
	}
	var xd, yd []byte
	if b := x.Buffers()[2]; b != nil {
		xd = b.Bytes()
	}
	if b := y.Buffers()[2]; b != nil {
		yd = b.Bytes()
	}
	xe, ye := xoff[n], yoff[n]
	if int64(len(xd)) < int64(xe) || int64(len(yd)) < int64(ye) || x0 < 0 || y0 < 0 || xe < x0 || ye < y0 {
		return false, false
	}
	return bytes.Equal(xd[x0:xe], yd[y0:ye]), true
}

// sameType compares two schemas as types: the top node's name and
// nullability are the array's, not its type's, and are ignored.
func sameType(s, o *Schema, checkMetadata, top bool) bool {
	if s.Format != o.Format || len(s.Children) != len(o.Children) || (s.Dictionary == nil) != (o.Dictionary == nil) {
		return false
	}
	if !top && (s.Name != o.Name || s.Nullable() != o.Nullable()) {
		return false
	}
	if s.Flags&^FlagNullable != o.Flags&^FlagNullable {
		return false
	}
	if checkMetadata && !metadataEqual(s.Metadata, o.Metadata) {
		return false
	}
	// extension types are types: their names and parameters matter always
	if n, ok := s.extensionName(); ok {
		m, ok := o.extensionName()
		if !ok || n != m {
			return false
		}
	} else if _, ok := o.extensionName(); ok {
		return false
	}
	for i := range s.Children {
		if !sameType(s.Children[i], o.Children[i], checkMetadata, false) {
			return false
		}
	}
	return s.Dictionary == nil || sameType(s.Dictionary, o.Dictionary, checkMetadata, true)
}

// hostView is an Arrow Go array over an Array's data, or over its host copy.
type hostView struct {
	arr  arrow.Array
	copy *Array
}

func (h hostView) release() {
	h.arr.Release()
	if h.copy != nil {
		h.copy.Release()
	}
}

func hostArrowOf(a *Array) (hostView, error) {
	var v hostView
	if !a.dev.Type.HostAccessible() {
		c, err := CopyToDevice(a, device.Host)
		if err != nil {
			return v, err
		}
		v.copy, a = c, c
	}
	arr, err := a.ToArrow()
	if err != nil {
		if v.copy != nil {
			v.copy.Release()
		}
		return v, err
	}
	v.arr = arr
	return v, nil
}
