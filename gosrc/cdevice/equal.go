package cdevice

import (
	"github.com/apache/arrow/go/v17/arrow"
	"github.com/godevarrow/godevarrow/gosrc/cschema"
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
	x, err := HostArrowOf(a)
	if err != nil {
		return false, err
	}
	defer x.Release()
	y, err := HostArrowOf(b)
	if err != nil {
		return false, err
	}
	defer y.Release()
	return dataEqual(x.Arr.Data(), 0, y.Arr.Data(), 0, a.Len()), nil
}

// sameType compares two schemas as types: the top node's name and
// nullability are the array's, not its type's, and are ignored.
func sameType(s, o *cschema.Schema, checkMetadata, top bool) bool {
	if s.Format != o.Format || len(s.Children) != len(o.Children) || (s.Dictionary == nil) != (o.Dictionary == nil) {
		return false
	}
	if !top && (s.Name != o.Name || s.Nullable() != o.Nullable()) {
		return false
	}
	if s.Flags&^cschema.FlagNullable != o.Flags&^cschema.FlagNullable {
		return false
	}
	if checkMetadata && !cschema.MetadataEqual(s.Metadata, o.Metadata) {
		return false
	}
	// extension types are types: their names and parameters matter always
	if n, ok := s.ExtensionName(); ok {
		m, ok := o.ExtensionName()
		if !ok || n != m {
			return false
		}
	} else if _, ok := o.ExtensionName(); ok {
		return false
	}
	for i := range s.Children {
		if !sameType(s.Children[i], o.Children[i], checkMetadata, false) {
			return false
		}
	}
	return s.Dictionary == nil || sameType(s.Dictionary, o.Dictionary, checkMetadata, true)
}

// HostView is an Arrow Go array (Arr) over an Array's data, or over its
// host copy; Release releases both.
type HostView struct {
	Arr  arrow.Array
	copy *Array
}

func (h HostView) Release() {
	h.Arr.Release()
	if h.copy != nil {
		h.copy.Release()
	}
}

// HostArrowOf views a as an Arrow Go array readable on the host, copying it
// there first when its device is not host-readable.
func HostArrowOf(a *Array) (HostView, error) {
	var v HostView
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
	v.Arr = arr
	return v, nil
}
