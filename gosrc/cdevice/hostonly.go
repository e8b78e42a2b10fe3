package cdevice

/*
#include <stdlib.h>
*/
import "C"

import (
	"encoding/binary"
	mbits "math/bits"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/godevarrow/godevarrow/gosrc/cschema"
	"github.com/godevarrow/godevarrow/gosrc/device"
	"github.com/godevarrow/godevarrow/gosrc/errs"
)

// hostArray is the one way this package turns ArrayData (described by s)
// into an arrow.Array, whose methods (NullN, Value, String, Equals, compute)
// read the buffers on the host. It refuses data whose device the host
// cannot read, so no such read of device memory is reachable whatever the
// caller forgot. The data must have passed full validation: only then are
// Arrow Go's constructors and kernels safe on it (forKernels prepares it for
// compute kernels as well, see withKnownNullCounts).
func hostArray(dev device.Device, s *cschema.Schema, d arrow.ArrayData, forKernels bool) (arrow.Array, error) {
	if !dev.Type.HostAccessible() {
		return nil, errs.Errorf(errs.ErrNotImplemented, "array is on %s; copy it to the host first", dev)
	}
	known := withKnownNullCounts(s, d, forKernels)
	defer known.Release()
	return array.MakeFromData(known), nil
}

// countNulls returns the number of nulls of d (described by s) on dev,
// counting them when the producer left the count unknown (-1): on the host
// for host-readable memory (nullCount, after the array's event), else by
// copying the validity bits to the host (after waiting on event, the
// array's sync_event cell, when there is one).
func countNulls(dev device.Device, s *cschema.Schema, d arrow.ArrayData, event unsafe.Pointer) (int, error) {
	if n := d.NullN(); n >= 0 {
		return n, nil
	}
	if s.Info().Layout == cschema.LayoutNull {
		return d.Len(), nil
	}
	if !needsBitmap(s, d) {
		return 0, nil
	}
	if dev.Type.HostAccessible() {
		if err := syncOnHost(dev, event); err != nil {
			return 0, err
		}
		if n := nullCount(s, d); n >= 0 {
			return n, nil
		}
		return 0, errs.Errorf(errs.ErrInvalid, "the validity bitmap is too short to count the nulls of %d values", d.Len())
	}
	p, n, start := validityRange(d)
	bits, err := deviceBytes(dev, event, []unsafe.Pointer{p}, []int64{n})
	if err != nil {
		return 0, err
	}
	return d.Len() - countValid(bits[0], start, d.Len()), nil
}

// needsBitmap says whether d's (described by s) null count must be read
// from its validity bitmap.
func needsBitmap(s *cschema.Schema, d arrow.ArrayData) bool {
	bufs := d.Buffers()
	return s.Info().HasValidity() && len(bufs) > 0 && bufs[0] != nil && d.Len() > 0
}

// validityRange is the whole bytes of d's bitmap that hold its values' bits
// (address and size) and the bit of the first value within them (a slice
// need not start on a byte).
func validityRange(d arrow.ArrayData) (unsafe.Pointer, int64, int) {
	first, end := d.Offset()/8, (d.Offset()+d.Len()+7)/8
	p := unsafe.Add(unsafe.Pointer(unsafe.SliceData(d.Buffers()[0].Bytes())), first)
	return p, int64(end - first), d.Offset() - 8*first
}

// countValid counts the set bits [start, start+n) of bits: the bits before
// the first whole byte masked, then 64 at a time, then whole bytes, then the
// last bits masked.
func countValid(bits []byte, start, n int) int {
	valid, i, end := 0, start, start+n
	if i%8 != 0 && i < end {
		k := min(end, i-i%8+8) // the first byte boundary after i, or the end
		valid += mbits.OnesCount8(bits[i/8] >> (i % 8) & byte(1<<(k-i)-1))
		i = k
	}
	for ; i+64 <= end; i += 64 {
		valid += mbits.OnesCount64(binary.LittleEndian.Uint64(bits[i/8:]))
	}
	for ; i+8 <= end; i += 8 {
		valid += mbits.OnesCount8(bits[i/8])
	}
	if i < end {
		valid += mbits.OnesCount8(bits[i/8] & byte(1<<(end-i)-1))
	}
	return valid
}

// syncOnHost waits on the host for a host-visible array's event.
func syncOnHost(dev device.Device, event unsafe.Pointer) error {
	if event == nil || dev.Type == device.CPU {
		return nil
	}
	b, err := device.BackendFor(dev.Type)
	if err != nil {
		return err
	}
	return b.SyncEventOnHost(int(max(dev.ID, 0)), *(*unsafe.Pointer)(event))
}

// deviceBytes copies the n[i] bytes at each device address p[i] to the host
// in one batch (one stream, one wait on the array's event, one
// synchronization: Stream.Gather), after the array's event (a sync_event
// cell, or nil).
func deviceBytes(dev device.Device, event unsafe.Pointer, p []unsafe.Pointer, n []int64) ([][]byte, error) {
	views, free, err := deviceBytesInC(dev, event, p, n)
	if err != nil || views == nil {
		return nil, err
	}
	defer free()
	total := 0
	for _, v := range views {
		total += len(v)
	}
	all := make([]byte, 0, total) // one allocation, sliced per piece
	out := make([][]byte, len(views))
	for i, v := range views {
		at := len(all)
		all = append(all, v...)
		out[i] = all[at:len(all):len(all)]
	}
	return out, nil
}

// deviceBytesInC is deviceBytes into C memory: the pieces are views of it,
// valid until free is called (nil views and free when p is empty). A caller
// that only reads them once allocates nothing in Go.
func deviceBytesInC(dev device.Device, event unsafe.Pointer, p []unsafe.Pointer, n []int64) ([][]byte, func(), error) {
	if len(p) == 0 {
		return nil, nil, nil
	}
	b, err := device.BackendFor(dev.Type)
	if err != nil {
		return nil, nil, err
	}
	stream, err := b.AcquireStream(int(dev.ID))
	if err != nil {
		return nil, nil, err
	}
	defer b.ReleaseStream(stream)
	if event != nil {
		if err := b.WaitEvent(stream, *(*unsafe.Pointer)(event)); err != nil {
			return nil, nil, err
		}
	}
	total := int64(0)
	for _, size := range n {
		total += size
	}
	host := C.malloc(C.size_t(max(total, 1)))
	if host == nil {
		return nil, nil, errs.Errorf(errs.ErrNoMemory, "out of memory reading device memory")
	}
	dst := make([]unsafe.Pointer, len(p))
	at := int64(0)
	for i := range p {
		dst[i] = unsafe.Add(host, at)
		at += n[i]
	}
	if err := b.Gather(stream, dst, p, n); err != nil {
		if b.DrainStream(stream) {
			C.free(host)
		}
		return nil, nil, err
	}
	views := make([][]byte, len(p))
	for i := range p {
		views[i] = unsafe.Slice((*byte)(dst[i]), n[i])
	}
	return views, func() { C.free(host) }, nil
}

// WithKnownNullCounts returns a with every null count in its tree known:
// nodes whose producer left it unknown (-1) are counted (for device memory by
// copying their validity bits to the host). Consumers such as libcudf copy
// the count verbatim and take -1 for "no nulls" (pylibcudf/interop.pyx,
// cudf::from_arrow_device), so exports meant for them need it. An array
// whose counts are all known is returned as it is (retained).
//
// For device memory the validity bits of every unknown node are fetched with
// one batched device-to-host copy for the whole tree (deviceBytes), not one
// copy and synchronization per node.
func WithKnownNullCounts(a *Array) (*Array, error) {
	ev, err := a.syncEvent()
	if err != nil {
		return nil, err
	}
	counter := unknownNullCounter{dev: a.dev, event: ev}
	if !a.dev.Type.HostAccessible() {
		ptrs := make([]unsafe.Pointer, 0, len(a.data.Children())+1)
		sizes := make([]int64, 0, cap(ptrs))
		collectUnknownBitmaps(a.schema, a.data, &ptrs, &sizes)
		// the bits are only counted: read where they landed, in C memory
		bits, free, err := deviceBytesInC(a.dev, ev, ptrs, sizes)
		if err != nil {
			return nil, err
		}
		if free != nil {
			defer free()
		}
		counter.fetched = bits
	}
	data, changed, err := knownNullCounts(&counter, a.schema, a.data)
	if err != nil {
		return nil, err
	}
	if !changed {
		a.Retain()
		return a, nil
	}
	return a.derive(a.schema, data), nil
}

// unknownNullCounter counts the nulls of the nodes knownNullCounts visits;
// for device memory it takes the bitmaps fetched beforehand, in the order
// collectUnknownBitmaps listed them (children first, then the node).
type unknownNullCounter struct {
	dev     device.Device
	event   unsafe.Pointer
	fetched [][]byte
}

func (c *unknownNullCounter) count(s *cschema.Schema, d arrow.ArrayData) (int, error) {
	if n := d.NullN(); n >= 0 || c.dev.Type.HostAccessible() || !needsBitmap(s, d) {
		return countNulls(c.dev, s, d, c.event)
	}
	if len(c.fetched) == 0 {
		return 0, errs.Errorf(errs.ErrInvalid, "internal: no fetched validity bits left for a node of length %d", d.Len())
	}
	bits := c.fetched[0]
	c.fetched = c.fetched[1:]
	_, _, start := validityRange(d)
	return d.Len() - countValid(bits, start, d.Len()), nil
}

// collectUnknownBitmaps lists the validity bytes of every node of d whose
// null count is unknown, in knownNullCounts' order (children, then the node).
func collectUnknownBitmaps(s *cschema.Schema, d arrow.ArrayData, ptrs *[]unsafe.Pointer, sizes *[]int64) {
	for i, c := range d.Children() {
		collectUnknownBitmaps(s.Children[i], c, ptrs, sizes)
	}
	if d.NullN() < 0 && needsBitmap(s, d) {
		p, n, _ := validityRange(d)
		*ptrs = append(*ptrs, p)
		*sizes = append(*sizes, n)
	}
}

// knownNullCounts returns d, or a new ArrayData (changed) sharing d's buffers
// with every unknown null count counted.
func knownNullCounts(counter *unknownNullCounter, s *cschema.Schema, d arrow.ArrayData) (arrow.ArrayData, bool, error) {
	children := d.Children()
	var fixed []arrow.ArrayData
	for i, c := range children {
		k, changed, err := knownNullCounts(counter, s.Children[i], c)
		if err != nil {
			for _, f := range fixed[:min(i, len(fixed))] {
				if f != nil {
					f.Release()
				}
			}
			return nil, false, err
		}
		if changed && fixed == nil {
			fixed = make([]arrow.ArrayData, len(children))
		}
		if changed {
			fixed[i] = k
		}
	}
	nulls := d.NullN()
	if nulls < 0 {
		n, err := counter.count(s, d)
		if err != nil {
			return nil, false, err
		}
		nulls = n
	}
	if fixed == nil && nulls == d.NullN() {
		return d, false, nil
	}
	kids := make([]arrow.ArrayData, len(children))
	for i := range children {
		if kids[i] = children[i]; fixed != nil && fixed[i] != nil {
			kids[i] = fixed[i]
		}
	}
	out := array.NewData(d.DataType(), d.Len(), d.Buffers(), kids, nulls, d.Offset())
	if d.Dictionary() != nil {
		out.SetDictionary(d.Dictionary())
	}
	for _, f := range fixed {
		if f != nil {
			f.Release()
		}
	}
	return out, true, nil
}
