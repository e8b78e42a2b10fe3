package tests_go

import (
	"encoding/binary"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/godevarrow/godevarrow/gosrc/cdevice"
	"github.com/godevarrow/godevarrow/gosrc/cschema"
	"github.com/godevarrow/godevarrow/gosrc/device"
	"github.com/godevarrow/godevarrow/gosrc/errs"
	"github.com/godevarrow/godevarrow/gosrc/values"
	cb "github.com/godevarrow/godevarrow/tests_go/cboundary"
	fc "github.com/godevarrow/godevarrow/tests_go/fakecudactl"
)

// Every physical layout the format parser knows goes through every step of
// the engine that has a case per layout: a step that forgot a layout fails
// here with the layout's name and the step's. Adding a layout is a checklist
// ("Adding an Arrow type", docs/design.md);
// this test is its net.

// layoutNames reads the Layout constants from the source file that declares
// the Layout type: their names, in the order of their values (an iota block).
// It fails when the block is not a plain iota sequence.
func layoutNames(t *testing.T) []string {
	t.Helper()
	var names []string
	root := filepath.Join("..", "gosrc")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil || !strings.Contains(string(src), "type Layout int") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, src, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			g, ok := decl.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST || len(g.Specs) == 0 {
				continue
			}
			first := g.Specs[0].(*ast.ValueSpec)
			if typ, ok := first.Type.(*ast.Ident); !ok || typ.Name != "Layout" {
				continue
			}
			for i, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				if len(vs.Names) != 1 {
					return fmt.Errorf("%s: Layout constant %d declares %d names; the test reads one per line", path, i, len(vs.Names))
				}
				if i == 0 {
					if v, ok := vs.Values[0].(*ast.Ident); !ok || v.Name != "iota" || len(vs.Values) != 1 {
						return fmt.Errorf("%s: the Layout block does not start at iota", path)
					}
				} else if len(vs.Values) != 0 || vs.Type != nil {
					return fmt.Errorf("%s: Layout constant %s has a value of its own; the test assumes an iota sequence", path, vs.Names[0].Name)
				}
				names = append(names, vs.Names[0].Name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(names) == 0 {
		t.Fatalf("no const block of type Layout under %s", root)
	}
	return names
}

func TestLayoutsListsEveryLayoutConstant(t *testing.T) {
	names := layoutNames(t)
	got := cschema.Layouts()
	if len(got) != len(names) {
		t.Fatalf("Layouts() has %d layouts, the const block %d (%v): add the new constant to Layouts()", len(got), len(names), names)
	}
	for i, l := range got {
		if int(l) != i {
			t.Errorf("Layouts()[%d] is %s (value %d), the const block's %d-th is %s", i, names[int(l)%len(names)], int(l), i, names[i])
		}
	}
}

// A sample's values, as the value encoder describes them (values.h):
// nil is null; tuple and dict are the encoder's tuples and string-keyed dicts.
type (
	tuple  []any
	dictKV struct {
		k string
		v any
	}
	dict     []dictKV
	unionVal struct {
		code int8
		v    any
	}
)

// repr writes v as the decoder of the value encoding below does.
func repr(v any) string {
	var b strings.Builder
	writeRepr(&b, v)
	return b.String()
}

func writeRepr(b *strings.Builder, v any) {
	seq := func(open, close string, items []any) {
		b.WriteString(open)
		for i, x := range items {
			if i > 0 {
				b.WriteString(", ")
			}
			writeRepr(b, x)
		}
		b.WriteString(close)
	}
	switch v := v.(type) {
	case nil:
		b.WriteString("None")
	case bool:
		if v {
			b.WriteString("True")
		} else {
			b.WriteString("False")
		}
	case int64:
		fmt.Fprintf(b, "%d", v)
	case uint64:
		fmt.Fprintf(b, "%d", v)
	case float64:
		fmt.Fprintf(b, "%g", v)
	case string:
		fmt.Fprintf(b, "%q", v)
	case []byte:
		fmt.Fprintf(b, "b%q", v)
	case []any:
		seq("[", "]", v)
	case tuple:
		seq("(", ")", v)
	case dict:
		b.WriteString("{")
		for i, kv := range v {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(b, "%q: ", kv.k)
			writeRepr(b, kv.v)
		}
		b.WriteString("}")
	case unionVal:
		writeRepr(b, v.v) // a union's value is its child's
	default:
		fmt.Fprintf(b, "<%T>", v)
	}
}

// decodeValues reads the value encoding of values.EncodeValues (values.h)
// into the tree repr writes; it fails on anything it cannot read.
func decodeValues(buf []byte) (any, error) {
	pos := 0
	var read func(depth int) (any, error)
	u64 := func() (uint64, error) {
		if len(buf)-pos < 8 {
			return 0, fmt.Errorf("truncated at byte %d", pos)
		}
		v := binary.LittleEndian.Uint64(buf[pos:])
		pos += 8
		return v, nil
	}
	items := func(depth int) ([]any, error) {
		n, err := u64()
		if err != nil || n > uint64(len(buf)) {
			return nil, fmt.Errorf("bad count at byte %d", pos)
		}
		out := make([]any, n)
		for i := range out {
			if out[i], err = read(depth + 1); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	read = func(depth int) (any, error) {
		if depth > 64 || pos >= len(buf) {
			return nil, fmt.Errorf("truncated or too deep at byte %d", pos)
		}
		tag := buf[pos]
		pos++
		switch tag {
		case values.GDAValueNull:
			return nil, nil
		case values.GDAValueFalse:
			return false, nil
		case values.GDAValueTrue:
			return true, nil
		case values.GDAValueInt:
			v, err := u64()
			return int64(v), err
		case values.GDAValueUint:
			return u64()
		case values.GDAValueFloat:
			v, err := u64()
			return math.Float64frombits(v), err
		case values.GDAValueString, values.GDAValueBytes:
			n, err := u64()
			if err != nil || n > uint64(len(buf)-pos) {
				return nil, fmt.Errorf("bad length at byte %d", pos)
			}
			b := buf[pos : pos+int(n)]
			pos += int(n)
			if tag == values.GDAValueString {
				return string(b), nil
			}
			return append([]byte(nil), b...), nil
		case values.GDAValueList:
			return items(depth)
		case values.GDAValueTuple:
			v, err := items(depth)
			return tuple(v), err
		case values.GDAValueDict:
			n, err := u64()
			if err != nil || n > uint64(len(buf)) {
				return nil, fmt.Errorf("bad dict size at byte %d", pos)
			}
			d := make(dict, n)
			for i := range d {
				k, err := read(depth + 1)
				if err != nil {
					return nil, err
				}
				key, ok := k.(string)
				if !ok {
					return nil, fmt.Errorf("dict key %v is not a string", k)
				}
				if d[i].v, err = read(depth + 1); err != nil {
					return nil, err
				}
				d[i].k = key
			}
			return d, nil
		}
		return nil, fmt.Errorf("unknown tag %q at byte %d", tag, pos-1)
	}
	v, err := read(0)
	if err == nil && pos != len(buf) {
		err = fmt.Errorf("%d bytes left over", len(buf)-pos)
	}
	return v, err
}

// appendValue appends v (the tree above) to b.
func appendValue(t *testing.T, b array.Builder, v any) {
	t.Helper()
	if u, ok := v.(unionVal); ok {
		ub := b.(array.UnionBuilder)
		typ := ub.Type().(arrow.UnionType)
		child := typ.ChildIDs()[u.code]
		switch ub := ub.(type) {
		case *array.SparseUnionBuilder:
			ub.Append(u.code)
			for i := range typ.Fields() {
				if i != child {
					ub.Child(i).AppendEmptyValue()
				}
			}
		case *array.DenseUnionBuilder:
			ub.Append(u.code)
		}
		appendValue(t, ub.Child(child), u.v)
		return
	}
	if v == nil {
		b.AppendNull() // a struct builder gives its fields a null slot too
		return
	}
	switch b := b.(type) {
	case *array.BooleanBuilder:
		b.Append(v.(bool))
	case *array.Int32Builder:
		b.Append(int32(v.(int64)))
	case *array.Int64Builder:
		b.Append(v.(int64))
	case *array.StringBuilder:
		b.Append(v.(string))
	case *array.LargeStringBuilder:
		b.Append(v.(string))
	case *array.StringViewBuilder:
		b.Append(v.(string))
	case *array.MapBuilder:
		b.Append(true)
		for _, kv := range v.([]any) {
			pair := kv.(tuple)
			appendValue(t, b.KeyBuilder(), pair[0])
			appendValue(t, b.ItemBuilder(), pair[1])
		}
	case *array.StructBuilder:
		b.Append(true)
		for i, kv := range v.(dict) {
			appendValue(t, b.FieldBuilder(i), kv.v)
		}
	case *array.FixedSizeListBuilder: // before the variable-length case, whose methods it has too
		b.Append(true)
		for _, x := range v.([]any) {
			appendValue(t, b.ValueBuilder(), x)
		}
	case array.VarLenListLikeBuilder:
		items := v.([]any)
		b.AppendWithSize(true, len(items))
		for _, x := range items {
			appendValue(t, b.ValueBuilder(), x)
		}
	default:
		t.Fatalf("appendValue: no case for %T", b)
	}
}

// layoutSample is one array of a layout: n elements, elem(i) the i-th.
type layoutSample struct {
	typ  arrow.DataType
	elem func(i int) any
	// ree builds the array itself (run-end encoded: runs, not elements)
	ree func(mem memory.Allocator) arrow.Array
	// castTo is a sibling type with the same values (nil: none exists)
	castTo arrow.DataType
	// broken is data NewArray accepts (its buffers and children are all
	// there) that full validation must refuse; nil only where a layout has
	// nothing to validate (null: no buffers, no values).
	broken     func(mem memory.Allocator) arrow.ArrayData
	brokenWhat string // what is wrong with it, for messages
}

const sampleLen = 24

func ival(i int) int64  { return int64(i*7 - 20) }
func sval(i int) string { return strings.Repeat(string(rune('a'+i%26)), 1+i%15) } // some longer than a view's 12 inline bytes
func isNull(i int) bool { return i%5 == 1 }

func nullOr(i int, v any) any {
	if isNull(i) {
		return nil
	}
	return v
}

func intList(i int) any {
	items := make([]any, i%4)
	for j := range items {
		items[j] = nullOr(i+j+1, ival(i+j))
	}
	return nullOr(i, items)
}

func bufOf(b []byte) *memory.Buffer { return memory.NewBufferBytes(b) }

func int32s(v ...int32) *memory.Buffer {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.NativeEndian.PutUint32(b[4*i:], uint32(x))
	}
	return bufOf(b)
}

func int64s(v ...int64) *memory.Buffer {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.NativeEndian.PutUint64(b[8*i:], uint64(x))
	}
	return bufOf(b)
}

// int32Data is a valid int32 array of the values given.
func int32Data(v ...int32) arrow.ArrayData {
	return array.NewData(arrow.PrimitiveTypes.Int32, len(v), []*memory.Buffer{nil, int32s(v...)}, nil, 0, 0)
}

func layoutSamples() map[cschema.Layout]layoutSample {
	i32 := arrow.PrimitiveTypes.Int32
	i64 := arrow.PrimitiveTypes.Int64
	utf8 := arrow.BinaryTypes.String
	union := []arrow.Field{{Name: "i", Type: i32, Nullable: true}, {Name: "s", Type: utf8, Nullable: true}}
	codes := []arrow.UnionTypeCode{3, 7} // not the child indices: the mapping is exercised
	unionElem := func(i int) any {
		if i%2 == 0 {
			return unionVal{3, nullOr(i, ival(i))}
		}
		return unionVal{7, nullOr(i, sval(i))}
	}
	structType := arrow.StructOf(arrow.Field{Name: "a", Type: i32, Nullable: true}, arrow.Field{Name: "b", Type: utf8, Nullable: true})
	listBroken := func(typ arrow.DataType, offsets *memory.Buffer) func(memory.Allocator) arrow.ArrayData {
		return func(memory.Allocator) arrow.ArrayData {
			return array.NewData(typ, 1, []*memory.Buffer{nil, offsets}, []arrow.ArrayData{int32Data(1, 2)}, 0, 0)
		}
	}
	listViewBroken := func(typ arrow.DataType, offsets, sizes *memory.Buffer) func(memory.Allocator) arrow.ArrayData {
		return func(memory.Allocator) arrow.ArrayData {
			return array.NewData(typ, 1, []*memory.Buffer{nil, offsets, sizes}, []arrow.ArrayData{int32Data(1, 2)}, 0, 0)
		}
	}
	binaryBroken := func(typ arrow.DataType, offsets *memory.Buffer) func(memory.Allocator) arrow.ArrayData {
		return func(memory.Allocator) arrow.ArrayData {
			return array.NewData(typ, 2, []*memory.Buffer{nil, offsets, bufOf([]byte("ab"))}, nil, 0, 0)
		}
	}
	return map[cschema.Layout]layoutSample{
		cschema.LayoutNull: {
			typ:    arrow.Null,
			elem:   func(int) any { return nil },
			castTo: i32,
		},
		cschema.LayoutBool: {
			typ:        arrow.FixedWidthTypes.Boolean,
			elem:       func(i int) any { return nullOr(i, i%3 == 0) },
			brokenWhat: "24 values in 1 byte",
			broken: func(memory.Allocator) arrow.ArrayData {
				return array.NewData(arrow.FixedWidthTypes.Boolean, 24, []*memory.Buffer{nil, bufOf([]byte{0xff})}, nil, 0, 0)
			},
		},
		cschema.LayoutFixedWidth: {
			typ:        i32,
			elem:       func(i int) any { return nullOr(i, ival(i)) },
			castTo:     i64,
			brokenWhat: "24 values in 8 bytes",
			broken: func(memory.Allocator) arrow.ArrayData {
				return array.NewData(i32, 24, []*memory.Buffer{nil, bufOf(make([]byte, 8))}, nil, 0, 0)
			},
		},
		cschema.LayoutBinary: {
			typ:        utf8,
			elem:       func(i int) any { return nullOr(i, sval(i)) },
			castTo:     arrow.BinaryTypes.LargeString,
			brokenWhat: "offsets 0, 1, 9 over 2 bytes of data",
			broken:     binaryBroken(utf8, int32s(0, 1, 9)),
		},
		cschema.LayoutLargeBinary: {
			typ:        arrow.BinaryTypes.LargeString,
			elem:       func(i int) any { return nullOr(i, sval(i)) },
			castTo:     utf8,
			brokenWhat: "offsets 0, 1, 9 over 2 bytes of data",
			broken:     binaryBroken(arrow.BinaryTypes.LargeString, int64s(0, 1, 9)),
		},
		cschema.LayoutBinaryView: {
			typ:        arrow.BinaryTypes.StringView,
			elem:       func(i int) any { return nullOr(i, sval(i)) },
			castTo:     utf8,
			brokenWhat: "a 20-byte value in data buffer 3 of 1",
			broken: func(memory.Allocator) arrow.ArrayData {
				view := make([]byte, 16)
				binary.NativeEndian.PutUint32(view, 20)
				copy(view[4:], "abcd")
				binary.NativeEndian.PutUint32(view[8:], 3)
				return array.NewData(arrow.BinaryTypes.StringView, 1, []*memory.Buffer{nil, bufOf(view), bufOf([]byte(strings.Repeat("abcd", 5)))}, nil, 0, 0)
			},
		},
		cschema.LayoutList: {
			typ:        arrow.ListOf(i32),
			elem:       intList,
			castTo:     arrow.LargeListOf(i32),
			brokenWhat: "offsets 0, 5 over a child of 2",
			broken:     listBroken(arrow.ListOf(i32), int32s(0, 5)),
		},
		cschema.LayoutLargeList: {
			typ:        arrow.LargeListOf(i32),
			elem:       intList,
			castTo:     arrow.ListOf(i32),
			brokenWhat: "offsets 0, 5 over a child of 2",
			broken:     listBroken(arrow.LargeListOf(i32), int64s(0, 5)),
		},
		cschema.LayoutListView: {
			typ:        arrow.ListViewOf(i32),
			elem:       intList,
			castTo:     arrow.ListOf(i32),
			brokenWhat: "a view of [1, 5) over a child of 2",
			broken:     listViewBroken(arrow.ListViewOf(i32), int32s(1), int32s(4)),
		},
		cschema.LayoutLargeListView: {
			typ:        arrow.LargeListViewOf(i32),
			elem:       intList,
			castTo:     arrow.LargeListOf(i32),
			brokenWhat: "a view of [1, 5) over a child of 2",
			broken:     listViewBroken(arrow.LargeListViewOf(i32), int64s(1), int64s(4)),
		},
		cschema.LayoutFixedSizeList: {
			typ: arrow.FixedSizeListOf(2, i32),
			elem: func(i int) any {
				return nullOr(i, []any{ival(i), nullOr(i+3, ival(i)+1)})
			},
			brokenWhat: "3 lists of 2 over 2 values",
			broken: func(memory.Allocator) arrow.ArrayData {
				return array.NewData(arrow.FixedSizeListOf(2, i32), 3, []*memory.Buffer{nil}, []arrow.ArrayData{int32Data(1, 2)}, 0, 0)
			},
		},
		cschema.LayoutStruct: {
			typ: structType,
			elem: func(i int) any {
				return nullOr(i, dict{{"a", nullOr(i+2, ival(i))}, {"b", sval(i)}})
			},
			castTo:     arrow.StructOf(arrow.Field{Name: "a", Type: i64, Nullable: true}, arrow.Field{Name: "b", Type: arrow.BinaryTypes.LargeString, Nullable: true}),
			brokenWhat: "3 rows over fields of 2",
			broken: func(memory.Allocator) arrow.ArrayData {
				b := array.NewData(utf8, 2, []*memory.Buffer{nil, int32s(0, 1, 2), bufOf([]byte("ab"))}, nil, 0, 0)
				return array.NewData(structType, 3, []*memory.Buffer{nil}, []arrow.ArrayData{int32Data(1, 2), b}, 0, 0)
			},
		},
		cschema.LayoutMap: {
			typ: arrow.MapOf(utf8, i32),
			elem: func(i int) any {
				entries := make([]any, i%3)
				for j := range entries {
					entries[j] = tuple{sval(i + j), nullOr(i+j+2, ival(i)+int64(j))}
				}
				return nullOr(i, entries)
			},
			// no cast: Arrow Go v17 casts no map type to another
			brokenWhat: "3 entries of 1",
			broken: func(memory.Allocator) arrow.ArrayData {
				mt := arrow.MapOf(utf8, i32)
				keys := array.NewData(utf8, 1, []*memory.Buffer{nil, int32s(0, 1), bufOf([]byte("k"))}, nil, 0, 0)
				entries := array.NewData(mt.Elem(), 1, []*memory.Buffer{nil}, []arrow.ArrayData{keys, int32Data(1)}, 0, 0)
				return array.NewData(mt, 1, []*memory.Buffer{nil, int32s(0, 3)}, []arrow.ArrayData{entries}, 0, 0)
			},
		},
		cschema.LayoutSparseUnion: {
			typ:        arrow.SparseUnionOf(union, codes),
			elem:       unionElem,
			brokenWhat: "type id 9 is not a type code",
			broken: func(memory.Allocator) arrow.ArrayData {
				s := array.NewData(utf8, 2, []*memory.Buffer{nil, int32s(0, 1, 2), bufOf([]byte("ab"))}, nil, 0, 0)
				return array.NewData(arrow.SparseUnionOf(union, codes), 2, []*memory.Buffer{nil, bufOf([]byte{3, 9})}, []arrow.ArrayData{int32Data(1, 2), s}, 0, 0)
			},
		},
		cschema.LayoutDenseUnion: {
			typ:        arrow.DenseUnionOf(union, codes),
			elem:       unionElem,
			brokenWhat: "offset 5 into a child of 1",
			broken: func(memory.Allocator) arrow.ArrayData {
				s := array.NewData(utf8, 0, []*memory.Buffer{nil, int32s(0), nil}, nil, 0, 0)
				return array.NewData(arrow.DenseUnionOf(union, codes), 1, []*memory.Buffer{nil, bufOf([]byte{3}), int32s(5)}, []arrow.ArrayData{int32Data(1), s}, 0, 0)
			},
		},
		cschema.LayoutRunEndEncoded: {
			typ:        arrow.RunEndEncodedOf(i32, utf8),
			elem:       reeElem,
			ree:        buildREE,
			castTo:     utf8,
			brokenWhat: "run ends 2 then 1",
			broken: func(memory.Allocator) arrow.ArrayData {
				vals := array.NewData(utf8, 2, []*memory.Buffer{nil, int32s(0, 1, 2), bufOf([]byte("ab"))}, nil, 0, 0)
				return array.NewData(arrow.RunEndEncodedOf(i32, utf8), 2, []*memory.Buffer{nil}, []arrow.ArrayData{int32Data(2, 1), vals}, 0, 0)
			},
		},
	}
}

// The run-end encoded sample: run k is k%3+1 elements long and holds
// sval(k), null where k%4 == 1.
func reeRun(i int) int {
	for k, end := 0, 0; ; k++ {
		if end += k%3 + 1; i < end {
			return k
		}
	}
}

func reeElem(i int) any {
	k := reeRun(i)
	if k%4 == 1 {
		return nil
	}
	return sval(k)
}

func buildREE(mem memory.Allocator) arrow.Array {
	ends := array.NewInt32Builder(mem)
	defer ends.Release()
	vals := array.NewStringBuilder(mem)
	defer vals.Release()
	for k, end := 0, 0; end < sampleLen; k++ {
		end = min(end+k%3+1, sampleLen)
		ends.Append(int32(end))
		if k%4 == 1 {
			vals.AppendNull()
		} else {
			vals.Append(sval(k))
		}
	}
	e, v := ends.NewArray(), vals.NewArray()
	defer e.Release()
	defer v.Release()
	return array.NewRunEndEncodedArray(e, v, sampleLen, 0)
}

func (s layoutSample) build(t *testing.T) (*cdevice.Array, error) {
	t.Helper()
	var arr arrow.Array
	if s.ree != nil {
		arr = s.ree(memory.DefaultAllocator)
	} else {
		b := array.NewBuilder(memory.DefaultAllocator, s.typ)
		defer b.Release()
		for i := 0; i < sampleLen; i++ {
			appendValue(t, b, s.elem(i))
		}
		arr = b.NewArray()
	}
	defer arr.Release()
	return cdevice.FromArrow(arrow.Field{Name: "sample", Type: s.typ, Nullable: true}, arr)
}

func (s layoutSample) want(lo, hi int) string {
	items := make([]any, 0, hi-lo)
	for i := lo; i < hi; i++ {
		items = append(items, s.elem(i))
	}
	return repr(items)
}

// valuesOf is the value encoding of a[lo:hi], decoded and written out.
func valuesOf(a *cdevice.Array, lo, hi int) (string, error) {
	enc, err := values.EncodeValues(a, int64(lo), int64(hi-lo))
	if err != nil {
		return "", err
	}
	v, err := decodeValues(enc)
	if err != nil {
		return "", fmt.Errorf("undecodable encoding: %v", err)
	}
	return repr(v), nil
}

// arrayCView mirrors the head of struct ArrowArray (arrow-c-abi.h).
type arrayCView struct {
	length, nullCount, offset, nBuffers, nChildren int64
}

func TestLayoutsThroughEveryStep(t *testing.T) {
	names := layoutNames(t)
	samples := layoutSamples()
	withCUDA := os.Getenv("GODEVARROW_LIBCUDA") != ""
	if withCUDA {
		fc.Require(t)
	} else {
		t.Log("GODEVARROW_LIBCUDA is unset: the host->cuda->host step does not run (make test sets it)")
	}
	for _, l := range cschema.Layouts() {
		name := names[int(l)]
		t.Run(name, func(t *testing.T) {
			s, ok := samples[l]
			if !ok {
				t.Fatalf("layout %s has no sample array in layoutSamples: add one (and a broken one)", name)
			}
			if withCUDA {
				deviceBaseline(t)
			} else {
				baseline(t)
			}
			a, err := s.build(t)
			if err != nil {
				t.Fatalf("layout %s, step schema (FromArrow: the Schema of an Arrow Go type): %v", name, err)
			}
			defer a.Release()
			r := layoutRun{t: t, name: name, s: s, a: a}
			if got := a.Schema().Info().Layout; got != l {
				t.Fatalf("layout %s: the sample's format %q parses as layout %s", name, a.Schema().Format, names[int(got)])
			}
			r.step("validate", r.validate)
			r.step("export+import", r.exportImport)
			r.step("equality", r.equality)
			r.step("values", r.values)
			r.step("copy host->host", r.copyHost)
			r.step("cast", r.cast)
			r.step("held gate", r.heldGate)
			if withCUDA {
				r.step("copy host->cuda->host", r.copyCUDA)
			}
		})
	}
}

type layoutRun struct {
	t    *testing.T
	name string
	s    layoutSample
	a    *cdevice.Array
}

func (r *layoutRun) step(step string, f func() error) {
	if err := f(); err != nil {
		r.t.Errorf("layout %s, step %s: %v", r.name, step, err)
	}
}

// same says how b differs from the sample (nil: equal values and type).
func (r *layoutRun) same(b *cdevice.Array, what string) error {
	eq, err := cdevice.Equal(r.a, b, false)
	if err != nil {
		return fmt.Errorf("%s: Equal: %v", what, err)
	}
	if !eq {
		got, _ := valuesOf(b, 0, b.Len())
		return fmt.Errorf("%s differs from the sample: got %s, want %s", what, got, r.s.want(0, sampleLen))
	}
	return nil
}

func (r *layoutRun) validate() error {
	if err := cdevice.Validate(r.a, true); err != nil {
		return fmt.Errorf("the valid sample fails: %v", err)
	}
	if r.s.broken == nil {
		if r.name != "LayoutNull" {
			return errors.New("no broken sample: every layout with buffers needs one that full validation refuses")
		}
		return nil
	}
	sc, err := cschema.SchemaFromField(arrow.Field{Name: "broken", Type: r.s.typ, Nullable: true})
	if err != nil {
		return err
	}
	data := r.s.broken(memory.DefaultAllocator)
	defer data.Release()
	bad, err := cdevice.NewArray(sc, data, device.Host)
	if err != nil {
		return fmt.Errorf("the broken sample is refused before validation (fix the sample): %v", err)
	}
	defer bad.Release()
	if err := cdevice.Validate(bad, true); !errors.Is(err, errs.ErrInvalid) {
		return fmt.Errorf("full validation of a broken sample (%s) gave %v, want ErrInvalid", r.s.brokenWhat, err)
	}
	return nil
}

func (r *layoutRun) exportImport() error {
	for _, view := range [][2]int64{{0, sampleLen}, {3, 13}} {
		part, err := r.a.Slice(view[0], view[1])
		if err != nil {
			return err
		}
		back, err := roundTrip(part, true)
		if err == nil {
			err = func() error {
				defer back.Release()
				if !back.Schema().Equal(part.Schema()) {
					return fmt.Errorf("slice %v: schema %s came back as %s", view, part.Schema(), back.Schema())
				}
				if err := cdevice.Validate(back, true); err != nil {
					return fmt.Errorf("slice %v: the import fails full validation: %v", view, err)
				}
				eq, err := cdevice.Equal(part, back, true)
				if err != nil || !eq {
					return fmt.Errorf("slice %v: the import differs (%v)", view, err)
				}
				return nil
			}()
		}
		part.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

func (r *layoutRun) equality() error {
	same, err := r.a.Share()
	if err != nil {
		return err
	}
	defer same.Release()
	if err := r.same(same, "a share"); err != nil {
		return err
	}
	head, _ := r.a.Slice(0, sampleLen-1)
	defer head.Release()
	tail, _ := r.a.Slice(1, sampleLen-1)
	defer tail.Release()
	if eq, err := cdevice.Equal(r.a, head, false); err != nil || eq {
		return fmt.Errorf("arrays of %d and %d elements compare equal (%v)", sampleLen, sampleLen-1, err)
	}
	if r.s.typ.ID() == arrow.NULL {
		return nil // every null array of a length holds the same values
	}
	if eq, err := cdevice.Equal(head, tail, false); err != nil || eq {
		return fmt.Errorf("the sample's [0, %d) and [1, %d) compare equal (%v)", sampleLen-1, sampleLen, err)
	}
	return nil
}

func (r *layoutRun) values() error {
	for _, view := range [][2]int{{0, sampleLen}, {3, 13}, {sampleLen, sampleLen}} {
		got, err := valuesOf(r.a, view[0], view[1])
		if err != nil {
			return fmt.Errorf("values [%d, %d): %v", view[0], view[1], err)
		}
		if want := r.s.want(view[0], view[1]); got != want {
			return fmt.Errorf("values [%d, %d):\n got %s\nwant %s", view[0], view[1], got, want)
		}
	}
	return nil
}

// topBytes is the size of a's own buffers (not its children's).
func topBytes(a *cdevice.Array) int {
	n := 0
	for _, b := range a.Data().Buffers() {
		if b != nil {
			n += b.Len()
		}
	}
	return n
}

func (r *layoutRun) copyHost() error {
	c, err := cdevice.Copy(r.a)
	if err != nil {
		return err
	}
	defer c.Release()
	if err := r.same(c, "the copy"); err != nil {
		return err
	}
	// a slice is copied without the values before it (copyPlan): a copy of
	// one element holds less of the array's own buffers than the whole
	one, _ := r.a.Slice(17, 1)
	defer one.Release()
	oc, err := cdevice.Copy(one)
	if err != nil {
		return err
	}
	defer oc.Release()
	if eq, err := cdevice.Equal(one, oc, false); err != nil || !eq {
		return fmt.Errorf("the copy of the slice [17, 18) differs (%v)", err)
	}
	if whole := topBytes(r.a); whole > 0 && topBytes(oc) >= whole {
		return fmt.Errorf("the copy of the slice [17, 18) holds %d bytes of its own buffers, the whole array %d: the copy plan has no case for this layout", topBytes(oc), whole)
	}
	return nil
}

func (r *layoutRun) copyCUDA() error {
	d0, err := cdevice.CopyToDevice(r.a, cuda0)
	if err != nil {
		return fmt.Errorf("to cuda:0: %v", err)
	}
	defer d0.Release()
	if err := r.same(d0, "the array on cuda:0"); err != nil {
		return err
	}
	host, err := cdevice.CopyToDevice(d0, device.Host)
	if err != nil {
		return fmt.Errorf("back to the host: %v", err)
	}
	defer host.Release()
	if err := cdevice.Validate(host, true); err != nil {
		return fmt.Errorf("back on the host, full validation: %v", err)
	}
	if err := r.same(host, "the array back from cuda:0"); err != nil {
		return err
	}
	// the Go import of device memory (which fetches the offsets it checks
	// from the device first), then the held path: taken or not, the same array
	imported, err := roundTrip(d0, false)
	if err != nil {
		return fmt.Errorf("cuda:0 array: %v", err)
	}
	defer imported.Release()
	if imported.Device() != cuda0 {
		return fmt.Errorf("the cuda:0 array was imported on %s", imported.Device())
	}
	if err := r.same(imported, "the cuda:0 array exported and imported"); err != nil {
		return err
	}
	back, held, err := heldPair(d0)
	if err != nil {
		return err
	}
	defer back.Release()
	r.t.Logf("layout %s: the held gate takes the cuda:0 sample: %v", r.name, held)
	if err := r.same(back, fmt.Sprintf("the cuda:0 array imported again (held %v)", held)); err != nil {
		return err
	}
	return nil
}

func (r *layoutRun) cast() error {
	self, err := cdevice.Cast(r.a, r.a.Schema())
	if err != nil {
		return fmt.Errorf("to its own schema: %v", err)
	}
	self.Release()
	if self != r.a {
		return errors.New("a cast to the array's own schema must return the array itself")
	}
	// the same type under another name: a relabel of the same buffers
	renamed, err := cschema.SchemaFromField(arrow.Field{Name: "renamed", Type: r.s.typ, Nullable: true})
	if err != nil {
		return err
	}
	if err := r.castTo(renamed, renamed); err != nil {
		return fmt.Errorf("relabel: %v", err)
	}
	if r.s.castTo == nil {
		return nil
	}
	sibling, err := cschema.SchemaFromField(arrow.Field{Name: "sample", Type: r.s.castTo, Nullable: true})
	if err != nil {
		return err
	}
	return r.castTo(sibling, nil)
}

// castTo casts the sample to target, which must give the schema want (nil:
// target, or the sample's own where no cast can produce another encoding of
// the same values) and the sample's values.
func (r *layoutRun) castTo(target, want *cschema.Schema) error {
	c, err := cdevice.Cast(r.a, target)
	if err != nil {
		return fmt.Errorf("to %s: %v", target, err)
	}
	defer c.Release()
	if want != nil && !c.Schema().Equal(want) || want == nil && !c.Schema().Equal(target) && !c.Schema().EqualType(r.a.Schema()) {
		return fmt.Errorf("to %s gave %s", target, c.Schema())
	}
	if err := cdevice.Validate(c, true); err != nil {
		return fmt.Errorf("to %s: the result fails full validation: %v", target, err)
	}
	r.t.Logf("layout %s: cast to %s gave %s", r.name, target, c.Schema())
	got, err := valuesOf(c, 0, c.Len())
	if err != nil {
		return fmt.Errorf("to %s: values: %v", target, err)
	}
	if want := r.s.want(0, sampleLen); got != want {
		return fmt.Errorf("to %s:\n got %s\nwant %s", target, got, want)
	}
	return nil
}

// heldGate holds the C gate of held imports to the Go import: it may take
// an array or leave it to Go, but what it takes Go must accept too (and read
// the same), and what Go refuses it must not take.
func (r *layoutRun) heldGate() error {
	check := func(a *cdevice.Array, what string, mutate func(*arrayCView)) error {
		s, c := cb.NewSchema(), cb.NewArray()
		defer cb.Free(s)
		defer cb.Free(c)
		if err := cschema.ExportSchema(a.Schema(), s); err != nil {
			return err
		}
		if err := cdevice.ExportArray(a, c); err != nil {
			return err
		}
		if mutate != nil {
			mutate((*arrayCView)(unsafe.Pointer(c)))
		}
		if _, err := cschema.CopySchema(s); err != nil { // into the held-schema table
			return err
		}
		accepted := cdevice.HeldImportAccepts(s, c)
		schema, err := cschema.ImportSchema(s)
		if err != nil {
			return err
		}
		imported, err := cdevice.ImportArray(c, schema)
		if err != nil {
			if accepted {
				return fmt.Errorf("%s: the gate takes what the Go import refuses (%v)", what, err)
			}
			return nil
		}
		defer imported.Release()
		if mutate != nil {
			return fmt.Errorf("%s: the Go import accepts a malformed array (gate: %v)", what, accepted)
		}
		if eq, err := cdevice.Equal(a, imported, true); err != nil || !eq {
			return fmt.Errorf("%s: the Go import differs (%v)", what, err)
		}
		return nil
	}
	if err := check(r.a, "the sample", nil); err != nil {
		return err
	}
	wrongBuffers := func(v *arrayCView) {
		if r.s.typ.ID() == arrow.STRING_VIEW || r.s.typ.ID() == arrow.BINARY_VIEW {
			v.nBuffers = 2 // fewer than a view array's minimum
		} else {
			v.nBuffers++ // never read: the count is checked first
		}
	}
	if err := check(r.a, "n_buffers off by one", wrongBuffers); err != nil {
		return err
	}
	if err := check(r.a, "a negative length", func(v *arrayCView) { v.length = -1 }); err != nil {
		return err
	}
	// the held import itself, where the gate takes the array
	back, held, err := heldPair(r.a)
	if err != nil {
		return err
	}
	defer back.Release()
	r.t.Logf("layout %s: the held gate takes the sample: %v", r.name, held)
	return r.same(back, fmt.Sprintf("the CPU held import (held %v)", held))
}

// roundTrip is exportImport (boundary_test.go) returning its failure: Go
// exports a, C walks the tree (with walk: host memory only), Go imports it
// back with ImportDeviceArray (never the held path).
func roundTrip(a *cdevice.Array, walk bool) (*cdevice.Array, error) {
	s, d := cb.NewSchema(), cb.NewDeviceArray()
	defer cb.Free(s)
	defer cb.Free(d)
	if err := cschema.ExportSchema(a.Schema(), s); err != nil {
		return nil, fmt.Errorf("export schema: %v", err)
	}
	if err := cdevice.ExportDeviceArray(a, d); err != nil {
		cb.ReleaseSchema(s)
		return nil, fmt.Errorf("export: %v", err)
	}
	if walk {
		if n, why := cb.Walk(s, d); n < 0 {
			cb.ReleaseSchema(s)
			cb.ReleaseArray(cdevice.ArrayAt(unsafe.Pointer(d)))
			return nil, fmt.Errorf("a C consumer rejects the export: %s", why)
		}
	}
	schema, err := cschema.ImportSchema(s)
	if err != nil {
		cb.ReleaseArray(cdevice.ArrayAt(unsafe.Pointer(d)))
		return nil, fmt.Errorf("import schema: %v", err)
	}
	back, err := cdevice.ImportDeviceArray(d, schema)
	if err != nil {
		return nil, fmt.Errorf("import: %v", err)
	}
	return back, nil
}

// heldPair is importDevicePair (cuda_held_test.go) returning its failure:
// a (on any device) imported twice through ImportDevicePair, the second time
// held whenever the gate takes it; it returns the second import as an Array
// and whether it was held.
func heldPair(a *cdevice.Array) (*cdevice.Array, bool, error) {
	var back *cdevice.Array
	var held unsafe.Pointer
	drop := func() {
		if back != nil {
			back.Release()
		}
		if held != nil {
			cdevice.ReleaseHeld(held)
		}
		back, held = nil, nil
	}
	for round := 0; round < 2; round++ {
		var cs cschema.CArrowSchema
		var ca cdevice.CArrowDeviceArray
		if err := cschema.ExportSchema(a.Schema(), &cs); err != nil {
			drop()
			return nil, false, err
		}
		if err := cdevice.ExportDeviceArray(a, &ca); err != nil {
			cb.ReleaseSchema(&cs)
			drop()
			return nil, false, err
		}
		h, got, err := cdevice.ImportDevicePair(&cs, &ca)
		drop()
		if err != nil {
			return nil, false, fmt.Errorf("ImportDevicePair (round %d): %v", round, err)
		}
		back, held = got, h
	}
	if held == nil {
		return back, false, nil
	}
	got, err := cdevice.ImportHeld(held)
	cdevice.ReleaseHeld(held)
	if err != nil {
		return nil, true, fmt.Errorf("building the held import: %v", err)
	}
	return got, true, nil
}
