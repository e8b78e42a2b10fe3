package tests_go

import (
	"runtime"
	"testing"

	"github.com/godevarrow/godevarrow/gosrc/cdevice"
	"github.com/godevarrow/godevarrow/gosrc/device/cuda"
	cb "github.com/godevarrow/godevarrow/tests_go/cboundary"
)

// The driver's own stream handles (CU_STREAM_LEGACY is 1, CU_STREAM_PER_THREAD
// 2) are integers in Go, never pointers: held in a pointer-typed field, the
// handle 1 of a DLPack import's stream made Go abort the process ("invalid
// pointer found on stack") when the goroutine's stack was copied (the garbage
// collector shrinks stacks) while a ForeignStream was being made. A tight
// loop of DLPack imports found it; this loop makes streams of both handles
// on a stack that the collector, running all the while, keeps shrinking.
func TestSpecialStreamHandlesSurviveStackCopies(t *testing.T) {
	deviceBaseline(t)
	defer collectAllTheWhile()()
	wrong := 0
	for round := 0; round < 2000; round++ {
		grow(64) // a stack that the collector finds mostly unused, and shrinks
		for i := 0; i < 100; i++ {
			for _, h := range []uintptr{cuda.LegacyDefaultStream, cuda.PerThreadDefaultStream} {
				s, err := cuda.ForeignStream(0, h)
				if err != nil {
					t.Fatal(err)
				}
				if s.Handle() != h {
					wrong++
				}
			}
		}
	}
	if wrong != 0 {
		t.Fatalf("%d streams had the wrong handle", wrong)
	}
}

// grow makes the stack depth frames of 512 bytes deep.
//
//go:noinline
func grow(depth int) int {
	var pad [512]byte
	pad[depth%len(pad)] = byte(depth)
	if depth == 0 {
		return 0
	}
	return grow(depth-1) + int(pad[(depth+1)%len(pad)])
}

// collectAllTheWhile runs the garbage collector in a loop (it shrinks the
// stacks it finds mostly unused) until the function it returns is called.
func collectAllTheWhile() (stop func()) {
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-done:
				return
			default:
				runtime.GC()
			}
		}
	}()
	return func() {
		close(done)
		<-stopped
	}
}

// Empty columns as polars exports them have dangling buffer pointers (0x1,
// 0x4, 0x8: a Rust empty vector's alignment), valid for zero bytes: an
// import must never hold one in a Go pointer, or a stack copy while it does
// aborts the process as the stream handles did.
func TestDanglingPointersOfEmptyBuffersSurviveStackCopies(t *testing.T) {
	baseline(t)
	defer collectAllTheWhile()()
	for round := 0; round < 2000; round++ {
		grow(64)
		arr := importC(t, cb.DanglingEmpty)
		if arr.Len() != 0 || arr.NumChildren() != 3 {
			t.Fatalf("an empty batch of 3 columns imported as %d rows, %d columns", arr.Len(), arr.NumChildren())
		}
		if err := cdevice.Validate(arr, true); err != nil {
			t.Fatal(err)
		}
		arr.Release()
	}
}
