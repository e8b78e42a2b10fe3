package cdevice

import (
	"math"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/godevarrow/godevarrow/gosrc/cschema"
	"github.com/godevarrow/godevarrow/gosrc/device"
	"github.com/godevarrow/godevarrow/gosrc/errs"
)

// hostCopyAllocator allocates host memory that a copy then overwrites
// entirely, so it is not zeroed first: Arrow Go's mallocator falls back to
// malloc + memset whenever calloc leaves errno set, a second pass over every
// byte of a large copy.
type hostCopyAllocator struct{}

// Allocate exists for the memory.Allocator interface; buffers are made by
// NewHostBuffer, which reports a failed allocation as an error.
func (hostCopyAllocator) Allocate(int) []byte {
	panic("cdevice: host copy buffers are allocated by NewHostBuffer")
}

// hostAlloc is the allocation behind NewHostBuffer (a variable so that tests
// can make it fail).
var hostAlloc = device.AllocHost

// NewHostBuffer returns n bytes of uninitialized C memory as a buffer, or an
// ErrNoMemory error when the allocation fails: sizes can come from input,
// and a failed allocation must be an error, never a panic.
func NewHostBuffer(n int64) (*memory.Buffer, error) {
	if n < 0 || uint64(n) > math.MaxInt64/2 {
		return nil, errs.Errorf(errs.ErrNoMemory, "cannot allocate %d bytes of host memory", n)
	}
	p := hostAlloc(n)
	if p == nil {
		return nil, errs.Errorf(errs.ErrNoMemory, "out of host memory allocating %d bytes", n)
	}
	liveAllocatedBytes.Add(n)
	return memory.NewBufferWithAllocator(unsafe.Slice((*byte)(p), n), hostCopyAllocator{}), nil
}

func (hostCopyAllocator) Reallocate(int, []byte) []byte {
	panic("cdevice: copied buffers cannot grow")
}

func (hostCopyAllocator) Free(b []byte) {
	device.FreeHost(unsafe.Pointer(unsafe.SliceData(b))) // a large one goes back to the pool (hostpool.go)
	liveAllocatedBytes.Add(-int64(len(b)))
}

// CopyToDevice returns a copy of a on dst (a itself, retained, when it is
// already there). CPU and CUDA devices are supported in every direction,
// including between CUDA devices; every type is copied buffer by buffer, and
// the producer's sync_event is waited on first (on the copy's stream). A
// copy to the host is complete when CopyToDevice returns (its stream is
// synchronized) and carries no event. A copy to a device is ordered, not
// waited for: it carries an event recorded after its copies, as any device
// array may (the C Device Data Interface's sync_event), so its caller pays
// for the copies' issue, not for a round trip to the device and back
// (docs/cuda.md, "Copies").
func CopyToDevice(a *Array, dst device.Device) (*Array, error) {
	if dst.Type == device.CPU {
		dst = device.Host
	}
	if a.dev == dst {
		a.Retain()
		return a, nil
	}
	return copyTo(a, dst)
}

// Copy returns a copy of a on its own device (DLPack's copy=True). Host-
// readable memory (CPU, pinned, managed) is copied into CPU memory.
func Copy(a *Array) (*Array, error) {
	dst := a.dev
	if dst.Type.HostAccessible() {
		dst = device.Host
	}
	return copyTo(a, dst)
}

func copyTo(a *Array, dst device.Device) (*Array, error) {
	if err := a.readyBounds(); err != nil {
		return nil, err
	}
	src := a.dev
	srcHost := src.Type.HostAccessible()
	// the device side of a copy is device memory, whose backend allocates
	// and copies on its streams
	copies := func(t device.Type) bool { return device.TraitsOf(t).DeviceMemory }
	if !srcHost && !copies(src.Type) || dst.Type != device.CPU && !copies(dst.Type) {
		return nil, errs.Errorf(errs.ErrNotImplemented, "copies from %s to %s are not implemented", src, dst)
	}
	if srcHost && dst.Type == device.CPU {
		return copyOnHost(a)
	}
	// the copies run on a stream of the device that is not the host
	on := dst
	if dst.Type == device.CPU {
		on = src
	}
	b, err := device.BackendFor(on.Type)
	if err != nil {
		return nil, err
	}
	if dst.Type != device.CPU {
		if err := b.CheckDevice(int(dst.ID)); err != nil {
			return nil, err
		}
	}
	stream, err := b.AcquireStream(int(on.ID))
	if err != nil {
		return nil, err
	}
	defer b.ReleaseStream(stream)
	if srcHost {
		err = a.WaitOnHost()
	} else {
		err = a.WaitReadyOn(stream)
	}
	if err != nil {
		return nil, err
	}
	c := copier{src: src, dst: dst, b: b, stream: stream}
	if dst.Type != device.CPU {
		var plan arenaPlan
		if plan.add(a.data, 0); plan.bitmaps+plan.others > 0 {
			if c.arena, err = newArena(b, int(dst.ID), plan); err != nil {
				return nil, err
			}
		}
	}
	data, err := c.copyData(a.data, 0)
	if err != nil {
		// queued copies may still write into the new buffers: free them only
		// once the stream is drained (or never, if it cannot be)
		if b.DrainStream(stream) {
			c.releaseAll()
			c.releaseArena()
		}
		return nil, err
	}
	// a copy to a device is ready once its stream reaches an event recorded
	// after its copies; a copy to the host once its stream is synchronized
	var cell unsafe.Pointer
	var destroy func()
	if dst.Type != device.CPU {
		cell, destroy, err = recordEvent(b, stream)
	} else {
		err = b.SyncStream(stream)
	}
	if err != nil {
		if b.DrainStream(stream) {
			data.Release()
			c.releaseArena()
		}
		return nil, err
	}
	c.releaseArena() // the buffers hold it now
	if cell != nil {
		return newArray(a.schema, data, dst, cell, newOwner(destroy)), nil
	}
	if !srcHost {
		// the stream waited for a's event before its copies: it is complete
		a.eventDone.Store(true)
	}
	// the stream is synchronized: the copy is complete, and the result needs
	// no event (a NULL sync_event says the data may be read at once)
	return newArray(a.schema, data, dst, nil, nil), nil
}

type copier struct {
	src, dst device.Device
	b        device.Backend // of the device side; nil for host-to-host copies
	stream   device.Stream
	arena    *deviceArena // of a copy to a device: its buffers' memory (arena.go)
	// references dropped on failure; released only after the stream is
	// synchronized, because queued copies may still write into them
	garbage []interface{ Release() }
}

func (c *copier) releaseAll() {
	for _, g := range c.garbage {
		g.Release()
	}
	c.garbage = nil
}

// releaseArena drops the copy's hold on its arena.
func (c *copier) releaseArena() {
	if c.arena != nil {
		c.arena.release()
		c.arena = nil
	}
}

// copyRange copies bytes [from, to) of a buffer (clipped to its length) to
// the destination device; bitmap: it is a validity bitmap (buffer 0), which
// an arena keeps with the others (arena.go).
func (c *copier) copyRange(b *memory.Buffer, from, to int64, bitmap bool) (*memory.Buffer, error) {
	if b == nil {
		return nil, nil
	}
	from, to = clipRange(b, from, to)
	n := to - from
	srcPtr := unsafe.Pointer(unsafe.SliceData(b.Bytes()))
	if srcPtr != nil {
		srcPtr = unsafe.Add(srcPtr, from)
	}
	var out *memory.Buffer
	var dstPtr unsafe.Pointer
	if c.dst.Type != device.CPU {
		// the arena holds every buffer of a copy to a device (arena.go)
		if c.arena != nil {
			out = c.arena.carve(n, bitmap)
		}
		if out == nil {
			return nil, errs.Errorf(errs.ErrInternal, "a buffer of %d bytes does not fit the device copy's planned allocation", n)
		}
		dstPtr = unsafe.Pointer(unsafe.SliceData(out.Bytes()))
	} else if n > 0 {
		b, err := NewHostBuffer(n)
		if err != nil {
			return nil, err
		}
		out = b
		dstPtr = unsafe.Pointer(unsafe.SliceData(b.Bytes()))
	} else {
		out = memory.NewResizableBuffer(Allocator)
	}
	if n == 0 || srcPtr == nil {
		return out, nil
	}
	srcHost := c.src.Type.HostAccessible()
	if c.stream == nil { // host to host
		copy(unsafe.Slice((*byte)(dstPtr), n), unsafe.Slice((*byte)(srcPtr), n))
		return out, nil
	}
	var kind device.CopyKind
	switch {
	case srcHost && c.dst.Type != device.CPU:
		kind = device.HostToDevice
	case !srcHost && c.dst.Type == device.CPU:
		kind = device.DeviceToHost
	case c.src.ID == c.dst.ID:
		kind = device.DeviceToDevice
	default:
		kind = device.PeerToPeer
	}
	if err := c.b.CopyAsync(c.stream, kind, dstPtr, srcPtr, n, int(c.src.ID)); err != nil {
		c.garbage = append(c.garbage, out)
		return nil, err
	}
	return out, nil
}

func (c *copier) copyData(d arrow.ArrayData, depth int) (arrow.ArrayData, error) {
	if depth > cschema.MaxNesting {
		return nil, errs.Errorf(errs.ErrInvalid, "array nested deeper than %d levels", cschema.MaxNesting)
	}
	var bufs []*memory.Buffer
	var children []arrow.ArrayData
	var dict arrow.ArrayData
	drop := func(into *[]interface{ Release() }) {
		for _, b := range bufs {
			if b != nil {
				*into = append(*into, b)
			}
		}
		for _, ch := range children {
			*into = append(*into, ch)
		}
		if dict != nil {
			*into = append(*into, dict)
		}
	}
	fail := func(err error) (arrow.ArrayData, error) {
		drop(&c.garbage)
		return nil, err
	}
	plan := planCopy(d)
	for i, b := range d.Buffers() {
		r := plan.buffers[i]
		nb, err := c.copyRange(b, r[0], r[1], i == 0)
		if err != nil {
			return fail(err)
		}
		bufs = append(bufs, nb)
	}
	for i, ch := range d.Children() {
		if r := plan.children; r != nil {
			ch = array.NewSliceData(ch, r[i][0], r[i][1])
			defer ch.Release()
		}
		nc, err := c.copyData(ch, depth+1)
		if err != nil {
			return fail(err)
		}
		children = append(children, nc)
	}
	var out arrow.ArrayData
	if hasDictionary(d) {
		var err error
		if dict, err = c.copyData(d.Dictionary(), depth+1); err != nil {
			return fail(err)
		}
		out = array.NewDataWithDictionary(d.DataType(), d.Len(), bufs, d.NullN(), plan.offset, dict.(*array.Data))
	} else {
		out = array.NewData(d.DataType(), d.Len(), bufs, children, d.NullN(), plan.offset)
	}
	// out holds its own references now
	var mine []interface{ Release() }
	drop(&mine)
	for _, m := range mine {
		m.Release()
	}
	return out, nil
}

// hostReader copies every array of a device stream to the host.
type hostReader struct{ ArrayReader }

// ToHostReader returns a reader of r's arrays copied to host memory (r itself
// when it is already a CPU stream).
func ToHostReader(r ArrayReader) ArrayReader {
	if r.DeviceType() == device.CPU {
		return r
	}
	return hostReader{r}
}

func (h hostReader) DeviceType() device.Type { return device.CPU }

func (h hostReader) Next() (*Array, error) {
	a, err := h.ArrayReader.Next()
	if err != nil {
		return nil, err
	}
	defer a.Release()
	return CopyToDevice(a, device.Host)
}

// copyOnHost copies host-readable memory (CPU, or pinned or managed memory
// once its producer's event completed) into CPU memory with plain copies.
func copyOnHost(a *Array) (*Array, error) {
	if err := a.WaitOnHost(); err != nil {
		return nil, err
	}
	c := copier{src: a.dev, dst: device.Host}
	data, err := c.copyData(a.data, 0)
	if err != nil {
		c.releaseAll()
		return nil, err
	}
	return newArray(a.schema, data, device.Host, nil, nil), nil
}

// copyPlan says which bytes of each buffer of a node a copy needs, which
// slice of each child, and the copy's offset. A slice is copied without the
// values before it, except for a remainder of offset%8 elements that keeps
// bit-packed buffers aligned (bits cannot be shifted without a kernel).
// Values reached through offsets (string data, list children, dense union
// children), run-end encoded children and dictionaries are copied whole.
type copyPlan struct {
	buffers  [][2]int64 // byte range per buffer
	children [][2]int64 // element range per child; nil: children copied as they are
	offset   int
}

func planCopy(d arrow.ArrayData) copyPlan {
	nbuf := len(d.Buffers())
	whole := copyPlan{buffers: make([][2]int64, nbuf), offset: d.Offset()}
	for i, b := range d.Buffers() {
		if b != nil {
			whole.buffers[i] = [2]int64{0, int64(b.Len())}
		}
	}
	off, end := int64(d.Offset()), int64(d.Offset()+d.Len())
	keep := off % 8
	start := off - keep // first element copied
	p := copyPlan{buffers: whole.buffers, offset: int(keep)}
	bits := func(i int) {
		if i < nbuf {
			p.buffers[i] = [2]int64{start / 8, (end + 7) / 8}
		}
	}
	bytesOf := func(i int, w, extra int64) {
		if i < nbuf {
			p.buffers[i] = [2]int64{start * w, (end + extra) * w}
		}
	}
	dt := d.DataType()
	if ext, ok := dt.(arrow.ExtensionType); ok {
		dt = ext.StorageType()
	}
	switch t := dt.(type) {
	case *arrow.NullType, *arrow.RunEndEncodedType:
		return whole
	case *arrow.DictionaryType:
		bits(0)
		bytesOf(1, int64(t.IndexType.(arrow.FixedWidthDataType).BitWidth()/8), 0)
	case *arrow.BooleanType:
		bits(0)
		bits(1)
	case *arrow.StringType, *arrow.BinaryType, *arrow.ListType, *arrow.MapType:
		bits(0)
		bytesOf(1, 4, 1)
	case *arrow.LargeStringType, *arrow.LargeBinaryType, *arrow.LargeListType:
		bits(0)
		bytesOf(1, 8, 1)
	case *arrow.ListViewType:
		bits(0)
		bytesOf(1, 4, 0)
		bytesOf(2, 4, 0)
	case *arrow.LargeListViewType:
		bits(0)
		bytesOf(1, 8, 0)
		bytesOf(2, 8, 0)
	case *arrow.StringViewType, *arrow.BinaryViewType:
		bits(0)
		bytesOf(1, 16, 0)
	case *arrow.StructType:
		bits(0)
		p.children = sliceChildren(d, start, end, 1)
	case *arrow.FixedSizeListType:
		bits(0)
		p.children = sliceChildren(d, start, end, int64(t.Len()))
	case *arrow.SparseUnionType:
		bytesOf(1, 1, 0)
		p.children = sliceChildren(d, start, end, 1)
	case *arrow.DenseUnionType:
		bytesOf(1, 1, 0)
		bytesOf(2, 4, 0)
	case arrow.FixedWidthDataType:
		if t.BitWidth()%8 != 0 {
			return whole
		}
		bits(0)
		bytesOf(1, int64(t.BitWidth()/8), 0)
	default:
		return whole
	}
	return p
}

// sliceChildren gives each child the elements [start*k, end*k).
func sliceChildren(d arrow.ArrayData, start, end, k int64) [][2]int64 {
	r := make([][2]int64, len(d.Children()))
	for i := range r {
		r[i] = [2]int64{start * k, end * k}
	}
	return r
}
