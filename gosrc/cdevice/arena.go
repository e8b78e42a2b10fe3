package cdevice

import (
	"sync/atomic"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/godevarrow/godevarrow/gosrc/cschema"
	"github.com/godevarrow/godevarrow/gosrc/device"
)

// A copy to a device carves every buffer of the array from one device
// allocation (an arena), as a pool allocator hands out a cuDF column's: a
// batch of a hundred columns costs one allocation instead of two hundred
// (each a cuMemAlloc + cuMemFree pair of about 90 µs on a GPU when the pool
// has no block), and the buffers of one array lie together in one
// allocation, so a batched read of small pieces of them (the validity
// bitmaps of null counts, the offsets that bound string data) is one copy
// of their span (the CUDA backend's Gather).
//
// The validity bitmaps come first, together, and the other buffers after
// them: counting the nulls of a batch (cuDF needs the counts) then fetches
// the bitmaps of all its columns as one short span, not the whole batch.
//
// Buffers start on arenaAlign boundaries (DLPack asks device data pointers
// to be 256-byte aligned, as cuMemAlloc's are); an empty one takes a byte,
// so that its pointer lies inside the allocation (the pointer checks of an
// import ask the driver where it is). The arena is freed when the
// last of its buffers is released and the copy that made it has let go of
// it (a copy that fails keeps it while its queued copies may still write).

const arenaAlign = 256

type deviceArena struct {
	b    device.Backend
	dev  int
	base unsafe.Pointer
	size int64
	next [2]int64     // where the next bitmap [0] and the next other buffer [1] go
	end  [2]int64     // where their regions end
	refs atomic.Int64 // one per carved buffer, and the copy's own
}

func alignArena(n int64) int64 { return (n + arenaAlign - 1) &^ (arenaAlign - 1) }

// newArena allocates the bytes of a plan on device dev of backend b, held by
// the caller (release drops that hold).
func newArena(b device.Backend, dev int, plan arenaPlan) (*deviceArena, error) {
	size := plan.bitmaps + plan.others
	p, err := b.Alloc(dev, size)
	if err != nil {
		return nil, err
	}
	liveDeviceBytes.Add(size)
	a := &deviceArena{b: b, dev: dev, base: p, size: size}
	a.next, a.end = [2]int64{0, plan.bitmaps}, [2]int64{plan.bitmaps, size}
	a.refs.Store(1)
	return a, nil
}

// carve returns a buffer of n bytes of the arena (a validity bitmap when
// bitmap), which holds the arena; nil when it does not fit (the plan and
// copyData disagree: a bug of ours).
func (a *deviceArena) carve(n int64, bitmap bool) *memory.Buffer {
	r := 1
	if bitmap {
		r = 0
	}
	need := alignArena(max(n, 1)) // an empty buffer still points inside the allocation
	if a.next[r]+need > a.end[r] {
		return nil
	}
	p := unsafe.Add(a.base, a.next[r])
	a.next[r] += need
	a.refs.Add(1)
	return memory.NewBufferWithAllocator(unsafe.Slice((*byte)(p), n), arenaAllocator{a})
}

func (a *deviceArena) release() {
	if a.refs.Add(-1) == 0 {
		_ = a.b.Free(a.dev, a.base)
		liveDeviceBytes.Add(-a.size)
	}
}

// arenaAllocator owns one buffer carved from an arena.
type arenaAllocator struct{ a *deviceArena }

func (arenaAllocator) Allocate(int) []byte {
	panic("cdevice: device buffers are allocated by CopyToDevice")
}
func (arenaAllocator) Reallocate(int, []byte) []byte { panic("cdevice: device buffers cannot grow") }
func (m arenaAllocator) Free([]byte)                 { m.a.release() }

// arenaPlan is the bytes an arena holds: validity bitmaps (buffer 0 of
// every node: arrow-go keeps that slot, nil, for the types without one),
// and the other buffers.
type arenaPlan struct{ bitmaps, others int64 }

// add adds to p what copyData carves for d: each buffer's range (as
// copyRange clips it) rounded up to arenaAlign, through children and
// dictionaries as copyData walks them.
func (p *arenaPlan) add(d arrow.ArrayData, depth int) {
	if depth > cschema.MaxNesting {
		return // copyData refuses it
	}
	plan := planCopy(d)
	for i, b := range d.Buffers() {
		if b == nil {
			continue
		}
		from, to := clipRange(b, plan.buffers[i][0], plan.buffers[i][1])
		if i == 0 {
			p.bitmaps += alignArena(max(to-from, 1))
		} else {
			p.others += alignArena(max(to-from, 1))
		}
	}
	for i, ch := range d.Children() {
		if r := plan.children; r != nil {
			ch = array.NewSliceData(ch, r[i][0], r[i][1])
			p.add(ch, depth+1)
			ch.Release()
		} else {
			p.add(ch, depth+1)
		}
	}
	if hasDictionary(d) {
		p.add(d.Dictionary(), depth+1)
	}
}

// clipRange is the byte range [from, to) of b that copyRange copies.
func clipRange(b *memory.Buffer, from, to int64) (int64, int64) {
	to = min(to, int64(b.Len()))
	return min(max(from, 0), to), to
}
