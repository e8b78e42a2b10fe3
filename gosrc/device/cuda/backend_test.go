package cuda_test

import (
	"errors"
	"testing"
	"unsafe"

	"github.com/godevarrow/godevarrow/gosrc/device"
	"github.com/godevarrow/godevarrow/gosrc/device/cuda"
)

// Importing the package registers its three device types, each with its own
// traits: what call sites ask instead of comparing device types.
func TestImportRegistersTheCUDATypes(t *testing.T) {
	want := map[device.Type]device.Traits{
		device.CUDA:        {Streams: true, DeviceMemory: true},
		device.CUDAHost:    {HostAccessible: true, Streams: true},
		device.CUDAManaged: {HostAccessible: true, Streams: true},
	}
	for typ, tr := range want {
		b, err := device.BackendFor(typ)
		if err != nil {
			t.Fatalf("BackendFor(%s): %v", typ, err)
		}
		if b.Type() != typ || b.Traits() != tr {
			t.Fatalf("%s: type %s, traits %+v; want %+v", typ, b.Type(), b.Traits(), tr)
		}
	}
}

// Only device memory gets the C vtable: the held import's C gate reads
// pinned and managed memory as host memory, never through the driver.
func TestOnlyDeviceMemoryHasACVTable(t *testing.T) {
	for typ, wantVT := range map[device.Type]bool{device.CUDA: true, device.CUDAHost: false, device.CUDAManaged: false} {
		b, _ := device.BackendFor(typ)
		cb, ok := b.(device.CBackend)
		if !ok {
			t.Fatalf("%s: backend has no CVTable method", typ)
		}
		if got := cb.CVTable() != nil; got != wantVT {
			t.Fatalf("%s: has a C vtable %v; want %v", typ, got, wantVT)
		}
		if got := cuda.RegisteredCVTable(typ) != nil; got != wantVT {
			t.Fatalf("%s: the C registry holds a vtable %v; want %v", typ, got, wantVT)
		}
	}
}

type otherStream struct{}

func (otherStream) Device() int     { return 0 }
func (otherStream) Handle() uintptr { return 7 }

// A stream of another backend is refused with an error, never a panic.
func TestAStreamOfAnotherBackendIsAnError(t *testing.T) {
	b, _ := device.BackendFor(device.CUDA)
	if err := b.SyncStream(otherStream{}); !errors.Is(err, device.ErrUnavailable) {
		t.Fatalf("SyncStream(foreign type) = %v; want ErrUnavailable", err)
	}
	if err := b.WaitEvent(otherStream{}, unsafe.Pointer(nil)); !errors.Is(err, device.ErrUnavailable) {
		t.Fatalf("WaitEvent(foreign type) = %v; want ErrUnavailable", err)
	}
	if b.DrainStream(otherStream{}) {
		t.Fatal("DrainStream of a foreign stream type reported drained")
	}
}
