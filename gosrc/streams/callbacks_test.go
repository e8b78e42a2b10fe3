package streams

import (
	"reflect"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/godevarrow/godevarrow/gosrc/cdevice"
	"github.com/godevarrow/godevarrow/gosrc/cschema"
	"github.com/godevarrow/godevarrow/gosrc/device"
	"github.com/godevarrow/godevarrow/gosrc/errs"
)

// callFromC calls one of the package's //export functions as its C
// trampoline would, converting each argument to the parameter's C type
// (nil becomes a NULL pointer). It reports a panic that escaped the
// function instead of dying with it: called from C, that panic would
// crash the process.
func callFromC(t *testing.T, fn any, args ...any) (results []reflect.Value) {
	t.Helper()
	f := reflect.ValueOf(fn)
	in := make([]reflect.Value, len(args))
	for i, a := range args {
		typ := f.Type().In(i)
		if a == nil {
			in[i] = reflect.Zero(typ)
		} else {
			in[i] = reflect.ValueOf(a).Convert(typ)
		}
	}
	defer func() {
		if v := recover(); v != nil {
			t.Errorf("%s panicked into its C caller: %v", f.Type(), v)
		}
	}()
	return f.Call(in)
}

// invalidHandles are values no table ever issued: 0 ("no handle") and a
// slot far beyond any table.
var invalidHandles = []uint64{0, 1<<40 | 123456}

// checkNoPanic fails the test if the callbacks recovered a panic: a stale
// handle is an expected event, not an internal error that poisons the library.
func checkNoPanic(t *testing.T, before int64) {
	t.Helper()
	if n := errs.Panics() - before; n != 0 {
		t.Errorf("%d panics recovered: a stale or invalid handle was not detected", n)
	}
}

func TestAsyncProducerCallbacksRejectStaleHandles(t *testing.T) {
	before := errs.Panics()
	for _, h := range invalidHandles {
		callFromC(t, gdaAsyncRequest, h, 1)
		callFromC(t, gdaAsyncCancel, h)
		if rc := callFromC(t, gdaAsyncExtract, h, nil); rc != nil && rc[0].Int() == 0 {
			t.Errorf("extract_data(%#x) = 0 for a task that does not exist", h)
		}
	}
	checkNoPanic(t, before)
}

func TestAsyncHandlerCallbacksRejectStaleHandles(t *testing.T) {
	before := errs.Panics()
	_, handler, err := NewAsyncReader(1)
	if err != nil {
		t.Fatal(err)
	}
	live := uint64(*(*uintptr)(handler.private_data))
	callFromC(t, gdaAsyncRelease, live) // the Go side of release; the C handler is left behind
	for _, h := range append(invalidHandles, live) {
		if rc := callFromC(t, gdaAsyncOnSchema, h, nil, nil); rc != nil && rc[0].Int() == 0 {
			t.Errorf("on_schema(%#x) = 0 on a released handler", h)
		}
		if rc := callFromC(t, gdaAsyncOnNextTask, h, nil, nil); rc != nil && rc[0].Int() == 0 {
			t.Errorf("on_next_task(%#x) = 0 on a released handler", h)
		}
		callFromC(t, gdaAsyncOnError, h, 5, nil, nil)
		callFromC(t, gdaAsyncRelease, h)
	}
	checkNoPanic(t, before)
}

// exportedStreamHandle exports an empty stream and returns the handle its C
// cell holds.
func exportedStreamHandle(t *testing.T) uint64 {
	t.Helper()
	schema, err := cschema.NewSchema("l", "", cschema.FlagNullable, arrow.Metadata{}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := cdevice.NewListReader(schema, device.CPU)
	if err != nil {
		t.Fatal(err)
	}
	var out CArrowArrayStream
	if err := ExportArrayStream(r, &out); err != nil {
		t.Fatal(err)
	}
	return uint64(*(*uintptr)(out.private_data))
}

func TestExportedStreamCallbacksRejectStaleHandles(t *testing.T) {
	before := errs.Panics()
	live := exportedStreamHandle(t)
	callFromC(t, gdaStreamRelease, live) // the Go side of release; the C cell is left behind
	for _, h := range append(invalidHandles, live) {
		if rc := callFromC(t, gdaStreamGetSchema, h, nil); rc != nil && rc[0].Int() == 0 {
			t.Errorf("get_schema(%#x) = 0 on a released stream", h)
		}
		if rc := callFromC(t, gdaStreamGetNext, h, nil, nil); rc != nil && rc[0].Int() == 0 {
			t.Errorf("get_next(%#x) = 0 on a released stream", h)
		}
		if msg := callFromC(t, gdaStreamGetLastError, h); msg != nil && !msg[0].IsNil() {
			t.Errorf("get_last_error(%#x) returned a message for a released stream", h)
		}
		callFromC(t, gdaStreamRelease, h)
	}
	checkNoPanic(t, before)
}
