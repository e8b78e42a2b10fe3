package cdevice

/*
#include "gda.h"
*/
import "C"

import (
	"sync/atomic"

	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/arrow/memory/mallocator"
)

var (
	liveArrays         atomic.Int64
	liveExports        atomic.Int64
	liveImports        atomic.Int64
	liveAllocatedBytes atomic.Int64
	liveDeviceBytes    atomic.Int64
)

// Stats counts the objects of this package that are alive, for leak checks:
// after every consumer has released what it was given, all counters return to
// their earlier values.
type Stats struct {
	Arrays          int64 // Array values not yet released
	ExportedSchemas int64 // exported ArrowSchema trees not yet released by their consumer
	ExportedArrays  int64 // exported ArrowArray/ArrowDeviceArray trees not yet fully released
	ImportedArrays  int64 // foreign arrays we hold (their release not yet called)
	HeldImports     int64 // of those, held imports: kept in C by the fast path (held.c)
	AllocatedBytes  int64 // bytes allocated by Allocator and not yet freed
	DeviceBytes     int64 // device bytes allocated by CopyToDevice and not yet freed
}

// LiveStats returns the current counters.
func LiveStats() Stats {
	return Stats{
		Arrays:          liveArrays.Load(),
		ExportedSchemas: int64(C.gda_live_exported_schemas()),
		ExportedArrays:  liveExports.Load() + int64(C.gda_live_held_exports()),
		ImportedArrays:  liveImports.Load() + int64(C.gda_live_held()),
		HeldImports:     int64(C.gda_live_held()),
		AllocatedBytes:  liveAllocatedBytes.Load(),
		DeviceBytes:     liveDeviceBytes.Load(),
	}
}

// countingAllocator is C memory (so exports need no pinning) with a byte count.
type countingAllocator struct{ mem *mallocator.Mallocator }

func (a countingAllocator) Allocate(n int) []byte {
	liveAllocatedBytes.Add(int64(n))
	return a.mem.Allocate(n)
}

func (a countingAllocator) Reallocate(n int, b []byte) []byte {
	liveAllocatedBytes.Add(int64(n - len(b)))
	return a.mem.Reallocate(n, b)
}

func (a countingAllocator) Free(b []byte) {
	liveAllocatedBytes.Add(-int64(len(b)))
	a.mem.Free(b)
}

// Allocator is the allocator for every buffer this package creates (casts,
// conversions). It allocates C memory, as the C Data Interface requires of
// memory reachable from exported structs, and is counted in LiveStats.
var Allocator memory.Allocator = countingAllocator{mem: mallocator.NewMallocator()}
