package cuda

/*
#include "cuda.h"
*/
import "C"

import (
	"unsafe"

	"github.com/godevarrow/godevarrow/gosrc/device"
)

// backend is the device.Backend of one CUDA device type: device memory
// (CUDA), pinned host memory (CUDA_HOST) or managed memory (CUDA_MANAGED).
// The three share the driver, streams and events; they differ in Traits.
type backend struct {
	t      device.Type
	traits device.Traits
}

// deviceMemory is the backend of CUDA device memory (see Backend).
var deviceMemory = &backend{t: device.CUDA, traits: device.Traits{Streams: true, DeviceMemory: true}}

// Backend is the backend of CUDA device memory, for the callers whose
// protocol is CUDA's by definition (the CUDA Array Interface, the CUDA
// status of the binding); everything else finds it by device type
// (device.BackendFor).
func Backend() device.Backend { return deviceMemory }

func init() {
	device.Register(device.CUDA, deviceMemory)
	host := device.Traits{HostAccessible: true, Streams: true}
	device.Register(device.CUDAHost, &backend{t: device.CUDAHost, traits: host})
	device.Register(device.CUDAManaged, &backend{t: device.CUDAManaged, traits: host})
}

func (b *backend) Type() device.Type     { return b.t }
func (b *backend) Traits() device.Traits { return b.traits }

// CVTable gives the C fast paths (the held import's gate) the driver for
// device memory only: they read pinned and managed memory as host memory.
func (b *backend) CVTable() unsafe.Pointer {
	if b.t != device.CUDA {
		return nil
	}
	return unsafe.Pointer(C.gda_cuda_vtable())
}

func (b *backend) Open() error                               { return Open() }
func (b *backend) Library() string                           { return Library() }
func (b *backend) DriverVersion() (int, error)               { return DriverVersion() }
func (b *backend) DeviceCount() int                          { return DeviceCount() }
func (b *backend) DeviceName(id int) (string, error)         { return DeviceName(id) }
func (b *backend) CheckDevice(id int) error                  { return CheckDevice(id) }
func (b *backend) CallFailure(call string, result int) error { return Failure(call, result) }

// Alloc allocates device memory; the backends of pinned and managed memory
// do not allocate (CopyToDevice copies to device memory and to the CPU).
func (b *backend) Alloc(id int, n int64) (unsafe.Pointer, error) {
	if b.t != device.CUDA {
		return nil, device.Unavailable("godevarrow does not allocate %s memory", b.t)
	}
	return AllocDevice(id, n)
}

func (b *backend) Free(id int, p unsafe.Pointer) error { return FreeDevice(id, p) }

func (b *backend) PointerInfo(p unsafe.Pointer) (device.Pointer, error) {
	id, kind, err := PointerKind(p)
	if err != nil || kind == device.MemoryUnknown {
		return device.Pointer{Kind: device.MemoryUnknown, Device: device.Host}, err
	}
	t := device.CUDA
	switch kind {
	case device.MemoryPinned:
		t = device.CUDAHost
	case device.MemoryManaged:
		t = device.CUDAManaged
	}
	return device.Pointer{Kind: kind, Device: device.Device{Type: t, ID: int64(id)}}, nil
}

func (b *backend) PointersOnDevice(id int, ptrs []uintptr) (int, int, error) {
	return CheckPointersOnDevice(id, ptrs)
}

// AcquireStream takes a stream of device id from its pool (pools.go), making
// one only when the pool is empty: creating and destroying a stream per
// operation costs more than most of the operations.
func (b *backend) AcquireStream(id int) (device.Stream, error) {
	if s := poolOf(id).takeStream(); s != nil {
		return s, nil
	}
	s, err := NewStream(id)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// ReleaseStream gives the stream back to its device's pool (work already
// queued on it stays ordered before the next user's), destroying it only
// when the pool is full; a foreign stream is left alone.
func (b *backend) ReleaseStream(s device.Stream) error {
	st, err := own(s)
	if err != nil {
		return err
	}
	// staged copies never waited for: their chunks go back once drained, and
	// never ride along to the stream's next user (whose synchronization would
	// otherwise copy them out into memory this user may have freed)
	if hasStaged(st) {
		finishStaged(st, false, st.Drain())
	}
	if st.foreign || poolOf(st.dev).putStream(st) {
		return nil
	}
	return st.Destroy()
}

func (b *backend) ForeignStream(id int, handle uintptr) (device.Stream, error) {
	s, err := ForeignStream(id, handle)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// CallerDefaultStream is the legacy default stream (handle 1), which names
// the default stream of the caller's current context: only when that
// context is device id's primary one does it order work of id.
func (b *backend) CallerDefaultStream(id int) (device.Stream, bool) {
	if !CallerContextIs(id) {
		return nil, false
	}
	return callerDefault(id), true
}

func (b *backend) CallerDefaultStreamOf(id int) (device.Stream, bool) { return callerDefault(id), true }

func (b *backend) SyncStream(s device.Stream) error {
	st, err := own(s)
	if err != nil {
		return err
	}
	if err := st.Synchronize(); err != nil {
		return err
	}
	finishStaged(st, true, true)
	return nil
}

func (b *backend) DrainStream(s device.Stream) bool {
	st, err := own(s)
	if err != nil {
		return false
	}
	ok := st.Drain()
	finishStaged(st, false, ok)
	return ok
}

func (b *backend) CopyAsync(s device.Stream, kind device.CopyKind, dst, src unsafe.Pointer, n int64, srcID int) error {
	st, err := own(s)
	if err != nil {
		return err
	}
	// host memory goes through pinned staging (staging.go): the data of a
	// device-to-host copy is in dst once the stream is synchronized
	if staged, err := stagedCopy(st, kind, dst, src, n); staged {
		return err
	}
	return st.CopyAsync(kind, dst, src, n, srcID)
}

func (b *backend) Gather(s device.Stream, dst, src []unsafe.Pointer, size []int64) error {
	st, err := own(s)
	if err != nil {
		return err
	}
	if staged, err := stagedGather(st, dst, src, size); staged {
		return err
	}
	return st.Gather(dst, src, size)
}

// RecordEvent records an event of the pool of the device whose context the
// stream belongs to (a foreign stream may be another device's: cuEventRecord
// needs the event and the stream in one context), making one only when the
// pool is empty.
func (b *backend) RecordEvent(s device.Stream) (device.Event, error) {
	st, err := own(s)
	if err == nil {
		st, err = st.InOwnContext()
	}
	if err != nil {
		return nil, err
	}
	ev := poolOf(st.Device()).takeEvent()
	if ev == nil {
		if ev, err = NewEvent(st.Device()); err != nil {
			return nil, err
		}
	}
	if err := ev.Record(st); err != nil {
		_ = ev.Destroy()
		return nil, err
	}
	return ev, nil
}

// ReleaseEvent gives the event back to its device's pool. Whoever waited on
// it has already captured its last record (CUDA Driver API,
// cuStreamWaitEvent and cuEventRecord: a wait uses the record current when
// the wait is queued), so recording it again for another array is safe.
func (b *backend) ReleaseEvent(e device.Event) error {
	ev, ok := e.(*Event)
	if !ok {
		return device.Unavailable("the CUDA backend cannot release a %T", e)
	}
	if poolOf(ev.dev).putEvent(ev) {
		return nil
	}
	return ev.Destroy()
}

func (b *backend) WaitEvent(s device.Stream, event unsafe.Pointer) error {
	st, err := own(s)
	if err != nil {
		return err
	}
	return st.WaitEvent(event)
}

// SameQueue is true only for the legacy default stream of one device's
// primary context on both sides, as CallerDefaultStream gives it (the
// caller's context was checked to be that one): godevarrow queues work on
// it with that context current, where handle 1 names one queue for good.
// Handle 1 taken from elsewhere names the legacy stream of whatever context
// is current when it is used; another handle may be a stream destroyed
// since and made again at the same address; and the per-thread default
// stream is one per host thread, which a goroutine does not keep.
func (b *backend) SameQueue(recordedOn, s device.Stream) bool {
	r, ok1 := recordedOn.(*Stream)
	t, ok2 := s.(*Stream)
	return ok1 && ok2 && r.primary && t.primary && r.dev == t.dev
}

func (b *backend) SyncEventOnHost(id int, event unsafe.Pointer) error {
	return SyncEventOnHost(id, event)
}

// own is s as a stream of this backend: a stream of another backend is an
// error, never a panic.
func own(s device.Stream) (*Stream, error) {
	st, ok := s.(*Stream)
	if !ok || st == nil {
		return nil, device.Unavailable("the CUDA backend cannot use a %T as a stream", s)
	}
	return st, nil
}

// RegisteredCVTable is the C vtable the C registry holds for t (for tests:
// what held.c's gda_backend_for sees).
func RegisteredCVTable(t device.Type) unsafe.Pointer {
	return unsafe.Pointer(C.gda_backend_for(C.int32_t(t)))
}
