package device

/*
#include <stdlib.h>
*/
import "C"

import "unsafe"

// The CPU backend: host memory, always registered. The host needs no
// driver, has one device (id -1, as the specification asks of producers)
// and orders nothing with streams or events: a CPU array has no sync_event.
type cpuBackend struct{}

func init() { Register(CPU, cpuBackend{}) }

func (cpuBackend) Type() Type     { return CPU }
func (cpuBackend) Traits() Traits { return Traits{HostAccessible: true} }

func (cpuBackend) Open() error                 { return nil }
func (cpuBackend) Library() string             { return "" }
func (cpuBackend) DriverVersion() (int, error) { return 0, nil }
func (cpuBackend) DeviceCount() int            { return 1 }
func (cpuBackend) DeviceName(int) (string, error) {
	return "cpu", nil
}

func (cpuBackend) CheckDevice(id int) error {
	if id != -1 && id != 0 {
		return Unavailable("the CPU has no device %d", id)
	}
	return nil
}

func (cpuBackend) CallFailure(call string, result int) error {
	if result == 0 {
		return nil
	}
	return &DriverError{Call: call, Code: result, Name: "error"}
}

func (cpuBackend) Alloc(_ int, n int64) (unsafe.Pointer, error) {
	if n < 0 {
		return nil, Unavailable("cannot allocate %d bytes", n)
	}
	p := C.malloc(C.size_t(max(n, 1)))
	if p == nil {
		return nil, Unavailable("out of host memory allocating %d bytes", n)
	}
	return p, nil
}

func (cpuBackend) Free(_ int, p unsafe.Pointer) error {
	C.free(p)
	return nil
}

// PointerInfo: every pointer is host memory as far as the CPU knows.
func (cpuBackend) PointerInfo(unsafe.Pointer) (Pointer, error) {
	return Pointer{Kind: MemoryUnknown, Device: Host}, nil
}

func (cpuBackend) PointersOnDevice(int, []uintptr) (int, int, error) { return -1, -1, nil }

func errNoStreams() error { return Unavailable("the CPU has no streams or events") }

func (cpuBackend) AcquireStream(int) (Stream, error)          { return nil, errNoStreams() }
func (cpuBackend) ReleaseStream(Stream) error                 { return errNoStreams() }
func (cpuBackend) ForeignStream(int, uintptr) (Stream, error) { return nil, errNoStreams() }
func (cpuBackend) CallerDefaultStream(int) (Stream, bool)     { return nil, false }
func (cpuBackend) CallerDefaultStreamOf(int) (Stream, bool)   { return nil, false }
func (cpuBackend) SyncStream(Stream) error                    { return errNoStreams() }
func (cpuBackend) DrainStream(Stream) bool                    { return false }
func (cpuBackend) RecordEvent(Stream) (Event, error)          { return nil, errNoStreams() }
func (cpuBackend) ReleaseEvent(Event) error                   { return errNoStreams() }
func (cpuBackend) WaitEvent(Stream, unsafe.Pointer) error     { return errNoStreams() }
func (cpuBackend) SameQueue(Stream, Stream) bool              { return false }
func (cpuBackend) Gather(Stream, []unsafe.Pointer, []unsafe.Pointer, []int64) error {
	return errNoStreams()
}
func (cpuBackend) CopyAsync(Stream, CopyKind, unsafe.Pointer, unsafe.Pointer, int64, int) error {
	return errNoStreams()
}

// SyncEventOnHost: a CPU array never has an event; nil is the only one.
func (cpuBackend) SyncEventOnHost(_ int, event unsafe.Pointer) error {
	if event != nil {
		return errNoStreams()
	}
	return nil
}
