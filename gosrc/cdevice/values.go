package cdevice

/*
#include "values.h"
*/
import "C"

import (
	"encoding/binary"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
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
func EncodeValues(a *Array, start, length int64) ([]byte, error) {
	n := int64(a.Len())
	if start < 0 || length < 0 || start > n || length > n-start {
		return nil, errorf(ErrInvalid, "values [%d, %d+%d) out of range for an array of length %d", start, start, length, n)
	}
	part := a // the whole array is validated as the producer described it
	if start != 0 || length != n {
		sliced, err := a.Slice(start, length)
		if err != nil {
			return nil, err
		}
		defer sliced.Release()
		part = sliced
	}
	host, err := hostArrowOf(part)
	if err != nil {
		return nil, err
	}
	defer host.release()
	arr := host.arr
	w := valueWriter{buf: make([]byte, 0, 16+9*arr.Len())}
	w.count(GDAValueList, arr.Len())
	for i := 0; i < arr.Len(); i++ {
		if err := w.value(part.schema, arr, i); err != nil {
			return nil, err
		}
	}
	return w.buf, nil
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

type valueWriter struct{ buf []byte }

func (w *valueWriter) tag(t byte) { w.buf = append(w.buf, t) }

func (w *valueWriter) u64(t byte, v uint64) {
	w.buf = append(w.buf, t)
	w.buf = binary.LittleEndian.AppendUint64(w.buf, v)
}

func (w *valueWriter) i64(v int64)         { w.u64(GDAValueInt, uint64(v)) }
func (w *valueWriter) count(t byte, n int) { w.u64(t, uint64(n)) }

func (w *valueWriter) bytes(t byte, b []byte) {
	w.count(t, len(b))
	w.buf = append(w.buf, b...)
}

func (w *valueWriter) str(s string) {
	w.count(GDAValueString, len(s))
	w.buf = append(w.buf, s...)
}

func (w *valueWriter) bool(b bool) {
	if b {
		w.tag(GDAValueTrue)
	} else {
		w.tag(GDAValueFalse)
	}
}

func (w *valueWriter) make(maker C.int, args int) {
	w.buf = append(w.buf, GDAValueMake, byte(maker), byte(args))
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

// value appends element i of arr, whose field is s.
func (w *valueWriter) value(s *Schema, arr arrow.Array, i int) error {
	switch arr.DataType().ID() {
	case arrow.DENSE_UNION, arrow.SPARSE_UNION, arrow.RUN_END_ENCODED:
		// no validity bitmap of their own: null is the child's value
	default:
		if arr.IsNull(i) {
			w.tag(GDAValueNull)
			return nil
		}
	}
	if name, ok := s.extensionName(); ok {
		if ext, ok := arr.(array.ExtensionArray); ok {
			arr = ext.Storage()
		}
		switch name {
		case "arrow.uuid":
			if b, ok := arr.(*array.FixedSizeBinary); ok && len(b.Value(i)) == 16 {
				w.make(C.GDA_MAKE_UUID, 1)
				w.bytes(GDAValueBytes, b.Value(i))
				return nil
			}
		case "arrow.bool8":
			if b, ok := arr.(*array.Int8); ok {
				w.bool(b.Value(i) != 0)
				return nil
			}
		}
	}
	switch v := arr.(type) {
	case *ForeignFixedWidthArray:
		return w.foreign(s, v, i)
	case array.ExtensionArray:
		return w.value(s, v.Storage(), i)
	case *array.Null:
		w.tag(GDAValueNull)
	case *array.Boolean:
		w.bool(v.Value(i))
	case *array.Int8:
		w.i64(int64(v.Value(i)))
	case *array.Int16:
		w.i64(int64(v.Value(i)))
	case *array.Int32:
		w.i64(int64(v.Value(i)))
	case *array.Int64:
		w.i64(v.Value(i))
	case *array.Uint8:
		w.i64(int64(v.Value(i)))
	case *array.Uint16:
		w.i64(int64(v.Value(i)))
	case *array.Uint32:
		w.i64(int64(v.Value(i)))
	case *array.Uint64:
		w.u64(GDAValueUint, v.Value(i))
	case *array.Float16:
		w.u64(GDAValueFloat, math.Float64bits(float64(v.Value(i).Float32())))
	case *array.Float32:
		w.u64(GDAValueFloat, math.Float64bits(float64(v.Value(i))))
	case *array.Float64:
		w.u64(GDAValueFloat, math.Float64bits(v.Value(i)))
	case *array.String:
		w.str(v.Value(i))
	case *array.LargeString:
		w.str(v.Value(i))
	case *array.StringView:
		w.str(v.Value(i))
	case *array.Binary:
		w.bytes(GDAValueBytes, v.Value(i))
	case *array.LargeBinary:
		w.bytes(GDAValueBytes, v.Value(i))
	case *array.BinaryView:
		w.bytes(GDAValueBytes, v.Value(i))
	case *array.FixedSizeBinary:
		w.bytes(GDAValueBytes, v.Value(i))
	case *array.Decimal128:
		w.decimal(v.Value(i).BigInt(), v.DataType().(*arrow.Decimal128Type).Scale)
	case *array.Decimal256:
		w.decimal(v.Value(i).BigInt(), v.DataType().(*arrow.Decimal256Type).Scale)
	case *array.Date32:
		w.make(C.GDA_MAKE_DATE, 1)
		w.i64(int64(v.Value(i)))
	case *array.Date64:
		ms := int64(v.Value(i))
		days := ms / 86_400_000
		if ms%86_400_000 < 0 {
			days-- // floor: a date64 before 1970 names the day it falls in
		}
		w.make(C.GDA_MAKE_DATE, 1)
		w.i64(days)
	case *array.Time32:
		w.make(C.GDA_MAKE_TIME, 2)
		w.i64(int64(v.Value(i)))
		w.i64(unitCode(v.DataType().(*arrow.Time32Type).Unit))
	case *array.Time64:
		w.make(C.GDA_MAKE_TIME, 2)
		w.i64(int64(v.Value(i)))
		w.i64(unitCode(v.DataType().(*arrow.Time64Type).Unit))
	case *array.Timestamp:
		t := v.DataType().(*arrow.TimestampType)
		w.make(C.GDA_MAKE_TIMESTAMP, 3)
		w.i64(int64(v.Value(i)))
		w.i64(unitCode(t.Unit))
		if t.TimeZone == "" {
			w.tag(GDAValueNull)
		} else {
			w.str(t.TimeZone)
		}
	case *array.Duration:
		w.make(C.GDA_MAKE_DURATION, 2)
		w.i64(int64(v.Value(i)))
		w.i64(unitCode(v.DataType().(*arrow.DurationType).Unit))
	case *array.MonthInterval:
		w.i64(int64(v.Value(i)))
	case *array.DayTimeInterval:
		d := v.Value(i)
		w.make(C.GDA_MAKE_DAY_TIME, 2)
		w.i64(int64(d.Days))
		w.i64(int64(d.Milliseconds))
	case *array.MonthDayNanoInterval:
		d := v.Value(i)
		w.make(C.GDA_MAKE_MONTH_DAY_NANO, 3)
		w.i64(int64(d.Months))
		w.i64(int64(d.Days))
		w.i64(d.Nanoseconds)
	case *array.Map:
		// before ListLike: a map is a list of (key, value) tuples
		lo, hi := v.ValueOffsets(i)
		keys, items := v.Keys(), v.Items()
		entry := s.Children[0]
		w.count(GDAValueList, int(hi-lo))
		for j := int(lo); j < int(hi); j++ {
			w.count(GDAValueTuple, 2)
			if err := w.value(entry.Children[0], keys, j); err != nil {
				return err
			}
			if err := w.value(entry.Children[1], items, j); err != nil {
				return err
			}
		}
	case array.ListLike:
		lo, hi := v.ValueOffsets(i)
		values := v.ListValues()
		w.count(GDAValueList, int(hi-lo))
		for j := int(lo); j < int(hi); j++ {
			if err := w.value(s.Children[0], values, j); err != nil {
				return err
			}
		}
	case *array.Struct:
		if name, dup := duplicateName(s); dup {
			return errorf(ErrInvalid, "cannot convert a struct with two fields named %q to a dict, which would lose one (convert its fields one by one)", name)
		}
		w.count(GDAValueDict, v.NumField())
		for j := 0; j < v.NumField(); j++ {
			w.str(s.Children[j].Name)
			if err := w.value(s.Children[j], v.Field(j), i); err != nil {
				return err
			}
		}
	case *array.Dictionary:
		return w.value(s.Dictionary, v.Dictionary(), v.GetValueIndex(i))
	case *array.SparseUnion:
		child := v.ChildID(i)
		return w.value(s.Children[child], v.Field(child), i) // Arrow Go slices sparse children to the union
	case *array.DenseUnion:
		child := v.ChildID(i)
		return w.value(s.Children[child], v.Field(child), int(v.ValueOffset(i)))
	case *array.RunEndEncoded:
		return w.value(s.Children[1], v.Values(), v.GetPhysicalIndex(i))
	default:
		return errorf(ErrNotImplemented, "converting values of type %s is not supported", s)
	}
	return nil
}

// decimal appends unscaled × 10^-scale as a decimal maker call.
func (w *valueWriter) decimal(unscaled *big.Int, scale int32) {
	w.make(C.GDA_MAKE_DECIMAL, 1)
	w.str(unscaled.String() + "E" + strconv.Itoa(int(-scale)))
}

// foreign appends a value of a fixed-width type Arrow Go does not know:
// decimal32 and decimal64 ("d:P,S,32" / "d:P,S,64"); other registered
// formats as their bytes.
func (w *valueWriter) foreign(s *Schema, v *ForeignFixedWidthArray, i int) error {
	raw := v.Storage().(*array.FixedSizeBinary).Value(i)
	parts := strings.Split(strings.TrimPrefix(s.Format, "d:"), ",")
	if !strings.HasPrefix(s.Format, "d:") || len(parts) != 3 {
		w.bytes(GDAValueBytes, raw)
		return nil
	}
	scale, err := strconv.Atoi(parts[1])
	if err != nil {
		return errorf(ErrInvalid, "decimal format %q has a malformed scale", s.Format)
	}
	var unscaled int64
	switch len(raw) {
	case 4:
		unscaled = int64(int32(binary.LittleEndian.Uint32(raw)))
	case 8:
		unscaled = int64(binary.LittleEndian.Uint64(raw))
	default:
		w.bytes(GDAValueBytes, raw)
		return nil
	}
	w.decimal(big.NewInt(unscaled), int32(scale))
	return nil
}

func duplicateName(s *Schema) (string, bool) {
	seen := make(map[string]bool, len(s.Children))
	for _, c := range s.Children {
		if seen[c.Name] {
			return c.Name, true
		}
		seen[c.Name] = true
	}
	return "", false
}
