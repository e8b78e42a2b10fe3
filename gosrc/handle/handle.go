// Package handle maps Go values to integers that C code can hold, as
// runtime/cgo.Handle does, for the hot paths of an exchange.
//
// cgo.Handle keeps its values in a global concurrent map, and a handle made
// and dropped per exchange costs a map insertion and deletion each time. A
// Table is a slice of slots with a free list under one mutex: Put and Delete
// are a few nanoseconds and allocate nothing once the table has grown.
// Handles carry a generation, so a handle used after Delete (a double
// release by a buggy caller) is reported as stale instead of finding
// whatever value took the slot since.
//
// The zero Table is ready to use. Handles are never 0, so C code may use 0
// for "no handle".
package handle

import "sync"

// Handle identifies a value in a Table: the slot index+1 in the low 32 bits
// and the slot's generation above them.
type Handle uintptr

type slot struct {
	value any
	gen   uint32
	next  uint32 // free list: index+1 of the next free slot, 0 at the end
	used  bool
}

// Table holds values for handles. Safe for concurrent use.
type Table struct {
	mu    sync.Mutex
	slots []slot
	free  uint32 // index+1 of the first free slot, 0 when none
	live  int
}

// Put stores v and returns its handle.
func (t *Table) Put(v any) Handle {
	t.mu.Lock()
	defer t.mu.Unlock()
	var i uint32
	if t.free != 0 {
		i = t.free - 1
		t.free = t.slots[i].next
	} else {
		if len(t.slots) >= 1<<32-1 {
			panic("handle: table full")
		}
		t.slots = append(t.slots, slot{})
		i = uint32(len(t.slots) - 1)
	}
	s := &t.slots[i]
	s.value, s.used, s.next = v, true, 0
	s.gen++
	t.live++
	return Handle(uint64(s.gen)<<32 | uint64(i+1))
}

// index returns the slot of h if h is live; the caller holds mu.
func (t *Table) index(h Handle) (uint32, bool) {
	slotNumber := uint64(h) & (1<<32 - 1) // index+1; 0 is never a handle
	if slotNumber == 0 || slotNumber > uint64(len(t.slots)) {
		return 0, false
	}
	i := uint32(slotNumber - 1)
	s := &t.slots[i]
	return i, s.used && s.gen == uint32(uint64(h)>>32)
}

// Get returns the value of h; ok is false for 0, a deleted or a foreign handle.
func (t *Table) Get(h Handle) (v any, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	i, ok := t.index(h)
	if !ok {
		return nil, false
	}
	return t.slots[i].value, true
}

// Delete removes h and returns its value; ok is false (and nothing changes)
// when h is not live.
func (t *Table) Delete(h Handle) (v any, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	i, ok := t.index(h)
	if !ok {
		return nil, false
	}
	s := &t.slots[i]
	v = s.value
	s.value, s.used = nil, false
	s.next = t.free
	t.free = i + 1
	t.live--
	return v, true
}

// Len returns the number of live handles.
func (t *Table) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.live
}
