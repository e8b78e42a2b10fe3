package cdevice

/*
#include <stdlib.h>
*/
import "C"

import (
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/godevarrow/godevarrow/gosrc/device"
)

// deviceAllocator owns buffers allocated on a CUDA device by CopyToDevice.
type deviceAllocator struct{ dev int }

func (d deviceAllocator) Allocate(int) []byte {
	panic("cdevice: device buffers are allocated by CopyToDevice")
}
func (d deviceAllocator) Reallocate(int, []byte) []byte { panic("cdevice: device buffers cannot grow") }
func (d deviceAllocator) Free(b []byte) {
	if p := unsafe.SliceData(b); p != nil {
		_ = device.FreeDevice(d.dev, unsafe.Pointer(p))
		liveDeviceBytes.Add(-int64(cap(b)))
	}
}

// CopyToDevice returns a copy of a on dst (a itself, retained, when it is
// already there). CPU and CUDA devices are supported in every direction,
// including between CUDA devices; every type is copied buffer by buffer, the
// producer's sync_event is waited on first, and a CUDA result carries an event
// recorded after the copies.
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
	src := a.dev
	srcHost := src.Type.HostAccessible()
	if !srcHost && src.Type != device.CUDA || dst.Type != device.CPU && dst.Type != device.CUDA {
		return nil, errorf(ErrNotImplemented, "copies from %s to %s are not implemented", src, dst)
	}
	if srcHost && dst.Type == device.CPU {
		return copyOnHost(a)
	}
	// the copies run on a stream of the device that is not the host
	streamDev := int(dst.ID)
	if dst.Type == device.CPU {
		streamDev = int(src.ID)
	}
	if dst.Type == device.CUDA {
		if err := device.CheckCUDADevice(int(dst.ID)); err != nil {
			return nil, err
		}
	}
	stream, err := device.NewStream(streamDev)
	if err != nil {
		return nil, err
	}
	defer stream.Destroy()
	if a.event != nil {
		ev := *(*unsafe.Pointer)(a.event)
		if srcHost {
			if err := device.SyncEventOnHost(int(max(src.ID, 0)), ev); err != nil {
				return nil, err
			}
		} else if err := stream.WaitEvent(ev); err != nil {
			return nil, err
		}
	}
	c := copier{src: src, dst: dst, stream: stream}
	data, err := c.copyData(a.data, 0)
	if err != nil {
		// queued copies may still write into the new buffers: free them only
		// once the stream is drained (or never, if it cannot be)
		if stream.Drain() {
			c.releaseAll()
		}
		return nil, err
	}
	if err := stream.Synchronize(); err != nil {
		if stream.Drain() {
			data.Release()
		}
		return nil, err
	}
	var owner *foreignOwner
	var event unsafe.Pointer
	if dst.Type == device.CUDA {
		cell, destroy, err := recordEvent(stream)
		if err != nil {
			data.Release()
			return nil, err
		}
		event = cell
		owner = &foreignOwner{release: destroy}
		owner.refs.Store(1)
		liveImports.Add(1)
	}
	out := newArray(a.schema, data, dst, event, owner)
	return out, nil
}

type copier struct {
	src, dst device.Device
	stream   *device.Stream
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

// copyBuffer copies a whole buffer to the destination device.
func (c *copier) copyBuffer(b *memory.Buffer) (*memory.Buffer, error) {
	if b == nil {
		return nil, nil
	}
	n := int64(b.Len())
	srcPtr := unsafe.Pointer(unsafe.SliceData(b.Bytes()))
	var out *memory.Buffer
	var dstPtr unsafe.Pointer
	if c.dst.Type == device.CUDA {
		p, err := device.AllocDevice(int(c.dst.ID), n)
		if err != nil {
			return nil, err
		}
		liveDeviceBytes.Add(max(n, 1))
		dstPtr = p
		out = memory.NewBufferWithAllocator(unsafe.Slice((*byte)(dstPtr), max(n, 1))[:n], deviceAllocator{dev: int(c.dst.ID)})
	} else {
		out = memory.NewResizableBuffer(Allocator)
		out.Resize(int(n))
		if n > 0 {
			dstPtr = unsafe.Pointer(&out.Bytes()[0])
		}
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
	case srcHost && c.dst.Type == device.CUDA:
		kind = device.HostToDevice
	case !srcHost && c.dst.Type == device.CPU:
		kind = device.DeviceToHost
	case c.src.ID == c.dst.ID:
		kind = device.DeviceToDevice
	default:
		kind = device.PeerToPeer
	}
	if err := c.stream.CopyAsync(kind, dstPtr, srcPtr, n, int(c.src.ID)); err != nil {
		c.garbage = append(c.garbage, out)
		return nil, err
	}
	return out, nil
}

func (c *copier) copyData(d arrow.ArrayData, depth int) (arrow.ArrayData, error) {
	if depth > maxNesting {
		return nil, errorf(ErrInvalid, "array nested deeper than %d levels", maxNesting)
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
	for _, b := range d.Buffers() {
		nb, err := c.copyBuffer(b)
		if err != nil {
			return fail(err)
		}
		bufs = append(bufs, nb)
	}
	for _, ch := range d.Children() {
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
		out = array.NewDataWithDictionary(d.DataType(), d.Len(), bufs, d.NullN(), d.Offset(), dict.(*array.Data))
	} else {
		out = array.NewData(d.DataType(), d.Len(), bufs, children, d.NullN(), d.Offset())
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
	if a.event != nil {
		if err := device.SyncEventOnHost(int(max(a.dev.ID, 0)), *(*unsafe.Pointer)(a.event)); err != nil {
			return nil, err
		}
	}
	c := copier{src: a.dev, dst: device.Host}
	data, err := c.copyData(a.data, 0)
	if err != nil {
		c.releaseAll()
		return nil, err
	}
	return newArray(a.schema, data, device.Host, nil, nil), nil
}
