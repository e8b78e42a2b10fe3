// Package cuda is the CUDA backend of package device: the driver API opened
// at run time (cuda.c), and the device.Backend values of the CUDA, pinned
// (cuda_host) and managed (cuda_managed) device types (backend.go), which
// register themselves from init(). Import it for that side effect:
//
//	import _ "github.com/godevarrow/godevarrow/gosrc/device/cuda"
package cuda

/*
#cgo CFLAGS: -O2 -std=c11
#cgo LDFLAGS: -ldl
#include <stdlib.h>
#include "cuda.h"
*/
import "C"

import (
	"sync"
	"unsafe"

	"github.com/godevarrow/godevarrow/gosrc/device"
)

// The CUDA backend. The driver (libcuda.so.1, or the library named by the
// GODEVARROW_LIBCUDA environment variable, read with C getenv so that changes
// made after process start are seen) is opened on first use; without it every
// CUDA operation fails with an error wrapping ErrUnavailable, and CPU work is
// unaffected. Every call pushes the device's primary context (retained on
// the device's first use) onto the calling thread's context stack and pops
// it inside the same C call, so goroutines may move freely and the caller's
// current context is left as it was.

var (
	cudaOnce    sync.Once
	cudaErr     error
	deviceCount int // the driver's, read once when it was opened (it never changes)
)

// Open opens the CUDA driver once; later calls return the same result.
func Open() error {
	cudaOnce.Do(func() {
		var msg *C.char
		if C.gda_cuda_open(&msg) != 0 {
			cudaErr = device.Unavailable("CUDA is not available: %s: %s", C.GoString(C.gda_cuda_library()), C.GoString(msg))
			return
		}
		var n C.int
		var call *C.char
		C.gda_cuda_device_count(&n, &call)
		deviceCount = int(n)
	})
	return cudaErr
}

// Library returns the name of the driver library godevarrow opens.
func Library() string {
	_ = Open()
	return C.GoString(C.gda_cuda_library())
}

// DeviceCount returns the number of CUDA devices, 0 when CUDA is unavailable.
func DeviceCount() int {
	if Open() != nil {
		return 0
	}
	return deviceCount
}

func cudaError(call *C.char, r C.CUresult) error {
	if r == 0 {
		return nil
	}
	return &device.DriverError{
		Call: C.GoString(call),
		Code: int(r),
		Name: C.GoString(C.gda_cuda_error_name(r)),
		Msg:  C.GoString(C.gda_cuda_error_string(r)),
	}
}

// Failure is the error of a driver call that returned result, for
// callers that made the call from C (the held import's gate).
func Failure(call string, result int) error {
	if result == 0 {
		return nil
	}
	cs := C.CString(call)
	defer C.free(unsafe.Pointer(cs))
	return cudaError(cs, C.CUresult(result))
}

// CheckDevice opens the driver and checks that device dev exists.
func CheckDevice(dev int) error {
	if err := Open(); err != nil {
		return err
	}
	if n := DeviceCount(); dev < 0 || dev >= n {
		return device.Unavailable("no CUDA device %d (the driver shows %d)", dev, n)
	}
	return nil
}

// DriverVersion returns the driver's version number (e.g. 12040).
func DriverVersion() (int, error) {
	if err := Open(); err != nil {
		return 0, err
	}
	var v C.int
	var call *C.char
	return int(v), cudaError(call, C.gda_cuda_driver_version(&v, &call))
}

// DeviceName returns the name of device dev.
func DeviceName(dev int) (string, error) {
	if err := CheckDevice(dev); err != nil {
		return "", err
	}
	var buf [256]C.char
	var call *C.char
	if err := cudaError(call, C.gda_cuda_device_name(C.int(dev), &buf[0], C.int(len(buf)), &call)); err != nil {
		return "", err
	}
	return C.GoString(&buf[0]), nil
}

// Stream is a CUDA stream on one device.
type Stream struct {
	dev     int
	s       C.gda_stream // an integer, never a Go pointer (cuda.h says why)
	foreign bool         // made by someone else: never destroyed here
	staged  staged       // its staged copies not yet finished (staging.go)
	// primary: a special handle (1) known to name a stream of dev's primary
	// context, where godevarrow's calls run it (callerDefault): its context
	// need not be asked of the driver (InOwnContext)
	primary bool
}

// callerDefaults holds, per device, the legacy default stream as
// callerDefault gives it: immutable, so one value serves every caller.
var callerDefaults sync.Map // int -> *Stream

// callerDefault is the legacy default stream of device dev's primary
// context, for a caller whose current context that is (CallerContextIs).
func callerDefault(dev int) *Stream {
	if s, ok := callerDefaults.Load(dev); ok {
		return s.(*Stream)
	}
	s, _ := callerDefaults.LoadOrStore(dev, &Stream{dev: dev, s: C.gda_stream(LegacyDefaultStream), foreign: true, primary: true})
	return s.(*Stream)
}

// The special stream handles of the CUDA driver API, which the DLPack and
// CUDA Array Interface protocols pass as the integers 1 and 2.
const (
	LegacyDefaultStream    uintptr = 1 // CU_STREAM_LEGACY
	PerThreadDefaultStream uintptr = 2 // CU_STREAM_PER_THREAD
)

// ForeignStream wraps a CUDA stream handle on device dev that godevarrow did
// not create (another library's stream, or LegacyDefaultStream or
// PerThreadDefaultStream). Destroy does nothing to it. The handle must be
// valid while the Stream is used; 0 is rejected because the protocols that
// pass streams as integers forbid it as ambiguous.
func ForeignStream(dev int, handle uintptr) (*Stream, error) {
	if err := CheckDevice(dev); err != nil {
		return nil, err
	}
	if handle == 0 {
		return nil, device.Unavailable("CUDA stream handle 0 is ambiguous; pass 1 for the legacy default stream or 2 for the per-thread default stream")
	}
	return &Stream{dev: dev, s: C.gda_stream(handle), foreign: true}, nil
}

// Handle returns the CUstream as an integer, the form the DLPack and CUDA
// Array Interface protocols use.
func (s *Stream) Handle() uintptr { return uintptr(s.s) }

// NewStream creates a non-blocking stream on device dev.
func NewStream(dev int) (*Stream, error) {
	if err := CheckDevice(dev); err != nil {
		return nil, err
	}
	st := &Stream{dev: dev}
	var call *C.char
	if err := cudaError(call, C.gda_cuda_stream_create(C.int(dev), &st.s, &call)); err != nil {
		return nil, err
	}
	return st, nil
}

// Device returns the stream's device id.
func (s *Stream) Device() int { return s.dev }

// Synchronize waits until all work queued on the stream is done.
func (s *Stream) Synchronize() error {
	var call *C.char
	return cudaError(call, C.gda_cuda_stream_sync(C.int(s.dev), s.s, &call))
}

// WaitEvent orders later work on the stream after the event (a CUevent pointer).
func (s *Stream) WaitEvent(event unsafe.Pointer) error {
	var call *C.char
	return cudaError(call, C.gda_cuda_stream_wait_event(C.int(s.dev), s.s, C.CUevent(event), &call))
}

// Drain waits for the stream's queued work after a failure, so that memory
// the work writes into can be freed. It retries once; if the stream still
// cannot be synchronized it reports false and the caller must not free that
// memory (leaking it is the only safe choice).
func (s *Stream) Drain() bool {
	return s.Synchronize() == nil || s.Synchronize() == nil
}

// Destroy destroys the stream (work already queued still completes); a
// foreign stream is left alone.
func (s *Stream) Destroy() error {
	if s.foreign {
		return nil
	}
	var call *C.char
	return cudaError(call, C.gda_cuda_stream_destroy(C.int(s.dev), s.s, &call))
}

// CopyAsync queues a copy of n bytes on the stream; pointers are host
// pointers or device addresses as the kind says.
func (s *Stream) CopyAsync(kind device.CopyKind, dst, src unsafe.Pointer, n int64, srcDev int) error {
	var call *C.char
	return cudaError(call, C.gda_cuda_copy_async(C.int(s.dev), C.int(kind), dst, src, C.size_t(n), C.int(srcDev), s.s, &call))
}

// Gather copies small device values to host memory with one batched copy and
// one synchronization: dst[i] receives size[i] bytes from src[i]. dst must
// be C memory. When it fails, no copy into dst is still pending unless the
// stream cannot be synchronized at all.
func (s *Stream) Gather(dst, src []unsafe.Pointer, size []int64) error {
	if len(dst) == 0 {
		return nil
	}
	n := len(dst)
	cdp := C.malloc(C.size_t(n) * 8)
	csp := C.malloc(C.size_t(n) * 8)
	cnp := C.malloc(C.size_t(n) * 8)
	defer C.free(cdp)
	defer C.free(csp)
	defer C.free(cnp)
	// The destinations are written as integers: a pointer store would run
	// the GC's write barrier on malloc's garbage (docs/design.md, Export).
	cd := unsafe.Slice((*uintptr)(cdp), n)
	cs := unsafe.Slice((*C.CUdeviceptr)(csp), n)
	cn := unsafe.Slice((*C.size_t)(cnp), n)
	for i := range dst {
		cd[i], cs[i], cn[i] = uintptr(dst[i]), C.CUdeviceptr(uintptr(src[i])), C.size_t(size[i])
	}
	var call *C.char
	return cudaError(call, C.gda_cuda_gather(C.int(s.dev), s.s, C.int(len(dst)), (*unsafe.Pointer)(cdp), &cs[0], &cn[0], &call))
}

// Event is a CUDA event on one device.
type Event struct {
	dev  int
	e    C.CUevent
	cell *C.CUevent // C memory holding e (Cell)
}

// NewEvent creates an event (without timing) on device dev.
func NewEvent(dev int) (*Event, error) {
	if err := CheckDevice(dev); err != nil {
		return nil, err
	}
	cell := (*C.CUevent)(C.malloc(C.size_t(unsafe.Sizeof(C.CUevent(nil)))))
	if cell == nil {
		return nil, device.Unavailable("out of memory making a CUDA event")
	}
	ev := &Event{dev: dev, cell: cell}
	var call *C.char
	if err := cudaError(call, C.gda_cuda_event_create(C.int(dev), &ev.e, &call)); err != nil {
		C.free(unsafe.Pointer(cell))
		return nil, err
	}
	*cell = ev.e
	return ev, nil
}

// Record records the event after the work queued on s so far.
func (e *Event) Record(s *Stream) error {
	var call *C.char
	return cudaError(call, C.gda_cuda_event_record(C.int(e.dev), e.e, s.s, &call))
}

// Synchronize waits on the host until the event has completed.
func (e *Event) Synchronize() error {
	var call *C.char
	return cudaError(call, C.gda_cuda_event_sync(C.int(e.dev), e.e, &call))
}

// Destroy destroys the event (and its cell: no sync_event may point to it).
func (e *Event) Destroy() error {
	var call *C.char
	err := cudaError(call, C.gda_cuda_event_destroy(C.int(e.dev), e.e, &call))
	C.free(unsafe.Pointer(e.cell))
	e.cell = nil
	return err
}

// Handle returns the CUevent itself (the value a sync_event points to).
func (e *Event) Handle() unsafe.Pointer { return unsafe.Pointer(e.e) }

// Cell returns C memory holding the CUevent, for a sync_event to point to.
func (e *Event) Cell() unsafe.Pointer { return unsafe.Pointer(e.cell) }

// AllocDevice allocates n bytes on device dev. The result is a device
// address: never dereference it on the host.
func AllocDevice(dev int, n int64) (unsafe.Pointer, error) {
	if err := CheckDevice(dev); err != nil {
		return nil, err
	}
	var p unsafe.Pointer
	var call *C.char
	if err := cudaError(call, C.gda_cuda_alloc(C.int(dev), C.size_t(n), (*C.CUdeviceptr)(unsafe.Pointer(&p)), &call)); err != nil {
		return nil, err
	}
	return p, nil
}

// FreeDevice frees an allocation of AllocDevice.
func FreeDevice(dev int, p unsafe.Pointer) error {
	var call *C.char
	return cudaError(call, C.gda_cuda_free(C.int(dev), C.CUdeviceptr(uintptr(p)), &call))
}

// PointerKind asks the driver what memory p points to and on which device:
// MemoryPinned for CU_MEMORYTYPE_HOST, MemoryDevice, or MemoryManaged for
// CU_POINTER_ATTRIBUTE_IS_MANAGED (MEMORY_TYPE then says DEVICE), asked in
// one cuPointerGetAttributes call. Only the driver's documented answer for
// memory it does not know (NULL attribute values) gives MemoryUnknown; every
// driver error is returned as an error.
func PointerKind(p unsafe.Pointer) (dev int, kind device.MemoryKind, err error) {
	if err := Open(); err != nil {
		return -1, 0, err
	}
	var d, k C.int
	var call *C.char
	if err := cudaError(call, C.gda_cuda_pointer_kind(C.CUdeviceptr(uintptr(p)), &d, &k, &call)); err != nil {
		return -1, 0, err
	}
	return int(d), device.MemoryKind(k), nil
}

// CheckPointersOnDevice checks with one driver call sequence that every
// pointer belongs to CUDA device dev. bad is the index of the first that
// does not (-1 when all do) and badDev its device (-1 with err set when the
// driver does not know the pointer).
func CheckPointersOnDevice(dev int, ptrs []uintptr) (bad, badDev int, err error) {
	if len(ptrs) == 0 {
		return -1, -1, nil
	}
	var b, bd C.int
	var call *C.char
	err = cudaError(call, C.gda_cuda_pointers_on_device(C.int(dev), C.int(len(ptrs)), (*C.uintptr_t)(unsafe.Pointer(&ptrs[0])), &b, &bd, &call))
	return int(b), int(bd), err
}

// CallerContextIs reports whether the calling thread's current CUDA context
// is device dev's primary context (the one godevarrow uses). It is what
// decides whether the special stream handles 1 and 2, which name the default
// streams of the *current* context, mean a stream of dev.
func CallerContextIs(dev int) bool {
	return Open() == nil && C.gda_cuda_caller_context_is(C.int(dev)) != 0
}

// InOwnContext returns the stream with its Device set to the device whose
// context the stream belongs to. A foreign stream (a producer's stream named
// by the CUDA Array Interface, or the handles 1 and 2, which name the default
// streams of the caller's current context) may belong to another device than
// the memory it orders; an event recorded on it must be created in the
// stream's own context (CUDA Driver API, cuEventRecord).
func (s *Stream) InOwnContext() (*Stream, error) {
	if !s.foreign || s.primary {
		return s, nil
	}
	var d C.int
	var call *C.char
	if err := cudaError(call, C.gda_cuda_stream_device(C.int(s.dev), s.s, &d, &call)); err != nil {
		return nil, err
	}
	if int(d) == s.dev {
		return s, nil
	}
	return &Stream{dev: int(d), s: s.s, foreign: true}, nil
}

// SyncEventOnHost waits on the host for a CUevent (the value a sync_event
// points to) recorded on device dev.
func SyncEventOnHost(dev int, event unsafe.Pointer) error {
	if err := Open(); err != nil {
		return err
	}
	var call *C.char
	return cudaError(call, C.gda_cuda_event_sync(C.int(dev), C.CUevent(event), &call))
}
