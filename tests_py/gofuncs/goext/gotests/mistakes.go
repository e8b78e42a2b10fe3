package gotests

import (
	"github.com/godevarrow/godevarrow/gosrc/cdevice"
	"github.com/godevarrow/godevarrow/gosrc/pyfunc"
)

// Functions that get their arguments' references wrong, as a user's code
// may: tests_py/gofuncs/goext/test_mistakes_in_build.py checks that each mistake is
// the function's error and that the library keeps working.
func init() {
	pyfunc.Register("return_argument", ReturnArgument)
	pyfunc.Register("release_argument", ReleaseArgument)
	pyfunc.Register("return_released", ReturnReleased)
	pyfunc.Register("slice_of_released", SliceOfReleased)
	pyfunc.Register("return_table_argument", func(t *cdevice.ChunkedArray) *cdevice.ChunkedArray { return t })
}

// ReturnArgument returns its argument without retaining it.
func ReturnArgument(batch *cdevice.Array) *cdevice.Array { return batch }

// ReleaseArgument releases an argument it does not own.
func ReleaseArgument(batch *cdevice.Array) int64 {
	batch.Release()
	return int64(batch.Len())
}

// ReturnReleased returns a slice it has released.
func ReturnReleased(batch *cdevice.Array) (*cdevice.Array, error) {
	s, err := batch.Slice(0, 1)
	if err != nil {
		return nil, err
	}
	s.Release()
	return s, nil
}

// SliceOfReleased releases its argument, then slices it.
func SliceOfReleased(batch *cdevice.Array) (*cdevice.Array, error) {
	batch.Release()
	return batch.Slice(0, 1)
}
