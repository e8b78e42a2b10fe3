package main

/*
#include <stdlib.h>
#include "module.h"
int gda_sigint_pending(void);
*/
import "C"

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"unsafe"

	"github.com/godevarrow/godevarrow/gosrc/cdevice"
	"github.com/godevarrow/godevarrow/gosrc/handle"
	"github.com/godevarrow/godevarrow/gosrc/pyfunc"
	"github.com/godevarrow/godevarrow/gosrc/streams"
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
	Context      bool      `json:"context"`
}

// gdaGoFunctions describes the registered functions as JSON.
//
//export gdaGoFunctions
func gdaGoFunctions(out **C.char, e *C.gda_error) C.int {
	return call(e, func() error {
		fs := []goFunction{}
		for _, f := range pyfunc.Functions() {
			g := goFunction{Name: f.Name, GoName: f.GoName, Doc: f.Doc, Result: string(f.Result),
				ResultGoType: f.ResultGoType, OwnEvents: f.OwnEvents, Context: f.TakesContext(), Params: []goParam{}}
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

// gdaGoCall runs the function registered as name on the calling thread,
// without the GIL (it converts plain values and handles only). With
// asGiven (the arguments as the Python caller gave them), arguments that do
// not fit return GDA_CONVERT: the caller converts them and calls again. With
// watched (a function that takes a context, called on Python's main
// thread), Ctrl-C during the call cancels its context (gofuncs.c says how
// the signal reaches sigint).
//
//export gdaGoCall
func gdaGoCall(name *C.char, nameLen C.int64_t, values *C.gda_go_value, n C.int64_t, watched, asGiven C.int,
	out *C.gda_go_value, e *C.gda_error) C.int {
	convert := false
	rc := call(e, func() error {
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
		ctx := context.Background()
		if watched != 0 {
			var done func()
			ctx, done = sigint.add()
			defer done()
		}
		result, err := f.Call(ctx, args)
		if asGiven != 0 && errors.Is(err, pyfunc.ErrArgument) {
			convert = true // refused before anything was taken: Python converts and calls again
			return nil
		}
		if err == nil {
			packGoValue(result, out)
		}
		return err
	})
	if rc == 0 && convert {
		return C.GDA_CONVERT
	}
	return rc
}

// sigintRegistry cancels the calls running on Python's main thread when
// SIGINT arrives: gofuncs.c's handler writes a byte to a pipe that watch
// reads.
type sigintRegistry struct {
	once    sync.Once
	w       *os.File // the pipe's write end, open for the life of the process
	fd      int      // its descriptor, for the C handler; -1 when it could not be made
	mu      sync.Mutex
	next    uint64
	cancels map[uint64]context.CancelFunc
}

var sigint sigintRegistry

// gdaGoSigintFD returns the write end of the pipe SIGINT is reported on
// (-1 if it cannot be made: calls are then not cancelled by Ctrl-C).
//
//export gdaGoSigintFD
func gdaGoSigintFD() C.int {
	fd := C.int(-1)
	call(nil, func() error {
		sigint.once.Do(sigint.start)
		fd = C.int(sigint.fd)
		return nil
	})
	return fd
}

func (s *sigintRegistry) start() {
	s.fd = -1
	r, w, err := os.Pipe()
	if err != nil {
		return
	}
	s.w, s.fd = w, int(w.Fd())
	go s.watch(r)
}

func (s *sigintRegistry) watch(r *os.File) {
	buf := make([]byte, 64)
	for {
		if _, err := r.Read(buf); err != nil {
			return
		}
		s.mu.Lock()
		for _, cancel := range s.cancels {
			cancel()
		}
		s.mu.Unlock()
	}
}

// add registers a call on the main thread: its context, and the function
// that unregisters it when the call returns. A SIGINT that arrived since
// the handler was installed (gda_sigint_pending) cancels it at once.
func (s *sigintRegistry) add() (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	s.mu.Lock()
	s.next++
	id := s.next
	if s.cancels == nil {
		s.cancels = map[uint64]context.CancelFunc{}
	}
	s.cancels[id] = cancel
	s.mu.Unlock()
	if C.gda_sigint_pending() != 0 {
		cancel()
	}
	// Unregistered when the call returns, not cancelled: a reader it
	// returned goes on with the context (pyfunc cancels its own derived
	// context when that reader is closed).
	return ctx, func() {
		s.mu.Lock()
		delete(s.cancels, id)
		s.mu.Unlock()
	}
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
	case *streams.OneShotStream:
		out.kind = C.GDA_GO_STREAM
		newHandle(v, &out.h)
	}
}
