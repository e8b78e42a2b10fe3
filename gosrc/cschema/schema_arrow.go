package cschema

import (
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/godevarrow/godevarrow/gosrc/errs"
)

// SchemaFromField describes an Arrow Go field as a Schema. Extension types are
// written as their storage type with ARROW:extension:name/metadata metadata;
// ForeignFixedWidthType is written back as its original format string.
func SchemaFromField(f arrow.Field) (*Schema, error) {
	return schemaFromType(f.Name, f.Type, f.Nullable, f.Metadata, 0)
}

// SchemaFromArrowSchema describes an Arrow Go schema as a struct Schema (the
// schema of a record batch), keeping the schema metadata.
func SchemaFromArrowSchema(sc *arrow.Schema) (*Schema, error) {
	children := make([]*Schema, sc.NumFields())
	for i, f := range sc.Fields() {
		c, err := SchemaFromField(f)
		if err != nil {
			return nil, err
		}
		children[i] = c
	}
	return NewSchema("+s", "", 0, sc.Metadata(), children, nil)
}

var timeUnitLetters = map[arrow.TimeUnit]string{arrow.Second: "s", arrow.Millisecond: "m", arrow.Microsecond: "u", arrow.Nanosecond: "n"}

func simpleFormat(dt arrow.DataType) (string, bool) {
	switch dt.ID() {
	case arrow.NULL:
		return "n", true
	case arrow.BOOL:
		return "b", true
	case arrow.INT8:
		return "c", true
	case arrow.UINT8:
		return "C", true
	case arrow.INT16:
		return "s", true
	case arrow.UINT16:
		return "S", true
	case arrow.INT32:
		return "i", true
	case arrow.UINT32:
		return "I", true
	case arrow.INT64:
		return "l", true
	case arrow.UINT64:
		return "L", true
	case arrow.FLOAT16:
		return "e", true
	case arrow.FLOAT32:
		return "f", true
	case arrow.FLOAT64:
		return "g", true
	case arrow.BINARY:
		return "z", true
	case arrow.STRING:
		return "u", true
	case arrow.LARGE_BINARY:
		return "Z", true
	case arrow.LARGE_STRING:
		return "U", true
	case arrow.BINARY_VIEW:
		return "vz", true
	case arrow.STRING_VIEW:
		return "vu", true
	case arrow.DATE32:
		return "tdD", true
	case arrow.DATE64:
		return "tdm", true
	case arrow.TIME32:
		return "tt" + timeUnitLetters[dt.(*arrow.Time32Type).Unit], true
	case arrow.TIME64:
		return "tt" + timeUnitLetters[dt.(*arrow.Time64Type).Unit], true
	case arrow.DURATION:
		return "tD" + timeUnitLetters[dt.(*arrow.DurationType).Unit], true
	case arrow.TIMESTAMP:
		t := dt.(*arrow.TimestampType)
		return "ts" + timeUnitLetters[t.Unit] + ":" + t.TimeZone, true
	case arrow.INTERVAL_MONTHS:
		return "tiM", true
	case arrow.INTERVAL_DAY_TIME:
		return "tiD", true
	case arrow.INTERVAL_MONTH_DAY_NANO:
		return "tin", true
	case arrow.FIXED_SIZE_BINARY:
		return fmt.Sprintf("w:%d", dt.(*arrow.FixedSizeBinaryType).ByteWidth), true
	case arrow.DECIMAL128:
		t := dt.(*arrow.Decimal128Type)
		return fmt.Sprintf("d:%d,%d", t.Precision, t.Scale), true
	case arrow.DECIMAL256:
		t := dt.(*arrow.Decimal256Type)
		return fmt.Sprintf("d:%d,%d,256", t.Precision, t.Scale), true
	}
	return "", false
}

func schemaFromType(name string, dt arrow.DataType, nullable bool, md arrow.Metadata, depth int) (*Schema, error) {
	if depth > MaxNesting {
		return nil, errs.Errorf(errs.ErrInvalid, "type nested deeper than %d levels", MaxNesting)
	}
	var flags int64
	if nullable {
		flags |= FlagNullable
	}
	child := func(f arrow.Field) (*Schema, error) {
		return schemaFromType(f.Name, f.Type, f.Nullable, f.Metadata, depth+1)
	}
	children := func(fs []arrow.Field) ([]*Schema, error) {
		out := make([]*Schema, len(fs))
		for i, f := range fs {
			c, err := child(f)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	}
	if format, ok := simpleFormat(dt); ok {
		return NewSchema(format, name, flags, md, nil, nil)
	}
	switch t := dt.(type) {
	case *ForeignFixedWidthType:
		return NewSchema(t.Format, name, flags, md, nil, nil)
	case arrow.ExtensionType:
		keys := append([]string{}, md.Keys()...)
		vals := append([]string{}, md.Values()...)
		if md.FindKey("ARROW:extension:name") < 0 {
			keys = append(keys, "ARROW:extension:name", "ARROW:extension:metadata")
			vals = append(vals, t.ExtensionName(), t.Serialize())
		}
		return schemaFromType(name, t.StorageType(), nullable, arrow.NewMetadata(keys, vals), depth)
	case *arrow.DictionaryType:
		index, ok := simpleFormat(t.IndexType)
		if !ok || !integerFormats[index] {
			return nil, errs.Errorf(errs.ErrInvalid, "dictionary index type must be an integer, not %s", t.IndexType)
		}
		dict, err := schemaFromType("", t.ValueType, true, arrow.Metadata{}, depth+1)
		if err != nil {
			return nil, err
		}
		if t.Ordered {
			flags |= FlagDictionaryOrdered
		}
		return NewSchema(index, name, flags, md, nil, dict)
	case *arrow.MapType:
		entries, err := child(t.ElemField())
		if err != nil {
			return nil, err
		}
		entries.Flags &^= FlagNullable // the entries struct of a map is never null
		if t.KeysSorted {
			flags |= FlagMapKeysSorted
		}
		return NewSchema("+m", name, flags, md, []*Schema{entries}, nil)
	case *arrow.ListType:
		c, err := child(t.ElemField())
		if err != nil {
			return nil, err
		}
		return NewSchema("+l", name, flags, md, []*Schema{c}, nil)
	case *arrow.LargeListType:
		c, err := child(t.ElemField())
		if err != nil {
			return nil, err
		}
		return NewSchema("+L", name, flags, md, []*Schema{c}, nil)
	case *arrow.ListViewType:
		c, err := child(t.ElemField())
		if err != nil {
			return nil, err
		}
		return NewSchema("+vl", name, flags, md, []*Schema{c}, nil)
	case *arrow.LargeListViewType:
		c, err := child(t.ElemField())
		if err != nil {
			return nil, err
		}
		return NewSchema("+vL", name, flags, md, []*Schema{c}, nil)
	case *arrow.FixedSizeListType:
		c, err := child(t.ElemField())
		if err != nil {
			return nil, err
		}
		return NewSchema(fmt.Sprintf("+w:%d", t.Len()), name, flags, md, []*Schema{c}, nil)
	case *arrow.StructType:
		cs, err := children(t.Fields())
		if err != nil {
			return nil, err
		}
		return NewSchema("+s", name, flags, md, cs, nil)
	case arrow.UnionType:
		cs, err := children(t.Fields())
		if err != nil {
			return nil, err
		}
		mode := "s"
		if t.Mode() == arrow.DenseMode {
			mode = "d"
		}
		format := "+u" + mode + ":"
		for i, c := range t.TypeCodes() {
			if i > 0 {
				format += ","
			}
			format += fmt.Sprint(c)
		}
		return NewSchema(format, name, flags, md, cs, nil)
	case *arrow.RunEndEncodedType:
		re, err := schemaFromType("run_ends", t.RunEnds(), false, arrow.Metadata{}, depth+1)
		if err != nil {
			return nil, err
		}
		vals, err := schemaFromType("values", t.Encoded(), t.ValueNullable, arrow.Metadata{}, depth+1)
		if err != nil {
			return nil, err
		}
		return NewSchema("+r", name, flags, md, []*Schema{re, vals}, nil)
	}
	return nil, errs.Errorf(errs.ErrNotImplemented, "no Arrow format string for Arrow Go type %s", dt)
}
