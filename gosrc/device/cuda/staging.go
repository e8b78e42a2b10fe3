package cuda

/*
#include "cuda.h"
*/
import "C"

import (
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/godevarrow/godevarrow/gosrc/device"
)

// Copies between device memory and ordinary (pageable) host memory go
// through pinned staging memory. The driver serves a copy from or into
// pageable memory synchronously and at a fraction of the link's bandwidth
// (it stages it itself, through its own small buffers, on one thread); a
// copy from or into pinned memory is asynchronous and runs at the link's
// bandwidth. Pinned memory is far too slow to allocate per copy
// (cuMemAllocHost costs about a millisecond per MiB), so each device keeps a
// few chunks of it, allocated on first use and reused:
//
//   - a host-to-device copy of up to smallUpload bytes (16 KB) goes to the
//     driver as it is: from pageable memory the driver copies the bytes into
//     its own staging in the call and returns (the source may be reused at
//     once), cheaper at that size than a memcpy into a chunk and a pinned
//     copy waited for, and it holds no chunk: a copy to a device is ordered
//     by an event, not waited for (cdevice.CopyToDevice), so nothing would
//     give a small upload's chunk back soon;
//   - a larger copy up to a chunk, and a small device-to-host copy, take
//     their bytes of a chunk that its stream holds until it is synchronized:
//     a host-to-device copy is a memcpy into the chunk and one asynchronous
//     driver copy; a device-to-host copy is one asynchronous driver copy into
//     the chunk, and the memcpy out of it runs when the stream is
//     synchronized (SyncStream), so nothing reads the destination before the
//     data is there;
//   - a large copy is cut into chunk-sized pieces that go round the chunks
//     it holds, one worker thread per chunk, each reuse waiting for the
//     chunk's event: the workers' memcpys run at once and overlap the
//     transfers queued before them (pipelinedCopy);
//   - a gather of small values (Gather) lands in a chunk and is copied out
//     after its one synchronization.
//
// The pool is bounded: at most stagingPerDevice chunks of stagingChunk bytes
// per device (one per CPU, 4 to 16: 16 to 64 MiB of pinned memory), idle
// ones kept until
// ReleaseStaging (device.ReleasePools). When every chunk of a device is in
// use (concurrent copies), a copy goes to the driver directly, as before:
// nothing waits for a chunk.

const (
	stagingChunk   = 4 << 20 // bytes of pinned memory per chunk
	stagingAlign   = 256     // small copies start on this boundary in a chunk
	maxCopyWorkers = 16      // host threads of one memcpy, and chunks of one device
	copyPerWorker  = 1 << 20 // parallelCopy splits a memcpy only into parts at least this large
	// host-to-device copies up to this size go to the driver unstaged. On
	// the H200 (docs/cuda.md, "Driver calls") an 8 KB pageable upload was
	// issued, with an event recorded after it, in 6.0 µs where a pinned one
	// waited for took 10.2; at 64 KB the pageable copy's staging in the call
	// made it the dearer (19.7 µs against 11.5 waited for, as pinned). The
	// bound sits between the two measured sizes, nearer the one that won.
	smallUpload = 16 << 10
)

// chunk is pinned host memory of one device, with an event that marks the
// last copy queued on it by a large copy's pipeline (made when a pipeline
// first uses the chunk: small copies need none).
type chunk struct {
	dev  int
	p    unsafe.Pointer // cuMemAllocHost memory, stagingChunk bytes
	ev   *Event
	used int64 // bytes already handed to small copies
}

// stagingPerDevice is the number of chunks a device keeps at most: one per
// CPU (a pipelined copy runs one worker per chunk), at least 4, at most
// maxCopyWorkers: 16 to 64 MiB of pinned memory per device.
var stagingPerDevice = min(max(runtime.NumCPU(), 4), maxCopyWorkers)

// StagingPerDevice is the bound on a device's staging chunks (for tests).
func StagingPerDevice() int { return stagingPerDevice }

var staging = struct {
	sync.Mutex
	idle  map[int][]*chunk
	count map[int]int // chunks of each device, idle or in use
}{idle: map[int][]*chunk{}, count: map[int]int{}}

func init() {
	device.RegisterPool(ReleaseStaging)
	device.SetHostPinner(hostPinner{})
}

// hostPinner pins the host pool's reused buffers (device/hostpool.go), so
// that copies into and out of them skip staging: the driver then moves
// their bytes directly, asynchronously, at the link's bandwidth.
type hostPinner struct{}

// pinned are the ranges hostPinner pinned: base address to size.
var pinned = struct {
	sync.RWMutex
	m map[uintptr]int64
}{m: map[uintptr]int64{}}

// copying is set once this process has made a staged copy: until then the
// pool's buffers are not pinned, so that CPU-only work never opens the
// driver (nor retains a context) for them.
var copying atomic.Bool

func (hostPinner) Pin(p unsafe.Pointer, n int64) bool {
	if !copying.Load() || Open() != nil || DeviceCount() == 0 {
		return false
	}
	var call *C.char
	if C.gda_cuda_host_register(p, C.size_t(n), &call) != 0 {
		return false
	}
	pinned.Lock()
	pinned.m[uintptr(p)] = n
	pinned.Unlock()
	return true
}

func (hostPinner) Unpin(p unsafe.Pointer, n int64) {
	pinned.Lock()
	delete(pinned.m, uintptr(p))
	pinned.Unlock()
	var call *C.char
	C.gda_cuda_host_unregister(p, &call)
}

// isPinned says whether [p, p+n) lies in a range hostPinner pinned.
func isPinned(p unsafe.Pointer, n int64) bool {
	pinned.RLock()
	defer pinned.RUnlock()
	for base, size := range pinned.m {
		if uintptr(p) >= base && uintptr(p)+uintptr(n) <= base+uintptr(size) {
			return true
		}
	}
	return false
}

// takeChunk gives an idle chunk of dev, allocating one while the device has
// fewer than stagingPerDevice; nil when all are in use or allocation fails.
func takeChunk(dev int) *chunk {
	staging.Lock()
	if l := staging.idle[dev]; len(l) > 0 {
		c := l[len(l)-1]
		staging.idle[dev] = l[:len(l)-1]
		staging.Unlock()
		return c
	}
	if staging.count[dev] >= stagingPerDevice {
		staging.Unlock()
		return nil
	}
	staging.count[dev]++
	staging.Unlock()
	c, err := newChunk(dev)
	if err != nil {
		staging.Lock()
		staging.count[dev]--
		staging.Unlock()
		return nil
	}
	return c
}

func newChunk(dev int) (*chunk, error) {
	var p unsafe.Pointer
	var call *C.char
	if err := cudaError(call, C.gda_cuda_alloc_host(C.int(dev), stagingChunk, &p, &call)); err != nil {
		return nil, err
	}
	copying.Store(true)
	return &chunk{dev: dev, p: p}, nil
}

// putChunk gives c back to the pool once no copy queued on it is pending.
func putChunk(c *chunk) {
	c.used = 0
	staging.Lock()
	staging.idle[c.dev] = append(staging.idle[c.dev], c)
	staging.Unlock()
}

// dropChunk forgets a chunk that a copy may still write into (its stream
// could not be synchronized): freeing it could let the driver write into
// freed memory, so it is leaked, and the device may allocate another.
func dropChunk(c *chunk) {
	staging.Lock()
	staging.count[c.dev]--
	staging.Unlock()
}

// ReleaseStaging frees every idle staging chunk (their pinned memory and
// events); chunks in use return to the pool when their copy is done.
func ReleaseStaging() {
	staging.Lock()
	var all []*chunk
	for dev, l := range staging.idle {
		all = append(all, l...)
		staging.count[dev] -= len(l)
		delete(staging.idle, dev)
	}
	staging.Unlock()
	for _, c := range all {
		var call *C.char
		if c.ev != nil {
			_ = c.ev.Destroy()
		}
		C.gda_cuda_free_host(C.int(c.dev), c.p, &call)
	}
}

// StagingChunkBytes is the size of a staging chunk: copies larger than it
// are pipelined through several.
const StagingChunkBytes = stagingChunk

// StagingChunks is the number of staging chunks of device dev, idle or in
// use (for tests: the pool's bound).
func StagingChunks(dev int) int {
	staging.Lock()
	defer staging.Unlock()
	return staging.count[dev]
}

// staged is what a stream's staged copies hold until it is synchronized:
// their chunks, and the memcpys out of them that complete device-to-host
// copies.
type staged struct {
	active bool // copies were staged since the stream was last finished
	chunks []*chunk
	small  *chunk // the chunk small copies take their bytes from
	outs   []stagedOut
}

type stagedOut struct {
	dst, src unsafe.Pointer
	n        int64
}

// stagedOf is what s holds: a stream godevarrow owns is used by one
// operation at a time (its pool hands it to one), so its staged copies need
// no lock, and their slices keep their capacity from one use to the next.
func stagedOf(s *Stream) *staged {
	s.staged.active = true
	return &s.staged
}

// finishStaged ends the staged copies of s after it was synchronized (done:
// the memcpys out run, then the chunks go back) or drained after a failure
// (drained: the chunks go back without the memcpys; else they are dropped).
func finishStaged(s *Stream, done, drained bool) {
	w := &s.staged
	if !w.active {
		return
	}
	defer func() {
		clear(w.chunks) // no stale references in the kept capacity
		*w = staged{chunks: w.chunks[:0], outs: w.outs[:0]}
	}()
	if done {
		for _, o := range w.outs {
			parallelCopy(o.dst, o.src, o.n)
		}
	}
	for _, c := range w.chunks {
		if done || drained {
			putChunk(c)
		} else {
			dropChunk(c)
		}
	}
}

// hasStaged says whether s has staged copies not yet finished.
func hasStaged(s *Stream) bool { return s.staged.active }

// stagedCopy makes a host-to-device or device-to-host copy on s through
// staging memory; false (and nil) when it cannot, and the copy should go to
// the driver as it is. The host side may be any host memory.
func stagedCopy(s *Stream, kind device.CopyKind, dst, src unsafe.Pointer, n int64) (bool, error) {
	if s.foreign || n <= 0 || kind != device.HostToDevice && kind != device.DeviceToHost {
		return false, nil
	}
	if kind == device.DeviceToHost && isPinned(dst, n) || kind == device.HostToDevice && isPinned(src, n) {
		return false, nil // pinned already: the driver copies it directly
	}
	if kind == device.HostToDevice && n <= smallUpload {
		return false, nil // the driver stages it in the call (see the top of this file)
	}
	if n > stagingChunk {
		return pipelinedCopy(s, kind, dst, src, n)
	}
	w := stagedOf(s)
	if w.small == nil || w.small.used+n > stagingChunk {
		c := takeChunk(s.dev)
		if c == nil {
			return false, nil
		}
		w.small = c
		w.chunks = append(w.chunks, c)
	}
	at := unsafe.Add(w.small.p, w.small.used)
	w.small.used += (n + stagingAlign - 1) &^ (stagingAlign - 1)
	if kind == device.HostToDevice {
		parallelCopy(at, src, n)
		return true, s.CopyAsync(kind, dst, at, n, s.dev)
	}
	if err := s.CopyAsync(kind, at, src, n, s.dev); err != nil {
		return true, err
	}
	w.outs = append(w.outs, stagedOut{dst: dst, src: at, n: n})
	return true, nil
}

// pipelinedCopy copies more than a chunk in chunk-sized pieces through the
// chunks it can take (at least two, or it declines): pipelinedUpload and
// pipelinedDownload say how each direction uses them.
func pipelinedCopy(s *Stream, kind device.CopyKind, dst, src unsafe.Pointer, n int64) (bool, error) {
	var cs []*chunk
	for len(cs) < stagingPerDevice {
		c := takeChunk(s.dev)
		if c == nil {
			break
		}
		cs = append(cs, c)
	}
	evented := true
	for _, c := range cs {
		if c.ev == nil {
			// on failure the copy goes to the driver as it is
			if ev, err := NewEvent(s.dev); err == nil {
				c.ev = ev
			}
		}
		evented = evented && c.ev != nil
	}
	if len(cs) < 2 || !evented {
		for _, c := range cs {
			putChunk(c)
		}
		return false, nil
	}
	w := stagedOf(s)
	w.chunks = append(w.chunks, cs...)
	if kind == device.HostToDevice {
		return true, pipelinedUpload(s, cs, dst, src, n)
	}
	return true, pipelinedDownload(s, w, cs, dst, src, n)
}

// pipelinedUpload copies n bytes from host memory to the device through the
// chunks cs with one worker per chunk (at most one per CPU): worker w copies
// pieces w, w+k, w+2k, ... of its chunk, each time first waiting for the
// chunk's event (the transfer of its previous piece), then copying the
// piece into the chunk and queueing its transfer. So the workers' memcpys
// run at once, each on its own thread for the whole copy, overlapping the
// transfers queued before them. (One memcpy spread over threads for each
// piece in turn, the earlier design, held a 1 GiB copy to 16 GB/s on the
// H200's 16-CPU host whatever the number of threads: they were woken for
// every 4 MiB piece.)
func pipelinedUpload(s *Stream, cs []*chunk, dst, src unsafe.Pointer, n int64) error {
	pieces := (n + stagingChunk - 1) / stagingChunk
	workers := int64(min(len(cs), runtime.NumCPU()))
	workers = max(min(workers, pieces), 1)
	var (
		wg       sync.WaitGroup
		failed   atomic.Bool
		errOnce  sync.Once
		firstErr error
	)
	fail := func(err error) {
		failed.Store(true)
		errOnce.Do(func() { firstErr = err })
	}
	for worker := int64(0); worker < workers; worker++ {
		wg.Add(1)
		go func(c *chunk) {
			defer wg.Done()
			for i := worker; i < pieces && !failed.Load(); i += workers {
				off := i * stagingChunk
				m := min(stagingChunk, n-off)
				if i != worker {
					if err := c.ev.Synchronize(); err != nil {
						fail(err)
						return
					}
				}
				copy(unsafe.Slice((*byte)(c.p), m), unsafe.Slice((*byte)(unsafe.Add(src, off)), m))
				err := s.CopyAsync(device.HostToDevice, unsafe.Add(dst, off), c.p, m, s.dev)
				if err == nil {
					err = c.ev.Record(s)
				}
				if err != nil {
					fail(err)
					return
				}
			}
		}(cs[worker])
	}
	wg.Wait()
	return firstErr
}

// pipelinedDownload copies n bytes from the device to host memory: piece i
// goes through chunk i%k, waiting for that chunk's event (its previous
// piece's transfer) before reusing it and copying that piece out, so the
// memcpy of one piece (spread over threads) overlaps the transfers queued
// after it. The last pieces are copied out when the stream is synchronized.
func pipelinedDownload(s *Stream, w *staged, cs []*chunk, dst, src unsafe.Pointer, n int64) error {
	outs := make([]stagedOut, len(cs))
	for i, off := 0, int64(0); off < n; i, off = i+1, off+stagingChunk {
		c, m := cs[i%len(cs)], min(stagingChunk, n-off)
		if i >= len(cs) {
			if err := c.ev.Synchronize(); err != nil {
				return err
			}
			if o := outs[i%len(cs)]; o.n > 0 {
				parallelCopy(o.dst, o.src, o.n)
			}
		}
		err := s.CopyAsync(device.DeviceToHost, c.p, unsafe.Add(src, off), m, s.dev)
		outs[i%len(cs)] = stagedOut{dst: unsafe.Add(dst, off), src: c.p, n: m}
		if err == nil {
			err = c.ev.Record(s)
		}
		if err != nil {
			outs[i%len(cs)] = stagedOut{}
			w.outs = append(w.outs, outs...)
			return err
		}
	}
	for _, o := range outs {
		if o.n > 0 {
			w.outs = append(w.outs, o)
		}
	}
	return nil
}

// stagedGather is Gather through a staging chunk: the values land in pinned
// memory (asynchronous copies, which the driver queues without waiting)
// and are copied to dst after the one synchronization. false when they do
// not fit in a chunk or no chunk is free.
func stagedGather(s *Stream, dst, src []unsafe.Pointer, size []int64) (bool, error) {
	total := int64(0)
	for _, n := range size {
		total += (n + 7) &^ 7
	}
	if s.foreign || total > stagingChunk {
		return false, nil
	}
	c := takeChunk(s.dev)
	if c == nil {
		return false, nil
	}
	at := make([]unsafe.Pointer, len(dst))
	off := int64(0)
	for i, n := range size {
		at[i] = unsafe.Add(c.p, off)
		off += (n + 7) &^ 7
	}
	if err := s.Gather(at, src, size); err != nil {
		if s.Drain() {
			putChunk(c)
		} else {
			dropChunk(c)
		}
		return true, err
	}
	for i, n := range size {
		copy(unsafe.Slice((*byte)(dst[i]), n), unsafe.Slice((*byte)(at[i]), n))
	}
	putChunk(c)
	return true, nil
}

// parallelCopy copies n bytes from src to dst (host memory, not
// overlapping), split over up to one thread per CPU: one thread of memcpy
// cannot keep up with the link, and the first touch of fresh destination
// pages (page faults) is spread with it.
func parallelCopy(dst, src unsafe.Pointer, n int64) {
	workers := int64(min(runtime.NumCPU(), maxCopyWorkers))
	workers = max(min(workers, n/copyPerWorker), 1)
	if workers == 1 {
		copy(unsafe.Slice((*byte)(dst), n), unsafe.Slice((*byte)(src), n))
		return
	}
	part := ((n+workers-1)/workers + 4095) &^ 4095
	var wg sync.WaitGroup
	for off := int64(0); off < n; off += part {
		m := min(part, n-off)
		wg.Add(1)
		go func(d, s unsafe.Pointer) {
			defer wg.Done()
			copy(unsafe.Slice((*byte)(d), m), unsafe.Slice((*byte)(s), m))
		}(unsafe.Add(dst, off), unsafe.Add(src, off))
	}
	wg.Wait()
}
