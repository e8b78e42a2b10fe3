// Package cdevice is the core of godevarrow's Go implementation of the Arrow
// C Data and C Device Data interfaces: import and export of ArrowArray and
// ArrowDeviceArray, and the Go values they become.
//
// The central type is Array: an arrow.ArrayData whose buffers live on a
// device.Device, with the exact cschema.Schema it was described by. Imports
// never copy data: the buffers of an imported Array point into the
// producer's memory and the producer's release callback runs exactly once,
// synchronously, when the last reference to any part of it is released
// (Array.Release). Exports never copy data either: every export is an
// independent C struct tree that keeps the Go data alive until its consumer
// releases it, from any thread. api.go lists the calls where C structs
// change hands and who releases what.
//
// Around the core, each concept has its package:
//
//   - errs: the error kinds every package wraps (errors.Is), the errno of
//     each, and the panic recovery of the functions C calls.
//   - cschema: format strings, Schema, ArrowSchema import and export, and the
//     schema import cache.
//   - device: where memory lives, and the device backends (CPU; CUDA in
//     device/cuda).
//   - streams: the stream runtimes: the C stream interface (StreamReader,
//     ExportArrayStream), the one-shot stream a language binding holds,
//     read-ahead (PrefetchReader) and the async device stream interface.
//   - values: the value encoder a language binding reads.
//
// The C structs are the canonical ones of arrow-c-abi.h (gosrc/include);
// CArrowArray and CArrowDeviceArray are aliases that other cgo packages can
// convert to with unsafe.Pointer (ArrayAt, DeviceArrayAt). Callers of this
// package need no cgo themselves.
//
// Errors wrap errs.ErrInvalid (malformed input), errs.ErrNotImplemented,
// errs.ErrConsumed or a device error, so callers can classify them with
// errors.Is.
package cdevice
