package cdevice

/*
#include "gda.h"
*/
import "C"

import (
	"unsafe"

	"github.com/godevarrow/godevarrow/gosrc/cschema"
)

// The entry points of the package where C structs change hands, with who
// releases what. Every import moves the producer's struct (its release is
// set to NULL on return, whatever the outcome) and calls the producer's
// release exactly once, when the last reference to any part of the result
// is released. Every export fills a consumer's struct with an independent
// tree whose release the consumer calls, once, from any thread. The rest of
// the API works on Go values:
//
//   - Array (array.go): NewArray, FromArrow, FromRecord, Slice, Column,
//     Share, WithValidity, AsRecordBatch, ToArrow, ToRecord; Validate
//     (validate.go), Equal (equal.go), Cast (cast.go), CopyToDevice and Copy
//     (copy.go), WithKnownNullCounts (hostonly.go).
//   - ChunkedArray and Table (table.go): chunks read any number of times.
//   - ArrayReader, ListReader, CastReader (reader.go): streams of arrays; the
//     C stream interface and the stream runtimes are package streams.
//   - LiveStats (stats.go): leak counters.
//
// Schemas (Schema, format strings, ArrowSchema import and export) are
// package cschema; error kinds are package errs.

// ImportArray imports a CPU ArrowArray described by schema. The struct is
// moved: on return c is marked released, whatever the outcome, and the
// producer's release callback will be called exactly once.
func ImportArray(c *CArrowArray, schema *cschema.Schema) (*Array, error) {
	return importArray(c, schema)
}

// ImportDeviceArray imports an ArrowDeviceArray described by schema, moving it
// as ImportArray does. Non-CPU device types need a device backend; without
// one the import fails cleanly (and the producer's release is still called).
func ImportDeviceArray(c *CArrowDeviceArray, schema *cschema.Schema) (*Array, error) {
	return importDeviceArray(c, schema)
}

// ImportDevicePair imports a foreign schema and device array: held in C
// (held != nil) when the held-schema table and its gate take them, else as an
// Array built by ImportDeviceArray. Both structs are consumed whatever the
// outcome: each release is called exactly once. For a CUDA array this waits
// on the device (ImportDeviceArray does too); a driver failure of that wait is
// returned as the driver's error.
func ImportDevicePair(schema *cschema.CArrowSchema, array *CArrowDeviceArray) (held unsafe.Pointer, a *Array, err error) {
	return importDevicePair(schema, array)
}

// ImportHeld builds the Array of a held import (a gda_held record made by the
// C fast path). The Array takes its own reference on the record; the caller
// keeps its own.
func ImportHeld(held unsafe.Pointer) (*Array, error) {
	return importHeld(held)
}

// ReleaseHeld drops the reference to a held import that ImportDevicePair
// returned (Arrays built from it with ImportHeld keep their own).
func ReleaseHeld(held unsafe.Pointer) {
	releaseHeld(held)
}

// ImportCell imports the ArrowDeviceArray in cell, a malloc'd block this
// call takes over (freed with the array's release), as ImportDeviceArray
// does with a consumer's struct.
func ImportCell(cell unsafe.Pointer, schema *cschema.Schema) (*Array, error) {
	return importCell((*C.struct_ArrowDeviceArray)(cell), schema)
}

// ExportArray fills out with an ArrowArray of a host-memory array; the
// schema is exported separately with cschema.ExportSchema(a.Schema(),
// ...). Every call gives an independent struct tree that keeps the data alive until released.
func ExportArray(a *Array, out *CArrowArray) error {
	return exportArray(a, out)
}

// ExportDeviceArray fills out with an ArrowDeviceArray of a on its device.
func ExportDeviceArray(a *Array, out *CArrowDeviceArray) error {
	return exportDeviceArray(a, out)
}

// ExportPair exports a as the (schema, array) pair of one exchange:
// arrayOut is an ArrowDeviceArray when isDevice, else an ArrowArray. With
// target not nil the array is cast to it first (see Cast). On error nothing
// is left for the consumer: an array exported before the schema failed is
// released again.
func ExportPair(a *Array, target *cschema.Schema, schemaOut, arrayOut unsafe.Pointer, isDevice bool) error {
	return exportPair(a, target, schemaOut, arrayOut, isDevice)
}

// ReleaseExportedArray releases an ArrowArray (device == false) or
// ArrowDeviceArray at p if it is not released yet: for undoing an export the
// consumer never received.
func ReleaseExportedArray(p unsafe.Pointer, device bool) {
	releaseExportedArray(p, device)
}
