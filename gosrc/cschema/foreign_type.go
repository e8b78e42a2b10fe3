package cschema

import (
	"fmt"
	"reflect"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/godevarrow/godevarrow/gosrc/errs"
)

// ForeignFixedWidthType is how Go sees a fixed-layout type that Arrow Go does
// not know (decimal32, decimal64, or a type taught with
// RegisterFixedWidthFormat): an extension type over fixed-size binary of the
// same width, so Arrow Go can slice, compare and hold its arrays. On export
// godevarrow writes the original format string back, never extension metadata.
type ForeignFixedWidthType struct {
	arrow.ExtensionBase
	// Format is the original Arrow format string, e.g. "d:9,2,32".
	Format string
	// TypeName is the registered name of the type, e.g. "decimal32".
	TypeName string
}

// NewForeignFixedWidthType returns the Go view of a registered fixed-width format.
func NewForeignFixedWidthType(format string) (*ForeignFixedWidthType, error) {
	f, width, ok := lookupFixedWidthFormat(format)
	if !ok {
		return nil, errs.Errorf(errs.ErrInvalid, "format %q is not a registered fixed-width format", format)
	}
	return &ForeignFixedWidthType{
		ExtensionBase: arrow.ExtensionBase{Storage: &arrow.FixedSizeBinaryType{ByteWidth: width}},
		Format:        format,
		TypeName:      f.Name,
	}, nil
}

// ForeignFixedWidthArray is the Arrow Go array type of ForeignFixedWidthType.
type ForeignFixedWidthArray struct {
	array.ExtensionArrayBase
}

func (t *ForeignFixedWidthType) ArrayType() reflect.Type {
	return reflect.TypeOf(ForeignFixedWidthArray{})
}

// ExtensionName is the godevarrow-internal name; it never reaches a C struct.
func (t *ForeignFixedWidthType) ExtensionName() string { return "godevarrow.fixed_width:" + t.Format }

func (t *ForeignFixedWidthType) ExtensionEquals(other arrow.ExtensionType) bool {
	o, ok := other.(*ForeignFixedWidthType)
	return ok && o.Format == t.Format
}

func (t *ForeignFixedWidthType) Serialize() string { return t.Format }

func (t *ForeignFixedWidthType) Deserialize(storage arrow.DataType, data string) (arrow.ExtensionType, error) {
	return NewForeignFixedWidthType(data)
}

func (t *ForeignFixedWidthType) String() string {
	return fmt.Sprintf("%s<%s>", t.TypeName, t.Format)
}
