package pyfunc_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/godevarrow/godevarrow/gosrc/pyfunc"
)

// A float32 parameter takes what a float32 holds: a finite value beyond its
// range is refused as an int that does not fit is, never turned into an
// infinity; infinities and NaN pass as given.
func TestFloat32ParametersRefuseFiniteValuesBeyondTheirRange(t *testing.T) {
	pyfunc.Register("test_f32", func(f float32) float64 { return float64(f) })
	pyfunc.Register("test_f64", func(f float64) float64 { return f })

	for _, bad := range []any{1e300, -1e300, math.MaxFloat64, 3.5e38, -3.5e38} {
		_, err := call("test_f32", bad)
		if !errors.Is(err, pyfunc.ErrArgument) || !strings.Contains(err.Error(), "does not fit in float32") {
			t.Errorf("float32 given %v: %v, want a refusal", bad, err)
		}
	}
	for _, good := range []struct {
		arg  any
		want float64
	}{
		{1.5, 1.5},
		{float64(math.MaxFloat32), math.MaxFloat32},
		{-float64(math.MaxFloat32), -math.MaxFloat32},
		{math.SmallestNonzeroFloat64, 0}, // underflow rounds, as in C and pyarrow's casts
		{math.Inf(1), math.Inf(1)},
		{math.Inf(-1), math.Inf(-1)},
		{int64(1) << 62, float64(float32(1 << 62))},
		{uint64(math.MaxUint64), float64(float32(math.MaxUint64))},
	} {
		got, err := call("test_f32", good.arg)
		if err != nil || got != good.want {
			t.Errorf("float32 given %v: %v, %v, want %v", good.arg, got, err, good.want)
		}
	}
	if got, err := call("test_f32", math.NaN()); err != nil || !math.IsNaN(got.(float64)) {
		t.Errorf("float32 given NaN: %v, %v", got, err)
	}
	if got, err := call("test_f64", 1e300); err != nil || got != 1e300 {
		t.Errorf("float64 given 1e300: %v, %v", got, err)
	}
}
