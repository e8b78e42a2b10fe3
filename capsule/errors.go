package main

/*
#include <stdlib.h>
#include "module.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime/debug"
	"sync/atomic"

	"github.com/godevarrow/godevarrow/gosrc/device"
	"github.com/godevarrow/godevarrow/gosrc/dlpack"
	"github.com/godevarrow/godevarrow/gosrc/errs"
	"github.com/godevarrow/godevarrow/gosrc/pyfunc"
)

// poisoned is set when a panic was recovered: the Go state may be corrupt,
// so every later call refuses to work (docs/design.md, "Panics"). The C
// side learns it through gda_set_poisoned, and checks it before it takes
// ownership of anything, so that a refused call leaves its arguments as
// they were.
var poisoned atomic.Value // string: the first panic's message

func poison(msg string) {
	if poisoned.CompareAndSwap(nil, msg) {
		C.gda_set_poisoned()
	}
}

// errorKind maps a Go error to the exception class the C side raises. This
// is the only place where Go errors meet Python exception classes.
func errorKind(err error) C.int {
	var se *errs.StreamError
	var de *device.DriverError
	var fe *pyfunc.Error
	switch {
	case errors.As(err, &fe):
		return C.GDA_ERR_GO
	case errors.Is(err, pyfunc.ErrArgument):
		return C.GDA_ERR_TYPE
	case errors.Is(err, dlpack.ErrNotExportable):
		return C.GDA_ERR_BUFFER
	case errors.As(err, &se):
		return C.GDA_ERR_STREAM
	case errors.Is(err, errs.ErrInternal):
		return C.GDA_ERR_INTERNAL
	case errors.As(err, &de), errors.Is(err, device.ErrUnavailable):
		return C.GDA_ERR_DEVICE
	case errors.Is(err, device.ErrUnknownDevice):
		return C.GDA_ERR_INVALID
	case errors.Is(err, errs.ErrNoMemory):
		return C.GDA_ERR_MEMORY
	case errors.Is(err, errs.ErrNotImplemented):
		return C.GDA_ERR_NOT_IMPLEMENTED
	case errors.Is(err, errType):
		return C.GDA_ERR_TYPE
	}
	return C.GDA_ERR_INVALID
}

var errType = errors.New("type error")

// call runs fn, the body of an //export, and reports its error (or a
// recovered panic) through the C error record; it returns 0 or an error kind.
func call(e *C.gda_error, fn func() error) (kind C.int) {
	if msg, ok := poisoned.Load().(string); ok {
		return setError(e, C.GDA_ERR_INTERNAL, 0,
			"godevarrow refuses further work after an internal error; restart the process. The error was: "+msg)
	}
	if errs.Panics() > 0 {
		poison("a panic in a C callback of the Go core")
		return setError(e, C.GDA_ERR_INTERNAL, 0,
			"godevarrow refuses further work after an internal error; restart the process. The error was: a panic in a C callback of the Go core")
	}
	defer func() {
		if v := recover(); v != nil {
			msg := fmt.Sprintf("godevarrow internal error (panic: %v)", v)
			poison(msg)
			kind = setError(e, C.GDA_ERR_INTERNAL, 0, msg+"\n"+string(debug.Stack()))
		}
	}()
	if err := fn(); err != nil {
		var errno int
		var se *errs.StreamError
		if errors.As(err, &se) {
			errno = int(se.Errno)
		}
		return setError(e, errorKind(err), errno, err.Error())
	}
	return 0
}

func setError(e *C.gda_error, kind C.int, errno int, msg string) C.int {
	if e != nil {
		e.kind = kind
		e.errno_code = C.int(errno)
		e.message = C.CString(msg)
	}
	return kind
}

// gdaPoisonedError fills e with the refusal of a poisoned library.
//
//export gdaPoisonedError
func gdaPoisonedError(e *C.gda_error) C.int {
	return call(e, func() error { return nil })
}
