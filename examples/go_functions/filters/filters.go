// Package filters is an example of Go functions that Python calls through
// godevarrow: a filter and an aggregate over a record batch, and a filter
// over a stream that runs as the stream is read. Build it into godevarrow
// with
//
//	python -m godevarrow build-ext ./filters
//
// and call it from Python as filters.at_least(batch, "n", 10) (run.py).
package filters

import (
	"context"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/godevarrow/godevarrow/gosrc/cdevice"
	"github.com/godevarrow/godevarrow/gosrc/cschema"
	"github.com/godevarrow/godevarrow/gosrc/device"
	"github.com/godevarrow/godevarrow/gosrc/pyfunc"
)

func init() {
	pyfunc.Register("at_least", AtLeast)
	pyfunc.Register("total", Total)
	pyfunc.Register("stream_at_least", StreamAtLeast)
	pyfunc.Register("passthrough", Passthrough)
}

// AtLeast returns the rows of batch whose int64 column is at least min
// (nulls are dropped). The rows are copied; the batch is not changed.
func AtLeast(ctx context.Context, batch *cdevice.Array, column string, min int64) (*cdevice.Array, error) {
	rec, err := batch.ToRecord()
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	values, err := int64Column(rec, column)
	if err != nil {
		return nil, err
	}
	// runs of consecutive kept rows, then each column's runs concatenated
	var runs [][2]int64
	for i := 0; i < values.Len(); i++ {
		if values.IsNull(i) || values.Value(i) < min {
			continue
		}
		if n := len(runs); n > 0 && runs[n-1][1] == int64(i) {
			runs[n-1][1]++
		} else {
			runs = append(runs, [2]int64{int64(i), int64(i) + 1})
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return take(rec, runs)
}

// Total returns the sum of the int64 column of batch (nulls count as 0).
func Total(batch *cdevice.Array, column string) (int64, error) {
	rec, err := batch.ToRecord()
	if err != nil {
		return 0, err
	}
	defer rec.Release()
	values, err := int64Column(rec, column)
	if err != nil {
		return 0, err
	}
	var sum int64
	for i, v := range values.Int64Values() {
		if values.IsValid(i) {
			sum += v
		}
	}
	return sum, nil
}

// StreamAtLeast is AtLeast over every batch of a stream. It returns at once:
// each batch is read and filtered when the caller reads the result.
func StreamAtLeast(ctx context.Context, batches cdevice.ArrayReader, column string, min int64) (cdevice.ArrayReader, error) {
	found := false
	for _, field := range batches.Schema().Children {
		found = found || field.Name == column
	}
	if !found {
		return nil, fmt.Errorf("the stream has no column named %q", column)
	}
	return &filtered{in: batches, ctx: ctx, column: column, min: min}, nil
}

// Passthrough returns its argument: a call that does nothing, for
// measuring what a call costs.
func Passthrough(batch *cdevice.Array) *cdevice.Array {
	batch.Retain() // the argument is lent; the result is handed over
	return batch
}

type filtered struct {
	in     cdevice.ArrayReader
	ctx    context.Context
	column string
	min    int64
}

func (f *filtered) Schema() *cschema.Schema { return f.in.Schema() }

func (f *filtered) DeviceType() device.Type { return f.in.DeviceType() }

func (f *filtered) Next() (*cdevice.Array, error) {
	batch, err := f.in.Next()
	if err != nil {
		return nil, err // io.EOF at the end
	}
	defer batch.Release()
	return AtLeast(f.ctx, batch, f.column, f.min)
}

func (f *filtered) Close() error { return f.in.Close() }

func int64Column(rec arrow.Record, name string) (*array.Int64, error) {
	idx := rec.Schema().FieldIndices(name)
	if len(idx) != 1 {
		return nil, fmt.Errorf("the batch has %d columns named %q, not one", len(idx), name)
	}
	values, ok := rec.Column(idx[0]).(*array.Int64)
	if !ok {
		return nil, fmt.Errorf("column %q is %s, not int64", name, rec.Column(idx[0]).DataType())
	}
	return values, nil
}

// take copies the rows in runs ([start, end) pairs) of rec into a new batch.
func take(rec arrow.Record, runs [][2]int64) (*cdevice.Array, error) {
	cols := make([]arrow.Array, rec.NumCols())
	var rows int64
	for _, r := range runs {
		rows += r[1] - r[0]
	}
	for c := range cols {
		parts := make([]arrow.Array, len(runs))
		for i, r := range runs {
			parts[i] = array.NewSlice(rec.Column(c), r[0], r[1])
		}
		var err error
		if len(parts) == 0 {
			cols[c] = array.MakeArrayOfNull(memory.DefaultAllocator, rec.Column(c).DataType(), 0)
		} else {
			cols[c], err = array.Concatenate(parts, memory.DefaultAllocator)
		}
		for _, p := range parts {
			p.Release()
		}
		if err != nil {
			return nil, err
		}
		defer cols[c].Release()
	}
	out := array.NewRecord(rec.Schema(), cols, rows)
	defer out.Release()
	return cdevice.FromRecord(out)
}
