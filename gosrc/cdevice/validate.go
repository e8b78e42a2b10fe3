package cdevice

import (
	"encoding/binary"
	"fmt"
	"unicode/utf8"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/godevarrow/godevarrow/gosrc/cschema"
	"github.com/godevarrow/godevarrow/gosrc/errs"
)

// Validate checks an array. The structural checks (buffer sizes, child
// lengths, offsets of the array's range) always run; full validation also
// reads every value: offsets monotonic and within the data, UTF-8 of strings,
// union type ids and offsets, dictionary indices, run ends, views. It returns
// an errs.ErrInvalid error describing the first problem. Full validation needs
// host-readable memory.
func Validate(a *Array, full bool) error {
	if full && !a.dev.Type.HostAccessible() {
		return errs.Errorf(errs.ErrNotImplemented, "full validation of an array on %s needs a copy to the host first", a.dev)
	}
	if err := a.readyBounds(); err != nil {
		return err
	}
	v := validator{full: full && a.dev.Type.HostAccessible(), host: a.dev.Type.HostAccessible()}
	return v.node(a.schema, a.data, "", 0)
}

type validator struct{ full, host bool }

func (v *validator) node(s *cschema.Schema, d arrow.ArrayData, path string, depth int) error {
	if depth > cschema.MaxNesting {
		return errs.Errorf(errs.ErrInvalid, "array nested deeper than %d levels", cschema.MaxNesting)
	}
	where := s.Describe()
	if path != "" {
		where = path + " " + where
	}
	bad := func(format string, args ...any) error {
		return errs.Errorf(errs.ErrInvalid, "%s: %s", where, fmt.Sprintf(format, args...))
	}
	if err := checkData(s, d, depth); err != nil {
		return err
	}
	off, n := int64(d.Offset()), int64(d.Len())
	end := off + n
	bufs := d.Buffers()
	size := func(i int) int64 {
		if bufs[i] == nil {
			return 0
		}
		return int64(bufs[i].Len())
	}
	need := func(i int, bytes int64, what string) error {
		if size(i) < bytes {
			return bad("%s buffer holds %d bytes, needs %d", what, size(i), bytes)
		}
		return nil
	}
	info := s.Info()
	if info.HasValidity() && bufs[0] != nil {
		if err := need(0, (end+7)/8, "validity"); err != nil {
			return err
		}
	}
	if v.full && info.HasValidity() && d.NullN() >= 0 {
		// consumers trust a stated count (kernels skip the bitmap when it is 0)
		counted := 0
		if bufs[0] != nil {
			counted = int(n) - bitutil.CountSetBits(bytesOf(bufs[0]), int(off), int(n))
		}
		if counted != d.NullN() {
			return bad("null_count is %d but the validity bitmap has %d nulls", d.NullN(), counted)
		}
	}
	valid := func(i int64) bool {
		return !info.HasValidity() || bufs[0] == nil || bitutil.BitIsSet(bytesOf(bufs[0]), int(i))
	}
	children := d.Children()
	// a child's offset is applied before the parent indexes it: the bound is
	// the child's length alone
	childLen := func(i int) int64 { return int64(children[i].Len()) }
	// children first: the checks below may read a child's buffers (run ends)
	for i, c := range children {
		if err := v.node(s.Children[i], c, fmt.Sprintf("%s child %d", path, i), depth+1); err != nil {
			return err
		}
	}

	switch info.Layout {
	case cschema.LayoutBool:
		if err := need(1, (end+7)/8, "values"); err != nil {
			return err
		}
	case cschema.LayoutFixedWidth:
		if err := need(1, end*int64(info.ByteWidth), "values"); err != nil {
			return err
		}
	case cschema.LayoutBinary, cschema.LayoutLargeBinary, cschema.LayoutList, cschema.LayoutLargeList, cschema.LayoutMap:
		w := int64(4)
		if info.Layout == cschema.LayoutLargeBinary || info.Layout == cschema.LayoutLargeList {
			w = 8
		}
		if err := need(1, (end+1)*w, "offsets"); err != nil {
			return err
		}
		if !v.host {
			break
		}
		limit := int64(-1)
		if info.Layout == cschema.LayoutBinary || info.Layout == cschema.LayoutLargeBinary {
			limit = size(2)
		} else {
			limit = childLen(0)
		}
		offsets := bytesOf(bufs[1])
		at := func(i int64) int64 {
			if w == 4 {
				return int64(int32(binary.NativeEndian.Uint32(offsets[i*4:])))
			}
			return int64(binary.NativeEndian.Uint64(offsets[i*8:]))
		}
		first, last := at(off), at(end)
		if first < 0 || last < first || last > limit {
			return bad("offsets [%d, %d] are out of the bounds [0, %d]", first, last, limit)
		}
		if !v.full {
			break
		}
		if info.Layout == cschema.LayoutMap {
			// Arrow Go's map constructor panics on either
			entries := children[0]
			if nullCount(s.Children[0], entries) != 0 {
				return bad("map entries must not be null")
			}
			if nullCount(s.Children[0].Children[0], entries.Children()[0]) != 0 {
				return bad("map keys must not be null")
			}
		}
		prev := first
		for i := off + 1; i <= end; i++ {
			cur := at(i)
			if cur < prev || cur > limit {
				return bad("offset %d at index %d is decreasing or past the end (%d)", cur, i-off, limit)
			}
			if info.Utf8 && !utf8.Valid(bytesOf(bufs[2])[prev:cur]) {
				return bad("invalid UTF-8 in value %d", i-1-off)
			}
			prev = cur
		}
	case cschema.LayoutBinaryView:
		if err := need(1, end*16, "views"); err != nil {
			return err
		}
		if !v.full {
			break
		}
		views := bytesOf(bufs[1])
		data := bufs[2:]
		for i := off; i < end; i++ {
			if !valid(i) {
				continue
			}
			view := views[i*16 : i*16+16]
			length := int64(int32(binary.NativeEndian.Uint32(view)))
			var value []byte
			switch {
			case length < 0:
				return bad("view %d has negative length %d", i-off, length)
			case length <= 12:
				value = view[4 : 4+length]
			default:
				idx := int64(int32(binary.NativeEndian.Uint32(view[8:])))
				vo := int64(int32(binary.NativeEndian.Uint32(view[12:])))
				if idx < 0 || idx >= int64(len(data)) {
					return bad("view %d refers to data buffer %d of %d", i-off, idx, len(data))
				}
				if held := int64(len(bytesOf(data[idx]))); vo < 0 || vo+length > held {
					return bad("view %d ([%d, %d) of buffer %d) is past the buffer's %d bytes", i-off, vo, vo+length, idx, held)
				}
				value = bytesOf(data[idx])[vo : vo+length]
				if string(value[:4]) != string(view[4:8]) {
					return bad("view %d has a prefix that differs from its data", i-off)
				}
			}
			if info.Utf8 && !utf8.Valid(value) {
				return bad("invalid UTF-8 in value %d", i-off)
			}
		}
	case cschema.LayoutListView, cschema.LayoutLargeListView:
		w := int64(4)
		if info.Layout == cschema.LayoutLargeListView {
			w = 8
		}
		if err := need(1, end*w, "offsets"); err != nil {
			return err
		}
		if err := need(2, end*w, "sizes"); err != nil {
			return err
		}
		if !v.full {
			break
		}
		read := func(b []byte, i int64) int64 {
			if w == 4 {
				return int64(int32(binary.NativeEndian.Uint32(b[i*4:])))
			}
			return int64(binary.NativeEndian.Uint64(b[i*8:]))
		}
		for i := off; i < end; i++ {
			if !valid(i) {
				continue
			}
			o, sz := read(bytesOf(bufs[1]), i), read(bytesOf(bufs[2]), i)
			if o < 0 || sz < 0 || o+sz > childLen(0) {
				return bad("list view %d ([%d, %d)) is out of the child's bounds [0, %d)", i-off, o, o+sz, childLen(0))
			}
		}
	case cschema.LayoutFixedSizeList:
		if childLen(0) < end*int64(info.ListSize) {
			return bad("child of length %d is too short for %d lists of %d", childLen(0), end, info.ListSize)
		}
	case cschema.LayoutStruct:
		for i := range children {
			if childLen(i) < end {
				return bad("child %d has length %d, needs %d", i, childLen(i), end)
			}
		}
	case cschema.LayoutSparseUnion, cschema.LayoutDenseUnion:
		if err := need(1, end, "type ids"); err != nil {
			return err
		}
		if info.Layout == cschema.LayoutDenseUnion {
			if err := need(2, end*4, "offsets"); err != nil {
				return err
			}
		} else {
			for i := range children {
				if childLen(i) < end {
					return bad("sparse union child %d has length %d, needs %d", i, childLen(i), end)
				}
			}
		}
		if !v.full {
			break
		}
		codeToChild := map[int8]int{}
		for i, c := range info.TypeCodes {
			codeToChild[c] = i
		}
		ids := bytesOf(bufs[1])
		lastOffset := make([]int64, len(children)) // dense offsets of each child must not decrease
		for i := off; i < end; i++ {
			child, ok := codeToChild[int8(ids[i])]
			if !ok {
				return bad("type id %d at index %d is not one of the union's type codes %v", int8(ids[i]), i-off, info.TypeCodes)
			}
			if info.Layout == cschema.LayoutDenseUnion {
				o := int64(int32(binary.NativeEndian.Uint32(bytesOf(bufs[2])[i*4:])))
				if o < 0 || o >= childLen(child) {
					return bad("dense union offset %d at index %d is out of child %d's bounds [0, %d)", o, i-off, child, childLen(child))
				}
				if o < lastOffset[child] {
					return bad("dense union offset %d at index %d is below an earlier offset %d into child %d", o, i-off, lastOffset[child], child)
				}
				lastOffset[child] = o
			}
		}
	case cschema.LayoutRunEndEncoded:
		if !v.full {
			break
		}
		re := children[0]
		if nullCount(s.Children[0], re) != 0 {
			return bad("run ends must not be null")
		}
		reBytes := bytesOf(re.Buffers()[1])
		w := int64(s.Children[0].Info().ByteWidth)
		prev := int64(0)
		for i := int64(re.Offset()); i < int64(re.Offset()+re.Len()); i++ {
			var cur int64
			switch w {
			case 2:
				cur = int64(int16(binary.NativeEndian.Uint16(reBytes[i*2:])))
			case 4:
				cur = int64(int32(binary.NativeEndian.Uint32(reBytes[i*4:])))
			default:
				cur = int64(binary.NativeEndian.Uint64(reBytes[i*8:]))
			}
			if cur <= prev {
				return bad("run ends must be positive and strictly increasing; %d follows %d", cur, prev)
			}
			prev = cur
		}
		if end > 0 && prev < end {
			return bad("the last run end %d does not cover offset+length %d", prev, end)
		}
	}
	if s.Dictionary != nil {
		dict := d.Dictionary()
		if err := v.node(s.Dictionary, dict, path+" dictionary", depth+1); err != nil {
			return err
		}
		if v.full {
			w := int64(info.ByteWidth)
			idx := bytesOf(bufs[1])
			signed := s.Format == "c" || s.Format == "s" || s.Format == "i" || s.Format == "l"
			for i := off; i < end; i++ {
				if !valid(i) {
					continue
				}
				var k int64
				switch w {
				case 1:
					k = int64(idx[i])
					if signed {
						k = int64(int8(idx[i]))
					}
				case 2:
					k = int64(binary.NativeEndian.Uint16(idx[i*2:]))
					if signed {
						k = int64(int16(k))
					}
				case 4:
					k = int64(binary.NativeEndian.Uint32(idx[i*4:]))
					if signed {
						k = int64(int32(k))
					}
				default:
					k = int64(binary.NativeEndian.Uint64(idx[i*8:]))
				}
				if k < 0 || k >= int64(dict.Len()) {
					return bad("dictionary index %d at position %d is out of range for a dictionary of %d values", k, i-off, dict.Len())
				}
			}
		}
	}
	return nil
}

// bytesOf returns the bytes of b; Arrow Go builds empty arrays with nil
// buffers.
func bytesOf(b *memory.Buffer) []byte {
	if b == nil {
		return nil
	}
	return b.Bytes()
}
