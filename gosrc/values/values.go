package values

/*
#include <stdlib.h>
#include "values.h"
*/
import "C"

import (
	"encoding/binary"
	"errors"
	"math"
	"math/big"
	"slices"
	"strconv"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/godevarrow/godevarrow/gosrc/cdevice"
	"github.com/godevarrow/godevarrow/gosrc/cschema"
	"github.com/godevarrow/godevarrow/gosrc/errs"
)

// EncodeValues describes the values of elements [start, start+length) of a
// in the value encoding of values.h, from which a language binding builds
// its own objects (the Python binding: the objects pyarrow's to_pylist
// gives). Data on a device the host cannot read is copied to the host first
// (only the elements asked for). The data is fully validated before it is
// read.
//
// The mapping follows Arrow's types: integers, floats (float16 widened),
// booleans, strings and binaries (every offset width and view layout) as
// themselves; lists of every layout as lists; structs as dicts (an error when
// a struct has two fields of one name, where a dict would lose one); maps as
// lists of (key, value) tuples; dictionaries decoded; unions as the selected
// child's value; run-end encoded arrays expanded; decimals, dates, times,
// timestamps, durations, intervals and arrow.uuid through the makers of
// values.h; arrow.bool8 as booleans; other extension types as their storage.
func EncodeValues(a *cdevice.Array, start, length int64) ([]byte, error) {
	w := valueWriter{}
	defer w.releaseKept()
	if err := w.encode(a, start, length); err != nil {
		return nil, err
	}
	return w.buf, nil
}

// EncodedValues is the encoding of EncodeValuesC: in memory from C's
// malloc, and with runs of numbers, booleans, strings and binaries as
// GDA_VALUE_BLOCK records that point into the array's host data (no
// per-value encoding), which it keeps alive. Free releases both.
type EncodedValues struct {
	Data unsafe.Pointer
	Len  int
	w    valueWriter
}

// EncodeValuesC is EncodeValues for C callers (see EncodedValues). With
// byColumn, a record batch's values come as a dict of column name to the
// list of that column's values (a later column replaces an earlier one of
// the same name, as in a dict built column by column).
func EncodeValuesC(a *cdevice.Array, start, length int64, byColumn bool) (_ *EncodedValues, err error) {
	e := &EncodedValues{w: valueWriter{inC: true, byColumn: byColumn}}
	defer func() {
		if r := recover(); r != nil {
			oom, ok := r.(*errs.Error)
			if !ok || !errors.Is(oom, errs.ErrNoMemory) {
				panic(r)
			}
			err = oom
		}
		if err != nil {
			e.Free()
		}
	}()
	if err = e.w.encode(a, start, length); err != nil {
		return nil, err
	}
	e.Data, e.Len = unsafe.Pointer(unsafe.SliceData(e.w.buf)), len(e.w.buf)
	return e, nil
}

// Detach hands the encoding's memory to the caller, who frees it with C's
// free, and releases everything else, when the encoding points into no
// data (it has no blocks); otherwise it returns nil and e stays as it was.
func (e *EncodedValues) Detach() unsafe.Pointer {
	if e.w.blocks {
		return nil
	}
	e.w.releaseKept()
	p := e.Data
	e.w.buf, e.Data, e.Len = nil, nil, 0
	return p
}

// Free releases the encoding and the data it points into.
func (e *EncodedValues) Free() {
	e.w.releaseKept()
	C.free(unsafe.Pointer(unsafe.SliceData(e.w.buf)))
	e.w.buf, e.Data, e.Len = nil, nil, 0
}

func (w *valueWriter) encode(a *cdevice.Array, start, length int64) error {
	n := int64(a.Len())
	if start < 0 || length < 0 || start > n || length > n-start {
		return errs.Errorf(errs.ErrInvalid, "values [%d, %d+%d) out of range for an array of length %d", start, start, length, n)
	}
	lo, hi := int(start), int(start+length)
	part := a // host data: read in place; the whole array is validated as the producer described it
	if !a.Device().Type.HostAccessible() {
		// only the elements asked for are copied to the host
		sliced, err := a.Slice(start, length)
		if err != nil {
			return err
		}
		w.keep = append(w.keep, sliced.Release)
		part, lo, hi = sliced, 0, int(length)
	}
	host, err := cdevice.HostArrowOf(part)
	if err != nil {
		return err
	}
	w.keep = append(w.keep, host.Release) // blocks point into it
	arr := host.Arr
	w.reserve(16 + 9*(hi-lo)) // numbers take 9 bytes each: one allocation for them
	w.buf = w.buf[:0]
	if w.byColumn {
		return w.columns(part.Schema(), arr, lo, hi)
	}
	enc, err := compileRange(part.Schema(), arr)
	if err != nil {
		return err
	}
	w.count(GDAValueList, hi-lo)
	return enc(w, lo, hi)
}

// columns appends a record batch as a dict of column name to values.
func (w *valueWriter) columns(s *cschema.Schema, arr arrow.Array, lo, hi int) error {
	st, ok := arr.(*array.Struct)
	if !ok || !s.IsRecordBatch() {
		return errs.Errorf(errs.ErrInvalid, "only a record batch has columns, not %s", s)
	}
	w.count(GDAValueDict, st.NumField())
	for j := 0; j < st.NumField(); j++ {
		enc, err := compileRange(s.Children[j], st.Field(j))
		if err != nil {
			return err
		}
		w.str(s.Children[j].Name)
		w.count(GDAValueList, hi-lo)
		if err := enc(w, lo, hi); err != nil {
			return err
		}
	}
	return nil
}

// The tags of values.h, for Go callers reading the encoding.
const (
	GDAValueNull   = byte(C.GDA_VALUE_NULL)
	GDAValueFalse  = byte(C.GDA_VALUE_FALSE)
	GDAValueTrue   = byte(C.GDA_VALUE_TRUE)
	GDAValueInt    = byte(C.GDA_VALUE_INT)
	GDAValueUint   = byte(C.GDA_VALUE_UINT)
	GDAValueFloat  = byte(C.GDA_VALUE_FLOAT)
	GDAValueString = byte(C.GDA_VALUE_STRING)
	GDAValueBytes  = byte(C.GDA_VALUE_BYTES)
	GDAValueList   = byte(C.GDA_VALUE_LIST)
	GDAValueTuple  = byte(C.GDA_VALUE_TUPLE)
	GDAValueDict   = byte(C.GDA_VALUE_DICT)
	GDAValueMake   = byte(C.GDA_VALUE_MAKE)
)

// valueWriter appends the encoding to buf, which is Go memory, or C
// memory from malloc when inC (EncodeValuesC: no copy for a C caller, and
// nothing for Go's collector to scan or clear). Every write goes through
// reserve, which grows either kind.
type valueWriter struct {
	buf      []byte
	inC      bool     // also: write blocks
	byColumn bool     // a record batch as a dict of columns
	blocks   bool     // a block was written
	keep     []func() // releases the data the encoding reads or points into
}

func (w *valueWriter) releaseKept() {
	for _, release := range w.keep {
		release()
	}
	w.keep = nil
}

// reserve grows w.buf by n bytes and returns them.
func (w *valueWriter) reserve(n int) []byte {
	at := len(w.buf)
	if at+n > cap(w.buf) {
		size := max(2*cap(w.buf), at+n, 64)
		if w.inC {
			p := C.realloc(unsafe.Pointer(unsafe.SliceData(w.buf)), C.size_t(size))
			if p == nil {
				panic(errs.Errorf(errs.ErrNoMemory, "out of memory encoding %d bytes of values", size))
			}
			w.buf = unsafe.Slice((*byte)(p), size)[:at]
		} else {
			w.buf = slices.Grow(w.buf, size-at)
		}
	}
	w.buf = w.buf[:at+n]
	return w.buf[at:]
}

func (w *valueWriter) tag(t byte) { w.reserve(1)[0] = t }

func (w *valueWriter) u64(t byte, v uint64) {
	out := w.reserve(9)
	out[0] = t
	binary.LittleEndian.PutUint64(out[1:], v)
}

func (w *valueWriter) i64(v int64)         { w.u64(GDAValueInt, uint64(v)) }
func (w *valueWriter) float(v float64)     { w.u64(GDAValueFloat, math.Float64bits(v)) }
func (w *valueWriter) count(t byte, n int) { w.u64(t, uint64(n)) }

func (w *valueWriter) bytes(t byte, b []byte) {
	out := w.reserve(9 + len(b))
	out[0] = t
	binary.LittleEndian.PutUint64(out[1:], uint64(len(b)))
	copy(out[9:], b)
}

func (w *valueWriter) str(s string) {
	out := w.reserve(9 + len(s))
	out[0] = GDAValueString
	binary.LittleEndian.PutUint64(out[1:], uint64(len(s)))
	copy(out[9:], s)
}

func (w *valueWriter) bool(b bool) {
	if b {
		w.tag(GDAValueTrue)
	} else {
		w.tag(GDAValueFalse)
	}
}

func (w *valueWriter) make(maker C.int, args int) {
	out := w.reserve(3)
	out[0], out[1], out[2] = GDAValueMake, byte(maker), byte(args)
}

// temporal unit codes of values.h
func unitCode(u arrow.TimeUnit) int64 {
	switch u {
	case arrow.Second:
		return 0
	case arrow.Millisecond:
		return 1
	case arrow.Microsecond:
		return 2
	default:
		return 3
	}
}

// An encoder appends element i of the array it was compiled for.
type encoder func(w *valueWriter, i int) error

// compile returns the encoder of arr, whose field is s: every decision
// (extension type, layout, children) is made once per node, not per value.
func compile(s *cschema.Schema, arr arrow.Array) (encoder, error) {
	enc, err := compileValues(s, arr)
	if err != nil {
		return nil, err
	}
	switch arr.DataType().ID() {
	case arrow.DENSE_UNION, arrow.SPARSE_UNION, arrow.RUN_END_ENCODED, arrow.NULL:
		return enc, nil // no validity bitmap of their own: null is the child's value
	}
	if arr.NullN() == 0 {
		return enc, nil
	}
	return func(w *valueWriter, i int) error {
		if arr.IsNull(i) {
			w.tag(GDAValueNull)
			return nil
		}
		return enc(w, i)
	}, nil
}

func compileValues(s *cschema.Schema, arr arrow.Array) (encoder, error) {
	if name, ok := s.ExtensionName(); ok {
		storage := arr
		if ext, ok := arr.(array.ExtensionArray); ok {
			storage = ext.Storage()
		}
		switch b := storage.(type) {
		case *array.FixedSizeBinary:
			if name == "arrow.uuid" && b.DataType().(*arrow.FixedSizeBinaryType).ByteWidth == 16 {
				return func(w *valueWriter, i int) error {
					w.make(C.GDA_MAKE_UUID, 1)
					w.bytes(GDAValueBytes, b.Value(i))
					return nil
				}, nil
			}
		case *array.Int8:
			if name == "arrow.bool8" {
				return func(w *valueWriter, i int) error { w.bool(b.Value(i) != 0); return nil }, nil
			}
		}
	}
	switch v := arr.(type) {
	case *cschema.ForeignFixedWidthArray:
		return compileForeign(s, v)
	case array.ExtensionArray:
		return compileValues(s, v.Storage())
	case *array.Null:
		return func(w *valueWriter, i int) error { w.tag(GDAValueNull); return nil }, nil
	case *array.Boolean:
		return func(w *valueWriter, i int) error { w.bool(v.Value(i)); return nil }, nil
	case *array.Int8:
		return ints(v.Int8Values()), nil
	case *array.Int16:
		return ints(v.Int16Values()), nil
	case *array.Int32:
		return ints(v.Int32Values()), nil
	case *array.Int64:
		return ints(v.Int64Values()), nil
	case *array.Uint8:
		return ints(v.Uint8Values()), nil
	case *array.Uint16:
		return ints(v.Uint16Values()), nil
	case *array.Uint32:
		return ints(v.Uint32Values()), nil
	case *array.Uint64:
		vals := v.Uint64Values()
		return func(w *valueWriter, i int) error { w.u64(GDAValueUint, vals[i]); return nil }, nil
	case *array.Float16:
		vals := v.Values()
		return func(w *valueWriter, i int) error { w.float(float64(vals[i].Float32())); return nil }, nil
	case *array.Float32:
		return floats(v.Float32Values()), nil
	case *array.Float64:
		return floats(v.Float64Values()), nil
	case *array.String:
		return func(w *valueWriter, i int) error { w.str(v.Value(i)); return nil }, nil
	case *array.LargeString:
		return func(w *valueWriter, i int) error { w.str(v.Value(i)); return nil }, nil
	case *array.StringView:
		return func(w *valueWriter, i int) error { w.str(v.Value(i)); return nil }, nil
	case *array.Binary:
		return func(w *valueWriter, i int) error { w.bytes(GDAValueBytes, v.Value(i)); return nil }, nil
	case *array.LargeBinary:
		return func(w *valueWriter, i int) error { w.bytes(GDAValueBytes, v.Value(i)); return nil }, nil
	case *array.BinaryView:
		return func(w *valueWriter, i int) error { w.bytes(GDAValueBytes, v.Value(i)); return nil }, nil
	case *array.FixedSizeBinary:
		return func(w *valueWriter, i int) error { w.bytes(GDAValueBytes, v.Value(i)); return nil }, nil
	case *array.Decimal128:
		scale := v.DataType().(*arrow.Decimal128Type).Scale
		return func(w *valueWriter, i int) error { w.decimal(v.Value(i).BigInt(), scale); return nil }, nil
	case *array.Decimal256:
		scale := v.DataType().(*arrow.Decimal256Type).Scale
		return func(w *valueWriter, i int) error { w.decimal(v.Value(i).BigInt(), scale); return nil }, nil
	case *array.Date32:
		return func(w *valueWriter, i int) error {
			w.make(C.GDA_MAKE_DATE, 1)
			w.i64(int64(v.Value(i)))
			return nil
		}, nil
	case *array.Date64:
		return func(w *valueWriter, i int) error {
			ms := int64(v.Value(i))
			days := ms / 86_400_000
			if ms%86_400_000 < 0 {
				days-- // floor: a date64 before 1970 names the day it falls in
			}
			w.make(C.GDA_MAKE_DATE, 1)
			w.i64(days)
			return nil
		}, nil
	case *array.Time32:
		unit := unitCode(v.DataType().(*arrow.Time32Type).Unit)
		return temporal(C.GDA_MAKE_TIME, func(i int) int64 { return int64(v.Value(i)) }, unit), nil
	case *array.Time64:
		unit := unitCode(v.DataType().(*arrow.Time64Type).Unit)
		return temporal(C.GDA_MAKE_TIME, func(i int) int64 { return int64(v.Value(i)) }, unit), nil
	case *array.Duration:
		unit := unitCode(v.DataType().(*arrow.DurationType).Unit)
		return temporal(C.GDA_MAKE_DURATION, func(i int) int64 { return int64(v.Value(i)) }, unit), nil
	case *array.Timestamp:
		t := v.DataType().(*arrow.TimestampType)
		unit := unitCode(t.Unit)
		return func(w *valueWriter, i int) error {
			w.make(C.GDA_MAKE_TIMESTAMP, 3)
			w.i64(int64(v.Value(i)))
			w.i64(unit)
			if t.TimeZone == "" {
				w.tag(GDAValueNull)
			} else {
				w.str(t.TimeZone)
			}
			return nil
		}, nil
	case *array.MonthInterval:
		return func(w *valueWriter, i int) error { w.i64(int64(v.Value(i))); return nil }, nil
	case *array.DayTimeInterval:
		return func(w *valueWriter, i int) error {
			d := v.Value(i)
			w.make(C.GDA_MAKE_DAY_TIME, 2)
			w.i64(int64(d.Days))
			w.i64(int64(d.Milliseconds))
			return nil
		}, nil
	case *array.MonthDayNanoInterval:
		return func(w *valueWriter, i int) error {
			d := v.Value(i)
			w.make(C.GDA_MAKE_MONTH_DAY_NANO, 3)
			w.i64(int64(d.Months))
			w.i64(int64(d.Days))
			w.i64(d.Nanoseconds)
			return nil
		}, nil
	case *array.Map:
		// before ListLike: a map is a list of (key, value) tuples
		entry := s.Children[0]
		key, err := compile(entry.Children[0], v.Keys())
		if err != nil {
			return nil, err
		}
		item, err := compile(entry.Children[1], v.Items())
		if err != nil {
			return nil, err
		}
		return func(w *valueWriter, i int) error {
			lo, hi := v.ValueOffsets(i)
			w.count(GDAValueList, int(hi-lo))
			for j := int(lo); j < int(hi); j++ {
				w.count(GDAValueTuple, 2)
				if err := key(w, j); err != nil {
					return err
				}
				if err := item(w, j); err != nil {
					return err
				}
			}
			return nil
		}, nil
	case array.ListLike:
		elems, err := compileRange(s.Children[0], v.ListValues())
		if err != nil {
			return nil, err
		}
		return func(w *valueWriter, i int) error {
			lo, hi := v.ValueOffsets(i)
			w.count(GDAValueList, int(hi-lo))
			return elems(w, int(lo), int(hi))
		}, nil
	case *array.Struct:
		if name, dup := duplicateName(s); dup {
			return func(w *valueWriter, i int) error {
				return errs.Errorf(errs.ErrInvalid, "cannot convert a struct with two fields named %q to a dict, which would lose one (convert its fields one by one)", name)
			}, nil
		}
		fields := make([]encoder, v.NumField())
		for j := range fields {
			f, err := compile(s.Children[j], v.Field(j))
			if err != nil {
				return nil, err
			}
			fields[j] = f
		}
		return func(w *valueWriter, i int) error {
			w.count(GDAValueDict, len(fields))
			for j, f := range fields {
				w.str(s.Children[j].Name)
				if err := f(w, i); err != nil {
					return err
				}
			}
			return nil
		}, nil
	case *array.Dictionary:
		values, err := compile(s.Dictionary, v.Dictionary())
		if err != nil {
			return nil, err
		}
		return func(w *valueWriter, i int) error { return values(w, v.GetValueIndex(i)) }, nil
	case *array.SparseUnion:
		children, err := compileChildren(s, v.NumFields(), v.Field)
		if err != nil {
			return nil, err
		}
		// Arrow Go slices sparse children to the union: index i is theirs too
		return func(w *valueWriter, i int) error { return children[v.ChildID(i)](w, i) }, nil
	case *array.DenseUnion:
		children, err := compileChildren(s, v.NumFields(), v.Field)
		if err != nil {
			return nil, err
		}
		return func(w *valueWriter, i int) error { return children[v.ChildID(i)](w, int(v.ValueOffset(i))) }, nil
	case *array.RunEndEncoded:
		values, err := compile(s.Children[1], v.Values())
		if err != nil {
			return nil, err
		}
		return func(w *valueWriter, i int) error { return values(w, v.GetPhysicalIndex(i)) }, nil
	}
	return nil, errs.Errorf(errs.ErrNotImplemented, "converting values of type %s is not supported", s)
}

// A rangeEncoder appends elements [lo, hi) of the array it was compiled for.
type rangeEncoder func(w *valueWriter, lo, hi int) error

// compileRange returns the range encoder of arr (field s): in C memory, a
// long enough run of numbers, booleans, strings or binaries is one block
// record; otherwise the values are encoded one by one (numbers without
// nulls in one loop).
func compileRange(s *cschema.Schema, arr arrow.Array) (rangeEncoder, error) {
	each, err := compileEach(s, arr)
	if err != nil {
		return nil, err
	}
	kind, values, width, chars, ok := blockOf(s, arr)
	if !ok {
		return each, nil
	}
	return func(w *valueWriter, lo, hi int) error {
		if w.inC && hi-lo >= minBlock {
			w.block(kind, values, width, chars, arr, lo, hi)
			return nil
		}
		return each(w, lo, hi) // the Go encoding is self-contained
	}, nil
}

// compileEach returns the range encoder of arr that encodes every value.
func compileEach(s *cschema.Schema, arr arrow.Array) (rangeEncoder, error) {
	if _, ext := s.ExtensionName(); !ext && arr.NullN() == 0 {
		switch v := arr.(type) {
		case *array.Int8:
			return intRange(GDAValueInt, v.Int8Values()), nil
		case *array.Int16:
			return intRange(GDAValueInt, v.Int16Values()), nil
		case *array.Int32:
			return intRange(GDAValueInt, v.Int32Values()), nil
		case *array.Int64:
			return intRange(GDAValueInt, v.Int64Values()), nil
		case *array.Uint8:
			return intRange(GDAValueInt, v.Uint8Values()), nil
		case *array.Uint16:
			return intRange(GDAValueInt, v.Uint16Values()), nil
		case *array.Uint32:
			return intRange(GDAValueInt, v.Uint32Values()), nil
		case *array.Uint64:
			return intRange(GDAValueUint, v.Uint64Values()), nil
		case *array.Float64:
			return floatRange(v.Float64Values()), nil
		case *array.Float32:
			return floatRange(v.Float32Values()), nil
		}
	}
	one, err := compile(s, arr)
	if err != nil {
		return nil, err
	}
	return func(w *valueWriter, lo, hi int) error {
		for i := lo; i < hi; i++ {
			if err := one(w, i); err != nil {
				return err
			}
		}
		return nil
	}, nil
}

func intRange[T int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64](tag byte, vals []T) rangeEncoder {
	return func(w *valueWriter, lo, hi int) error {
		out := w.reserve(9 * (hi - lo))
		for k, v := range vals[lo:hi] {
			out[9*k] = tag
			binary.LittleEndian.PutUint64(out[9*k+1:], uint64(v))
		}
		return nil
	}
}

func floatRange[T float32 | float64](vals []T) rangeEncoder {
	return func(w *valueWriter, lo, hi int) error {
		out := w.reserve(9 * (hi - lo))
		for k, v := range vals[lo:hi] {
			out[9*k] = GDAValueFloat
			binary.LittleEndian.PutUint64(out[9*k+1:], math.Float64bits(float64(v)))
		}
		return nil
	}
}

// minBlock is the shortest run written as a block: shorter runs are
// encoded value by value, and an encoding without blocks needs nothing kept
// alive (see EncodedValues.Detach).
const minBlock = 16

// blockOf describes a number, boolean, string or binary array as a block:
// its kind, the address of element 0 (its offset applied; for booleans the
// buffer, addressed in bits, so width 0; for strings and binaries element
// 0's offset), the width of a value (or offset) in bytes, and the start of
// the character data (strings and binaries).
func blockOf(s *cschema.Schema, arr arrow.Array) (kind C.int, values unsafe.Pointer, width int, chars unsafe.Pointer, ok bool) {
	if _, ext := s.ExtensionName(); ext || arr.Len() == 0 {
		return 0, nil, 0, nil, false
	}
	addr := func(b []byte) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(b)) }
	switch v := arr.(type) {
	case *array.Int8:
		return C.GDA_BLOCK_I8, addr(arrow.Int8Traits.CastToBytes(v.Int8Values())), 1, nil, true
	case *array.Int16:
		return C.GDA_BLOCK_I16, addr(arrow.Int16Traits.CastToBytes(v.Int16Values())), 2, nil, true
	case *array.Int32:
		return C.GDA_BLOCK_I32, addr(arrow.Int32Traits.CastToBytes(v.Int32Values())), 4, nil, true
	case *array.Int64:
		return C.GDA_BLOCK_I64, addr(arrow.Int64Traits.CastToBytes(v.Int64Values())), 8, nil, true
	case *array.Uint8:
		return C.GDA_BLOCK_U8, addr(arrow.Uint8Traits.CastToBytes(v.Uint8Values())), 1, nil, true
	case *array.Uint16:
		return C.GDA_BLOCK_U16, addr(arrow.Uint16Traits.CastToBytes(v.Uint16Values())), 2, nil, true
	case *array.Uint32:
		return C.GDA_BLOCK_U32, addr(arrow.Uint32Traits.CastToBytes(v.Uint32Values())), 4, nil, true
	case *array.Uint64:
		return C.GDA_BLOCK_U64, addr(arrow.Uint64Traits.CastToBytes(v.Uint64Values())), 8, nil, true
	case *array.Float32:
		return C.GDA_BLOCK_F32, addr(arrow.Float32Traits.CastToBytes(v.Float32Values())), 4, nil, true
	case *array.Float64:
		return C.GDA_BLOCK_F64, addr(arrow.Float64Traits.CastToBytes(v.Float64Values())), 8, nil, true
	case *array.Boolean:
		return C.GDA_BLOCK_BOOL, addr(v.Data().Buffers()[1].Bytes()), 0, nil, true
	case *array.String:
		return C.GDA_BLOCK_UTF8, addr(arrow.Int32Traits.CastToBytes(v.ValueOffsets())), 4, charsOf(arr), true
	case *array.LargeString:
		return C.GDA_BLOCK_LARGE_UTF8, addr(arrow.Int64Traits.CastToBytes(v.ValueOffsets())), 8, charsOf(arr), true
	case *array.Binary:
		return C.GDA_BLOCK_BINARY, addr(arrow.Int32Traits.CastToBytes(v.ValueOffsets())), 4, charsOf(arr), true
	case *array.LargeBinary:
		return C.GDA_BLOCK_LARGE_BINARY, addr(arrow.Int64Traits.CastToBytes(v.ValueOffsets())), 8, charsOf(arr), true
	}
	return 0, nil, 0, nil, false
}

// charsOf is the start of a string or binary array's character buffer
// (the offsets count from there), or nil when it has none.
func charsOf(arr arrow.Array) unsafe.Pointer {
	if bufs := arr.Data().Buffers(); len(bufs) > 2 && bufs[2] != nil && bufs[2].Len() > 0 {
		return unsafe.Pointer(unsafe.SliceData(bufs[2].Bytes()))
	}
	return nil
}

// block appends elements [lo, hi) of arr as one GDA_VALUE_BLOCK record.
func (w *valueWriter) block(kind C.int, values unsafe.Pointer, width int, chars unsafe.Pointer, arr arrow.Array, lo, hi int) {
	w.blocks = true
	out := w.reserve(42)
	out[0], out[1] = byte(C.GDA_VALUE_BLOCK), byte(kind)
	first := uintptr(values) + uintptr(lo*width) // booleans (width 0): the buffer, addressed by bits
	var validity uintptr
	if arr.NullN() > 0 {
		if bits := arr.NullBitmapBytes(); len(bits) > 0 {
			validity = uintptr(unsafe.Pointer(unsafe.SliceData(bits)))
		}
	}
	binary.LittleEndian.PutUint64(out[2:], uint64(hi-lo))
	binary.LittleEndian.PutUint64(out[10:], uint64(first))
	binary.LittleEndian.PutUint64(out[18:], uint64(validity))
	binary.LittleEndian.PutUint64(out[26:], uint64(arr.Data().Offset()+lo))
	binary.LittleEndian.PutUint64(out[34:], uint64(uintptr(chars)))
}

func compileChildren(s *cschema.Schema, n int, field func(int) arrow.Array) ([]encoder, error) {
	out := make([]encoder, n)
	for j := range out {
		enc, err := compile(s.Children[j], field(j))
		if err != nil {
			return nil, err
		}
		out[j] = enc
	}
	return out, nil
}

func ints[T int8 | int16 | int32 | int64 | uint8 | uint16 | uint32](vals []T) encoder {
	return func(w *valueWriter, i int) error { w.i64(int64(vals[i])); return nil }
}

func floats[T float32 | float64](vals []T) encoder {
	return func(w *valueWriter, i int) error { w.float(float64(vals[i])); return nil }
}

// temporal is a maker call (value, unit).
func temporal(maker C.int, value func(int) int64, unit int64) encoder {
	return func(w *valueWriter, i int) error {
		w.make(maker, 2)
		w.i64(value(i))
		w.i64(unit)
		return nil
	}
}

// decimal appends unscaled × 10^-scale as a decimal maker call.
func (w *valueWriter) decimal(unscaled *big.Int, scale int32) {
	w.make(C.GDA_MAKE_DECIMAL, 1)
	// in int64: the negation of an int32 scale of -2^31 does not fit in an int32
	w.str(unscaled.String() + "E" + strconv.FormatInt(-int64(scale), 10))
}

// compileForeign encodes a fixed-width type Arrow Go does not know:
// decimal32 and decimal64 ("d:P,S,32" / "d:P,S,64") as decimals, other
// registered formats as their bytes.
func compileForeign(s *cschema.Schema, v *cschema.ForeignFixedWidthArray) (encoder, error) {
	raw := v.Storage().(*array.FixedSizeBinary)
	asBytes := func(w *valueWriter, i int) error { w.bytes(GDAValueBytes, raw.Value(i)); return nil }
	d, ok := cschema.ParseDecimal(s.Format)
	if !ok {
		return asBytes, nil
	}
	scale := int32(d.Scale) // ParseDecimal keeps it within int32
	switch raw.DataType().(*arrow.FixedSizeBinaryType).ByteWidth {
	case 4:
		return func(w *valueWriter, i int) error {
			w.decimal(big.NewInt(int64(int32(binary.LittleEndian.Uint32(raw.Value(i))))), scale)
			return nil
		}, nil
	case 8:
		return func(w *valueWriter, i int) error {
			w.decimal(big.NewInt(int64(binary.LittleEndian.Uint64(raw.Value(i)))), scale)
			return nil
		}, nil
	}
	return asBytes, nil
}

func duplicateName(s *cschema.Schema) (string, bool) {
	seen := make(map[string]bool, len(s.Children))
	for _, c := range s.Children {
		if seen[c.Name] {
			return c.Name, true
		}
		seen[c.Name] = true
	}
	return "", false
}
