package device

/*
#define _DEFAULT_SOURCE
#include <stdlib.h>
#include <sys/mman.h>

// Host memory for a copy. Large buffers are 2 MiB aligned and asked to use
// transparent huge pages, as numpy does: a copy then takes 512x fewer page
// faults.
static void* gda_host_alloc(size_t n) {
  if (n >= ((size_t)4 << 20)) {
    void* p = NULL;
    if (posix_memalign(&p, (size_t)2 << 20, n) == 0) {
      madvise(p, n, MADV_HUGEPAGE);
      return p;
    }
  }
  return malloc(n ? n : 1);
}
*/
import "C"

import (
	"sync"
	"unsafe"
)

// Host buffers for the results of copies (AllocHost, FreeHost). Fresh host
// memory is slow to fill: its first touch faults every page in (far below
// the link: docs/benchmarks.md, "Device jobs", the first copy into fresh memory),
// and a device can write into it only through the driver's own staging,
// because it is not pinned. So buffers of hostPoolMin bytes or more go back
// to a pool when their array is released, and the next copy of about the
// same size reuses one: its pages are touched already, and on its first
// reuse a HostPinner (the CUDA backend) pins it, so that from then on a
// device writes into it directly, at the link's bandwidth. Pinning costs
// tens of milliseconds per GiB, once per buffer, which only a buffer that is
// reused pays back. Smaller buffers are malloc'd and freed as before.
//
// The pool is bounded: at most hostPoolMaxIdle idle buffers and
// hostPoolMaxBytes idle bytes (the oldest go back to the system first), and
// a reused buffer is at most an eighth larger than asked. ReleasePools frees
// every idle buffer (unpinned first).

const (
	hostPoolMin      = 1 << 20
	hostPoolMaxIdle  = 16
	hostPoolMaxBytes = 4 << 30
	hostPoolRound    = 2 << 20 // pooled sizes are multiples of this (huge pages)
)

// HostPinner pins host memory for a backend's direct transfers (Pin says
// whether it did) and unpins it before the memory is freed.
type HostPinner interface {
	Pin(p unsafe.Pointer, n int64) bool
	Unpin(p unsafe.Pointer, n int64)
}

type pooledHost struct {
	size   int64
	pinned bool
}

var hostPool = struct {
	sync.Mutex
	pinner HostPinner
	live   map[unsafe.Pointer]*pooledHost // every pooled-size buffer, idle or in use
	idle   []unsafe.Pointer               // oldest first
	bytes  int64                          // idle bytes
}{live: map[unsafe.Pointer]*pooledHost{}}

func init() { RegisterPool(releaseHostPool) }

// SetHostPinner installs the pinner of the pool's reused buffers (the CUDA
// backend's, from its init()).
func SetHostPinner(p HostPinner) {
	hostPool.Lock()
	hostPool.pinner = p
	hostPool.Unlock()
}

// AllocHost returns n bytes of uninitialized host memory (nil when the
// system has none), from the pool when it holds a buffer that fits.
func AllocHost(n int64) unsafe.Pointer {
	if n < hostPoolMin {
		return C.gda_host_alloc(C.size_t(n))
	}
	size := (n + hostPoolRound - 1) / hostPoolRound * hostPoolRound
	hostPool.Lock()
	best := -1
	for i, p := range hostPool.idle {
		if s := hostPool.live[p].size; s >= size && s <= size+size/8 && (best < 0 || s < hostPool.live[hostPool.idle[best]].size) {
			best = i
		}
	}
	if best >= 0 {
		p := hostPool.idle[best]
		hostPool.idle = append(hostPool.idle[:best], hostPool.idle[best+1:]...)
		b := hostPool.live[p]
		hostPool.bytes -= b.size
		pinner := hostPool.pinner
		hostPool.Unlock()
		if !b.pinned && pinner != nil {
			b.pinned = pinner.Pin(p, b.size)
		}
		return p
	}
	hostPool.Unlock()
	p := C.gda_host_alloc(C.size_t(size))
	if p != nil {
		hostPool.Lock()
		hostPool.live[p] = &pooledHost{size: size}
		hostPool.Unlock()
	}
	return p
}

// FreeHost gives memory of AllocHost back: a pooled-size buffer to the
// pool (evicting the oldest idle ones past its bounds), anything else to
// the system.
func FreeHost(p unsafe.Pointer) {
	hostPool.Lock()
	b := hostPool.live[p]
	if b == nil {
		hostPool.Unlock()
		C.free(p)
		return
	}
	hostPool.idle = append(hostPool.idle, p)
	hostPool.bytes += b.size
	var evict []unsafe.Pointer
	for len(hostPool.idle) > hostPoolMaxIdle || hostPool.bytes > hostPoolMaxBytes {
		evict = append(evict, hostPool.idle[0])
		hostPool.bytes -= hostPool.live[hostPool.idle[0]].size
		hostPool.idle = hostPool.idle[1:]
	}
	hostPool.Unlock()
	freeHostBuffers(evict)
}

// freeHostBuffers unpins and frees idle pooled buffers.
func freeHostBuffers(ps []unsafe.Pointer) {
	for _, p := range ps {
		hostPool.Lock()
		b, pinner := hostPool.live[p], hostPool.pinner
		delete(hostPool.live, p)
		hostPool.Unlock()
		if b.pinned && pinner != nil {
			pinner.Unpin(p, b.size)
		}
		C.free(p)
	}
}

func releaseHostPool() {
	hostPool.Lock()
	idle := hostPool.idle
	hostPool.idle, hostPool.bytes = nil, 0
	hostPool.Unlock()
	freeHostBuffers(idle)
}

// HostPoolIdle is the number of idle buffers in the pool and their bytes
// (for tests: the pool's bounds).
func HostPoolIdle() (int, int64) {
	hostPool.Lock()
	defer hostPool.Unlock()
	return len(hostPool.idle), hostPool.bytes
}
