// Package fakecudactl reaches the counters and fault injection of the fake
// CUDA driver (tests_go/fakecuda) that godevarrow loaded, for Go tests.
package fakecudactl

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

static void* lib;

// 0: open; 1: GODEVARROW_LIBCUDA unset; 2: it names another driver;
// 3: dlopen failed (see fc_error).
static char fc_err[512];
static int fc_open(void) {
  const char* name = getenv("GODEVARROW_LIBCUDA");
  if (!name || !*name) return 1;
  if (!strstr(name, "fakecuda")) return 2;
  lib = dlopen(name, RTLD_NOW | RTLD_NOLOAD);
  if (!lib) lib = dlopen(name, RTLD_NOW);
  if (!lib) {
    const char* e = dlerror();
    strncpy(fc_err, e ? e : "dlopen failed", sizeof(fc_err) - 1);
    return 3;
  }
  return 0;
}
static const char* fc_error(void) { return fc_err; }
static long long fc_counter(const char* fn) {
  long long (*f)(void) = (long long (*)(void))dlsym(lib, fn);
  return f ? f() : -1;
}
static long long fc_per_direction(const char* fn, int dir) {
  long long (*f)(int) = (long long (*)(int))dlsym(lib, fn);
  return f ? f(dir) : -1;
}
static long long fc_calls(const char* name) {
  long long (*f)(const char*) = (long long (*)(const char*))dlsym(lib, "fakecuda_call_count");
  return f ? f(name) : -1;
}
static void fc_fail_nth(const char* name, int n, int err) {
  void (*f)(const char*, int, int) = (void (*)(const char*, int, int))dlsym(lib, "fakecuda_fail_nth");
  if (f) f(name, n, err);
}
static void fc_void(const char* fn) {
  void (*f)(void) = (void (*)(void))dlsym(lib, fn);
  if (f) f();
}
// Makes device dev's primary context current on this thread (retaining it),
// or, dev < 0, makes none current and releases what the first call retained.
static int fc_primary_current(int dev) {
  static int retained = -1;
  int (*init)(unsigned) = (int (*)(unsigned))dlsym(lib, "cuInit");
  int (*get)(int*, int) = (int (*)(int*, int))dlsym(lib, "cuDeviceGet");
  int (*retain)(void**, int) = (int (*)(void**, int))dlsym(lib, "cuDevicePrimaryCtxRetain");
  int (*release)(int) = (int (*)(int))dlsym(lib, "cuDevicePrimaryCtxRelease_v2");
  int (*set)(void*) = (int (*)(void*))dlsym(lib, "cuCtxSetCurrent");
  if (!init || !get || !retain || !release || !set) return -1;
  if (dev < 0) {
    int r = set(NULL);
    if (retained >= 0) release(retained);
    retained = -1;
    return r;
  }
  int d = 0, r;
  void* ctx = NULL;
  if ((r = init(0)) || (r = get(&d, dev)) || (r = retain(&ctx, d))) return r;
  retained = d;
  return set(ctx);
}
*/
import "C"

import (
	"os"
	"testing"
	"unsafe"

	"github.com/godevarrow/godevarrow/gosrc/device/cuda"
)

// Copy directions of the counters.
const (
	HostToDevice   = 1
	DeviceToHost   = 2
	DeviceToDevice = 3
)

// Require skips the test when GODEVARROW_LIBCUDA is unset (a plain `go
// test`). Once it is set the run asked for the CUDA tests, so a value that
// does not name the fake driver, or a fake driver that cannot be loaded (a
// broken `make fakecuda`), fails the test: a skip would pass unnoticed.
func Require(t testing.TB) {
	t.Helper()
	name := os.Getenv("GODEVARROW_LIBCUDA")
	switch C.fc_open() {
	case 0:
	case 1:
		t.Skip("the fake CUDA driver is not configured: run `make test`, or set GODEVARROW_LIBCUDA to tests_go/fakecuda/libfakecuda.so")
	case 2:
		t.Fatalf("GODEVARROW_LIBCUDA=%s is not the fake driver these tests need (tests_go/fakecuda/libfakecuda.so); unset it to skip them", name)
	default:
		t.Fatalf("GODEVARROW_LIBCUDA=%s: the fake driver cannot be loaded: %s (build it with `make fakecuda`)", name, C.GoString(C.fc_error()))
	}
}

func counter(name string) int64 {
	c := C.CString(name)
	defer C.free(unsafe.Pointer(c))
	return int64(C.fc_counter(c))
}

// Live is what the driver holds: device allocations, bytes, events, streams,
// host (pinned/managed) allocations.
type Live struct{ Allocations, Bytes, Events, Streams, HostAllocations int64 }

// LiveNow returns the live counters, less what the CUDA backend's pools
// keep for reuse (bounded, and no leak): what godevarrow's operations hold.
func LiveNow() Live {
	pooled := cuda.Pooled()
	return Live{
		Allocations:     counter("fakecuda_live_allocations") - pooled.DeviceBlocks,
		Bytes:           counter("fakecuda_live_bytes") - pooled.DeviceBytes,
		Events:          counter("fakecuda_live_events") - pooled.Events,
		Streams:         counter("fakecuda_live_streams") - pooled.Streams,
		HostAllocations: counter("fakecuda_live_host_allocations") - pooled.HostBuffers,
	}
}

// Syncs returns the cumulative number of synchronizations.
func Syncs() int64 { return counter("fakecuda_sync_count") }

// CopyCalls returns the cumulative copy calls in a direction.
func CopyCalls(dir int) int64 {
	c := C.CString("fakecuda_copy_calls")
	defer C.free(unsafe.Pointer(c))
	return int64(C.fc_per_direction(c, C.int(dir)))
}

// BytesCopied returns the cumulative bytes copied in a direction.
func BytesCopied(dir int) int64 {
	c := C.CString("fakecuda_bytes_copied")
	defer C.free(unsafe.Pointer(c))
	return int64(C.fc_per_direction(c, C.int(dir)))
}

// Calls returns how often a driver function was called.
func Calls(fn string) int64 {
	c := C.CString(fn)
	defer C.free(unsafe.Pointer(c))
	return int64(C.fc_calls(c))
}

// FailNth makes the n-th call (from now, 1-based) of fn return err.
func FailNth(fn string, n, err int) {
	c := C.CString(fn)
	defer C.free(unsafe.Pointer(c))
	C.fc_fail_nth(c, C.int(n), C.int(err))
}

// ClearFaults removes every pending fault.
func ClearFaults() {
	c := C.CString("fakecuda_clear_faults")
	defer C.free(unsafe.Pointer(c))
	C.fc_void(c)
}

// MakePrimaryCurrent makes device dev's primary context the calling OS
// thread's current context, as CuPy and PyTorch do, and returns the function
// that undoes it; the caller locks its goroutine to the thread first
// (runtime.LockOSThread).
func MakePrimaryCurrent(t testing.TB, dev int) func() {
	t.Helper()
	if r := C.fc_primary_current(C.int(dev)); r != 0 {
		t.Fatalf("making device %d's primary context current: CUresult %d", dev, int(r))
	}
	return func() { C.fc_primary_current(-1) }
}
