package device

/*
#cgo CFLAGS: -O2 -std=c11
#include "backend.h"
*/
import "C"

import (
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"
)

// The device backend seam. Everything the engine asks of a kind of memory
// (allocation, copies, streams and events, which device a pointer belongs
// to) goes through the Backend registered for its device type, so that no
// code outside a backend's own package branches on a device type. A backend
// lives in its own package and registers itself from init(); a program that
// wants it imports that package for its side effect, as database/sql drivers
// are imported:
//
//	import _ "github.com/godevarrow/godevarrow/gosrc/device/cuda"
//
// Without the import the device types it serves have no backend, and every
// operation on them fails with an error wrapping ErrUnavailable. The CPU
// backend (cpu.go) is always registered. docs/design.md ("Adding a
// device") lists what a new device needs.

// Stream is a queue of work on one device, made by a Backend. Streams of
// another library are wrapped with Backend.ForeignStream.
type Stream interface {
	// Device is the device id (ordinal) the stream's work runs on.
	Device() int
	// Handle is the backend's handle as an integer, the form the DLPack and
	// CUDA Array Interface protocols pass streams in.
	Handle() uintptr
}

// Event marks a point in a stream's work, made by Backend.RecordEvent.
type Event interface {
	// Handle is the backend's event itself: the value a sync_event points to.
	Handle() unsafe.Pointer
	// Cell is C memory that holds Handle(): what an exported sync_event
	// points to. It lives as long as the event (pooled with it), so an
	// array that carries the event needs no allocation of its own.
	Cell() unsafe.Pointer
}

// CopyKind is the direction of a copy.
type CopyKind int

// Copy directions.
const (
	HostToDevice   CopyKind = 1
	DeviceToHost   CopyKind = 2
	DeviceToDevice CopyKind = 3 // on the same device
	PeerToPeer     CopyKind = 4 // from the source device to the stream's device
)

// MemoryKind is what kind of memory a pointer points to, as a backend sees it.
type MemoryKind int

// Kinds of memory.
const (
	MemoryUnknown MemoryKind = 0 // memory the backend does not know: plain host memory
	MemoryPinned  MemoryKind = 1 // page-locked host memory the backend registered
	MemoryDevice  MemoryKind = 2 // memory of one device, not readable by the host
	MemoryManaged MemoryKind = 4 // memory the backend migrates between host and device
)

// Pointer is a backend's answer about a pointer: its kind, and the device
// (type and id) of that memory. For MemoryUnknown the device is Host.
type Pointer struct {
	Kind   MemoryKind
	Device Device
}

// Traits are the properties of a device type that the engine's code paths
// depend on; call sites ask them instead of comparing device types.
type Traits struct {
	// HostAccessible: host code may read the memory directly, once the
	// producer's event has completed (waited on the host).
	HostAccessible bool
	// Streams: work on the memory is ordered with the backend's streams and
	// events. A sync_event on this type is the backend's event, and a
	// consumer may name a stream for the producer to order its writes
	// before (DLPack's stream argument, the CUDA Array Interface's stream).
	Streams bool
	// DeviceMemory: the memory belongs to one device id and the host cannot
	// read it. An import requires device_id >= 0, checks that every buffer
	// is on that device (PointersOnDevice) and fetches the values it checks
	// with Gather; CopyToDevice allocates such memory and copies into and
	// out of it on a stream.
	DeviceMemory bool
}

// Backend is what the engine needs from one device type. Device ids are the
// backend's ordinals. A method a backend cannot serve returns an error
// wrapping ErrUnavailable (the CPU has no streams, for one).
type Backend interface {
	// Type is the device type this value serves (one backend package may
	// register one value per type it serves, with their own Traits).
	Type() Type
	// Traits are the type's properties.
	Traits() Traits

	// Open loads the driver once; later calls return the same result, an
	// error wrapping ErrUnavailable when there is none.
	Open() error
	// Library is the name of the driver library the backend opens.
	Library() string
	// DriverVersion is the driver's version number.
	DriverVersion() (int, error)
	// DeviceCount is the number of devices, 0 when the driver is unavailable.
	DeviceCount() int
	// DeviceName is the name of device id.
	DeviceName(id int) (string, error)
	// CheckDevice opens the driver and checks that device id exists.
	CheckDevice(id int) error
	// CallFailure is the error of a driver call that C code made through
	// the backend's C vtable (backend.h) and that returned result (nil for 0).
	CallFailure(call string, result int) error

	// Alloc allocates n bytes on device id (never dereference the result on
	// the host unless the type is host-accessible); Free frees it.
	Alloc(id int, n int64) (unsafe.Pointer, error)
	Free(id int, p unsafe.Pointer) error
	// PointerInfo asks the driver what memory p is. Only the driver's own
	// "not memory I know" answer gives MemoryUnknown; any other failure is
	// an error.
	PointerInfo(p unsafe.Pointer) (Pointer, error)
	// PointersOnDevice checks that every pointer belongs to device id: bad is
	// the index of the first that does not (-1 when all do) and badID its
	// device (-1, with err set, when the driver does not know the pointer).
	PointersOnDevice(id int, ptrs []uintptr) (bad, badID int, err error)

	// AcquireStream gives a stream of device id for the caller's use, and
	// ReleaseStream takes it back (work already queued still completes); a
	// foreign stream is left alone.
	AcquireStream(id int) (Stream, error)
	ReleaseStream(s Stream) error
	// ForeignStream wraps a stream handle of device id that another library
	// made; 0 is rejected as ambiguous.
	ForeignStream(id int, handle uintptr) (Stream, error)
	// CallerDefaultStream is the default stream of the calling thread's
	// current context when that context is device id's (ok false when it is
	// not: a handle naming "the default stream" would then mean another
	// device's).
	CallerDefaultStream(id int) (s Stream, ok bool)
	// CallerDefaultStreamOf is CallerDefaultStream's stream for device id
	// without asking which context is current, for a caller that the C
	// vtable's caller_default_stream told so earlier (a held import put off
	// on it); ok false when the backend has none.
	CallerDefaultStreamOf(id int) (s Stream, ok bool)
	// SyncStream waits on the host until the work queued on s is done.
	SyncStream(s Stream) error
	// DrainStream waits for the queued work after a failure, so that memory
	// it writes into can be freed; false means it could not, and the caller
	// must leak that memory.
	DrainStream(s Stream) bool
	// CopyAsync queues a copy of n bytes on s; srcID is the source's device
	// for a PeerToPeer copy. The data of a DeviceToHost copy may reach dst
	// only when SyncStream returns (a backend may stage it through memory of
	// its own): wait with SyncStream, not with an event, before reading dst.
	// A HostToDevice copy may read src before it returns.
	CopyAsync(s Stream, kind CopyKind, dst, src unsafe.Pointer, n int64, srcID int) error
	// Gather copies small device values to host memory with one batched
	// copy and one synchronization: dst[i] (C memory) receives size[i] bytes
	// from src[i]. On failure no copy into dst is pending unless the stream
	// cannot be synchronized at all.
	Gather(s Stream, dst, src []unsafe.Pointer, size []int64) error

	// RecordEvent gives an event recorded after the work queued on s so far
	// (in the context s belongs to); ReleaseEvent takes it back.
	RecordEvent(s Stream) (Event, error)
	ReleaseEvent(e Event) error
	// WaitEvent orders later work on s after event (a sync_event's value).
	WaitEvent(s Stream, event unsafe.Pointer) error
	// SameQueue says whether work queued on s is certainly ordered after
	// all work queued on recordedOn earlier (the two name one queue), so that
	// s need not wait for an event recorded on recordedOn.
	SameQueue(recordedOn, s Stream) bool
	// SyncEventOnHost waits on the host for event, recorded on device id.
	SyncEventOnHost(id int, event unsafe.Pointer) error
}

// CBackend is implemented by a Backend with a C vtable (backend.h) for the
// C fast paths; Register installs the vtable for the same device type.
type CBackend interface {
	// CVTable returns a pointer to the backend's static
	// struct gda_device_backend.
	CVTable() unsafe.Pointer
}

var (
	backendsMu sync.RWMutex
	backends   = map[Type]Backend{}
	// backendsByType is backends for the types below len (every type the
	// specification names), read without the lock: BackendFor runs on every
	// device import and export, where the lock and the map were a few
	// percent of a DLPack exchange. Register fills both.
	backendsByType [32]atomic.Pointer[Backend]
)

// Register makes b the backend of device type t (and its C vtable, when it
// has one, the vtable of t). Backends register from their package's init();
// registering a type twice panics, as a duplicate driver would be a bug.
func Register(t Type, b Backend) {
	backendsMu.Lock()
	defer backendsMu.Unlock()
	if _, dup := backends[t]; dup {
		panic(fmt.Sprintf("device: a backend for %s is already registered", t))
	}
	backends[t] = b
	if t >= 0 && int(t) < len(backendsByType) {
		backendsByType[t].Store(&b)
	}
	if cb, ok := b.(CBackend); ok {
		C.gda_backend_register(C.int32_t(t), (*C.struct_gda_device_backend)(cb.CVTable()))
	}
}

// BackendFor returns the backend of device type t, or an error wrapping
// ErrUnavailable when none is registered.
func BackendFor(t Type) (Backend, error) {
	if t >= 0 && int(t) < len(backendsByType) {
		if b := backendsByType[t].Load(); b != nil {
			return *b, nil
		}
	}
	backendsMu.RLock()
	b, ok := backends[t]
	backendsMu.RUnlock()
	if !ok {
		return nil, Unavailable("godevarrow has no %s backend (is its package imported?)", t)
	}
	return b, nil
}

// TraitsOf returns the traits of device type t: zero Traits (nothing
// supported) for a type without a backend.
func TraitsOf(t Type) Traits {
	if b, err := BackendFor(t); err == nil {
		return b.Traits()
	}
	return Traits{}
}
