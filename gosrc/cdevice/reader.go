package cdevice

import (
	"io"
	"sync"

	"github.com/godevarrow/godevarrow/gosrc/cschema"
	"github.com/godevarrow/godevarrow/gosrc/device"
	"github.com/godevarrow/godevarrow/gosrc/errs"
)

// ArrayReader is a stream of arrays sharing one schema and one device type.
type ArrayReader interface {
	// Schema returns the schema of every array of the stream.
	Schema() *cschema.Schema
	// DeviceType returns the device type of every array of the stream.
	DeviceType() device.Type
	// Next returns the next array (the caller owns one reference), or
	// (nil, io.EOF) at the end of the stream.
	Next() (*Array, error)
	// Close releases the stream; it is idempotent.
	Close() error
}

// ---------------------------------------------------------------- sources

// ListReader is an ArrayReader over arrays already in memory.
type ListReader struct {
	schema  *cschema.Schema
	devType device.Type
	arrays  []*Array
	next    int
	mu      sync.Mutex
}

// NewListReader returns a reader of the given arrays (it retains them). All
// arrays must have the schema's type and be on devType.
func NewListReader(schema *cschema.Schema, devType device.Type, arrays ...*Array) (*ListReader, error) {
	for i, a := range arrays {
		if !a.schema.EqualType(schema) {
			return nil, errs.Errorf(errs.ErrInvalid, "array %d has type %s, the stream's schema is %s", i, a.schema, schema)
		}
		if a.dev.Type != devType {
			return nil, errs.Errorf(errs.ErrInvalid, "array %d is on %s, the stream is on %s", i, a.dev, devType)
		}
	}
	for _, a := range arrays {
		a.Retain()
	}
	return &ListReader{schema: schema, devType: devType, arrays: arrays}, nil
}

func (l *ListReader) Schema() *cschema.Schema { return l.schema }
func (l *ListReader) DeviceType() device.Type { return l.devType }

func (l *ListReader) Next() (*Array, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.next >= len(l.arrays) {
		return nil, io.EOF
	}
	a := l.arrays[l.next]
	l.arrays[l.next] = nil
	l.next++
	return a, nil
}

func (l *ListReader) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, a := range l.arrays {
		if a != nil {
			a.Release()
			l.arrays[i] = nil
		}
	}
	l.next = len(l.arrays)
	return nil
}

// castReader applies a requested schema to every array of a stream.
type castReader struct {
	ArrayReader
	target *cschema.Schema
}

// CastReader returns a reader that casts every array of r to target (see
// Cast). The schemas are checked for compatibility up front.
func CastReader(r ArrayReader, target *cschema.Schema) (ArrayReader, error) {
	target, err := producibleTarget(r.Schema(), target, r.DeviceType())
	if err != nil {
		return nil, err
	}
	if r.Schema().Equal(target) {
		return r, nil
	}
	if err := checkCastable(r.Schema(), target, r.DeviceType()); err != nil {
		return nil, err
	}
	return &castReader{ArrayReader: r, target: target}, nil
}

func (c *castReader) Schema() *cschema.Schema { return c.target }

func (c *castReader) Next() (*Array, error) {
	a, err := c.ArrayReader.Next()
	if err != nil {
		return nil, err
	}
	defer a.Release()
	return Cast(a, c.target)
}
