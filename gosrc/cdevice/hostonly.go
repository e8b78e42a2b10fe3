package cdevice

/*
#include <stdlib.h>
*/
import "C"

import (
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/godevarrow/godevarrow/gosrc/device"
)

// hostArray is the one way this package turns ArrayData (described by s)
// into an arrow.Array, whose methods (NullN, Value, String, Equals, compute)
// read the buffers on the host. It refuses data whose device the host
// cannot read, so no such read of device memory is reachable whatever the
// caller forgot. The data must have passed full validation: only then are
// Arrow Go's constructors and kernels safe on it (forKernels prepares it for
// compute kernels as well, see withKnownNullCounts).
func hostArray(dev device.Device, s *Schema, d arrow.ArrayData, forKernels bool) (arrow.Array, error) {
	if !dev.Type.HostAccessible() {
		return nil, errorf(ErrNotImplemented, "array is on %s; copy it to the host first", dev)
	}
	known := withKnownNullCounts(s, d, forKernels)
	defer known.Release()
	return array.MakeFromData(known), nil
}

// countNulls returns the number of nulls of d (described by s) on dev,
// counting them when the producer left the count unknown (-1): on the host
// for host-readable memory (nullCount), else by copying the validity bits
// to the host (after waiting on event, the array's sync_event cell, when
// there is one).
func countNulls(dev device.Device, s *Schema, d arrow.ArrayData, event unsafe.Pointer) (int, error) {
	if n := d.NullN(); n >= 0 {
		return n, nil
	}
	if dev.Type.HostAccessible() {
		if err := syncOnHost(dev, event); err != nil {
			return 0, err
		}
		if n := nullCount(s, d); n >= 0 {
			return n, nil
		}
		return 0, errorf(ErrInvalid, "the validity bitmap is too short to count the nulls of %d values", d.Len())
	}
	if s.info.Layout == LayoutNull {
		return d.Len(), nil
	}
	bufs := d.Buffers()
	if !s.info.HasValidity() || len(bufs) == 0 || bufs[0] == nil || d.Len() == 0 {
		return 0, nil
	}
	first, end := d.Offset()/8, (d.Offset()+d.Len()+7)/8
	n, err := deviceBytes(dev, event, unsafe.Add(unsafe.Pointer(unsafe.SliceData(bufs[0].Bytes())), first), int64(end-first))
	if err != nil {
		return 0, err
	}
	valid := 0 // bit by bit: a slice need not start on a byte
	start := d.Offset() - 8*first
	for i := start; i < start+d.Len(); i++ {
		valid += int(n[i/8]>>(i%8)) & 1
	}
	return d.Len() - valid, nil
}

// syncOnHost waits on the host for a host-visible array's event.
func syncOnHost(dev device.Device, event unsafe.Pointer) error {
	if event == nil || dev.Type == device.CPU {
		return nil
	}
	return device.SyncEventOnHost(int(max(dev.ID, 0)), *(*unsafe.Pointer)(event))
}

// deviceBytes copies n bytes at the device address p to the host, after the
// array's event (a sync_event cell, or nil).
func deviceBytes(dev device.Device, event unsafe.Pointer, p unsafe.Pointer, n int64) ([]byte, error) {
	stream, err := device.NewStream(int(dev.ID))
	if err != nil {
		return nil, err
	}
	defer stream.Destroy()
	if event != nil {
		if err := stream.WaitEvent(*(*unsafe.Pointer)(event)); err != nil {
			return nil, err
		}
	}
	host := C.malloc(C.size_t(max(n, 1)))
	if host == nil {
		return nil, errorf(ErrInvalid, "out of memory counting nulls")
	}
	if err := stream.Gather([]unsafe.Pointer{host}, []unsafe.Pointer{p}, []int64{n}); err != nil {
		if stream.Drain() {
			C.free(host)
		}
		return nil, err
	}
	defer C.free(host)
	return C.GoBytes(host, C.int(n)), nil
}

// WithKnownNullCounts returns a with every null count in its tree known:
// nodes whose producer left it unknown (-1) are counted (for device memory by
// copying their validity bits to the host). Consumers such as libcudf copy
// the count verbatim and take -1 for "no nulls" (pylibcudf/interop.pyx,
// cudf::from_arrow_device), so exports meant for them need it. An array
// whose counts are all known is returned as it is (retained).
func WithKnownNullCounts(a *Array) (*Array, error) {
	data, changed, err := knownNullCounts(a.dev, a.schema, a.data, a.event)
	if err != nil {
		return nil, err
	}
	if !changed {
		a.Retain()
		return a, nil
	}
	return a.derive(a.schema, data), nil
}

// knownNullCounts returns d, or a new ArrayData (changed) sharing d's buffers
// with every unknown null count counted.
func knownNullCounts(dev device.Device, s *Schema, d arrow.ArrayData, event unsafe.Pointer) (arrow.ArrayData, bool, error) {
	children := d.Children()
	var fixed []arrow.ArrayData
	for i, c := range children {
		k, changed, err := knownNullCounts(dev, s.Children[i], c, event)
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
		n, err := countNulls(dev, s, d, event)
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
