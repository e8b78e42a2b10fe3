package pyfunc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"runtime/debug"
	"sync"

	"github.com/godevarrow/godevarrow/gosrc/cdevice"
	"github.com/godevarrow/godevarrow/gosrc/cschema"
	"github.com/godevarrow/godevarrow/gosrc/device"
	"github.com/godevarrow/godevarrow/gosrc/errs"
	"github.com/godevarrow/godevarrow/gosrc/streams"
)

// ErrArgument is wrapped by the errors of arguments that do not fit a
// function's parameters (a binding reports them as a TypeError).
var ErrArgument = errors.New("bad argument")

// Error is what a registered function's call failed with: the error it
// returned, or a panic it raised (Panic set, with the stack).
type Error struct {
	Func  string // the registered name
	Err   error  // the returned error; nil for a panic
	Panic any
	Stack []byte
}

func (e *Error) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("%s panicked: %v\n%s", e.Func, e.Panic, e.Stack)
	}
	return e.Func + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// IsPanic reports whether the call panicked.
func (e *Error) IsPanic() bool { return e.Err == nil }

// Call checks args against the function's parameters and runs the function
// on the calling goroutine, with a context derived from ctx if it takes
// one. Each argument is a *cdevice.Array, a *cdevice.ChunkedArray, a stream
// (a *streams.OneShotStream, which is moved into the call, or a
// cdevice.ArrayReader, which the call then owns), or a bool, int64, uint64,
// float64 or string. Arrays are retained for the call. When an argument is
// refused (an error wrapping ErrArgument), nothing was retained or moved.
//
// The result is the caller's: nil, a *cdevice.Array, a
// *cdevice.ChunkedArray, a *streams.OneShotStream (a returned reader, read
// lazily), a bool, int64, uint64, float64 or string.
func (f *Function) Call(ctx context.Context, args []any) (any, error) {
	in, err := f.check(args)
	if err != nil {
		return nil, err
	}
	var lent lentArgs
	var readers []cdevice.ArrayReader
	defer func() { lent.release() }() // lent as it is when the call ends
	closeReaders := func() {
		for _, r := range readers {
			_ = r.Close()
		}
	}
	for i, p := range f.Params {
		switch p.Kind {
		case KindArray, KindChunked:
			v, err := lent.lend(i, args[i])
			if err != nil {
				closeReaders()
				return nil, fmt.Errorf("%s: argument %d (%s): %w", f.Name, i+1, p.Name, err)
			}
			in[i+f.offset()] = reflect.ValueOf(v)
		case KindStream:
			r, isReader := args[i].(cdevice.ArrayReader)
			if !isReader { // check() let only these two through
				if r, err = args[i].(*streams.OneShotStream).Take(); err != nil {
					closeReaders()
					return nil, fmt.Errorf("%s: argument %d (%s): %w", f.Name, i+1, p.Name, err)
				}
			}
			readers = append(readers, r)
			if !f.OwnEvents {
				r = eventWaiter{r}
			}
			in[i+f.offset()] = reflect.ValueOf(&r).Elem()
		}
	}
	cancel := func() {}
	if f.withContext { // a context only for a function that takes one
		ctx, cancel = context.WithCancel(ctx)
		in[0] = reflect.ValueOf(ctx)
	}
	settle := func() { // readers and context: now, or when a returned reader is closed
		cancel()
		closeReaders()
	}
	if !f.OwnEvents {
		if err := waitEvents(args); err != nil {
			settle()
			return nil, err
		}
	}
	out, err := f.invoke(in)
	if misuse := lent.check(f); misuse != nil {
		if err == nil && f.Result != KindNone {
			discard(out[0].Interface())
		}
		settle()
		return nil, misuse
	}
	if err != nil {
		settle()
		return nil, err
	}
	return f.take(out, settle, &lent)
}

func (f *Function) offset() int {
	if f.withContext {
		return 1
	}
	return 0
}

// check converts args to the function's parameter values (streams are
// filled in by Call) without taking anything.
func (f *Function) check(args []any) ([]reflect.Value, error) {
	if len(args) != len(f.Params) {
		return nil, fmt.Errorf("%w: %s takes %d argument%s, got %d", ErrArgument, f.Signature(), len(f.Params), plural(len(f.Params)), len(args))
	}
	in := make([]reflect.Value, len(args)+f.offset())
	for i, p := range f.Params {
		v, err := f.convert(p, args[i])
		if err != nil {
			return nil, fmt.Errorf("%s: argument %d (%s): %w", f.Signature(), i+1, p.Name, err)
		}
		in[i+f.offset()] = v
	}
	return in, nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func (f *Function) convert(p Param, arg any) (reflect.Value, error) {
	bad := func(want string) (reflect.Value, error) {
		return reflect.Value{}, fmt.Errorf("%w: must be %s, not %s", ErrArgument, want, describe(arg))
	}
	switch p.Kind {
	case KindArray:
		a, ok := arg.(*cdevice.Array)
		if !ok || a == nil {
			return bad("an array or a record batch")
		}
		return reflect.ValueOf(a), f.checkDevice(a.Device().Type, a.Device().String())
	case KindChunked:
		c, ok := arg.(*cdevice.ChunkedArray)
		if !ok || c == nil {
			return bad("a chunked array or a table")
		}
		return reflect.ValueOf(c), f.checkDevice(c.DeviceType(), c.DeviceType().String())
	case KindStream:
		var t device.Type
		switch r := arg.(type) {
		case *streams.OneShotStream:
			t = r.DeviceType()
		case cdevice.ArrayReader:
			t = r.DeviceType()
		default:
			return bad("a stream")
		}
		return reflect.Value{}, f.checkDevice(t, t.String())
	case KindBool:
		if b, ok := arg.(bool); ok {
			return reflect.ValueOf(b).Convert(p.typ), nil
		}
		return bad("a bool")
	case KindString:
		if s, ok := arg.(string); ok {
			return reflect.ValueOf(s).Convert(p.typ), nil
		}
		return bad("a str")
	case KindInt:
		v := reflect.New(p.typ).Elem()
		switch x := arg.(type) {
		case int64:
			if v.CanInt() && !v.OverflowInt(x) {
				v.SetInt(x)
				return v, nil
			}
			if v.CanUint() && x >= 0 && !v.OverflowUint(uint64(x)) {
				v.SetUint(uint64(x))
				return v, nil
			}
		case uint64:
			if v.CanUint() && !v.OverflowUint(x) {
				v.SetUint(x)
				return v, nil
			}
			if v.CanInt() && x <= 1<<63-1 && !v.OverflowInt(int64(x)) {
				v.SetInt(int64(x))
				return v, nil
			}
		default:
			return bad("an int")
		}
		return reflect.Value{}, fmt.Errorf("%w: %v does not fit in %s", ErrArgument, arg, p.GoType)
	case KindFloat:
		v := reflect.New(p.typ).Elem()
		var x float64
		switch a := arg.(type) {
		case float64:
			x = a
		case int64:
			x = float64(a)
		case uint64:
			x = float64(a)
		default:
			return bad("a float")
		}
		// a finite value beyond a float32's range would become an infinity,
		// as silently as a wrapped int: refused like an int that does not
		// fit; infinities and NaN are passed as given
		if !math.IsInf(x, 0) && !math.IsNaN(x) && v.OverflowFloat(x) {
			return reflect.Value{}, fmt.Errorf("%w: %v does not fit in %s", ErrArgument, arg, p.GoType)
		}
		v.SetFloat(x)
		return v, nil
	}
	return reflect.Value{}, fmt.Errorf("%w: unsupported parameter kind %q", ErrArgument, p.Kind)
}

func (f *Function) checkDevice(t device.Type, where string) error {
	if f.accepts(t) {
		return nil
	}
	names := make([]string, len(f.Devices))
	for i, d := range f.Devices {
		names[i] = d.String()
	}
	return fmt.Errorf("%w: %s accepts data on %v, and this is on %s (copy it with .to_device() first, or declare the device type with pyfunc.Devices)",
		errs.ErrNotImplemented, f.Name, names, where)
}

func describe(arg any) string {
	switch a := arg.(type) {
	case nil:
		return "None"
	case *cdevice.Array:
		if a.Schema().IsRecordBatch() {
			return "a record batch"
		}
		return "an array"
	case *cdevice.ChunkedArray:
		return "a chunked array or table"
	case cdevice.ArrayReader, *streams.OneShotStream:
		return "a stream"
	case bool:
		return "a bool"
	case int64, uint64:
		return "an int"
	case float64:
		return "a float"
	case string:
		return "a str"
	}
	return fmt.Sprintf("%T", arg)
}

// invoke calls the function, recovering a panic into an *Error.
func (f *Function) invoke(in []reflect.Value) (out []reflect.Value, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &Error{Func: f.Name, Panic: v, Stack: debug.Stack()}
		}
	}()
	out = f.fn.Call(in)
	if f.withError {
		if e, _ := out[len(out)-1].Interface().(error); e != nil {
			if f.Result != KindNone {
				discard(out[0].Interface())
			}
			return nil, &Error{Func: f.Name, Err: e}
		}
	}
	return out, nil
}

// take turns the function's result into what Call returns; settle runs
// now, or, for a returned reader, when that is closed.
func (f *Function) take(out []reflect.Value, settle func(), lent *lentArgs) (any, error) {
	var v reflect.Value
	if f.Result != KindNone {
		v = out[0]
	}
	if f.Result == KindStream && !v.IsNil() {
		r := v.Interface().(cdevice.ArrayReader)
		return streams.NewOneShotStream(&resultReader{r: r, name: f.Name, settle: settle}), nil
	}
	settle()
	switch f.Result {
	case KindNone:
		return nil, nil
	case KindArray, KindChunked, KindStream:
		if v.IsNil() {
			return nil, &Error{Func: f.Name, Err: fmt.Errorf("returned a nil %s and no error", f.ResultGoType)}
		}
		if r, ok := v.Interface().(counted); ok {
			return lent.own(f, r)
		}
		return v.Interface(), nil
	}
	switch {
	case v.CanInt():
		return v.Int(), nil
	case v.CanUint():
		return v.Uint(), nil
	case v.CanFloat():
		return v.Float(), nil
	case v.Kind() == reflect.Bool:
		return v.Bool(), nil
	default:
		return v.String(), nil
	}
}

// discard releases a result the function returned with an error (one it
// released itself already is left alone).
func discard(v any) {
	switch v := v.(type) {
	case *cdevice.Array:
		if v != nil && v.RefCount() > 0 {
			v.Release()
		}
	case *cdevice.ChunkedArray:
		if v != nil && v.RefCount() > 0 {
			v.Release()
		}
	case cdevice.ArrayReader:
		if v != nil {
			_ = v.Close()
		}
	}
}

// waitEvents waits on the host for the sync events of the array arguments.
func waitEvents(args []any) error {
	for _, arg := range args {
		switch a := arg.(type) {
		case *cdevice.Array:
			if err := a.WaitOnHost(); err != nil {
				return err
			}
		case *cdevice.ChunkedArray:
			for i := 0; i < a.NumChunks(); i++ {
				chunk, _ := a.Chunk(i)
				if err := chunk.WaitOnHost(); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// eventWaiter is a stream argument whose arrays come with their events
// waited on.
type eventWaiter struct{ cdevice.ArrayReader }

func (w eventWaiter) Next() (*cdevice.Array, error) {
	a, err := w.ArrayReader.Next()
	if err != nil {
		return nil, err
	}
	if err := a.WaitOnHost(); err != nil {
		a.Release()
		return nil, err
	}
	return a, nil
}

// resultReader is a reader a function returned: a panic in it becomes an
// *Error, and closing it settles the call (its input readers, its context).
type resultReader struct {
	r      cdevice.ArrayReader
	name   string
	settle func()
	once   sync.Once
}

func (r *resultReader) Schema() *cschema.Schema { return r.r.Schema() }
func (r *resultReader) DeviceType() device.Type { return r.r.DeviceType() }

// recovered is deferred directly (recover works only there).
func (r *resultReader) recovered(err *error) {
	if v := recover(); v != nil {
		*err = &Error{Func: r.name, Panic: v, Stack: debug.Stack()}
	}
}

func (r *resultReader) Next() (a *cdevice.Array, err error) {
	defer r.recovered(&err)
	a, err = r.r.Next()
	if err != nil && !errors.Is(err, io.EOF) {
		var fe *Error
		if !errors.As(err, &fe) {
			err = &Error{Func: r.name, Err: err}
		}
	}
	return a, err
}

func (r *resultReader) Close() (err error) {
	defer r.once.Do(r.settle)
	defer r.recovered(&err)
	return r.r.Close()
}
