package cschema

/*
#cgo CFLAGS: -O2 -std=c11 -I${SRCDIR}/../include
#include "gda.h"
*/
import "C"

import (
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/godevarrow/godevarrow/gosrc/errs"
)

// Schema flags (ArrowSchema.flags).
const (
	FlagDictionaryOrdered int64 = 1
	FlagNullable          int64 = 2
	FlagMapKeysSorted     int64 = 4
	knownFlags                  = FlagDictionaryOrdered | FlagNullable | FlagMapKeysSorted
)

// Budgets for what a producer hands over; SECURITY.md lists them. Depth
// alone bounds nothing: children pointers may alias, and three levels of
// 1,000 pointers to one node walk as 10^9 nodes. So the nodes and metadata
// bytes of one schema import are counted over the whole walk (gda_schema_hash
// in cdevice.c keeps the same budgets), and an array import takes at most
// MaxImportBuffers buffers.
const (
	// MaxNesting bounds the depth of schema and array trees, so a cyclic or
	// absurdly deep tree is an error, not a stack overflow.
	MaxNesting = 256
	// maxSchemaNodes bounds the nodes of one schema tree (children and
	// dictionaries, aliased ones counted each time they are reached).
	maxSchemaNodes = 1 << 20
	// maxSchemaMetadataBytes bounds the metadata keys and values of one
	// schema tree, together.
	maxSchemaMetadataBytes = 1 << 28
	// MaxImportBuffers bounds the buffers of one array import (binary
	// views carry any number of variadic buffers).
	MaxImportBuffers = 1 << 20
)

// schemaBudget is what is left of the budgets during one schema walk.
type schemaBudget struct {
	nodes, metadataBytes int64
}

func newSchemaBudget() *schemaBudget {
	return &schemaBudget{nodes: maxSchemaNodes, metadataBytes: maxSchemaMetadataBytes}
}

// Schema is an exact, immutable copy of an ArrowSchema tree: every format
// string, name, flag and metadata byte survives a round trip unchanged, even
// where Arrow Go's type system is less expressive (non-canonical map field
// names, decimal32/64). Build one with NewSchema, SchemaFromField or ImportSchema.
type Schema struct {
	Format     string
	Name       string
	Flags      int64
	Metadata   arrow.Metadata
	Children   []*Schema
	Dictionary *Schema

	info *FormatInfo

	typeOnce sync.Once
	dtype    arrow.DataType
	dtypeErr error

	templateOnce sync.Once
	template     *C.struct_ArrowSchema
	templateErr  error
}

// NewSchema checks that the parts form a valid schema node and returns it.
func NewSchema(format, name string, flags int64, metadata arrow.Metadata, children []*Schema, dictionary *Schema) (*Schema, error) {
	s := &Schema{Format: format, Name: name, Flags: flags, Metadata: metadata, Children: children, Dictionary: dictionary}
	if err := s.check(); err != nil {
		return nil, err
	}
	return s, nil
}

var integerFormats = map[string]bool{"c": true, "C": true, "s": true, "S": true, "i": true, "I": true, "l": true, "L": true}

func (s *Schema) check() error {
	// the C Data Interface says names are UTF-8: bytes that are not would
	// fail later, as a decode error far from the import, so they are
	// refused here (ParseFormat does the same for format strings)
	if !utf8.ValidString(s.Name) {
		return errs.Errorf(errs.ErrInvalid, "the field name %q is not valid UTF-8", s.Name)
	}
	info, err := ParseFormat(s.Format)
	if err != nil {
		return err
	}
	s.info = info
	if s.Flags&^knownFlags != 0 {
		return errs.Errorf(errs.ErrInvalid, "%s: unknown flag bits 0x%x", s.Describe(), s.Flags&^knownFlags)
	}
	for _, c := range s.Children {
		if c == nil || c.info == nil {
			return errs.Errorf(errs.ErrInvalid, "%s: missing or unchecked child", s.Describe())
		}
	}
	if s.Dictionary != nil {
		if !integerFormats[s.Format] {
			return errs.Errorf(errs.ErrInvalid, "%s: dictionary-encoded field needs an integer index format, not %q", s.Describe(), s.Format)
		}
		if s.Dictionary.info == nil {
			return errs.Errorf(errs.ErrInvalid, "%s: unchecked dictionary", s.Describe())
		}
	} else if s.Flags&FlagDictionaryOrdered != 0 {
		return errs.Errorf(errs.ErrInvalid, "%s: flag DICTIONARY_ORDERED set on a field that is not dictionary-encoded", s.Describe())
	}
	if s.Flags&FlagMapKeysSorted != 0 && info.Layout != LayoutMap {
		return errs.Errorf(errs.ErrInvalid, "%s: flag MAP_KEYS_SORTED set on a field that is not a map", s.Describe())
	}
	if want := info.ChildCount(); want >= 0 && len(s.Children) != want {
		return errs.Errorf(errs.ErrInvalid, "%s: format %q needs %d children, got %d", s.Describe(), s.Format, want, len(s.Children))
	}
	switch info.Layout {
	case LayoutMap:
		e := s.Children[0]
		if e.info.Layout != LayoutStruct || len(e.Children) != 2 || e.Dictionary != nil {
			return errs.Errorf(errs.ErrInvalid, "%s: a map's child must be a struct of two fields (key, value)", s.Describe())
		}
		if e.Children[0].Flags&FlagNullable != 0 {
			return errs.Errorf(errs.ErrInvalid, "%s: map keys must not be nullable", s.Describe())
		}
	case LayoutRunEndEncoded:
		if re := s.Children[0]; re.Dictionary != nil || (re.Format != "s" && re.Format != "i" && re.Format != "l") {
			return errs.Errorf(errs.ErrInvalid, "%s: run ends must be int16, int32 or int64, not %q", s.Describe(), re.Format)
		}
	}
	return nil
}

// Describe names the field for error messages: its name, or its format.
func (s *Schema) Describe() string {
	if s.Name == "" {
		return fmt.Sprintf("field of format %q", s.Format)
	}
	return fmt.Sprintf("field %q (format %q)", s.Name, s.Format)
}

// Info returns the parsed format string.
func (s *Schema) Info() *FormatInfo { return s.info }

// IsRecordBatch reports whether arrays of this schema are record batches: a
// struct, not dictionary-encoded. The held-schema table keeps this answer for
// held imports (gda_held_is_record_batch), so it is decided here only.
func (s *Schema) IsRecordBatch() bool { return s.Format == "+s" && s.Dictionary == nil }

// Nullable reports the NULLABLE flag.
func (s *Schema) Nullable() bool { return s.Flags&FlagNullable != 0 }

// WithNullable returns s with the NULLABLE flag set (s itself if it is).
func (s *Schema) WithNullable() *Schema {
	if s.Nullable() {
		return s
	}
	c := &Schema{Format: s.Format, Name: s.Name, Flags: s.Flags | FlagNullable, Metadata: s.Metadata, Children: s.Children, Dictionary: s.Dictionary, info: s.info}
	return c
}

// Field returns the Arrow Go field this schema describes. Extension types
// stay their storage type, with the extension name and metadata kept in the
// field metadata; types Arrow Go lacks become ForeignFixedWidthType.
func (s *Schema) Field() (arrow.Field, error) {
	dt, err := s.DataType()
	if err != nil {
		return arrow.Field{}, err
	}
	return arrow.Field{Name: s.Name, Type: dt, Nullable: s.Nullable(), Metadata: s.Metadata}, nil
}

// ArrowSchema returns the Arrow Go schema of a struct-typed schema (a record batch).
func (s *Schema) ArrowSchema() (*arrow.Schema, error) {
	if s.info.Layout != LayoutStruct || s.Dictionary != nil {
		return nil, errs.Errorf(errs.ErrInvalid, "a record batch schema must be a struct, not %q", s.Format)
	}
	fields, err := s.childFields()
	if err != nil {
		return nil, err
	}
	md := s.Metadata
	return arrow.NewSchema(fields, &md), nil
}

// DataType returns the Arrow Go type of the schema (computed once).
func (s *Schema) DataType() (arrow.DataType, error) {
	s.typeOnce.Do(func() { s.dtype, s.dtypeErr = s.computeDataType() })
	return s.dtype, s.dtypeErr
}

var simpleTypes = map[string]arrow.DataType{
	"n": arrow.Null, "b": arrow.FixedWidthTypes.Boolean,
	"c": arrow.PrimitiveTypes.Int8, "C": arrow.PrimitiveTypes.Uint8,
	"s": arrow.PrimitiveTypes.Int16, "S": arrow.PrimitiveTypes.Uint16,
	"i": arrow.PrimitiveTypes.Int32, "I": arrow.PrimitiveTypes.Uint32,
	"l": arrow.PrimitiveTypes.Int64, "L": arrow.PrimitiveTypes.Uint64,
	"e": arrow.FixedWidthTypes.Float16, "f": arrow.PrimitiveTypes.Float32, "g": arrow.PrimitiveTypes.Float64,
	"z": arrow.BinaryTypes.Binary, "u": arrow.BinaryTypes.String,
	"Z": arrow.BinaryTypes.LargeBinary, "U": arrow.BinaryTypes.LargeString,
	"vz": arrow.BinaryTypes.BinaryView, "vu": arrow.BinaryTypes.StringView,
	"tdD": arrow.FixedWidthTypes.Date32, "tdm": arrow.FixedWidthTypes.Date64,
	"tts": arrow.FixedWidthTypes.Time32s, "ttm": arrow.FixedWidthTypes.Time32ms,
	"ttu": arrow.FixedWidthTypes.Time64us, "ttn": arrow.FixedWidthTypes.Time64ns,
	"tDs": arrow.FixedWidthTypes.Duration_s, "tDm": arrow.FixedWidthTypes.Duration_ms,
	"tDu": arrow.FixedWidthTypes.Duration_us, "tDn": arrow.FixedWidthTypes.Duration_ns,
	"tiM": arrow.FixedWidthTypes.MonthInterval, "tiD": arrow.FixedWidthTypes.DayTimeInterval,
	"tin": arrow.FixedWidthTypes.MonthDayNanoInterval,
}

var timeUnits = map[byte]arrow.TimeUnit{'s': arrow.Second, 'm': arrow.Millisecond, 'u': arrow.Microsecond, 'n': arrow.Nanosecond}

func (s *Schema) childFields() ([]arrow.Field, error) {
	fields := make([]arrow.Field, len(s.Children))
	for i, c := range s.Children {
		f, err := c.Field()
		if err != nil {
			return nil, err
		}
		fields[i] = f
	}
	return fields, nil
}

func (s *Schema) computeDataType() (arrow.DataType, error) {
	if s.Dictionary != nil {
		values, err := s.Dictionary.DataType()
		if err != nil {
			return nil, err
		}
		return &arrow.DictionaryType{IndexType: simpleTypes[s.Format], ValueType: values, Ordered: s.Flags&FlagDictionaryOrdered != 0}, nil
	}
	if dt, ok := simpleTypes[s.Format]; ok {
		return dt, nil
	}
	fields, err := s.childFields()
	if err != nil {
		return nil, err
	}
	f := s.Format
	switch {
	case strings.HasPrefix(f, "d:"):
		d, _ := ParseDecimal(f)
		switch d.Bits {
		case 128:
			return &arrow.Decimal128Type{Precision: int32(d.Precision), Scale: int32(d.Scale)}, nil
		case 256:
			return &arrow.Decimal256Type{Precision: int32(d.Precision), Scale: int32(d.Scale)}, nil
		}
		return NewForeignFixedWidthType(f)
	case strings.HasPrefix(f, "w:"):
		return &arrow.FixedSizeBinaryType{ByteWidth: s.info.ByteWidth}, nil
	case strings.HasPrefix(f, "ts"):
		return &arrow.TimestampType{Unit: timeUnits[f[2]], TimeZone: s.info.Params}, nil
	case f == "+l":
		return arrow.ListOfField(fields[0]), nil
	case f == "+L":
		return arrow.LargeListOfField(fields[0]), nil
	case f == "+vl":
		return arrow.ListViewOfField(fields[0]), nil
	case f == "+vL":
		return arrow.LargeListViewOfField(fields[0]), nil
	case strings.HasPrefix(f, "+w:"):
		if s.info.ListSize <= 0 || s.info.ListSize > math.MaxInt32 {
			return nil, errs.Errorf(errs.ErrNotImplemented, "%s: Arrow Go has no fixed-size list of %d values", s.Describe(), s.info.ListSize)
		}
		return arrow.FixedSizeListOfField(int32(s.info.ListSize), fields[0]), nil
	case f == "+s":
		return arrow.StructOf(fields...), nil
	case f == "+m":
		entries := fields[0].Type.(*arrow.StructType)
		m := arrow.MapOfWithMetadata(entries.Field(0).Type, entries.Field(0).Metadata, entries.Field(1).Type, entries.Field(1).Metadata)
		m.KeysSorted = s.Flags&FlagMapKeysSorted != 0
		m.SetItemNullable(entries.Field(1).Nullable)
		return m, nil
	case f == "+r":
		ree := arrow.RunEndEncodedOf(fields[0].Type, fields[1].Type)
		ree.ValueNullable = fields[1].Nullable
		return ree, nil
	case strings.HasPrefix(f, "+us:"), strings.HasPrefix(f, "+ud:"):
		codes := make([]arrow.UnionTypeCode, len(s.info.TypeCodes))
		copy(codes, s.info.TypeCodes)
		if f[2] == 's' {
			return arrow.SparseUnionOf(fields, codes), nil
		}
		return arrow.DenseUnionOf(fields, codes), nil
	}
	if info := s.info; info.Layout == LayoutFixedWidth {
		return NewForeignFixedWidthType(f)
	}
	return nil, errs.Errorf(errs.ErrNotImplemented, "%s: no Arrow Go type for format %q", s.Describe(), f)
}

// Equal reports whether two schemas are identical: formats, names, flags,
// metadata (in order), children and dictionaries.
func (s *Schema) Equal(o *Schema) bool {
	if s == o {
		return true
	}
	if s == nil || o == nil || s.Format != o.Format || s.Name != o.Name || s.Flags != o.Flags ||
		!MetadataEqual(s.Metadata, o.Metadata) || len(s.Children) != len(o.Children) ||
		(s.Dictionary == nil) != (o.Dictionary == nil) {
		return false
	}
	for i := range s.Children {
		if !s.Children[i].Equal(o.Children[i]) {
			return false
		}
	}
	return s.Dictionary == nil || s.Dictionary.Equal(o.Dictionary)
}

// EqualType reports whether two schemas describe the same physical and
// logical type, ignoring the top-level name, nullability and metadata (what
// matters when deciding whether a requested schema needs a cast).
func (s *Schema) EqualType(o *Schema) bool {
	if s.Format != o.Format || len(s.Children) != len(o.Children) || (s.Dictionary == nil) != (o.Dictionary == nil) ||
		s.Flags&^FlagNullable != o.Flags&^FlagNullable {
		return false
	}
	for i := range s.Children {
		if !s.Children[i].Equal(o.Children[i]) {
			return false
		}
	}
	return s.Dictionary == nil || s.Dictionary.Equal(o.Dictionary)
}

// MetadataEqual reports whether a and b hold the same keys and values in
// the same order.
func MetadataEqual(a, b arrow.Metadata) bool {
	if a.Len() != b.Len() {
		return false
	}
	ak, av, bk, bv := a.Keys(), a.Values(), b.Keys(), b.Values()
	for i := range ak {
		if ak[i] != bk[i] || av[i] != bv[i] {
			return false
		}
	}
	return true
}

// String renders the schema as a readable type, e.g. `a: list<item: int64>`.
func (s *Schema) String() string {
	var b strings.Builder
	s.write(&b)
	return b.String()
}

func (s *Schema) write(b *strings.Builder) {
	if s.Name != "" {
		b.WriteString(s.Name)
		b.WriteString(": ")
	}
	if dt, err := s.DataType(); err == nil {
		if ft, ok := dt.(*ForeignFixedWidthType); ok {
			b.WriteString(ft.String())
		} else if s.info.Layout == LayoutMap || s.info.Layout == LayoutStruct || s.info.ChildCount() > 0 {
			// write children ourselves so their exact names show
			b.WriteString(layoutName(s))
			b.WriteString("<")
			for i, c := range s.Children {
				if i > 0 {
					b.WriteString(", ")
				}
				c.write(b)
			}
			b.WriteString(">")
		} else {
			b.WriteString(dt.String())
		}
	} else {
		fmt.Fprintf(b, "<format %q>", s.Format)
	}
	if !s.Nullable() {
		b.WriteString(" not null")
	}
	if ext, ok := s.ExtensionName(); ok {
		fmt.Fprintf(b, " [extension %s]", ext)
	}
}

func layoutName(s *Schema) string {
	if s.Dictionary != nil {
		return "dictionary"
	}
	dt, _ := s.DataType()
	return dt.Name()
}

// ExtensionName returns the ARROW:extension:name of the field, if it has one.
func (s *Schema) ExtensionName() (string, bool) {
	i := s.Metadata.FindKey("ARROW:extension:name")
	if i < 0 {
		return "", false
	}
	return s.Metadata.Values()[i], true
}

// ---------------------------------------------------------------- import

// checkSchemaStruct refuses a NULL or released ArrowSchema.
func checkSchemaStruct(c *CArrowSchema) error {
	if c == nil {
		return errs.Errorf(errs.ErrInvalid, "ArrowSchema pointer is NULL")
	}
	if c.release == nil {
		return errs.Errorf(errs.ErrInvalid, "ArrowSchema was already released (consumed twice?)")
	}
	return nil
}

// ImportSchema copies the C schema into Go and releases it (the consumer of an
// ArrowSchema owns it). The release callback is called exactly once, also when
// the schema is invalid; a schema that was already released is an error.
func ImportSchema(c *CArrowSchema) (*Schema, error) {
	if err := checkSchemaStruct(c); err != nil {
		return nil, err
	}
	defer C.gda_call_schema_release(c)
	return readSchemaCached(c)
}

// ImportSchemaHeld is ImportSchema that also returns the schema's entry of
// the held-schema table (held.h) with a reference for the caller, or nil
// when the schema is not cached (the hash declined it, or it is over the
// cache's budget). A schema imported before costs one pass through the
// cache (a stream's import, which needs both, made three).
func ImportSchemaHeld(c *CArrowSchema) (*Schema, unsafe.Pointer, error) {
	if err := checkSchemaStruct(c); err != nil {
		return nil, nil, err
	}
	defer C.gda_call_schema_release(c)
	var hash C.uint64_t
	if e := C.gda_held_schema_find(c, &hash); e != nil {
		return HeldSchema(uintptr(C.gda_held_schema_go(e))), unsafe.Pointer(e), nil
	}
	s, err := readSchemaCached(c) // read, and cached when it can be
	if err != nil {
		return nil, nil, err
	}
	return s, unsafe.Pointer(C.gda_held_schema_find(c, &hash)), nil
}

// CopySchema copies a C schema into Go without taking ownership: the caller
// keeps the struct and releases it (used for requested schemas, which the
// consumer lends to the producer).
func CopySchema(c *CArrowSchema) (*Schema, error) {
	if err := checkSchemaStruct(c); err != nil {
		return nil, err
	}
	return readSchemaCached(c)
}

func readSchema(c *C.struct_ArrowSchema, depth int, path string, budget *schemaBudget) (*Schema, error) {
	if depth > MaxNesting {
		return nil, errs.Errorf(errs.ErrInvalid, "schema nested deeper than %d levels (cyclic?)", MaxNesting)
	}
	if budget.nodes--; budget.nodes < 0 {
		return nil, errs.Errorf(errs.ErrInvalid, "schema has more than %d nodes (children aliased many times?)", maxSchemaNodes)
	}
	if c.format == nil {
		return nil, errs.Errorf(errs.ErrInvalid, "ArrowSchema%s has a NULL format string", path)
	}
	s := &Schema{Format: C.GoString(c.format), Flags: int64(c.flags)}
	if c.name != nil {
		s.Name = C.GoString(c.name)
	}
	if depth > 0 && c.release == nil {
		return nil, errs.Errorf(errs.ErrInvalid, "ArrowSchema%s (child) is marked released", path)
	}
	md, err := decodeMetadata(c.metadata, &budget.metadataBytes)
	if err != nil {
		return nil, errs.Errorf(errs.ErrInvalid, "ArrowSchema%s: %v", path, err)
	}
	s.Metadata = md
	if c.n_children < 0 || c.n_children > 1<<20 {
		return nil, errs.Errorf(errs.ErrInvalid, "ArrowSchema%s has n_children=%d", path, int64(c.n_children))
	}
	if c.n_children > 0 {
		if c.children == nil {
			return nil, errs.Errorf(errs.ErrInvalid, "ArrowSchema%s has n_children=%d but children is NULL", path, int64(c.n_children))
		}
		kids := unsafe.Slice(c.children, c.n_children)
		s.Children = make([]*Schema, len(kids))
		for i, k := range kids {
			cp := fmt.Sprintf("%s.children[%d]", path, i)
			if k == nil {
				return nil, errs.Errorf(errs.ErrInvalid, "ArrowSchema%s is NULL", cp)
			}
			if s.Children[i], err = readSchema(k, depth+1, cp, budget); err != nil {
				return nil, err
			}
		}
	}
	if c.dictionary != nil {
		if s.Dictionary, err = readSchema(c.dictionary, depth+1, path+".dictionary", budget); err != nil {
			return nil, err
		}
	}
	if err := s.check(); err != nil {
		if path != "" {
			return nil, errs.Errorf(errs.ErrInvalid, "ArrowSchema%s: %v", path, err)
		}
		return nil, err
	}
	return s, nil
}

// metadataLimit bounds the entry count and lengths accepted from a metadata
// blob; the blob carries no total size, so absurd values mean it is corrupt.
const metadataLimit = 1 << 28

// decodeMetadata decodes a C metadata blob, taking the bytes of its keys and
// values from *left (the walk's budget).
func decodeMetadata(p *C.char, left *int64) (arrow.Metadata, error) {
	if p == nil {
		return arrow.Metadata{}, nil
	}
	// a C blob carries no size: trust it as far as the limits above allow
	return decodeMetadataFrom(func(at, n uintptr) ([]byte, bool) {
		return unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(p), at)), n), true
	}, left)
}

// DecodeMetadata decodes metadata in the C Data Interface's binary layout
// (see EncodeMetadata) from b, never reading past its end. An empty b is
// empty metadata.
func DecodeMetadata(b []byte) (arrow.Metadata, error) {
	if len(b) == 0 {
		return arrow.Metadata{}, nil
	}
	return decodeMetadataFrom(func(at, n uintptr) ([]byte, bool) {
		if at > uintptr(len(b)) || n > uintptr(len(b))-at {
			return nil, false
		}
		return b[at : at+n], true
	}, nil)
}

// decodeMetadataFrom decodes through read, which returns n bytes at offset
// at, or false when they are not there. When left is not nil, the keys and
// values are taken from that budget.
func decodeMetadataFrom(read func(at, n uintptr) ([]byte, bool), left *int64) (arrow.Metadata, error) {
	readI32 := func(at uintptr) (int32, bool) {
		b, ok := read(at, 4)
		if !ok {
			return 0, false
		}
		return int32(binary.NativeEndian.Uint32(b)), true
	}
	n, ok := readI32(0)
	if !ok {
		return arrow.Metadata{}, fmt.Errorf("metadata is shorter than its entry count")
	}
	if n < 0 || n > 1<<20 {
		return arrow.Metadata{}, fmt.Errorf("metadata declares %d entries", n)
	}
	// the budget counts the blob's bytes: length prefixes, keys and values
	take := func(bytes int64) bool {
		if left == nil {
			return true
		}
		*left -= bytes
		return *left >= 0
	}
	if !take(4 + 8*int64(n)) {
		return arrow.Metadata{}, fmt.Errorf("metadata of the schema exceeds %d bytes in all", maxSchemaMetadataBytes)
	}
	pos := uintptr(4)
	keys := make([]string, n)
	vals := make([]string, n)
	for i := int32(0); i < n; i++ {
		for _, dst := range []*string{&keys[i], &vals[i]} {
			l, ok := readI32(pos)
			if !ok {
				return arrow.Metadata{}, fmt.Errorf("metadata entry %d is cut short", i)
			}
			if l < 0 || l > metadataLimit {
				return arrow.Metadata{}, fmt.Errorf("metadata entry %d declares length %d", i, l)
			}
			if !take(int64(l)) {
				return arrow.Metadata{}, fmt.Errorf("metadata of the schema exceeds %d bytes in all", maxSchemaMetadataBytes)
			}
			pos += 4
			b, ok := read(pos, uintptr(l))
			if !ok {
				return arrow.Metadata{}, fmt.Errorf("metadata entry %d declares length %d, past the end", i, l)
			}
			*dst = string(b)
			pos += uintptr(l)
		}
	}
	return arrow.NewMetadata(keys, vals), nil
}

// EncodeMetadata writes metadata in the C Data Interface's binary layout
// (int32 count, then int32-length-prefixed keys and values, native endian);
// empty metadata encodes as nil (a NULL metadata pointer).
func EncodeMetadata(md arrow.Metadata) []byte {
	if md.Len() == 0 {
		return nil
	}
	size := 4
	for i := range md.Keys() {
		size += 8 + len(md.Keys()[i]) + len(md.Values()[i])
	}
	out := make([]byte, 0, size)
	out = binary.NativeEndian.AppendUint32(out, uint32(md.Len()))
	for i, k := range md.Keys() {
		out = binary.NativeEndian.AppendUint32(out, uint32(len(k)))
		out = append(out, k...)
		v := md.Values()[i]
		out = binary.NativeEndian.AppendUint32(out, uint32(len(v)))
		out = append(out, v...)
	}
	return out
}

// ---------------------------------------------------------------- export

// ExportSchema fills out with an independent copy of s; the consumer releases
// it. out is overwritten without being released first.
func ExportSchema(s *Schema, out *CArrowSchema) error {
	if out == nil {
		return errs.Errorf(errs.ErrInvalid, "output ArrowSchema pointer is NULL")
	}
	tmpl, err := s.cTemplate()
	if err != nil {
		return err
	}
	if C.gda_schema_copy(tmpl, out) != 0 {
		return errs.Errorf(errs.ErrNoMemory, "out of memory exporting a schema")
	}
	return nil
}

// cTemplate builds (once) a C copy of the schema that exports deep-copy with
// a single C call. The template is ours and never handed out.
func (s *Schema) cTemplate() (*C.struct_ArrowSchema, error) {
	s.templateOnce.Do(func() {
		t := (*C.struct_ArrowSchema)(C.calloc(1, C.size_t(unsafe.Sizeof(C.struct_ArrowSchema{}))))
		if t == nil {
			s.templateErr = errs.Errorf(errs.ErrNoMemory, "out of memory exporting a schema")
			return
		}
		if err := fillSchemaNode(t, s); err != nil {
			C.gda_schema_free_template(t)
			s.templateErr = err
			return
		}
		s.template = t
		runtime.SetFinalizer(s, func(s *Schema) { C.gda_schema_free_template(s.template) })
	})
	return s.template, s.templateErr
}

func fillSchemaNode(dst *C.struct_ArrowSchema, s *Schema) error {
	oom := errs.Errorf(errs.ErrNoMemory, "out of memory exporting a schema")
	if C.gda_schema_node_init(dst, C.int64_t(len(s.Children))) != 0 {
		return oom
	}
	dst.format = C.CString(s.Format)
	dst.name = C.CString(s.Name)
	dst.flags = C.int64_t(s.Flags)
	if md := EncodeMetadata(s.Metadata); md != nil {
		dst.metadata = (*C.char)(C.CBytes(md))
	}
	kids := unsafe.Slice(dst.children, len(s.Children))
	for i, c := range s.Children {
		if err := fillSchemaNode(kids[i], c); err != nil {
			return err
		}
	}
	if s.Dictionary != nil {
		dst.dictionary = (*C.struct_ArrowSchema)(C.calloc(1, C.size_t(unsafe.Sizeof(C.struct_ArrowSchema{}))))
		if dst.dictionary == nil {
			return oom
		}
		return fillSchemaNode(dst.dictionary, s.Dictionary)
	}
	return nil
}

// Child returns child i of s, or its dictionary for i == -1.
func (s *Schema) Child(i int) (*Schema, error) {
	switch {
	case i == -1 && s.Dictionary != nil:
		return s.Dictionary, nil
	case i >= 0 && i < len(s.Children):
		return s.Children[i], nil
	}
	return nil, errs.Errorf(errs.ErrInvalid, "child index %d out of range for %d children", i, len(s.Children))
}

// MetadataBlobCopy copies a metadata blob of the C Data Interface at p, in
// this package's encoding (EncodeMetadata); "" for none or a malformed one.
func MetadataBlobCopy(blob unsafe.Pointer) string {
	p := (*C.char)(blob)
	if p == nil {
		return ""
	}
	left := int64(maxSchemaMetadataBytes)
	md, err := decodeMetadata(p, &left)
	if err != nil {
		return ""
	}
	return string(EncodeMetadata(md))
}
