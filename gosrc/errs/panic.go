package errs

import (
	"fmt"
	"runtime/debug"
	"sync/atomic"
)

// ErrInternal is wrapped by errors reporting a recovered panic: a bug in
// godevarrow, never caused by input alone.
var ErrInternal = fmt.Errorf("internal error")

var panicCount atomic.Int64

// Panics returns how many panics the C callbacks of this package and of its
// siblings (dlpack) have recovered. A caller such as the Python extension
// refuses further work once it is non-zero.
func Panics() int64 { return panicCount.Load() }

// RecoverInto, deferred first in every function C can call (before any
// handle lookup), turns a panic into an error handed to report, so that no
// panic crosses into C.
func RecoverInto(report func(error)) {
	if v := recover(); v != nil {
		report(Recovered(v))
	}
}

// Recovered counts a recovered panic and wraps it in an ErrInternal error.
func Recovered(v any) error {
	panicCount.Add(1)
	return &Error{Kind: ErrInternal, Msg: fmt.Sprintf("godevarrow internal error (panic: %v)\n%s", v, debug.Stack())}
}
