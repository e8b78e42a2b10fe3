package pyfunc

import (
	"fmt"

	"github.com/godevarrow/godevarrow/gosrc/cdevice"
)

// What a function may do with the arrays it is given, and how a mistake is
// kept inside the call.
//
// Each array or chunked array argument reaches the function as a Share: an
// object of its own for the caller's data, with a reference count nobody
// else touches. So
//   - returning an argument, retained or not, is allowed: when the function
//     did not retain it, the call adds the reference the result needs;
//   - releasing an argument the function did not retain (it does not own
//     it) is reported as an *Error naming the function and the argument, and
//     cannot free the caller's data, which the Share's own reference keeps;
//   - a result released as often as it was retained is reported the same way.
// Nothing a function does to its arguments' counts can corrupt the library.

// counted is what Array and ChunkedArray have in common here.
type counted interface {
	Retain()
	Release()
	RefCount() int64
}

type lentArg struct {
	param int // the index of the parameter
	obj   counted
}

// lentArgs are the Shares a call gave its function.
type lentArgs []lentArg

// lend makes the Share of arg (an *Array or a *ChunkedArray) for param i.
func (l *lentArgs) lend(i int, arg any) (any, error) {
	var share counted
	var err error
	switch a := arg.(type) {
	case *cdevice.Array:
		share, err = a.Share()
	case *cdevice.ChunkedArray:
		share, err = a.Share()
	}
	if err != nil {
		return nil, err
	}
	*l = append(*l, lentArg{i, share})
	return share, nil
}

// check reports an argument the function released without owning it.
func (l lentArgs) check(f *Function) error {
	for _, a := range l {
		if a.obj.RefCount() < 1 {
			p := f.Params[a.param]
			return &Error{Func: f.Name, Err: fmt.Errorf("released argument %d (%s), which it does not own: Retain an argument before releasing it", a.param+1, p.Name)}
		}
	}
	return nil
}

// own gives the caller its reference to the result r.
func (l lentArgs) own(f *Function, r counted) (any, error) {
	if r.RefCount() < 1 {
		return nil, &Error{Func: f.Name, Err: fmt.Errorf("returned a %s that was already released", f.ResultGoType)}
	}
	for _, a := range l {
		if a.obj == r && r.RefCount() == 1 { // an argument returned without Retain
			r.Retain()
		}
	}
	return r, nil
}

// release drops the call's references (those the function released itself
// are reported by check and left alone).
func (l lentArgs) release() {
	for _, a := range l {
		if a.obj.RefCount() > 0 {
			a.obj.Release()
		}
	}
}
