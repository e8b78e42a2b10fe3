package cdevice

import (
	"fmt"
	"runtime/debug"
	"sync/atomic"
)

// ErrInternal is wrapped by errors reporting a recovered panic: a bug in
// godevarrow, never caused by input alone.
var ErrInternal = fmt.Errorf("internal error")

var panicCount atomic.Int64

// Panics returns how many panics the package's C callbacks have recovered.
// A caller such as the Python extension refuses further work once it is non-zero.
func Panics() int64 { return panicCount.Load() }

// recoverInto, deferred in every function C can call, turns a panic into an
// error handed to report, so that no panic crosses into C.
func recoverInto(report func(error)) {
	if v := recover(); v != nil {
		panicCount.Add(1)
		report(&Error{Kind: ErrInternal, Msg: fmt.Sprintf("godevarrow internal error (panic: %v)\n%s", v, debug.Stack())})
	}
}
