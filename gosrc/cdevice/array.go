package cdevice

import (
	"sync/atomic"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/godevarrow/godevarrow/gosrc/cschema"
	"github.com/godevarrow/godevarrow/gosrc/device"
	"github.com/godevarrow/godevarrow/gosrc/errs"
)

// Array is an Arrow array whose buffers live on a device: an arrow.ArrayData,
// the exact cschema.Schema describing it, the Device, and (for asynchronous devices)
// the event a reader must wait on before touching the buffers. A struct-typed
// Array is a record batch.
//
// An Array is immutable and reference counted: Retain and Release are safe
// from any goroutine, and releasing the last reference to an imported Array
// calls the producer's release callback on the releasing goroutine.
type Array struct {
	schema *cschema.Schema
	data   arrow.ArrayData
	dev    device.Device
	event  unsafe.Pointer
	owner  *foreignOwner // nil for arrays built in Go
	refs   atomic.Int64
	// goMemory is set when buffers may live in Go memory (arrays built by Go
	// callers, cast results): exports must pin them. Imported buffers are C memory.
	goMemory bool
	// fullyValid is set once Validate(a, true) passed: Arrow Go's
	// constructors and compute kernels are safe on the data only then.
	fullyValid atomic.Bool
	bounds     *lazyBounds // device offsets not yet fetched (device_import.go)
	// lazy, when set, is the event put off until first needed (event is nil
	// then: lazy_event.go)
	lazy *lazyEvent
	// eventOn is the stream the event was recorded on when it is one a
	// consumer may name again (an import's ready stream): a wait for the
	// event on the same queue is skipped (Backend.SameQueue)
	eventOn device.Stream
	// eventDone is set once a host synchronization that followed a wait for
	// the event returned: the writes it marks are complete, and waiting for
	// it again (a second copy to the host) would only cost a driver call
	eventDone atomic.Bool
}

// NewArray wraps data described by schema on dev. It retains data and checks
// that the buffer and child structure matches the schema; it does not read the
// buffers (use Validate for that).
func NewArray(schema *cschema.Schema, data arrow.ArrayData, dev device.Device) (*Array, error) {
	if err := checkData(schema, data, 0); err != nil {
		return nil, err
	}
	if dev.Type == 0 {
		dev = device.Host
	}
	data.Retain()
	a := newArray(schema, data, dev, nil, nil)
	a.goMemory = true
	return a, nil
}

// newArray takes over one reference of data (and of owner, if any).
func newArray(schema *cschema.Schema, data arrow.ArrayData, dev device.Device, event unsafe.Pointer, owner *foreignOwner) *Array {
	a := &Array{schema: schema, data: data, dev: dev, event: event, owner: owner}
	a.refs.Store(1)
	liveArrays.Add(1)
	return a
}

// FromArrow wraps an Arrow Go array (CPU memory) described by field.
func FromArrow(field arrow.Field, arr arrow.Array) (*Array, error) {
	s, err := cschema.SchemaFromField(field)
	if err != nil {
		return nil, err
	}
	return NewArray(s, arr.Data(), device.Host)
}

// FromRecord wraps an Arrow Go record as a struct-typed Array (a record batch).
func FromRecord(rec arrow.Record) (*Array, error) {
	s, err := cschema.SchemaFromArrowSchema(rec.Schema())
	if err != nil {
		return nil, err
	}
	children := make([]arrow.ArrayData, rec.NumCols())
	for i, c := range rec.Columns() {
		children[i] = c.Data()
	}
	dt, err := s.DataType()
	if err != nil {
		return nil, err
	}
	data := array.NewData(dt, int(rec.NumRows()), []*memory.Buffer{nil}, children, 0, 0)
	defer data.Release()
	return NewArray(s, data, device.Host)
}

// Schema returns the exact schema of the array.
func (a *Array) Schema() *cschema.Schema { return a.schema }

// Data returns the array data. The buffers are readable from the host only
// when Device().Type.HostAccessible().
func (a *Array) Data() arrow.ArrayData { return a.data }

// Device returns where the buffers live.
func (a *Array) Device() device.Device { return a.dev }

// SyncEvent returns the event (a pointer to a device event, e.g. a CUevent)
// that readers must wait on, or nil. An event put off (lazy_event.go) is
// recorded now; if that fails, the stream it was put off on is synchronized
// on the host instead (lazyEvent.waitOnHost), so that nil still means the
// data may be read.
func (a *Array) SyncEvent() unsafe.Pointer {
	ev, err := a.syncEvent()
	if err != nil {
		a.lazy.waitOnHost() // only a put-off event fails here
		return nil
	}
	return ev
}

// Len returns the number of elements (rows of a record batch).
func (a *Array) Len() int { return a.data.Len() }

// Offset returns the logical offset into the buffers.
func (a *Array) Offset() int { return a.data.Offset() }

// NullN returns the number of nulls, computing it on the host when the
// producer did not know it (-1) and the memory is host-readable; it stays -1
// for device memory.
func (a *Array) NullN() int {
	n := a.data.NullN()
	if n >= 0 || !a.dev.Type.HostAccessible() {
		return n
	}
	ev, err := a.syncEvent()
	if err != nil {
		return -1
	}
	n, err = countNulls(a.dev, a.schema, a.data, ev)
	if err != nil {
		return -1
	}
	return n
}

// validateForCompute runs full validation once per Array: what reaches Arrow
// Go's constructors and kernels from foreign memory must have passed it.
func (a *Array) validateForCompute() error {
	if a.fullyValid.Load() {
		return nil
	}
	if err := Validate(a, true); err != nil {
		return err
	}
	a.fullyValid.Store(true)
	return nil
}

// Retain adds a reference.
func (a *Array) Retain() { a.refs.Add(1) }

// Release drops a reference; the last one frees the data and, for imported
// arrays whose other parts are gone too, calls the producer's release.
func (a *Array) Release() {
	switch n := a.refs.Add(-1); {
	case n == 0:
		a.data.Release()
		if a.owner != nil {
			a.owner.unref()
		}
		liveArrays.Add(-1)
	case n < 0:
		panic("cdevice: Array released too many times")
	}
}

// RefCount returns the number of references held now: 0 (or less) once the
// array was released as often as it was retained. It is exact only for an
// Array no other goroutine retains or releases meanwhile (a Share of it).
func (a *Array) RefCount() int64 { return a.refs.Load() }

// Share returns another Array for the same data (the same device, event and
// producer) with a reference count of its own, which the caller owns. The
// data stays alive while either is: a holder that releases its Share too
// often cannot free what the holders of a still read.
func (a *Array) Share() (*Array, error) {
	if err := a.checkLive("share"); err != nil {
		return nil, err
	}
	a.data.Retain()
	return a.part(a.schema, a.data), nil
}

// checkLive refuses an operation on an Array released as often as it was
// retained: its data may be gone.
func (a *Array) checkLive(op string) error {
	if a.refs.Load() <= 0 {
		return errs.Errorf(errs.ErrInvalid, "cannot %s an array that was released (Retain it while it is used)", op)
	}
	return nil
}

// derive makes an Array that shares this one's device, event and producer.
func (a *Array) derive(schema *cschema.Schema, data arrow.ArrayData) *Array {
	if a.owner != nil {
		a.owner.ref()
	}
	d := newArray(schema, data, a.dev, a.event, a.owner)
	d.goMemory, d.bounds, d.eventOn, d.lazy = a.goMemory, a.bounds, a.eventOn, a.lazy
	return d
}

// part is derive for a slice or a column: a part of fully validated data
// is fully valid, and is not validated again before it is read.
func (a *Array) part(schema *cschema.Schema, data arrow.ArrayData) *Array {
	d := a.derive(schema, data)
	d.fullyValid.Store(a.fullyValid.Load())
	return d
}

// Slice returns a zero-copy view of length elements starting at offset.
func (a *Array) Slice(offset, length int64) (*Array, error) {
	if err := a.checkLive("slice"); err != nil {
		return nil, err
	}
	if offset < 0 || length < 0 || offset > int64(a.Len()) || length > int64(a.Len())-offset {
		return nil, errs.Errorf(errs.ErrInvalid, "slice [%d, %d+%d) is out of bounds for an array of length %d", offset, offset, length, a.Len())
	}
	sliced := array.NewSliceData(a.data, offset, offset+length)
	if flat := pushDownStructOffset(a.schema, sliced); flat != nil {
		sliced.Release()
		sliced = flat
	}
	return a.part(a.schema, sliced), nil
}

// pushDownStructOffset returns, for a struct without a validity bitmap whose
// offset is non-zero or whose children are longer than it, the same values
// with offset 0 and children sliced to exactly its length (zero-copy); nil
// otherwise. Record batches are such structs: consumers (pyarrow) reject
// record batches with a non-zero offset and take the children's lengths as
// the columns' lengths.
func pushDownStructOffset(s *cschema.Schema, d arrow.ArrayData) arrow.ArrayData {
	if s.Info().Layout != cschema.LayoutStruct || s.Dictionary != nil || d.Buffers()[0] != nil {
		return nil
	}
	if d.Offset() == 0 && childrenHaveLength(d, d.Len()) {
		return nil
	}
	off, n := int64(d.Offset()), int64(d.Len())
	children := make([]arrow.ArrayData, len(d.Children()))
	for i, c := range d.Children() {
		children[i] = array.NewSliceData(c, off, off+n)
	}
	out := array.NewData(d.DataType(), int(n), []*memory.Buffer{nil}, children, 0, 0)
	for _, c := range children {
		c.Release()
	}
	return out
}

func childrenHaveLength(d arrow.ArrayData, n int) bool {
	for _, c := range d.Children() {
		if c.Len() != n {
			return false
		}
	}
	return true
}

// NumChildren returns the number of children (columns of a record batch).
func (a *Array) NumChildren() int { return len(a.schema.Children) }

// Column returns child i of a struct array with the parent's offset and length
// applied, as a record batch's column. The parent's validity is not applied.
func (a *Array) Column(i int) (*Array, error) {
	if err := a.checkLive("take a column of"); err != nil {
		return nil, err
	}
	if a.schema.Info().Layout != cschema.LayoutStruct || a.schema.Dictionary != nil {
		return nil, errs.Errorf(errs.ErrInvalid, "columns exist only for struct arrays, not %q", a.schema.Format)
	}
	if i < 0 || i >= len(a.schema.Children) {
		return nil, errs.Errorf(errs.ErrInvalid, "column index %d out of range for %d columns", i, len(a.schema.Children))
	}
	child := a.data.Children()[i]
	off := int64(a.data.Offset())
	return a.part(a.schema.Children[i], array.NewSliceData(child, off, off+int64(a.data.Len()))), nil
}

// ToArrow returns the Arrow Go array (host memory only). The data is fully
// validated first (once per Array).
func (a *Array) ToArrow() (arrow.Array, error) {
	if !a.dev.Type.HostAccessible() {
		return nil, errs.Errorf(errs.ErrNotImplemented, "array is on %s; copy it to the host first", a.dev)
	}
	if err := a.validateForCompute(); err != nil {
		return nil, err
	}
	return hostArray(a.dev, a.schema, a.data, false)
}

// ToRecord returns the Arrow Go record of a struct array (host memory only).
// The data is fully validated first (once per Array).
func (a *Array) ToRecord() (arrow.Record, error) {
	if !a.dev.Type.HostAccessible() {
		return nil, errs.Errorf(errs.ErrNotImplemented, "array is on %s; copy it to the host first", a.dev)
	}
	if err := a.validateForCompute(); err != nil {
		return nil, err
	}
	sc, err := a.schema.ArrowSchema()
	if err != nil {
		return nil, err
	}
	cols := make([]arrow.Array, len(a.schema.Children))
	for i := range cols {
		c, err := a.Column(i)
		if err != nil {
			return nil, err
		}
		cols[i], err = hostArray(c.dev, c.schema, c.data, false)
		c.Release()
		if err != nil {
			return nil, err
		}
	}
	rec := array.NewRecord(sc, cols, int64(a.Len()))
	for _, c := range cols {
		c.Release()
	}
	return rec, nil
}

// WithValidity returns values (a flat array of a type with a validity
// bitmap, and no bitmap of its own) with validity's bytes as its bitmap,
// zero-copy: validity is a uint8 array on the same device and with offset 0
// whose bits, LSB first, mark valid slots counted from values' offset.
// nullCount may be -1 (unknown; it stays unknown on a device). Both inputs
// stay alive as long as the result; when they carry events the result gets
// one event recorded after both.
func WithValidity(values, validity *Array, nullCount int64) (*Array, error) {
	s := values.schema
	if len(s.Children) != 0 || s.Dictionary != nil || !s.Info().HasValidity() {
		return nil, errs.Errorf(errs.ErrInvalid, "a validity bitmap can be attached only to a flat array with one, not %s", s)
	}
	if values.data.Buffers()[0] != nil {
		return nil, errs.Errorf(errs.ErrInvalid, "the array already has a validity bitmap")
	}
	if validity.schema.Format != "C" || validity.Offset() != 0 {
		return nil, errs.Errorf(errs.ErrInvalid, "the validity bitmap must be a uint8 array with offset 0, not %s at offset %d", validity.schema, validity.Offset())
	}
	if validity.dev != values.dev {
		return nil, errs.Errorf(errs.ErrInvalid, "the validity bitmap is on %s but the values are on %s", validity.dev, values.dev)
	}
	need := (int64(values.Offset()) + int64(values.Len()) + 7) / 8
	if int64(validity.Len()) < need {
		return nil, errs.Errorf(errs.ErrInvalid, "the validity bitmap has %d bytes but %d values need %d", validity.Len(), values.Offset()+values.Len(), need)
	}
	if nullCount < -1 || nullCount > int64(values.Len()) {
		return nil, errs.Errorf(errs.ErrInvalid, "null count %d is out of range for %d values", nullCount, values.Len())
	}
	var event unsafe.Pointer
	var owner *foreignOwner
	if values.hasEvent() || validity.hasEvent() {
		cell, destroy, err := joinEvents(values, validity)
		if err != nil {
			return nil, err
		}
		event = cell
		owner = newOwner(destroy)
	}
	bufs := append([]*memory.Buffer{validity.data.Buffers()[1]}, values.data.Buffers()[1:]...)
	data := array.NewData(values.data.DataType(), values.Len(), bufs, nil, int(nullCount), values.Offset())
	out := newArray(s.WithNullable(), data, values.dev, event, owner)
	out.goMemory = values.goMemory || validity.goMemory
	return out, nil
}

// joinEvents records, on a new stream of the arrays' device, an event that
// completes after the events of all arrays (host-readable memory is waited
// for on the host instead).
func joinEvents(arrays ...*Array) (unsafe.Pointer, func(), error) {
	dev := arrays[0].dev
	if !device.TraitsOf(dev.Type).DeviceMemory {
		for _, a := range arrays {
			if err := a.WaitOnHost(); err != nil {
				return nil, nil, err
			}
		}
		return nil, func() {}, nil
	}
	b, err := device.BackendFor(dev.Type)
	if err != nil {
		return nil, nil, err
	}
	s, err := b.AcquireStream(int(dev.ID))
	if err != nil {
		return nil, nil, err
	}
	defer b.ReleaseStream(s)
	for _, a := range arrays {
		if err := a.WaitReadyOn(s); err != nil {
			return nil, nil, err
		}
	}
	return recordEvent(b, s)
}

// AsRecordBatch returns a one-column record batch (a struct array without
// validity) whose column is a, zero-copy; the column's field is a's schema.
func AsRecordBatch(a *Array) (*Array, error) {
	s, err := cschema.NewSchema("+s", "", 0, arrow.Metadata{}, []*cschema.Schema{a.schema}, nil)
	if err != nil {
		return nil, err
	}
	dt, err := s.DataType()
	if err != nil {
		return nil, err
	}
	data := array.NewData(dt, a.Len(), []*memory.Buffer{nil}, []arrow.ArrayData{a.data}, 0, 0)
	return a.derive(s, data), nil
}
