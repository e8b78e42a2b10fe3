package cdevice

import (
	"errors"
	"io"
	"math"
	"sync/atomic"

	"github.com/godevarrow/godevarrow/gosrc/cschema"
	"github.com/godevarrow/godevarrow/gosrc/device"
	"github.com/godevarrow/godevarrow/gosrc/errs"
)

// ChunkedArray is a sequence of arrays (chunks) of one type on one kind of
// device, read any number of times: where a stream is consumed by its
// reader, a ChunkedArray holds the chunks (a reference on each, never a
// copy) and hands out a fresh stream over them on every Reader call. A
// ChunkedArray whose type is a struct is a table (see Table).
//
// A ChunkedArray is immutable; its methods may be called from several
// goroutines. Release it when done (the chunks are released with it).
type ChunkedArray struct {
	schema  *cschema.Schema
	devType device.Type
	chunks  []*Array
	length  int64
	refs    atomic.Int64
}

// Table is a ChunkedArray of struct type, whose chunks are record batches
// and whose struct fields are the columns (see ChunkedArray.Column).
type Table = ChunkedArray

// NewChunkedArray returns a ChunkedArray over chunks (it takes a reference on
// each), of schema (nil: the first chunk's). Every chunk must have the
// schema's type and the first chunk's device type. A ChunkedArray of no
// chunks needs a schema; its device type is the CPU.
func NewChunkedArray(schema *cschema.Schema, chunks []*Array) (*ChunkedArray, error) {
	var length int64
	for _, a := range chunks {
		// each chunk's length is valid, their sum need not be: four chunks
		// of 2^62 rows would wrap to a length of 0
		n := int64(a.Len())
		if n > math.MaxInt64-length {
			return nil, errs.Errorf(errs.ErrInvalid, "chunk lengths add up to more than %d elements", int64(math.MaxInt64))
		}
		length += n
	}
	r, err := ReaderOver(schema, chunks) // the same checks as a stream of them
	if err != nil {
		return nil, err
	}
	c := &ChunkedArray{schema: r.schema, devType: r.devType, chunks: r.arrays, length: length}
	c.refs.Store(1)
	return c, nil
}

// NewTable is NewChunkedArray for record batches: the schema must be a struct.
func NewTable(schema *cschema.Schema, batches []*Array) (*Table, error) {
	t, err := NewChunkedArray(schema, batches)
	if err == nil && !t.schema.IsRecordBatch() {
		t.Release()
		return nil, errs.Errorf(errs.ErrInvalid, "a table's chunks are record batches (struct arrays), not %s", t.schema)
	}
	return t, err
}

// ReadChunkedArray reads r to its end into a ChunkedArray and closes r. The
// arrays are held as they came, not copied or concatenated. An error of the
// producer is returned, and nothing read before it is kept.
func ReadChunkedArray(r ArrayReader) (c *ChunkedArray, err error) {
	var chunks []*Array
	defer func() {
		if cerr := r.Close(); err == nil && cerr != nil {
			err = cerr
		}
		for _, a := range chunks {
			a.Release()
		}
		if err != nil && c != nil {
			c.Release()
			c = nil
		}
	}()
	for {
		a, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		chunks = append(chunks, a)
	}
	c, err = NewChunkedArray(r.Schema(), chunks)
	if err == nil && len(chunks) == 0 {
		c.devType = r.DeviceType()
	}
	return c, err
}

// Schema is the type (and field) every chunk has.
func (c *ChunkedArray) Schema() *cschema.Schema { return c.schema }

// DeviceType is the kind of device the chunks live on.
func (c *ChunkedArray) DeviceType() device.Type { return c.devType }

// Len is the total number of elements (rows, for a table).
func (c *ChunkedArray) Len() int64 { return c.length }

// NumChunks is the number of chunks.
func (c *ChunkedArray) NumChunks() int { return len(c.chunks) }

// Chunk returns chunk i, valid while c is (Retain it to keep it longer).
func (c *ChunkedArray) Chunk(i int) (*Array, error) {
	if i < 0 || i >= len(c.chunks) {
		return nil, errs.Errorf(errs.ErrInvalid, "chunk index %d out of range for %d chunks", i, len(c.chunks))
	}
	return c.chunks[i], nil
}

// Reader returns a fresh stream over the chunks, from the first.
func (c *ChunkedArray) Reader() ArrayReader {
	for _, a := range c.chunks {
		a.Retain()
	}
	return &ListReader{schema: c.schema, devType: c.devType, arrays: append([]*Array(nil), c.chunks...)}
}

// Slice returns the elements [offset, offset+length) as a ChunkedArray of
// zero-copy slices of the chunks they fall in (no empty chunks).
func (c *ChunkedArray) Slice(offset, length int64) (*ChunkedArray, error) {
	if offset < 0 || length < 0 || offset > c.length || length > c.length-offset {
		return nil, errs.Errorf(errs.ErrInvalid, "slice [%d, %d+%d) is out of bounds for a chunked array of length %d", offset, offset, length, c.length)
	}
	return c.mapChunks(c.schema, c.devType, func(a *Array) (*Array, error) {
		n := int64(a.Len())
		if length == 0 || offset >= n {
			offset -= min(offset, n)
			return nil, nil
		}
		take := min(length, n-offset)
		p, err := a.Slice(offset, take)
		length, offset = length-take, 0
		return p, err
	})
}

// Column returns field i of a table as a ChunkedArray, chunk by chunk; zero-copy.
func (c *ChunkedArray) Column(i int) (*ChunkedArray, error) {
	if !c.schema.IsRecordBatch() {
		return nil, errs.Errorf(errs.ErrInvalid, "only a table (struct type) has columns, not %s", c.schema)
	}
	if i < 0 || i >= len(c.schema.Children) {
		return nil, errs.Errorf(errs.ErrInvalid, "column index %d out of range for %d columns", i, len(c.schema.Children))
	}
	return c.mapChunks(c.schema.Children[i], c.devType, func(a *Array) (*Array, error) { return a.Column(i) })
}

// CopyToDevice copies every chunk to dst (see CopyToDevice).
func (c *ChunkedArray) CopyToDevice(dst device.Device) (*ChunkedArray, error) {
	return c.mapChunks(c.schema, dst.Type, func(a *Array) (*Array, error) { return CopyToDevice(a, dst) })
}

// mapChunks is the ChunkedArray of schema on devType over op of every chunk
// in order (a nil result leaves the chunk out).
func (c *ChunkedArray) mapChunks(schema *cschema.Schema, devType device.Type, op func(*Array) (*Array, error)) (*ChunkedArray, error) {
	if c.refs.Load() <= 0 {
		return nil, errs.Errorf(errs.ErrInvalid, "cannot use a chunked array that was released (Retain it while it is used)")
	}
	parts := make([]*Array, 0, len(c.chunks))
	defer func() {
		for _, p := range parts {
			p.Release() // the new ChunkedArray holds its own references
		}
	}()
	for _, a := range c.chunks {
		p, err := op(a)
		if err != nil {
			return nil, err
		}
		if p != nil {
			parts = append(parts, p)
		}
	}
	out, err := NewChunkedArray(schema, parts)
	if err == nil {
		out.devType = devType // also when there are no chunks
	}
	return out, err
}

// Validate validates every chunk (see Validate).
func (c *ChunkedArray) Validate(full bool) error {
	for i, a := range c.chunks {
		if err := Validate(a, full); err != nil {
			return errs.Errorf(errs.ErrInvalid, "chunk %d: %v", i, err)
		}
	}
	return nil
}

// Equal reports whether c and o hold the same values of the same type (see
// Equal), whatever their chunking.
func (c *ChunkedArray) Equal(o *ChunkedArray, checkMetadata bool) (bool, error) {
	if c.length != o.length || !sameType(c.schema, o.schema, checkMetadata, true) {
		return false, nil
	}
	// compare aligned pieces: cut both at every chunk boundary of either
	var i, j int
	var at, atI, atJ int64 // position, and where chunks i and j start
	for at < c.length {
		a, b := c.chunks[i], o.chunks[j]
		endI, endJ := atI+int64(a.Len()), atJ+int64(b.Len())
		end := min(endI, endJ)
		if end > at {
			// validated once as a whole chunk (the flag is kept on it), not
			// again as every slice cut from it below
			for _, whole := range []*Array{a, b} {
				if whole.dev.Type.HostAccessible() {
					if err := whole.validateForCompute(); err != nil {
						return false, err
					}
				}
			}
			x, err := a.Slice(at-atI, end-at)
			if err != nil {
				return false, err
			}
			y, err := b.Slice(at-atJ, end-at)
			if err != nil {
				x.Release()
				return false, err
			}
			eq, err := Equal(x, y, checkMetadata)
			x.Release()
			y.Release()
			if err != nil || !eq {
				return false, err
			}
			at = end
		}
		if at == endI {
			i, atI = i+1, endI
		}
		if at == endJ {
			j, atJ = j+1, endJ
		}
	}
	return true, nil
}

// Retain adds a reference.
func (c *ChunkedArray) Retain() { c.refs.Add(1) }

// RefCount returns the number of references held now (see Array.RefCount).
func (c *ChunkedArray) RefCount() int64 { return c.refs.Load() }

// Share returns another ChunkedArray over the same chunks with a reference
// count of its own, which the caller owns (see Array.Share).
func (c *ChunkedArray) Share() (*ChunkedArray, error) {
	if c.refs.Load() <= 0 {
		return nil, errs.Errorf(errs.ErrInvalid, "cannot share a chunked array that was released (Retain it while it is used)")
	}
	for _, a := range c.chunks {
		a.Retain()
	}
	s := &ChunkedArray{schema: c.schema, devType: c.devType, chunks: c.chunks, length: c.length}
	s.refs.Store(1)
	return s, nil
}

// Release drops a reference; the last one releases the chunks.
func (c *ChunkedArray) Release() {
	switch n := c.refs.Add(-1); {
	case n == 0:
		for _, a := range c.chunks {
			a.Release()
		}
		c.chunks = nil
	case n < 0:
		panic("cdevice: ChunkedArray released too many times")
	}
}
