package pyfunc_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/godevarrow/godevarrow/gosrc/cdevice"
	"github.com/godevarrow/godevarrow/gosrc/errs"
	"github.com/godevarrow/godevarrow/gosrc/pyfunc"
	"github.com/godevarrow/godevarrow/gosrc/streams"
)

func batch(t testing.TB, values ...int64) *cdevice.Array {
	t.Helper()
	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	b.AppendValues(values, nil)
	col := b.NewArray()
	defer col.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "n", Type: arrow.PrimitiveTypes.Int64}}, nil)
	rec := array.NewRecord(schema, []arrow.Array{col}, int64(len(values)))
	defer rec.Release()
	a, err := cdevice.FromRecord(rec)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// Sum adds up the first column of a batch.
func Sum(ctx context.Context, b *cdevice.Array) (int64, error) {
	rec, err := b.ToRecord()
	if err != nil {
		return 0, err
	}
	defer rec.Release()
	var s int64
	for _, v := range rec.Column(0).(*array.Int64).Int64Values() {
		s += v
	}
	return s, nil
}

func call(name string, args ...any) (any, error) {
	return pyfunc.Lookup(name).Call(context.Background(), args)
}

func TestCallAndErrors(t *testing.T) {
	pyfunc.Register("test_sum", Sum)
	pyfunc.Register("test_fail", func(b *cdevice.Array, why string) error { return errors.New(why) })
	pyfunc.Register("test_panic", func(n int8) bool { panic(fmt.Sprint("n is ", n)) })
	empty := cdevice.LiveStats()
	b := batch(t, 1, 2, 3)
	held := cdevice.LiveStats()

	if v, err := call("test_sum", b); err != nil || v != int64(6) {
		t.Fatalf("sum: %v, %v", v, err)
	}

	_, err := call("test_fail", b, "no luck")
	var fe *pyfunc.Error
	if !errors.As(err, &fe) || fe.IsPanic() || err.Error() != "test_fail: no luck" {
		t.Fatalf("error: %v", err)
	}

	_, err = call("test_panic", int64(7))
	if !errors.As(err, &fe) || !fe.IsPanic() || !strings.HasPrefix(err.Error(), "test_panic panicked: n is 7") {
		t.Fatalf("panic: %v", err)
	}
	if errs.Panics() != 0 {
		t.Fatal("a panic in a user's function counted as godevarrow's")
	}

	for _, bad := range []struct {
		name string
		args []any
		want string
	}{
		{"test_sum", nil, "test_sum(arg1) takes 1 argument, got 0"},
		{"test_sum", []any{"x"}, "argument 1 (arg1): bad argument: must be an array or a record batch, not a str"},
		{"test_panic", []any{int64(300)}, "300 does not fit in int8"},
		{"test_panic", []any{1.5}, "must be an int, not a float"},
	} {
		_, err := call(bad.name, bad.args...)
		if !errors.Is(err, pyfunc.ErrArgument) || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s%v: %v, want %q", bad.name, bad.args, err, bad.want)
		}
	}
	// the calls, failed ones included, neither released the caller's
	// batch nor kept anything of it
	if now := cdevice.LiveStats(); now != held {
		t.Fatalf("after the calls: %+v, before them: %+v", now, held)
	}
	b.Release()
	if now := cdevice.LiveStats(); now != empty {
		t.Fatalf("after the batch's release: %+v, before it was made: %+v", now, empty)
	}
}

func TestRegisterRefusesBadSignatures(t *testing.T) {
	for name, fn := range map[string]any{
		"bad_param":   func(ch chan int) {},
		"two_results": func() (int, int) { return 0, 0 },
		"variadic":    func(xs ...int) {},
		"not_a_func":  42,
		"class":       func() {},
		"1abc":        func() {},
		"__iter__":    func() {},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s was registered", name)
				}
			}()
			pyfunc.Register(name, fn)
		}()
	}
}

func TestCancelAndLazyStream(t *testing.T) {
	pyfunc.Register("test_block", func(ctx context.Context) error {
		<-ctx.Done()
		return ctx.Err()
	})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(10*time.Millisecond, cancel)
	if _, err := pyfunc.Lookup("test_block").Call(ctx, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled call returned %v", err)
	}

	closed := false
	var ctxAfter context.Context
	pyfunc.Register("test_pass", func(ctx context.Context, r cdevice.ArrayReader) cdevice.ArrayReader {
		ctxAfter = ctx
		return r
	})
	b := batch(t, 4, 5)
	defer b.Release()
	in, _ := cdevice.NewListReader(b.Schema(), b.Device().Type, b)
	b.Retain()
	v, err := call("test_pass", closeSpy{in, &closed})
	if err != nil {
		t.Fatal(err)
	}
	out := v.(*streams.OneShotStream)
	if closed || ctxAfter.Err() != nil {
		t.Fatal("the input of a returned stream was settled before the stream was read")
	}
	a, err, _ := out.Next(-1)
	if err != nil || a.Len() != 2 {
		t.Fatal(a, err)
	}
	a.Release()
	if _, err, _ := out.Next(-1); !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	_, _ = out.Close()
	if !closed || ctxAfter.Err() == nil {
		t.Fatal("closing the returned stream did not settle the call")
	}
}

type closeSpy struct {
	cdevice.ArrayReader
	closed *bool
}

func (c closeSpy) Close() error { *c.closed = true; return c.ArrayReader.Close() }

// PositiveSum is what a user's package looks like: its doc comment becomes
// the Python docstring when `godevarrow build-ext` builds it.
func PositiveSum(ctx context.Context, b *cdevice.Array) (int64, error) {
	s, err := Sum(ctx, b)
	return max(s, 0), err
}

// BenchmarkCall is the Go side of a no-op call (the bench's "Go functions"
// rows add the Python side).
func BenchmarkCall(b *testing.B) {
	if pyfunc.Lookup("bench_pass") == nil {
		pyfunc.Register("bench_pass", func(a *cdevice.Array) *cdevice.Array { a.Retain(); return a })
	}
	a := batch(b, 1, 2, 3)
	defer a.Release()
	f, args := pyfunc.Lookup("bench_pass"), []any{a}
	b.ReportAllocs()
	for b.Loop() {
		v, _ := f.Call(context.Background(), args)
		v.(*cdevice.Array).Release()
	}
}

func ExampleRegister() {
	pyfunc.Register("positive_sum", PositiveSum)

	f := pyfunc.Lookup("positive_sum")
	fmt.Println(f.Signature(), "->", f.Result)
	// Output: positive_sum(arg1) -> int
}
