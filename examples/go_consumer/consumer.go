// A Go library that consumes an Arrow stream produced in Python. Built with
// -buildmode=c-shared and loaded by run.py with ctypes, it receives the
// ArrowArrayStream pointer of a PyCapsule and reads it with godevarrow's Go
// API, no Python involved.
package main

/*
#include <stdint.h>
*/
import "C"

import (
	"errors"
	"io"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/godevarrow/godevarrow/gosrc/cdevice"
)

// SumFirstColumn reads every batch of the stream, sums its first (int64)
// column and returns the sum; it writes the number of batches to *batches.
// The stream is moved: it is released before the call returns.
//
//export SumFirstColumn
func SumFirstColumn(stream unsafe.Pointer, batches *C.int64_t) C.int64_t {
	r, err := cdevice.ImportArrayStream(cdevice.StreamAt(stream))
	if err != nil {
		return -1
	}
	defer r.Close()
	var sum int64
	for {
		a, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return -1
		}
		rec, err := a.ToRecord()
		if err != nil {
			a.Release()
			return -1
		}
		for _, v := range rec.Column(0).(*array.Int64).Int64Values() {
			sum += v
		}
		rec.Release()
		a.Release()
		*batches++
	}
	return C.int64_t(sum)
}

func main() {}
