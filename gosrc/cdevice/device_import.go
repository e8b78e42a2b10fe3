package cdevice

/*
#include "gda.h"
*/
import "C"

import (
	"encoding/binary"
	"unsafe"

	"github.com/godevarrow/godevarrow/gosrc/cschema"
	"github.com/godevarrow/godevarrow/gosrc/device"
	"github.com/godevarrow/godevarrow/gosrc/errs"
)

// deviceRead is one small value the importer needs from device memory: the
// last (and first) offset of a variable-size buffer, or the variadic sizes of
// a binary view array. All of them are fetched by one batched copy.
type deviceRead struct {
	addr unsafe.Pointer
	size int64
}

// deviceValues maps a device address to the bytes copied from it.
type deviceValues map[unsafe.Pointer][]byte

// collectDeviceReads walks the C tree (host memory: the structs always live
// there) and lists the device values the import will need. It never reads
// device memory and tolerates malformed trees: the import walk that follows
// reports those.
func collectDeviceReads(b device.Backend, c *C.struct_ArrowArray, s *cschema.Schema, depth int, out *[]deviceRead, host deviceValues, failed *error) {
	if c == nil || s == nil || depth > cschema.MaxNesting || c.length < 0 || c.offset < 0 {
		return
	}
	info := s.Info()
	nBuf := int64(c.n_buffers)
	if nBuf > 0 && c.buffers == nil || nBuf > 1<<20 {
		return
	}
	bufs := unsafe.Slice((*unsafe.Pointer)(unsafe.Pointer(c.buffers)), nBuf)
	end := int64(c.offset) + int64(c.length)
	offsets := func(w int64) {
		if nBuf >= 2 && bufs[1] != nil {
			*out = append(*out, deviceRead{unsafe.Add(bufs[1], int64(c.offset)*w), w}, deviceRead{unsafe.Add(bufs[1], end*w), w})
		}
	}
	switch info.Layout {
	case cschema.LayoutBinary, cschema.LayoutList, cschema.LayoutMap:
		if nBuf == int64(info.BufferCount()) {
			offsets(4)
		}
	case cschema.LayoutLargeBinary, cschema.LayoutLargeList:
		if nBuf == int64(info.BufferCount()) {
			offsets(8)
		}
	case cschema.LayoutBinaryView:
		// The variadic sizes exist only in the C layout; producers (godevarrow
		// among them) may keep them in host memory even for device arrays.
		// Only the driver's "not memory I know" answer, or pinned memory,
		// means they may be host memory; any other driver error is an error.
		if nBuf <= 3 {
			break // no variadic buffers (or a malformed array the import reports)
		}
		if p := bufs[nBuf-1]; p != nil {
			n := 8 * (nBuf - 3)
			switch at, err := b.PointerInfo(p); {
			case err != nil:
				setFailed(failed, errs.Errorf(errs.ErrInvalid, "cannot tell where the variadic buffer sizes at %p live: %v", p, err))
			case at.Kind == device.MemoryUnknown || at.Kind == device.MemoryPinned:
				if sizes, err := readUnvouched(p, n); err != nil {
					setFailed(failed, err)
				} else {
					host[p] = sizes
				}
			default:
				*out = append(*out, deviceRead{p, n})
			}
		}
	}
	if n := int64(c.n_children); n > 0 && n == int64(len(s.Children)) && c.children != nil {
		for i, k := range unsafe.Slice(c.children, n) {
			collectDeviceReads(b, k, s.Children[i], depth+1, out, host, failed)
		}
	}
	if c.dictionary != nil && s.Dictionary != nil {
		collectDeviceReads(b, c.dictionary, s.Dictionary, depth+1, out, host, failed)
	}
}

func setFailed(failed *error, err error) {
	if *failed == nil {
		*failed = err
	}
}

// readUnvouched copies n bytes of what should be host memory at p, although
// no driver vouched for it (a pointer the CUDA driver does not know, or
// pinned memory whose extent it does not report): a pointer into unmapped
// memory fails with errs.ErrInvalid instead of crashing the process.
func readUnvouched(p unsafe.Pointer, n int64) ([]byte, error) {
	b := make([]byte, n)
	if n == 0 {
		return b, nil
	}
	// b holds no Go pointers: C may write into it (cgo's rules)
	if rc := C.gda_read_host_checked(unsafe.Pointer(&b[0]), p, C.size_t(n)); rc != 0 {
		return nil, errs.Errorf(errs.ErrInvalid, "the variadic buffer sizes at %p (%d bytes) are neither device memory the driver knows nor readable host memory (errno %d)", p, n, int(rc))
	}
	return b, nil
}

// prepareDeviceImport makes the imported memory safe to use: it waits on the
// producer's sync_event and fetches the device values the import needs, all
// on one stream with one synchronization. For host-accessible memory of a
// backend (CUDA_HOST, CUDA_MANAGED) it waits for the event on the host.
func prepareDeviceImport(cell *C.struct_ArrowDeviceArray, schema *cschema.Schema, dev device.Device) (deviceValues, error) {
	var event unsafe.Pointer
	if cell.sync_event != nil {
		event = *(*unsafe.Pointer)(cell.sync_event) // sync_event points to a CUevent
	}
	b, err := device.BackendFor(dev.Type)
	if err != nil || !b.Traits().Streams {
		return nil, device.Unavailable("cannot import an array on %s: godevarrow has no %s backend", dev, dev.Type)
	}
	if b.Traits().HostAccessible {
		if err := b.Open(); err != nil {
			return nil, err
		}
		if event != nil {
			return nil, b.SyncEventOnHost(int(max(dev.ID, 0)), event)
		}
		return nil, nil
	}
	if err := b.CheckDevice(int(dev.ID)); err != nil {
		return nil, err
	}
	var reads []deviceRead
	values := deviceValues{}
	var failed error
	collectDeviceReads(b, &cell.array, schema, 0, &reads, values, &failed)
	if failed != nil {
		return nil, failed
	}
	if event == nil && len(reads) == 0 {
		return values, nil
	}
	stream, err := b.AcquireStream(int(dev.ID))
	if err != nil {
		return nil, err
	}
	defer b.ReleaseStream(stream)
	if event != nil {
		if err := b.WaitEvent(stream, event); err != nil {
			return nil, err
		}
	}
	if len(reads) == 0 {
		return values, nil
	}
	total := int64(0)
	for _, r := range reads {
		total += r.size
	}
	host := C.malloc(C.size_t(total))
	if host == nil {
		return nil, errs.Errorf(errs.ErrNoMemory, "out of memory importing a device array")
	}
	drained := true
	defer func() {
		if drained {
			C.free(host)
		}
	}()
	dst := make([]unsafe.Pointer, len(reads))
	src := make([]unsafe.Pointer, len(reads))
	size := make([]int64, len(reads))
	pos := int64(0)
	for i, r := range reads {
		dst[i], src[i], size[i] = unsafe.Add(host, pos), r.addr, r.size
		pos += r.size
	}
	if err := b.Gather(stream, dst, src, size); err != nil {
		drained = b.DrainStream(stream)
		return nil, err
	}
	for i, r := range reads {
		values[r.addr] = C.GoBytes(dst[i], C.int(r.size))
	}
	return values, nil
}

// readInt reads a w-byte integer at p: from host memory, or from the values
// fetched from the device before the import walk.
func (im *importer) readInt(p unsafe.Pointer, w int64) (int64, bool) {
	var b []byte
	if im.hostReadable {
		b = unsafe.Slice((*byte)(p), w)
	} else if b = im.values[p]; len(b) < int(w) {
		return 0, false
	}
	if w == 4 {
		return int64(int32(binary.NativeEndian.Uint32(b))), true
	}
	return int64(binary.NativeEndian.Uint64(b)), true
}
