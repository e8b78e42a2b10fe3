package tests_go

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/godevarrow/godevarrow/gosrc/cdevice"
	"github.com/godevarrow/godevarrow/gosrc/device"
	"github.com/godevarrow/godevarrow/gosrc/device/cuda"
	fc "github.com/godevarrow/godevarrow/tests_go/fakecudactl"
)

// int64Host is a host array of n int64 values (every 13th null), each value
// distinct, so that a piece copied to the wrong place shows.
func int64Host(t *testing.T, n int) *cdevice.Array {
	t.Helper()
	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	for i := 0; i < n; i++ {
		if i%13 == 0 {
			b.AppendNull()
		} else {
			b.Append(int64(i)*7919 + 3)
		}
	}
	arr := b.NewArray()
	defer arr.Release()
	a, err := cdevice.FromArrow(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, arr)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// Copies larger than a staging chunk are cut into pieces that go round the
// pool's chunks; every piece must land in its place both ways, whatever the
// remainder, and between devices too.
func TestCUDACopiesLargerThanAStagingChunkRoundTrip(t *testing.T) {
	deviceBaseline(t)
	chunk := cuda.StagingChunkBytes / 8
	for _, n := range []int{chunk - 1, chunk, chunk + 1, 3*chunk + 17, 9*chunk + 5} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			host := int64Host(t, n)
			defer host.Release()
			d0 := mustCopy(t, host, cuda0)
			defer d0.Release()
			d1 := mustCopy(t, d0, cuda1)
			defer d1.Release()
			if !sameOnHost(t, host, d1) {
				t.Fatalf("%d values changed on their way through two devices", n)
			}
			if got, bound := cuda.StagingChunks(0), cuda.StagingPerDevice(); got > bound {
				t.Fatalf("device 0 holds %d staging chunks, more than its bound of %d", got, bound)
			}
		})
	}
}

// A device-to-host copy's bytes reach the destination when the stream is
// synchronized, not before: a reader that did not wait sees the old bytes,
// for a small (staged in one chunk) and a pipelined copy alike.
func TestCUDADeviceToHostCopyLandsAtTheSynchronization(t *testing.T) {
	deviceBaseline(t)
	b, err := device.BackendFor(device.CUDA)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int64{4096, 3*cuda.StagingChunkBytes + 100} {
		src := make([]byte, n)
		for i := range src {
			src[i] = byte(i*31 + 7)
		}
		s, err := b.AcquireStream(0)
		if err != nil {
			t.Fatal(err)
		}
		dev, err := b.Alloc(0, n)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.CopyAsync(s, device.HostToDevice, dev, unsafe.Pointer(&src[0]), n, 0); err != nil {
			t.Fatal(err)
		}
		if err := b.SyncStream(s); err != nil {
			t.Fatal(err)
		}
		dst := bytes.Repeat([]byte{0xAA}, int(n))
		if err := b.CopyAsync(s, device.DeviceToHost, unsafe.Pointer(&dst[0]), dev, n, 0); err != nil {
			t.Fatal(err)
		}
		// the last piece (at least) is still in flight before the synchronization
		if dst[n-1] != 0xAA {
			t.Errorf("%d bytes: the end of the destination changed before the stream was synchronized", n)
		}
		if err := b.SyncStream(s); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(dst, src) {
			t.Errorf("%d bytes: the destination differs from the source after the synchronization", n)
		}
		if err := b.Free(0, dev); err != nil {
			t.Fatal(err)
		}
		if err := b.ReleaseStream(s); err != nil {
			t.Fatal(err)
		}
	}
}

// Copies from many goroutines at once share the bounded pool: those that
// find every chunk in use go to the driver directly, nothing waits, and all
// are correct. ReleasePools then hands every chunk back (deviceBaseline).
func TestCUDAConcurrentCopiesShareTheBoundedStagingPool(t *testing.T) {
	deviceBaseline(t)
	host := int64Host(t, 2*cuda.StagingChunkBytes/8+333)
	defer host.Release()
	var wg sync.WaitGroup
	failures := make(chan string, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := cdevice.CopyToDevice(host, cuda0)
			if err != nil {
				failures <- err.Error()
				return
			}
			defer d.Release()
			back, err := cdevice.CopyToDevice(d, device.Host)
			if err != nil {
				failures <- err.Error()
				return
			}
			defer back.Release()
			if ok, err := cdevice.Equal(host, back, false); err != nil || !ok {
				failures <- fmt.Sprintf("round trip differs (%v)", err)
			}
		}()
	}
	wg.Wait()
	close(failures)
	for f := range failures {
		t.Error(f)
	}
	if got, bound := cuda.StagingChunks(0), cuda.StagingPerDevice(); got > bound {
		t.Fatalf("device 0 holds %d staging chunks, more than its bound of %d", got, bound)
	}
}

// A driver failure in the middle of a pipelined copy is the copy's error;
// the chunks go back to the pool once the stream is drained (no leak, by
// deviceBaseline), and the next copy is correct.
func TestCUDAFailedPipelinedCopyGivesItsChunksBack(t *testing.T) {
	deviceBaseline(t)
	host := int64Host(t, 9*cuda.StagingChunkBytes/8) // more pieces than chunks: reuses wait on events
	defer host.Release()
	d := mustCopy(t, host, cuda0)
	defer d.Release()
	for _, fn := range []string{"cuMemcpyDtoHAsync_v2", "cuEventRecord", "cuEventSynchronize"} {
		device.ReleasePools() // no pinned result buffer to reuse: the copy is staged
		fc.FailNth(fn, 3, 2)  // CUDA_ERROR_OUT_OF_MEMORY: not sticky
		back, err := cdevice.CopyToDevice(d, device.Host)
		fc.ClearFaults()
		if err == nil {
			back.Release()
			t.Fatalf("a copy whose third %s failed succeeded", fn)
		}
		if !bytes.Contains([]byte(err.Error()), []byte(fn)) {
			t.Errorf("the error does not name the failing call %s: %v", fn, err)
		}
		if !sameOnHost(t, host, d) {
			t.Fatalf("a copy after a failed %s differs", fn)
		}
	}
}

// A loader's steady state: the result of a large device-to-host copy goes
// back to the host pool when released, the next copy of that size reuses it
// (pinned on its first reuse) and the driver then writes into it directly,
// one copy per buffer instead of one per staged piece. Each result is right.
func TestCUDARepeatedCopiesToTheHostReuseAPinnedBuffer(t *testing.T) {
	deviceBaseline(t)
	host := int64Host(t, 5*cuda.StagingChunkBytes/8)
	defer host.Release()
	d := mustCopy(t, host, cuda0)
	defer d.Release()
	device.ReleasePools()
	var calls []int64
	registers := fc.Calls("cuMemHostRegister_v2")
	for i := 0; i < 4; i++ {
		before := fc.CopyCalls(fc.DeviceToHost)
		if !sameOnHost(t, host, d) {
			t.Fatalf("copy %d to the host differs", i)
		}
		calls = append(calls, fc.CopyCalls(fc.DeviceToHost)-before)
	}
	// the first copy stages the 40 MiB of values in pieces; the later ones
	// write the values (one copy) and the bitmap (staged: one copy) directly
	if calls[0] < 5 || calls[2] != 2 || calls[3] != 2 {
		t.Errorf("device-to-host copy calls per round trip: %v, want >= 5 first, then 2", calls)
	}
	if n := fc.Calls("cuMemHostRegister_v2") - registers; n != 1 {
		t.Errorf("%d registrations for one reused buffer, want 1", n)
	}
	if idle, _ := device.HostPoolIdle(); idle > 16 {
		t.Errorf("%d idle buffers in the host pool, more than its bound of 16", idle)
	}
}

// A gather fetches the pieces of one allocation that lie close together as
// one copy of their span (cuda.c, gda_cuda_gather): pieces of three
// allocations, given in no order, some overlapping, come back right with one
// copy per allocation; pieces farther apart than the gap bound are fetched
// apart.
func TestCUDAGatherFetchesNearbyPiecesOfAnAllocationInOneCopy(t *testing.T) {
	deviceBaseline(t)
	b, err := device.BackendFor(device.CUDA)
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.AcquireStream(0)
	if err != nil {
		t.Fatal(err)
	}
	defer b.ReleaseStream(s)
	sizes := []int64{64 << 10, 64 << 10, 4 << 20, 4 << 20}
	var allocs []unsafe.Pointer
	var patterns [][]byte
	for k, n := range sizes {
		p, err := b.Alloc(0, n)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Free(0, p)
		pattern := make([]byte, n)
		for i := range pattern {
			pattern[i] = byte(i*131 + k*17 + i>>8)
		}
		if err := b.CopyAsync(s, device.HostToDevice, p, unsafe.Pointer(&pattern[0]), n, 0); err != nil {
			t.Fatal(err)
		}
		allocs, patterns = append(allocs, p), append(patterns, pattern)
	}
	if err := b.SyncStream(s); err != nil {
		t.Fatal(err)
	}
	type piece struct {
		alloc      int
		off, bytes int64
	}
	near := []piece{{1, 4096, 8}, {0, 100, 8}, {0, 1000, 16}, {2, 10, 8}, {0, 1004, 8}, {1, 0, 1}, {0, 60 << 10, 64}}
	far := []piece{{2, 10, 8}, {2, 2 << 20, 8}} // 2 MiB apart: two copies
	// pieces 60 KiB apart over two 4 MiB allocations: the first's span is
	// one copy, but the staging a gather takes stays within 4 MiB (its
	// pieces' bytes are fewer), so most of the second's come one by one
	var spread []piece
	for k := int64(0); k < 61; k++ {
		spread = append(spread, piece{2, k * 60 << 10, 8}, piece{3, k * 60 << 10, 8})
	}
	for _, c := range []struct {
		pieces []piece
		copies int64
	}{{near, 3}, {far, 2}, {spread, -1}} {
		dst := make([][]byte, len(c.pieces))
		var dp, sp []unsafe.Pointer
		var n []int64
		for i, p := range c.pieces {
			dst[i] = make([]byte, p.bytes)
			dp = append(dp, unsafe.Pointer(&dst[i][0]))
			sp = append(sp, unsafe.Add(allocs[p.alloc], p.off))
			n = append(n, p.bytes)
		}
		before, moved := fc.CopyCalls(2), fc.BytesCopied(2) // device to host
		if err := b.Gather(s, dp, sp, n); err != nil {
			t.Fatal(err)
		}
		got, copied := fc.CopyCalls(2)-before, fc.BytesCopied(2)-moved
		if c.copies >= 0 && got != c.copies {
			t.Errorf("%d pieces fetched with %d copies, want %d", len(c.pieces), got, c.copies)
		}
		if c.copies < 0 && (got < 40 || got > 100 || copied > 4<<20) {
			t.Errorf("%d spread pieces fetched with %d copies of %d bytes, want most of one allocation's apart, within 4 MiB", len(c.pieces), got, copied)
		}
		for i, p := range c.pieces {
			if want := patterns[p.alloc][p.off : p.off+p.bytes]; !bytes.Equal(dst[i], want) {
				t.Errorf("piece %d (allocation %d at %d): got %x, want %x", i, p.alloc, p.off, dst[i], want)
			}
		}
	}
}
