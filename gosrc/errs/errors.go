// Package errs holds the error kinds every godevarrow Go package wraps
// (callers map errors with errors.Is), the errno a C caller gets for each,
// and the panic recovery of the functions C calls.
package errs

import (
	"errors"
	"fmt"
	"syscall"
)

// Error kinds. Every error this package returns wraps exactly one of them, so
// callers (the Python extension among them) map errors with errors.Is.
var (
	// ErrInvalid: a malformed, released or inconsistent C struct, or invalid data.
	ErrInvalid = errors.New("invalid argument")
	// ErrNotImplemented: a valid request this implementation does not support
	// (an unsupported cast, a device without a copy engine, ...).
	ErrNotImplemented = errors.New("not implemented")
	// ErrConsumed: a one-shot object (a stream) was already moved out or closed.
	ErrConsumed = errors.New("already consumed")
	// ErrNoMemory: a host allocation failed (Python raises MemoryError).
	ErrNoMemory = errors.New("out of memory")
)

// Error is the error type of this package: a kind (one of the Err* values
// above, or a device error) and a human-readable message.
type Error struct {
	Kind error
	Msg  string
}

func (e *Error) Error() string { return e.Msg }
func (e *Error) Unwrap() error { return e.Kind }

func Errorf(kind error, format string, args ...any) error {
	return &Error{Kind: kind, Msg: fmt.Sprintf(format, args...)}
}

// StreamError is returned when a foreign stream's get_next or get_schema
// fails. Errno is the producer's errno-style code, Msg its get_last_error text.
type StreamError struct {
	Errno syscall.Errno
	Msg   string
}

func (e *StreamError) Error() string {
	if e.Msg == "" {
		return fmt.Sprintf("stream producer failed: %s (errno %d)", e.Errno.Error(), int(e.Errno))
	}
	return e.Msg
}

// Errno converts an error into the errno-style code the C stream interface
// reports through get_next/get_schema.
func Errno(err error) int {
	var se *StreamError
	switch {
	case errors.As(err, &se) && se.Errno != 0:
		return int(se.Errno)
	case errors.Is(err, ErrInvalid):
		return int(syscall.EINVAL)
	case errors.Is(err, ErrNotImplemented):
		return int(syscall.ENOSYS)
	case errors.Is(err, ErrConsumed):
		return int(syscall.EALREADY)
	case errors.Is(err, ErrNoMemory):
		return int(syscall.ENOMEM)
	}
	return int(syscall.EIO)
}
