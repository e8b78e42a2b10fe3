package cdevice

/*
#include "gda.h"
*/
import "C"

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/godevarrow/godevarrow/gosrc/cschema"
	"github.com/godevarrow/godevarrow/gosrc/device"
	"github.com/godevarrow/godevarrow/gosrc/errs"
)

// foreignOwner holds a moved ArrowDeviceArray (in a C-allocated cell) and
// calls its release exactly once when the last Go reference goes. Each
// imported buffer holds a reference through the memory.Allocator interface:
// arrow's Buffer calls Free when its own count reaches zero.
type foreignOwner struct {
	refs    atomic.Int64
	cell    *C.struct_ArrowDeviceArray // a moved C array, or
	release func()                     // the release of other foreign memory (DLPack, ...)
}

// newOwner is an owner, counted among the imports until its last unref,
// whose last unref calls release.
func newOwner(release func()) *foreignOwner {
	o := &foreignOwner{release: release}
	o.refs.Store(1)
	liveImports.Add(1)
	return o
}

func (o *foreignOwner) ref() { o.refs.Add(1) }

func (o *foreignOwner) unref() {
	switch n := o.refs.Add(-1); {
	case n == 0:
		if o.cell != nil {
			C.gda_call_array_release(&o.cell.array)
			C.free(unsafe.Pointer(o.cell))
			o.cell = nil
		} else {
			o.release()
		}
		liveImports.Add(-1)
	case n < 0:
		panic("cdevice: imported array released too many times")
	}
}

func (o *foreignOwner) Allocate(int) []byte { panic("cdevice: imported buffers are read-only") }
func (o *foreignOwner) Reallocate(int, []byte) []byte {
	panic("cdevice: imported buffers are read-only")
}
func (o *foreignOwner) Free([]byte) { o.unref() }

func importArray(c *CArrowArray, schema *cschema.Schema) (*Array, error) {
	if c == nil {
		return nil, errs.Errorf(errs.ErrInvalid, "ArrowArray pointer is NULL")
	}
	if c.release == nil {
		return nil, errs.Errorf(errs.ErrInvalid, "ArrowArray was already released (consumed twice?)")
	}
	cell := (*C.struct_ArrowDeviceArray)(C.calloc(1, C.sizeof_struct_ArrowDeviceArray))
	if cell == nil {
		C.gda_call_array_release(c)
		return nil, errs.Errorf(errs.ErrNoMemory, "out of memory importing an array")
	}
	cell.array = *c
	c.release = nil
	cell.device_type = C.ArrowDeviceType(device.CPU)
	cell.device_id = -1
	return importCell(cell, schema)
}

func importDeviceArray(c *CArrowDeviceArray, schema *cschema.Schema) (*Array, error) {
	if c == nil {
		return nil, errs.Errorf(errs.ErrInvalid, "ArrowDeviceArray pointer is NULL")
	}
	if c.array.release == nil {
		return nil, errs.Errorf(errs.ErrInvalid, "ArrowDeviceArray was already released (consumed twice?)")
	}
	cell := (*C.struct_ArrowDeviceArray)(C.calloc(1, C.sizeof_struct_ArrowDeviceArray))
	if cell == nil {
		C.gda_call_array_release(&c.array)
		return nil, errs.Errorf(errs.ErrNoMemory, "out of memory importing an array")
	}
	*cell = *c
	c.array.release = nil
	return importCell(cell, schema)
}

func importCell(cell *C.struct_ArrowDeviceArray, schema *cschema.Schema) (*Array, error) {
	return importOwned(cell, schema, &foreignOwner{cell: cell})
}

// importOwned imports the array in cell, which owner (fresh, unreferenced)
// releases: on failure at once, else when the Array and its buffers are gone.
func importOwned(cell *C.struct_ArrowDeviceArray, schema *cschema.Schema, owner *foreignOwner) (*Array, error) {
	owner.refs.Store(1) // the Array's own reference
	liveImports.Add(1)
	fail := func(err error) (*Array, error) {
		owner.unref()
		return nil, err
	}
	if schema == nil {
		return fail(errs.Errorf(errs.ErrInvalid, "no schema given for the imported array"))
	}
	dev := device.Device{Type: device.Type(cell.device_type), ID: int64(cell.device_id)}
	im := importer{owner: owner, hostReadable: true, onDevice: -1, buffersLeft: cschema.MaxImportBuffers}
	switch {
	case !dev.Type.Known():
		return fail(errs.Errorf(errs.ErrInvalid, "ArrowDeviceArray has unknown device_type %d", int32(dev.Type)))
	case C.gda_sync_event_not_a_pointer(cell) != 0:
		return fail(errs.Errorf(errs.ErrInvalid, "ArrowDeviceArray's sync_event %#x is not a pointer to an event", uint64(C.gda_sync_event_value(cell))))
	case dev.Type == device.CPU:
		if cell.sync_event != nil {
			return fail(errs.Errorf(errs.ErrInvalid, "ArrowDeviceArray on the CPU must have a NULL sync_event"))
		}
		dev.ID = -1
	default:
		b, _ := device.BackendFor(dev.Type) // nil: prepareDeviceImport says so
		deviceMemory := b != nil && b.Traits().DeviceMemory
		if dev.ID < 0 && deviceMemory {
			return fail(errs.Errorf(errs.ErrInvalid, "ArrowDeviceArray on %s has a negative device_id %d", dev.Type, dev.ID))
		}
		if err := prepareDeviceImport(cell, dev); err != nil {
			return fail(err)
		}
		if im.hostReadable = dev.Type.HostAccessible(); !im.hostReadable {
			im.lazy = &lazyBounds{dev: dev, event: unsafe.Pointer(cell.sync_event)}
		}
		if deviceMemory {
			im.backend, im.onDevice = b, int(dev.ID)
		}
	}
	data, err := im.node(&cell.array, schema, 0, nil)
	if err == nil && im.onDevice >= 0 {
		im.err = im.checkDeviceBuffers()
	}
	if err == nil && im.err != nil {
		data.Release()
		err = im.err
	}
	if err != nil {
		return fail(err)
	}
	a := newArray(schema, data, dev, unsafe.Pointer(cell.sync_event), owner)
	if im.lazy != nil && len(im.lazy.reads) > 0 {
		a.bounds = im.lazy
	}
	return a, nil
}

type importer struct {
	owner        *foreignOwner
	hostReadable bool
	lazy         *lazyBounds    // device memory: the bounds the walk could not read
	backend      device.Backend // of device memory: checks where the buffers are
	onDevice     int            // >= 0: check that every buffer belongs to this device
	err          error          // the first buffer-ownership problem found
	buffersLeft  int64          // of the cschema.MaxImportBuffers an import may take
	// the device buffers to check, all at once after the walk (one driver
	// call sequence for the whole import)
	deviceBuffers []uintptr
}

// checkDeviceBuffers checks that every collected buffer belongs to im.onDevice.
func (im *importer) checkDeviceBuffers() error {
	bad, badDev, err := im.backend.PointersOnDevice(im.onDevice, im.deviceBuffers)
	kind := strings.ToUpper(im.backend.Type().String())
	switch {
	case bad < 0:
		return nil
	case err != nil:
		return errs.Errorf(errs.ErrInvalid, "a buffer at %#x is not %s memory the driver knows: %v", im.deviceBuffers[bad], kind, err)
	default:
		return errs.Errorf(errs.ErrInvalid, "a buffer at %#x is on %s device %d, but the array declares device %d", im.deviceBuffers[bad], kind, badDev, im.onDevice)
	}
}

// buffer wraps n bytes at p as an arrow Buffer that keeps the producer's
// array alive. A NULL pointer gives a nil buffer (size must be 0).
func (im *importer) buffer(p unsafe.Pointer, n int64) *memory.Buffer {
	if p == nil {
		return nil
	}
	if n == 0 { // nothing of the producer's to keep (its pointer may dangle)
		return zeros(0)
	}
	if im.onDevice >= 0 {
		im.deviceBuffers = append(im.deviceBuffers, uintptr(p))
	}
	im.owner.ref()
	return memory.NewBufferWithAllocator(unsafe.Slice((*byte)(p), n), im.owner)
}

// minPointer is the least value a buffer pointer holding bytes can have
// (gda.h, GDA_MIN_POINTER): an empty buffer's pointer below it is a
// dangling one (see importer.node).
const minPointer = C.GDA_MIN_POINTER

// zeros is a non-NULL empty-content buffer for required buffers that the
// producer left NULL because they hold nothing.
func zeros(n int64) *memory.Buffer {
	return memory.NewBufferBytes(unsafe.Slice((*byte)(C.gda_zero_block()), n))
}

func checkedMul(a, b int64) (int64, bool) {
	if a < 0 || b < 0 || (b != 0 && a > math.MaxInt64/b) {
		return 0, false
	}
	return a * b, true
}

// nodePath locates a node in an array tree for error messages; it is
// turned into text only when there is an error (imports are hot).
type nodePath struct {
	parent *nodePath
	child  int // the child index, or -1 for the dictionary
}

func (p *nodePath) String() string {
	if p == nil {
		return ""
	}
	if p.child < 0 {
		return p.parent.String() + ".dictionary"
	}
	return p.parent.String() + ".children[" + strconv.Itoa(p.child) + "]"
}

func (im *importer) node(c *C.struct_ArrowArray, s *cschema.Schema, depth int, path *nodePath) (arrow.ArrayData, error) {
	if depth > cschema.MaxNesting {
		return nil, errs.Errorf(errs.ErrInvalid, "array nested deeper than %d levels (cyclic?)", cschema.MaxNesting)
	}
	bad := func(format string, args ...any) (arrow.ArrayData, error) {
		where := "ArrowArray" + path.String()
		if s.Name != "" {
			where = fmt.Sprintf("%s (field %q)", where, s.Name)
		}
		return nil, errs.Errorf(errs.ErrInvalid, "%s: %s", where, fmt.Sprintf(format, args...))
	}
	if depth > 0 && c.release == nil {
		return bad("child is marked released")
	}
	length, offset, nulls := int64(c.length), int64(c.offset), int64(c.null_count)
	switch {
	case length < 0:
		return bad("negative length %d", length)
	case offset < 0:
		return bad("negative offset %d", offset)
	case nulls < -1:
		return bad("invalid null_count %d", nulls)
	case nulls > length:
		return bad("null_count %d exceeds length %d", nulls, length)
	case offset > math.MaxInt64-8-length: // headroom for bitmap sizes, (end + 7) / 8
		return bad("offset %d + length %d overflows", offset, length)
	}
	end := offset + length
	info := s.Info()
	indexInfo := info
	nBuf := int64(c.n_buffers)
	wantBuf := int64(info.BufferCount())
	if info.Layout == cschema.LayoutBinaryView {
		if nBuf < 3 {
			return bad("binary view arrays need at least 3 buffers, got n_buffers=%d", nBuf)
		}
	} else if nBuf != wantBuf {
		return bad("format %q needs %d buffers, got n_buffers=%d", s.Format, wantBuf, nBuf)
	}
	// sizes taken from the struct are bounded before anything is allocated
	if im.buffersLeft -= nBuf; im.buffersLeft < 0 {
		return bad("n_buffers=%d: the array has more than %d buffers in all", nBuf, cschema.MaxImportBuffers)
	}
	// The producer's buffer pointers, looked at as integers first: an empty
	// buffer's may be dangling (polars exports an empty Rust vector's, its
	// alignment: 0x1, 0x4, 0x8), valid for zero bytes, and must be neither
	// read nor held in a Go pointer (a stack copy then aborts the process).
	// One below the first page counts as NULL here (buf, which loads only
	// the others as pointers): accepted where the buffer holds nothing,
	// refused where it must hold bytes (nullWord gives its value).
	var rawBufs []uintptr
	var ptrBufs []unsafe.Pointer
	if nBuf > 0 {
		if c.buffers == nil {
			return bad("n_buffers=%d but buffers is NULL", nBuf)
		}
		rawBufs = unsafe.Slice((*uintptr)(unsafe.Pointer(c.buffers)), nBuf)
		ptrBufs = unsafe.Slice((*unsafe.Pointer)(unsafe.Pointer(c.buffers)), nBuf)
	}
	buf := func(i int64) unsafe.Pointer {
		if rawBufs[i] >= minPointer {
			return ptrBufs[i]
		}
		return nil
	}
	nullWord := func(i int64) string {
		if rawBufs[i] == 0 {
			return "NULL"
		}
		return fmt.Sprintf("%#x (not a pointer)", rawBufs[i])
	}
	nChildren := int64(c.n_children)
	if nChildren < 0 || (nChildren > 0 && c.children == nil) {
		return bad("invalid children (n_children=%d, children=%p)", nChildren, c.children)
	}
	if nChildren != int64(len(s.Children)) {
		return bad("schema has %d children but the array has n_children=%d", len(s.Children), nChildren)
	}
	for i, child := range unsafe.Slice(c.children, nChildren) {
		if child == nil {
			return bad("child %d is a NULL pointer", i)
		}
	}
	if (c.dictionary != nil) != (s.Dictionary != nil) {
		if s.Dictionary != nil {
			return bad("dictionary-encoded field has a NULL dictionary array")
		}
		return bad("array has a dictionary but its field is not dictionary-encoded")
	}

	// sized once: Arrow Go's array data keeps these slices
	buffers := make([]*memory.Buffer, 0, nBuf+1)
	var children []arrow.ArrayData
	if nChildren > 0 {
		children = make([]arrow.ArrayData, 0, nChildren)
	}
	release := func() {
		for _, b := range buffers {
			if b != nil {
				b.Release()
			}
		}
		for _, ch := range children {
			ch.Release()
		}
	}
	fail := func(err error) (arrow.ArrayData, error) { release(); return nil, err }
	failf := func(format string, args ...any) (arrow.ArrayData, error) {
		_, err := bad(format, args...)
		return fail(err)
	}

	// validity bitmap
	if indexInfo.HasValidity() {
		if buf(0) == nil {
			if nulls > 0 {
				return failf("null_count is %d but the validity buffer is %s", nulls, nullWord(0))
			}
			nulls = 0
			buffers = append(buffers, nil)
		} else {
			buffers = append(buffers, im.buffer(buf(0), (end+7)/8))
		}
	} else if info.Layout != cschema.LayoutRunEndEncoded && info.Layout != cschema.LayoutNull {
		buffers = append(buffers, nil) // Arrow Go keeps a validity slot for unions
	}
	// required data buffer i of n bytes; NULL is accepted only when n == 0
	required := func(i int64, n int64, what string) error {
		if buf(i) == nil {
			if n != 0 {
				_, err := bad("%s buffer (buffers[%d]) is %s but must hold %d bytes", what, i, nullWord(i), n)
				return err
			}
			buffers = append(buffers, zeros(0))
			return nil
		}
		buffers = append(buffers, im.buffer(buf(i), n))
		return nil
	}
	// offsets buffer i with width w: it must have end+1 entries; check gets
	// the last offset of the array's range once the first and last are known
	// to be non-negative and ordered: now when the host can read them, else
	// when an operation first needs them (lazyBounds)
	offsets := func(i int64, w int64, check func(last int64) error) error {
		n, ok := checkedMul(end+1, w)
		if !ok {
			_, err := bad("offsets size overflows")
			return err
		}
		if buf(i) == nil {
			if end != 0 {
				_, err := bad("offsets buffer (buffers[%d]) is %s", i, nullWord(i))
				return err
			}
			buffers = append(buffers, zeros(n))
			return check(0)
		}
		buffers = append(buffers, im.buffer(buf(i), n))
		ends := func(first, last int64) error {
			if first < 0 || last < first {
				_, err := bad("offsets [%d, %d] of the array's range are negative or decreasing", first, last)
				return err
			}
			return check(last)
		}
		at, to := unsafe.Add(buf(i), offset*w), unsafe.Add(buf(i), end*w)
		if im.lazy == nil {
			return ends(readInt(unsafe.Slice((*byte)(at), w)), readInt(unsafe.Slice((*byte)(to), w)))
		}
		im.lazy.reads = append(im.lazy.reads, boundRead{at, to, w, ends})
		return nil
	}

	childLen := func(i int) int64 { return int64(unsafe.Slice(c.children, nChildren)[i].length) }
	var err error
	switch info.Layout {
	case cschema.LayoutNull:
		buffers = append(buffers, nil)
		nulls = length // every slot of a null array is null, whatever the producer counted
	case cschema.LayoutBool:
		err = required(1, (end+7)/8, "values")
	case cschema.LayoutFixedWidth:
		n, ok := checkedMul(end, int64(info.ByteWidth))
		if !ok {
			return failf("values size overflows")
		}
		err = required(1, n, "values")
	case cschema.LayoutBinary, cschema.LayoutLargeBinary:
		w := int64(4)
		if info.Layout == cschema.LayoutLargeBinary {
			w = 8
		}
		// the data buffer's size is the last offset: known now on the host,
		// set by the check when device offsets are fetched
		last, p := int64(-1), buf(2)
		var data *memory.Buffer
		err = offsets(1, w, func(l int64) error {
			switch {
			case data == nil:
				last = l
			case p == nil && l != 0:
				_, err := bad("data buffer (buffers[2]) is %s but must hold %d bytes", nullWord(2), l)
				return err
			case l > math.MaxInt64-int64(uintptr(p)):
				_, err := bad("last offset %d overflows the address space", l)
				return err
			case p != nil && l != 0:
				data.Reset(unsafe.Slice((*byte)(p), l))
			}
			return nil
		})
		if err == nil {
			err = required(2, max(last, 0), "data")
			data = buffers[len(buffers)-1]
		}
	case cschema.LayoutBinaryView:
		views, ok := checkedMul(end, 16)
		if !ok {
			return failf("views size overflows")
		}
		if err = required(1, views, "views"); err != nil {
			break
		}
		nVariadic := nBuf - 3
		sizesAt := buf(nBuf - 1)
		if nVariadic > 0 && sizesAt == nil {
			return failf("variadic buffer sizes (last buffer) is %s", nullWord(nBuf-1))
		}
		var sizes []byte
		if nVariadic > 0 {
			if im.hostReadable {
				sizes = unsafe.Slice((*byte)(sizesAt), 8*nVariadic)
			} else if sizes, err = im.variadicSizes(sizesAt, 8*nVariadic); err != nil {
				return fail(err)
			}
		}
		for k := int64(0); k < nVariadic && err == nil; k++ {
			size := int64(binary.NativeEndian.Uint64(sizes[8*k:]))
			if size < 0 {
				return failf("variadic buffer %d has negative size %d", k, size)
			}
			err = required(2+k, size, fmt.Sprintf("variadic data %d", k))
		}
	case cschema.LayoutList, cschema.LayoutLargeList, cschema.LayoutMap:
		w := int64(4)
		if info.Layout == cschema.LayoutLargeList {
			w = 8
		}
		child := childLen(0)
		err = offsets(1, w, func(last int64) error {
			if last > child {
				_, err := bad("last offset %d is past the child's length %d", last, child)
				return err
			}
			return nil
		})
	case cschema.LayoutListView, cschema.LayoutLargeListView:
		w := int64(4)
		if info.Layout == cschema.LayoutLargeListView {
			w = 8
		}
		n, ok := checkedMul(end, w)
		if !ok {
			return failf("offsets size overflows")
		}
		if err = required(1, n, "offsets"); err == nil {
			err = required(2, n, "sizes")
		}
	case cschema.LayoutFixedSizeList:
		need, ok := checkedMul(end, int64(info.ListSize))
		if !ok {
			return failf("child length overflows")
		}
		if childLen(0) < need {
			return failf("fixed-size list of %d x %d needs a child of length >= %d, got %d", end, info.ListSize, need, childLen(0))
		}
	case cschema.LayoutStruct:
		for i := 0; i < int(nChildren); i++ {
			if childLen(i) < end {
				return failf("child %d has length %d, shorter than the struct's offset+length %d", i, childLen(i), end)
			}
		}
	case cschema.LayoutSparseUnion, cschema.LayoutDenseUnion:
		if err = required(0, end, "type ids"); err != nil {
			break
		}
		if info.Layout == cschema.LayoutDenseUnion {
			err = required(1, end*4, "offsets")
		} else {
			for i := 0; i < int(nChildren); i++ {
				if childLen(i) < end {
					return failf("sparse union child %d has length %d, shorter than offset+length %d", i, childLen(i), end)
				}
			}
		}
		if nulls > 0 {
			return failf("union arrays have no validity bitmap; null_count must be 0 or -1, got %d", nulls)
		}
		nulls = 0
	case cschema.LayoutRunEndEncoded:
		buffers = append(buffers, nil)
		if nulls > 0 {
			return failf("run-end encoded arrays have no validity bitmap; null_count must be 0 or -1, got %d", nulls)
		}
		nulls = 0
		if childLen(0) != childLen(1) {
			return failf("run_ends (length %d) and values (length %d) differ in length", childLen(0), childLen(1))
		}
	}
	if err != nil {
		return fail(err)
	}

	if nChildren > 0 {
		kids := unsafe.Slice(c.children, nChildren)
		for i, k := range kids {
			if k == nil {
				return failf("children[%d] is NULL", i)
			}
			d, err := im.node(k, s.Children[i], depth+1, &nodePath{path, i})
			if err != nil {
				return fail(err)
			}
			children = append(children, d)
		}
	}
	dt, err := s.DataType()
	if err != nil {
		return fail(err)
	}
	var out arrow.ArrayData
	if s.Dictionary != nil {
		dict, err := im.node(c.dictionary, s.Dictionary, depth+1, &nodePath{path, -1})
		if err != nil {
			return fail(err)
		}
		out = array.NewDataWithDictionary(dt, int(length), buffers, int(nulls), int(offset), dict.(*array.Data))
		dict.Release()
	} else {
		out = array.NewData(dt, int(length), buffers, children, int(nulls), int(offset))
	}
	release()
	return out, nil
}

// WrapForeign wraps memory that another library owns as a flat Array
// (zero-copy): buffers[i] holds sizes[i] bytes on dev, and release is called
// exactly once when the last reference goes, or before WrapForeign returns an
// error. For CUDA memory every buffer must belong to dev (checked with the
// driver), and when ready is non-nil the Array gets an event recorded on
// ready: the producer's pending writes were queued there (the CUDA Array
// Interface's stream) or ordered before it (the stream a DLPack consumer
// hands the producer), so later readers wait on the event.
func WrapForeign(schema *cschema.Schema, dev device.Device, length, nullCount int64, buffers []unsafe.Pointer, sizes []int64, ready device.Stream, release func()) (*Array, error) {
	owner := newOwner(release)
	fail := func(err error) (*Array, error) {
		owner.unref()
		return nil, err
	}
	if len(schema.Children) != 0 || schema.Dictionary != nil || len(buffers) != schema.Info().BufferCount() || len(sizes) != len(buffers) {
		return fail(errs.Errorf(errs.ErrInvalid, "WrapForeign needs a flat type and one size per buffer (format %q)", schema.Format))
	}
	if !schema.Info().HasValidity() {
		return fail(errs.Errorf(errs.ErrInvalid, "WrapForeign supports types with a validity bitmap, not %q", schema.Format))
	}
	b, _ := device.BackendFor(dev.Type)
	if ready != nil && (b == nil || !b.Traits().Streams) {
		return fail(errs.Errorf(errs.ErrInvalid, "a ready stream is meaningful only for CUDA, pinned or managed memory, not %s", dev))
	}
	if length < 0 || nullCount < -1 || nullCount > length {
		return fail(errs.Errorf(errs.ErrInvalid, "length %d with null count %d is not a valid array", length, nullCount))
	}
	for i, n := range sizes {
		if n < 0 || (buffers[i] == nil && n > 0) {
			return fail(errs.Errorf(errs.ErrInvalid, "buffer %d of %d bytes at %p is not a valid buffer", i, n, buffers[i]))
		}
	}
	if need, ok := valuesBytes(schema.Info(), length); !ok || sizes[1] < need {
		return fail(errs.Errorf(errs.ErrInvalid, "%d values of %s need %d bytes, the buffer has %d", length, schema.Format, need, sizes[1]))
	}
	dt, err := schema.DataType()
	if err != nil {
		return fail(err)
	}
	im := importer{owner: owner, hostReadable: dev.Type.HostAccessible(), onDevice: -1}
	if b != nil && b.Traits().DeviceMemory {
		if err := b.CheckDevice(int(dev.ID)); err != nil {
			return fail(err)
		}
		im.backend, im.onDevice = b, int(dev.ID)
	}
	bufs := make([]*memory.Buffer, len(buffers))
	for i, p := range buffers {
		bufs[i] = im.buffer(p, sizes[i])
	}
	if im.onDevice >= 0 {
		im.err = im.checkDeviceBuffers()
	}
	data := array.NewData(dt, int(length), bufs, nil, int(nullCount), 0)
	for _, b := range bufs {
		if b != nil {
			b.Release()
		}
	}
	if im.err != nil {
		data.Release()
		return fail(im.err)
	}
	var event unsafe.Pointer
	var lazy *lazyEvent
	switch {
	case ready != nil && canPutOff(b, ready):
		lazy = &lazyEvent{b: b, s: ready}
		owner.release = func() {
			lazy.free()
			release()
		}
	case ready != nil:
		cell, destroy, err := recordEvent(b, ready)
		if err != nil {
			data.Release()
			return fail(err)
		}
		event = cell
		owner.release = func() {
			destroy()
			release()
		}
	}
	a := newArray(schema, data, dev, event, owner)
	if ready != nil {
		a.eventOn, a.lazy = ready, lazy
	}
	return a, nil
}

// valuesBytes is the size of the values buffer of length flat values of a
// fixed-width or boolean layout (0 for others); false when it overflows.
func valuesBytes(info *cschema.FormatInfo, length int64) (int64, bool) {
	switch info.Layout {
	case cschema.LayoutFixedWidth:
		return checkedMul(length, int64(info.ByteWidth))
	case cschema.LayoutBool:
		return (length + 7) / 8, length <= math.MaxInt64-7
	}
	return 0, true
}

// recordEvent records a new event of b on s and returns a C cell holding
// the event (what a sync_event points to) and the function that releases both.
func recordEvent(b device.Backend, s device.Stream) (unsafe.Pointer, func(), error) {
	ev, err := b.RecordEvent(s)
	if err != nil {
		return nil, nil, err
	}
	// the event's own cell: it goes back to the pool with the event
	return ev.Cell(), func() { _ = b.ReleaseEvent(ev) }, nil
}

// NoEventToWaitFor reports whether no reader of the array waits for
// anything: it has no event, or one known to be complete. Once true it stays
// true.
func (a *Array) NoEventToWaitFor() bool { return !a.hasEvent() || a.eventDone.Load() }

// EventPutOffOn reports whether the array's event is (or would be) recorded
// on s's very queue (Backend.SameQueue), so that WaitReadyOn(s) waits for
// nothing.
func (a *Array) EventPutOffOn(s device.Stream) bool {
	if a.eventOn == nil || s == nil {
		return false
	}
	b, err := device.BackendFor(a.dev.Type)
	return err == nil && b.SameQueue(a.eventOn, s)
}

// WaitReadyOn orders the work queued on s after the producer's writes to the
// array's buffers (its sync_event); without an event it does nothing. This is
// what a producer does for a consumer that names the stream it will use
// (DLPack's stream argument).
func (a *Array) WaitReadyOn(s device.Stream) error {
	if !a.hasEvent() || a.eventDone.Load() {
		return nil
	}
	b, err := device.BackendFor(a.dev.Type)
	if err != nil {
		return err
	}
	if a.eventOn != nil && b.SameQueue(a.eventOn, s) {
		return nil // s is the queue the event was (or would be) recorded on
	}
	ev, err := a.syncEvent()
	if err != nil {
		return err
	}
	return b.WaitEvent(s, *(*unsafe.Pointer)(ev))
}

// WaitOnHost blocks until the producer's writes to the array's buffers are
// complete (its sync_event); without an event it returns at once. This is
// what a consumer that reads the buffers on the host, or on a stream it does
// not name to the producer, does first.
func (a *Array) WaitOnHost() error {
	if !a.hasEvent() || a.eventDone.Load() {
		return nil
	}
	ev, err := a.syncEvent()
	if err != nil {
		return err
	}
	if err := syncOnHost(a.dev, ev); err != nil {
		return err
	}
	a.eventDone.Store(true)
	return nil
}

// CUDAArrayInterfaceStream readies a CUDA array for a consumer of the CUDA
// Array Interface (v3) and returns the value of its "stream" entry: 0 (None,
// no synchronization needed) or 1 (the legacy default stream, which has been
// made to wait for the array's event). The handle 1 names the legacy stream
// of the consumer's *current* context, so it is used only when that context
// is the array's device's; otherwise the event is waited for on the host and
// the entry is None (a wait instead of a stream of the wrong context).
func (a *Array) CUDAArrayInterfaceStream() (uintptr, error) {
	if !a.hasEvent() || !device.TraitsOf(a.dev.Type).DeviceMemory {
		return 0, nil
	}
	b, err := device.BackendFor(a.dev.Type)
	if err != nil {
		return 0, err
	}
	s, ok := b.CallerDefaultStream(int(a.dev.ID))
	if !ok {
		return 0, a.WaitOnHost()
	}
	if err := a.WaitReadyOn(s); err != nil {
		return 0, err
	}
	return s.Handle(), nil
}
