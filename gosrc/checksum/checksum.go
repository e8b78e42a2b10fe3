// Package checksum computes a content checksum of Arrow columns that a
// program in another language can reproduce exactly, to prove that two sides
// of an exchange saw the same values (the godevarrow demo does this between
// Go and Python).
//
// The checksum of a column is the CRC-32 (IEEE) of a canonical byte
// serialization of its logical values, row by row:
//   - fixed-width numbers, dates, times, timestamps, durations: the value's
//     little-endian bytes, or as many zero bytes for a null;
//   - booleans: one byte, 1 for true, 0 for false or null;
//   - strings and binaries: a 4-byte little-endian length followed by the
//     bytes, or the length 0xFFFFFFFF for a null;
//
// followed by one validity byte per row (1 valid, 0 null).
package checksum

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/godevarrow/godevarrow/gosrc/cdevice"
)

// Column returns the checksum of a column of a supported type.
func Column(col arrow.Array) (uint32, error) {
	h := crc32.NewIEEE()
	var scratch [8]byte
	n := col.Len()
	switch c := col.(type) {
	case *array.Boolean:
		for i := 0; i < n; i++ {
			b := byte(0)
			if c.IsValid(i) && c.Value(i) {
				b = 1
			}
			h.Write([]byte{b})
		}
	case *array.String:
		for i := 0; i < n; i++ {
			writeBytes(h, c.IsValid(i), []byte(c.Value(i)))
		}
	case *array.LargeString:
		for i := 0; i < n; i++ {
			writeBytes(h, c.IsValid(i), []byte(c.Value(i)))
		}
	case *array.Binary:
		for i := 0; i < n; i++ {
			writeBytes(h, c.IsValid(i), c.Value(i))
		}
	default:
		fw, ok := col.DataType().(arrow.FixedWidthDataType)
		if !ok || fw.BitWidth()%8 != 0 || col.DataType().ID() == arrow.DICTIONARY {
			return 0, fmt.Errorf("checksum: unsupported type %s", col.DataType())
		}
		width := fw.BitWidth() / 8
		values := col.Data().Buffers()[1].Bytes()[col.Data().Offset()*width:]
		zero := make([]byte, width)
		for i := 0; i < n; i++ {
			if col.IsValid(i) {
				h.Write(values[i*width : (i+1)*width])
			} else {
				h.Write(zero)
			}
		}
	}
	for i := 0; i < n; i++ {
		scratch[0] = 0
		if col.IsValid(i) {
			scratch[0] = 1
		}
		h.Write(scratch[:1])
	}
	return h.Sum32(), nil
}

func writeBytes(h interface{ Write([]byte) (int, error) }, valid bool, b []byte) {
	var l [4]byte
	if !valid {
		binary.LittleEndian.PutUint32(l[:], 0xFFFFFFFF)
		h.Write(l[:])
		return
	}
	binary.LittleEndian.PutUint32(l[:], uint32(len(b)))
	h.Write(l[:])
	h.Write(b)
}

// Batch returns the checksum of every column of a record batch (a struct
// array), after validating it fully: the checksums read every value.
func Batch(a *cdevice.Array) ([]uint32, error) {
	if err := cdevice.Validate(a, true); err != nil {
		return nil, err
	}
	rec, err := a.ToRecord()
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	sums := make([]uint32, rec.NumCols())
	for i, col := range rec.Columns() {
		if sums[i], err = Column(col); err != nil {
			return nil, fmt.Errorf("column %q: %w", rec.ColumnName(i), err)
		}
	}
	return sums, nil
}
