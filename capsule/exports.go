// Command capsule is the CPython extension module godevarrow._godevarrow,
// built with -buildmode=c-shared. It is a binding: the C files hold the
// Python side (module init, method table, PyCapsules, the GIL), the Go
// files hold the exports they call. Each export unpacks plain C arguments,
// makes one call into gosrc, and packs the result or the error through
// call() (errors.go). No Arrow decision and no state lives here: streams
// are streams.OneShotStream, held imports and the schema table are held.h.
//
// The files pair by topic, <topic>.c (the Python side) beside <topic>.go
// (its exports): handles, schema, array, import, stream, table, values,
// tensor, process, gofuncs and errors. module.c (init, records, the method
// table), capsules.c (the Arrow capsules) and pyarrow.c (pyarrow's
// shortcuts) have no Go half; this file is the package's entry. The
// binding is declared once: methods.h (the methods) and module.h (what
// both halves share), read by binding.h and gen_stub.py.
//
// Device backends register themselves when their package is imported
// (gosrc/device, "Backend"): the blank import of gosrc/device/cuda below is
// what gives this build its CUDA backend.
package main

/*
#cgo CFLAGS: -O2 -std=c11 -Werror=implicit-function-declaration -I${SRCDIR}/../gosrc/include -I${SRCDIR}/../gosrc/values -I${SRCDIR}/../gosrc/streams
*/
import "C"

import _ "github.com/godevarrow/godevarrow/gosrc/device/cuda" // the CUDA backend registers itself

func main() {}
