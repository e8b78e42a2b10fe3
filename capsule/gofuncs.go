package main

/*
#include <stdlib.h>
#include "module.h"
*/
import "C"

import (
	"encoding/json"
	"fmt"
	"time"
	"unsafe"

	"github.com/godevarrow/godevarrow/gosrc/cdevice"
	"github.com/godevarrow/godevarrow/gosrc/handle"
	"github.com/godevarrow/godevarrow/gosrc/pyfunc"
)

// The Go functions users link into the extension (gosrc/pyfunc): their
// description for Python, and calls.

type goParam struct {
	Name   string `json:"name"`
	Kind   string `json:"kind"`
	GoType string `json:"go_type"`
}

type goFunction struct {
	Name         string    `json:"name"`
	GoName       string    `json:"go_name"`
	Doc          string    `json:"doc"`
	Params       []goParam `json:"params"`
	Result       string    `json:"result"`
	ResultGoType string    `json:"result_go_type"`
	Devices      []int     `json:"devices"`
	OwnEvents    bool      `json:"own_events"`
}

// gdaGoFunctions describes the registered functions as JSON.
//
//export gdaGoFunctions
func gdaGoFunctions(out **C.char, e *C.gda_error) C.int {
	return call(e, func() error {
		fs := []goFunction{}
		for _, f := range pyfunc.Functions() {
			g := goFunction{Name: f.Name, GoName: f.GoName, Doc: f.Doc, Result: string(f.Result),
				ResultGoType: f.ResultGoType, OwnEvents: f.OwnEvents, Params: []goParam{}}
			for _, p := range f.Params {
				g.Params = append(g.Params, goParam{p.Name, string(p.Kind), p.GoType})
			}
			for _, d := range f.Devices {
				g.Devices = append(g.Devices, int(d))
			}
			fs = append(fs, g)
		}
		b, err := json.Marshal(fs)
		if err != nil {
			return err
		}
		*out = C.CString(string(b))
		return nil
	})
}

// gdaGoStart starts a call of the function registered as name (with the
// GIL: it only converts the arguments and starts a goroutine).
//
//export gdaGoStart
func gdaGoStart(name *C.char, nameLen C.int64_t, values *C.gda_go_value, n C.int64_t, out *C.uintptr_t, e *C.gda_error) C.int {
	return call(e, func() error {
		fname := C.GoStringN(name, C.int(nameLen))
		f := pyfunc.Lookup(fname)
		if f == nil {
			return fmt.Errorf("%w: no Go function %q is registered in this build of godevarrow", errType, fname)
		}
		args := make([]any, n)
		for i, v := range unsafe.Slice(values, int(n)) {
			switch v.kind {
			case C.GDA_GO_BOOL:
				args[i] = v.i != 0
			case C.GDA_GO_INT:
				args[i] = int64(v.i)
			case C.GDA_GO_UINT:
				args[i] = uint64(v.u)
			case C.GDA_GO_FLOAT:
				args[i] = float64(v.f)
			case C.GDA_GO_STR:
				args[i] = C.GoStringN(v.s, C.int(v.len))
			default:
				x, ok := handles.Get(handle.Handle(v.h))
				if !ok {
					return fmt.Errorf("%w: stale or invalid handle %#x", errType, uintptr(v.h))
				}
				args[i] = x
			}
		}
		c, err := f.Start(args)
		if err == nil {
			newHandle(c, out)
		}
		return err
	})
}

// gdaGoWait waits up to timeoutMs for the call (without the GIL):
// GDA_PENDING when it has not ended, else its result or error (the call's
// handle is then gone).
//
//export gdaGoWait
func gdaGoWait(h C.uintptr_t, timeoutMs C.int, out *C.gda_go_value, e *C.gda_error) C.int {
	pending := false
	rc := call(e, func() error {
		c, err := valueOf[*pyfunc.Call](h)
		if err != nil {
			return err
		}
		result, err, done := c.Wait(time.Duration(timeoutMs) * time.Millisecond)
		if !done {
			pending = true
			return nil
		}
		handles.Delete(handle.Handle(h))
		if err != nil {
			return err
		}
		packGoValue(result, out)
		return nil
	})
	if rc == 0 && pending {
		return C.GDA_PENDING
	}
	return rc
}

func packGoValue(v any, out *C.gda_go_value) {
	switch v := v.(type) {
	case nil:
		out.kind = C.GDA_GO_NONE
	case bool:
		out.kind, out.i = C.GDA_GO_BOOL, C.int64_t(cBool(v))
	case int64:
		out.kind, out.i = C.GDA_GO_INT, C.int64_t(v)
	case uint64:
		out.kind, out.u = C.GDA_GO_UINT, C.uint64_t(v)
	case float64:
		out.kind, out.f = C.GDA_GO_FLOAT, C.double(v)
	case string:
		out.kind, out.s, out.len = C.GDA_GO_STR, (*C.char)(C.CBytes([]byte(v))), C.int64_t(len(v))
	case *cdevice.Array:
		out.kind, out.i = C.GDA_GO_ARRAY, C.int64_t(cBool(v.Schema().IsRecordBatch()))
		newHandle(v, &out.h)
	case *cdevice.ChunkedArray:
		out.kind, out.i = C.GDA_GO_CHUNKED, C.int64_t(cBool(v.Schema().IsRecordBatch()))
		newHandle(v, &out.h)
	case *cdevice.OneShotStream:
		out.kind = C.GDA_GO_STREAM
		newHandle(v, &out.h)
	}
}

// gdaGoAbandon gives up waiting for a call (Ctrl-C): its context is
// cancelled and its result released when it ends.
//
//export gdaGoAbandon
func gdaGoAbandon(h C.uintptr_t) {
	call(nil, func() error {
		if v, ok := handles.Delete(handle.Handle(h)); ok {
			v.(*pyfunc.Call).Abandon()
		}
		return nil
	})
}
