package cdevice

import (
	"unsafe"

	"github.com/godevarrow/godevarrow/gosrc/cschema"
	"github.com/godevarrow/godevarrow/gosrc/device"
	"github.com/godevarrow/godevarrow/gosrc/errs"
)

func exportPair(a *Array, target *cschema.Schema, schemaOut, arrayOut unsafe.Pointer, isDevice bool) error {
	if target != nil {
		cast, err := Cast(a, target)
		if err != nil {
			return err
		}
		defer cast.Release()
		a = cast
	}
	var err error
	if isDevice {
		err = ExportDeviceArray(a, DeviceArrayAt(arrayOut))
	} else {
		err = ExportArray(a, ArrayAt(arrayOut))
	}
	if err != nil {
		return err
	}
	if err = cschema.ExportSchema(a.Schema(), cschema.SchemaAt(schemaOut)); err != nil {
		ReleaseExportedArray(arrayOut, isDevice)
	}
	return err
}

// ReaderOver returns a stream of arrays already in memory, of schema (nil:
// the first array's) and the first array's device type (the CPU when there
// is none). The reader takes a reference on each array.
func ReaderOver(schema *cschema.Schema, arrays []*Array) (*ListReader, error) {
	devType := device.CPU
	if len(arrays) > 0 {
		devType = arrays[0].Device().Type
		if schema == nil {
			schema = arrays[0].Schema()
		}
	}
	if schema == nil {
		return nil, errs.Errorf(errs.ErrInvalid, "a stream of no arrays needs a schema")
	}
	return NewListReader(schema, devType, arrays...)
}
