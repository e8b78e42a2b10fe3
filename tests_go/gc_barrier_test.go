package tests_go

import (
	"runtime"
	"testing"
	"unsafe"

	"github.com/godevarrow/godevarrow/gosrc/device/cuda"
	cb "github.com/godevarrow/godevarrow/tests_go/cboundary"
)

// staleGoPointer is the address of a Go object that has been freed: what a
// C block that once held a pinned Go buffer still contains.
func staleGoPointer() uintptr {
	b := make([]byte, 1<<16) // a span of its own
	p := uintptr(unsafe.Pointer(&b[0]))
	runtime.KeepAlive(b)
	b = nil
	runtime.GC()
	runtime.GC()
	return p
}

// Go code that fills malloc'd memory must not store Go pointer types there:
// the store runs the GC's write barrier, which also records the slot's old
// value, and a stale pointer into a freed Go object in that garbage kills
// the process ("found bad pointer in Go heap") when the GC is marking.
// Stream.Gather's table of destinations did that (one CI run hit it, after
// many that passed). Here every block it gets holds such a pointer and the
// GC runs all the time: the old Gather died at once, every run.
func TestGatherStoresNoPointerIntoMallocMemory(t *testing.T) {
	deviceBaseline(t)
	stream, err := cuda.NewStream(0)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Destroy()
	const n = 8
	src, err := cuda.AllocDevice(0, n*8)
	if err != nil {
		t.Fatal(err)
	}
	defer cuda.FreeDevice(0, src)
	hostBlock := cb.NewArray() // any C memory of at least n*8 bytes
	defer cb.Free(hostBlock)
	dst, srcs, sizes := make([]unsafe.Pointer, n), make([]unsafe.Pointer, n), make([]int64, n)
	for i := range dst {
		dst[i] = unsafe.Add(unsafe.Pointer(hostBlock), i*8)
		srcs[i] = unsafe.Add(src, i*8)
		sizes[i] = 8
	}
	stale := staleGoPointer()

	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
				runtime.GC()
			}
		}
	}()
	defer func() { close(stop); <-done }()
	for i := 0; i < 2000; i++ {
		cb.LeaveInFreedMemory(n*8, stale, 4)
		if err := stream.Gather(dst, srcs, sizes); err != nil {
			t.Fatal(err)
		}
	}
}
