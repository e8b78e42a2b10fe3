package cschema

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/godevarrow/godevarrow/gosrc/errs"
)

// Layout is the physical layout family of a format string: it decides how
// many buffers an array of the type has and how their sizes are computed.
type Layout int

// Physical layouts. Every Arrow format string maps to exactly one.
const (
	LayoutNull          Layout = iota // no buffers
	LayoutBool                        // validity, bit-packed values
	LayoutFixedWidth                  // validity, values of FormatInfo.ByteWidth bytes
	LayoutBinary                      // validity, int32 offsets, data
	LayoutLargeBinary                 // validity, int64 offsets, data
	LayoutBinaryView                  // validity, 16-byte views, variadic data..., variadic sizes
	LayoutList                        // validity, int32 offsets; one child
	LayoutLargeList                   // validity, int64 offsets; one child
	LayoutListView                    // validity, int32 offsets, int32 sizes; one child
	LayoutLargeListView               // validity, int64 offsets, int64 sizes; one child
	LayoutFixedSizeList               // validity; one child of length*ListSize
	LayoutStruct                      // validity; any number of children
	LayoutMap                         // like LayoutList, child is a 2-field struct
	LayoutSparseUnion                 // type ids; one child per type code
	LayoutDenseUnion                  // type ids, int32 offsets; one child per type code
	LayoutRunEndEncoded               // no buffers; children run_ends and values
)

// Layouts returns every Layout, in the order of their constants: the list
// that tests walk to check that each step (import, validation, export, copy,
// cast, equality, the value encoder, the held gate) knows every layout. A new
// constant goes here too; tests_go/layouts_test.go compares this list with
// the const block above.
func Layouts() []Layout {
	return []Layout{
		LayoutNull, LayoutBool, LayoutFixedWidth, LayoutBinary, LayoutLargeBinary,
		LayoutBinaryView, LayoutList, LayoutLargeList, LayoutListView, LayoutLargeListView,
		LayoutFixedSizeList, LayoutStruct, LayoutMap, LayoutSparseUnion, LayoutDenseUnion,
		LayoutRunEndEncoded,
	}
}

// FormatInfo is a parsed Arrow format string.
type FormatInfo struct {
	Layout    Layout
	ByteWidth int    // LayoutFixedWidth: bytes per value
	ListSize  int    // LayoutFixedSizeList: values per list
	TypeCodes []int8 // unions: the type code of each child
	Utf8      bool   // LayoutBinary, LayoutLargeBinary, LayoutBinaryView: values must be UTF-8
	// Params holds the parameters after ':' for parametric formats
	// (decimal precision/scale/width, timestamp time zone, ...).
	Params string
}

// ChildCount returns the number of children the layout requires, or -1 when
// any number is allowed (struct) or it depends on the type codes (union).
func (f *FormatInfo) ChildCount() int {
	switch f.Layout {
	case LayoutList, LayoutLargeList, LayoutListView, LayoutLargeListView, LayoutFixedSizeList, LayoutMap:
		return 1
	case LayoutRunEndEncoded:
		return 2
	case LayoutSparseUnion, LayoutDenseUnion:
		return len(f.TypeCodes)
	case LayoutStruct:
		return -1
	}
	return 0
}

// BufferCount returns the number of buffers of the C struct (ArrowArray.n_buffers)
// for arrays of this layout; for binary views it is the minimum (no variadic buffers).
func (f *FormatInfo) BufferCount() int {
	switch f.Layout {
	case LayoutNull, LayoutRunEndEncoded:
		return 0
	case LayoutStruct, LayoutFixedSizeList, LayoutSparseUnion:
		return 1
	case LayoutBool, LayoutFixedWidth, LayoutList, LayoutLargeList, LayoutMap, LayoutDenseUnion:
		return 2
	case LayoutBinary, LayoutLargeBinary, LayoutListView, LayoutLargeListView, LayoutBinaryView:
		return 3
	}
	return 0
}

// HasValidity reports whether buffer 0 is a validity bitmap.
func (f *FormatInfo) HasValidity() bool {
	switch f.Layout {
	case LayoutNull, LayoutSparseUnion, LayoutDenseUnion, LayoutRunEndEncoded:
		return false
	}
	return true
}

var fixedWidthFormats = map[string]int{
	"c": 1, "C": 1, "s": 2, "S": 2, "i": 4, "I": 4, "l": 8, "L": 8,
	"e": 2, "f": 4, "g": 8,
	"tdD": 4, "tdm": 8, "tts": 4, "ttm": 4, "ttu": 8, "ttn": 8,
	"tDs": 8, "tDm": 8, "tDu": 8, "tDn": 8,
	"tiM": 4, "tiD": 8, "tin": 16,
}

// FixedWidthFormat describes a fixed-layout type by its format string. It lets
// godevarrow carry types that Arrow Go does not know (decimal32 and decimal64
// today, future fixed-width types tomorrow) through every protocol: their
// arrays are moved buffer for buffer and seen from Go as fixed-size binary.
type FixedWidthFormat struct {
	// Name is a short type name used in messages, e.g. "decimal32".
	Name string
	// ByteWidth returns the width of one value for a format string this
	// description accepts, and false for format strings it does not.
	ByteWidth func(format string) (int, bool)
}

var (
	fixedWidthRegistryMu sync.RWMutex
	fixedWidthRegistry   []FixedWidthFormat
)

// RegisterFixedWidthFormat teaches the format parser a fixed-layout type that
// it would otherwise reject. Registrations are process-wide; the built-in
// decimal32 and decimal64 are registered this way.
func RegisterFixedWidthFormat(f FixedWidthFormat) {
	fixedWidthRegistryMu.Lock()
	defer fixedWidthRegistryMu.Unlock()
	fixedWidthRegistry = append(fixedWidthRegistry, f)
}

func lookupFixedWidthFormat(format string) (FixedWidthFormat, int, bool) {
	fixedWidthRegistryMu.RLock()
	defer fixedWidthRegistryMu.RUnlock()
	for _, f := range fixedWidthRegistry {
		if w, ok := f.ByteWidth(format); ok {
			return f, w, true
		}
	}
	return FixedWidthFormat{}, 0, false
}

func init() {
	for _, bits := range []int{32, 64} {
		bits := bits
		RegisterFixedWidthFormat(FixedWidthFormat{
			Name: fmt.Sprintf("decimal%d", bits),
			ByteWidth: func(format string) (int, bool) {
				p, ok := ParseDecimal(format)
				if !ok || p.Bits != bits {
					return 0, false
				}
				return bits / 8, true
			},
		})
	}
}

// DecimalParams are the parameters of a decimal format "d:precision,scale[,bits]".
type DecimalParams struct{ Precision, Scale, Bits int }

// maxDecimalPrecision is the largest precision of each decimal bit width.
var maxDecimalPrecision = map[int]int{32: 9, 64: 18, 128: 38, 256: 76}

// parseInt32 reads a decimal integer that Arrow stores as an int32 (decimal
// precision and scale, fixed-size widths and list sizes): a wider value is
// refused, never truncated.
func parseInt32(s string) (int, bool) {
	v, err := strconv.ParseInt(s, 10, 32)
	return int(v), err == nil
}

// ParseDecimal reads "d:P,S" and "d:P,S,N".
func ParseDecimal(format string) (DecimalParams, bool) {
	d, why := parseDecimalWhy(format)
	return d, why == ""
}

// parseDecimalWhy is ParseDecimal saying why a "d:" format is refused ("" when
// it is not).
func parseDecimalWhy(format string) (DecimalParams, string) {
	rest, ok := strings.CutPrefix(format, "d:")
	if !ok {
		return DecimalParams{}, "not a decimal"
	}
	const syntax = "decimal needs d:precision,scale[,bitwidth]"
	parts := strings.Split(rest, ",")
	if len(parts) != 2 && len(parts) != 3 {
		return DecimalParams{}, syntax
	}
	var vals [3]int
	vals[2] = 128
	for i, p := range parts {
		v, ok := parseInt32(p)
		if !ok {
			if _, err := strconv.ParseInt(p, 10, 64); err == nil || errors.Is(err, strconv.ErrRange) {
				return DecimalParams{}, fmt.Sprintf("decimal %s %s is outside the int32 range", [3]string{"precision", "scale", "bit width"}[i], p)
			}
			return DecimalParams{}, syntax
		}
		vals[i] = v
	}
	d := DecimalParams{Precision: vals[0], Scale: vals[1], Bits: vals[2]}
	limit, ok := maxDecimalPrecision[d.Bits]
	if !ok {
		return DecimalParams{}, fmt.Sprintf("decimal bit width %d is not 32, 64, 128 or 256", d.Bits)
	}
	if d.Precision < 1 || d.Precision > limit {
		return DecimalParams{}, fmt.Sprintf("decimal%d precision %d is outside 1..%d", d.Bits, d.Precision, limit)
	}
	return d, ""
}

// ParseFormat parses an Arrow C Data Interface format string. It returns an
// error wrapping errs.ErrInvalid for malformed or unknown format strings.
func ParseFormat(format string) (*FormatInfo, error) {
	if w, ok := fixedWidthFormats[format]; ok {
		return &FormatInfo{Layout: LayoutFixedWidth, ByteWidth: w}, nil
	}
	bad := func(why string) (*FormatInfo, error) {
		return nil, errs.Errorf(errs.ErrInvalid, "invalid format string %q: %s", format, why)
	}
	if !utf8.ValidString(format) {
		// format strings carry text (time zones), which is UTF-8
		return nil, errs.Errorf(errs.ErrInvalid, "the format string %q is not valid UTF-8", format)
	}
	switch format {
	case "":
		return bad("empty")
	case "n":
		return &FormatInfo{Layout: LayoutNull}, nil
	case "b":
		return &FormatInfo{Layout: LayoutBool}, nil
	case "z":
		return &FormatInfo{Layout: LayoutBinary}, nil
	case "u":
		return &FormatInfo{Layout: LayoutBinary, Utf8: true}, nil
	case "Z":
		return &FormatInfo{Layout: LayoutLargeBinary}, nil
	case "U":
		return &FormatInfo{Layout: LayoutLargeBinary, Utf8: true}, nil
	case "vz":
		return &FormatInfo{Layout: LayoutBinaryView}, nil
	case "vu":
		return &FormatInfo{Layout: LayoutBinaryView, Utf8: true}, nil
	case "+l":
		return &FormatInfo{Layout: LayoutList}, nil
	case "+L":
		return &FormatInfo{Layout: LayoutLargeList}, nil
	case "+vl":
		return &FormatInfo{Layout: LayoutListView}, nil
	case "+vL":
		return &FormatInfo{Layout: LayoutLargeListView}, nil
	case "+s":
		return &FormatInfo{Layout: LayoutStruct}, nil
	case "+m":
		return &FormatInfo{Layout: LayoutMap}, nil
	case "+r":
		return &FormatInfo{Layout: LayoutRunEndEncoded}, nil
	}
	if strings.HasPrefix(format, "d:") {
		d, why := parseDecimalWhy(format)
		if why != "" {
			return bad(why)
		}
		if d.Bits == 128 || d.Bits == 256 {
			return &FormatInfo{Layout: LayoutFixedWidth, ByteWidth: d.Bits / 8, Params: format[2:]}, nil
		}
	}
	if _, w, ok := lookupFixedWidthFormat(format); ok {
		if w <= 0 {
			return bad("registered fixed-width format has a non-positive width")
		}
		return &FormatInfo{Layout: LayoutFixedWidth, ByteWidth: w, Params: format}, nil
	}
	if rest, ok := strings.CutPrefix(format, "w:"); ok {
		w, ok := parseInt32(rest)
		if !ok || w < 0 {
			return bad("fixed-size binary needs w:N with 0 <= N < 2^31")
		}
		return &FormatInfo{Layout: LayoutFixedWidth, ByteWidth: w, Params: rest}, nil
	}
	if rest, ok := strings.CutPrefix(format, "+w:"); ok {
		n, ok := parseInt32(rest)
		if !ok || n < 0 {
			return bad("fixed-size list needs +w:N with 0 <= N < 2^31")
		}
		return &FormatInfo{Layout: LayoutFixedSizeList, ListSize: n, Params: rest}, nil
	}
	if len(format) >= 4 && format[:2] == "ts" && format[3] == ':' && strings.ContainsRune("smun", rune(format[2])) {
		return &FormatInfo{Layout: LayoutFixedWidth, ByteWidth: 8, Params: format[4:]}, nil
	}
	if strings.HasPrefix(format, "+ud:") || strings.HasPrefix(format, "+us:") {
		info := &FormatInfo{Layout: LayoutSparseUnion, Params: format[4:]}
		if format[2] == 'd' {
			info.Layout = LayoutDenseUnion
		}
		if format[4:] != "" {
			seen := map[int8]bool{}
			for _, c := range strings.Split(format[4:], ",") {
				v, err := strconv.Atoi(c)
				if err != nil || v < 0 || v > 127 {
					return bad("union type codes must be integers in 0..127")
				}
				if seen[int8(v)] {
					return bad(fmt.Sprintf("union type code %d appears twice", v))
				}
				seen[int8(v)] = true
				info.TypeCodes = append(info.TypeCodes, int8(v))
			}
		}
		return info, nil
	}
	return bad("unknown format")
}
