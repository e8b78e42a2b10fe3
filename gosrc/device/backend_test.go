package device_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/godevarrow/godevarrow/gosrc/device"
)

// Without the CUDA backend's package imported (this test binary does not
// import it), the CUDA types have no backend: the seam, not a type switch,
// decides what a device type can do.
func TestTypesWithoutABackendAreUnavailable(t *testing.T) {
	for _, typ := range []device.Type{device.CUDA, device.CUDAHost, device.Metal, device.Type(99)} {
		b, err := device.BackendFor(typ)
		if b != nil || !errors.Is(err, device.ErrUnavailable) {
			t.Fatalf("BackendFor(%s) = %v, %v; want ErrUnavailable", typ, b, err)
		}
		if !strings.Contains(err.Error(), "no "+typ.String()+" backend") {
			t.Fatalf("BackendFor(%s): %q does not name the missing backend", typ, err)
		}
		if tr := device.TraitsOf(typ); tr != (device.Traits{}) {
			t.Fatalf("TraitsOf(%s) = %+v; want no traits", typ, tr)
		}
	}
}

func TestTheCPUBackendIsAlwaysRegistered(t *testing.T) {
	b, err := device.BackendFor(device.CPU)
	if err != nil {
		t.Fatal(err)
	}
	if b.Type() != device.CPU || b.Traits() != (device.Traits{HostAccessible: true}) {
		t.Fatalf("CPU backend: type %s, traits %+v", b.Type(), b.Traits())
	}
	if err := b.CheckDevice(-1); err != nil {
		t.Fatalf("CheckDevice(-1): %v", err)
	}
	if err := b.CheckDevice(3); !errors.Is(err, device.ErrUnavailable) {
		t.Fatalf("CheckDevice(3) = %v; want ErrUnavailable", err)
	}
	if _, err := b.AcquireStream(0); !errors.Is(err, device.ErrUnavailable) || !strings.Contains(err.Error(), "no streams") {
		t.Fatalf("AcquireStream on the CPU = %v; want ErrUnavailable about streams", err)
	}
	p, err := b.Alloc(-1, 16)
	if err != nil || p == nil {
		t.Fatalf("Alloc: %v, %v", p, err)
	}
	if err := b.Free(-1, p); err != nil {
		t.Fatal(err)
	}
}

func TestRegisteringATypeTwicePanics(t *testing.T) {
	b, _ := device.BackendFor(device.CPU)
	defer func() {
		r := recover()
		if r == nil || !strings.Contains(r.(string), "already registered") {
			t.Fatalf("second Register of cpu: recovered %v; want a panic about the duplicate", r)
		}
	}()
	device.Register(device.CPU, b)
}
