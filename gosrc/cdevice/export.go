package cdevice

/*
#include "gda.h"
*/
import "C"

import (
	"runtime"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/godevarrow/godevarrow/gosrc/cschema"
	"github.com/godevarrow/godevarrow/gosrc/device"
	"github.com/godevarrow/godevarrow/gosrc/errs"
	"github.com/godevarrow/godevarrow/gosrc/handle"
)

// exportRecord keeps an exported array's data alive until every node of the
// C tree (the root and any children the consumer moved out) is released.
type exportRecord struct {
	arr    *Array
	cAlloc []unsafe.Pointer // C memory the export allocated (binary view sizes), freed at release
	flat   arrow.ArrayData  // a record batch view with its offset pushed into the children
	pinner *runtime.Pinner  // pins buffers that live in Go memory (nil for C memory)
}

// exports holds the record of every live exported array, for its C release.
var exports handle.Table

//export gdaReleaseExport
func gdaReleaseExport(h C.uintptr_t) {
	defer errs.RecoverInto(func(error) {})
	v, ok := exports.Delete(handle.Handle(h))
	if !ok {
		panic("cdevice: an exported array's record was released twice")
	}
	rec := v.(*exportRecord)
	if rec.pinner != nil {
		rec.pinner.Unpin()
	}
	for _, p := range rec.cAlloc {
		C.free(p)
	}
	if rec.flat != nil {
		rec.flat.Release()
	}
	rec.arr.Release()
	liveExports.Add(-1)
}

func exportArray(a *Array, out *CArrowArray) error {
	if out == nil {
		return errs.Errorf(errs.ErrInvalid, "output ArrowArray pointer is NULL")
	}
	if a.dev.Type != device.CPU {
		return errs.Errorf(errs.ErrNotImplemented, "ArrowArray can only carry CPU memory; the array is on %s (copy it to the host first)", a.dev)
	}
	return exportTree(a, out)
}

func exportDeviceArray(a *Array, out *CArrowDeviceArray) error {
	if out == nil {
		return errs.Errorf(errs.ErrInvalid, "output ArrowDeviceArray pointer is NULL")
	}
	*out = C.struct_ArrowDeviceArray{}
	// the walk reads the data buffers, whose sizes a device import leaves
	// pending: resolving them first orders this read after their one write
	if err := a.readyBounds(); err != nil {
		return err
	}
	if err := exportTree(a, &out.array); err != nil {
		return err
	}
	ev, err := a.syncEvent()
	if err != nil {
		return err
	}
	out.device_type = C.ArrowDeviceType(a.dev.Type)
	out.device_id = C.int64_t(a.dev.ID)
	out.sync_event = ev
	return nil
}

func releaseExportedArray(p unsafe.Pointer, device bool) {
	var a *C.struct_ArrowArray
	if device {
		a = &(*C.struct_ArrowDeviceArray)(p).array
	} else {
		a = (*C.struct_ArrowArray)(p)
	}
	if a.release != nil {
		C.gda_call_array_release(a)
	}
}

func exportTree(a *Array, out *C.struct_ArrowArray) error {
	rec := &exportRecord{arr: a}
	if a.goMemory {
		rec.pinner = new(runtime.Pinner)
	}
	h := exports.Put(rec)
	shared := C.gda_shared_new(C.uintptr_t(h))
	if shared == nil {
		exports.Delete(h)
		return errs.Errorf(errs.ErrNoMemory, "out of memory exporting an array")
	}
	a.Retain()
	liveExports.Add(1)
	// Filling cannot fail halfway for lack of memory without leaving a
	// partial tree; on failure we release what was built, which drops the
	// shared record (and so the handle) when its last node goes.
	data := a.data
	if flat := pushDownStructOffset(a.schema, data); flat != nil {
		// kept alive by the record: the array it came from is retained too
		rec.flat = flat
		data = flat
	}
	if err := exportNode(out, a.schema, notMapPart, data, shared, rec, 0); err != nil {
		if out.release != nil {
			C.gda_call_array_release(out)
		}
		return err
	}
	return nil
}

// mapPart says whether a node is a map's entries or their keys: parts that
// must have no nulls, and whose null count an export on the host publishes
// even when the data left it unknown (-1). The format allows -1 there, but
// pyarrow before 26 aborts the process on a map whose entries' or keys' count
// is not 0 (it checks the count, not the bitmap). gda_held_export in held.c
// does the same for held imports.
type mapPart int

const (
	notMapPart mapPart = iota
	mapEntries
	mapKeys
)

// of is the part child i of a node that is p, with schema s, is.
func (p mapPart) of(s *cschema.Schema, i int) mapPart {
	switch {
	case s.Format == "+m":
		return mapEntries
	case p == mapEntries && i == 0:
		return mapKeys
	}
	return notMapPart
}

func exportedNullCount(d arrow.ArrayData, part mapPart, onHost bool) int {
	n := d.NullN()
	if n >= 0 || part == notMapPart || !onHost {
		return n
	}
	bufs := d.Buffers()
	if len(bufs) == 0 || bufs[0] == nil || bufs[0].Len() == 0 {
		return 0
	}
	return d.Len() - bitutil.CountSetBits(bufs[0].Bytes(), d.Offset(), d.Len())
}

func exportNode(dst *C.struct_ArrowArray, s *cschema.Schema, part mapPart, d arrow.ArrayData, shared *C.gda_shared, rec *exportRecord, depth int) error {
	info := s.Info()
	goBufs := d.Buffers()
	var cBufs []*memory.Buffer
	var sizes []int64 // binary view variadic sizes
	switch info.Layout {
	case cschema.LayoutNull, cschema.LayoutRunEndEncoded:
	case cschema.LayoutSparseUnion, cschema.LayoutDenseUnion:
		cBufs = goBufs[1:]
	case cschema.LayoutBinaryView:
		cBufs = goBufs
		for _, b := range goBufs[2:] {
			sizes = append(sizes, int64(b.Len()))
		}
	default:
		cBufs = goBufs
	}
	nBuf := len(cBufs)
	if info.Layout == cschema.LayoutBinaryView {
		nBuf++
	}
	children := d.Children()
	hasDict := s.Dictionary != nil
	bufs := C.gda_array_node_init(dst, shared, C.int64_t(nBuf), C.int64_t(len(children)), boolInt(hasDict))
	if bufs == nil {
		return errs.Errorf(errs.ErrNoMemory, "out of memory exporting an array")
	}
	dst.length = C.int64_t(d.Len())
	dst.offset = C.int64_t(d.Offset())
	onHost := rec.arr.dev.Type.HostAccessible()
	dst.null_count = C.int64_t(exportedNullCount(d, part, onHost))
	slots := unsafe.Slice((*unsafe.Pointer)(unsafe.Pointer(bufs)), nBuf)
	for i, b := range cBufs {
		slots[i] = bufferPointer(b, i == 0 && info.HasValidity(), onHost, rec.pinner)
	}
	if info.Layout == cschema.LayoutBinaryView {
		// the variadic sizes buffer exists only in the C layout: C memory owned by the export
		if len(sizes) == 0 {
			slots[nBuf-1] = C.gda_zero_block()
		} else {
			p := C.malloc(C.size_t(8 * len(sizes)))
			if p == nil {
				return errs.Errorf(errs.ErrNoMemory, "out of memory exporting an array")
			}
			rec.cAlloc = append(rec.cAlloc, p)
			copy(unsafe.Slice((*int64)(p), len(sizes)), sizes)
			slots[nBuf-1] = p
		}
	}
	if len(children) > 0 {
		kids := unsafe.Slice(dst.children, len(children))
		for i, ch := range children {
			if err := exportNode(kids[i], s.Children[i], part.of(s, i), ch, shared, rec, depth+1); err != nil {
				return err
			}
		}
	}
	if hasDict {
		return exportNode(dst.dictionary, s.Dictionary, notMapPart, d.Dictionary(), shared, rec, depth+1)
	}
	return nil
}

// bufferPointer returns the address to publish for a buffer: NULL for an
// absent validity bitmap; for other empty buffers without an address a shared
// host zero block (some consumers reject NULL data buffers) or NULL on a
// device; Go memory is pinned for the export's lifetime.
func bufferPointer(b *memory.Buffer, validity, onHost bool, pin *runtime.Pinner) unsafe.Pointer {
	var p unsafe.Pointer
	if b != nil {
		p = unsafe.Pointer(unsafe.SliceData(b.Buf()))
	}
	if p == nil || b.Len() == 0 && onHost {
		if validity || !onHost {
			return nil
		}
		return C.gda_zero_block()
	}
	if pin != nil {
		pin.Pin(p)
	}
	return p
}

func boolInt(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// checkData verifies that Go-built array data has the buffer and child
// structure the schema implies (Arrow Go's conventions) before it is wrapped.
func checkData(s *cschema.Schema, d arrow.ArrayData, depth int) error {
	if depth > cschema.MaxNesting {
		return errs.Errorf(errs.ErrInvalid, "array nested deeper than %d levels", cschema.MaxNesting)
	}
	if d == nil {
		return errs.Errorf(errs.ErrInvalid, "%s: array data is nil", s.Describe())
	}
	info := s.Info()
	want := info.BufferCount()
	switch info.Layout {
	case cschema.LayoutNull, cschema.LayoutRunEndEncoded:
		want = 1
	case cschema.LayoutSparseUnion, cschema.LayoutDenseUnion:
		want++
	case cschema.LayoutBinaryView:
		want = 2
	}
	got := len(d.Buffers())
	if (info.Layout == cschema.LayoutNull || info.Layout == cschema.LayoutRunEndEncoded) && got == 0 {
		got = want // Arrow Go builds these with or without their nil validity slot
	}
	if got < want || (got != want && info.Layout != cschema.LayoutBinaryView) {
		return errs.Errorf(errs.ErrInvalid, "%s: expected %d buffers in Arrow Go array data, got %d", s.Describe(), want, got)
	}
	if len(d.Children()) != len(s.Children) {
		return errs.Errorf(errs.ErrInvalid, "%s: schema has %d children, data has %d", s.Describe(), len(s.Children), len(d.Children()))
	}
	for i, ch := range d.Children() {
		if err := checkData(s.Children[i], ch, depth+1); err != nil {
			return err
		}
	}
	if (s.Dictionary != nil) != hasDictionary(d) {
		return errs.Errorf(errs.ErrInvalid, "%s: dictionary presence differs between schema and data", s.Describe())
	}
	if s.Dictionary != nil {
		return checkData(s.Dictionary, d.Dictionary(), depth+1)
	}
	return nil
}

// hasDictionary reports whether d has a dictionary; Arrow Go returns a typed
// nil inside a non-nil interface when it has none.
func hasDictionary(d arrow.ArrayData) bool {
	dict := d.Dictionary()
	if dict == nil {
		return false
	}
	p, ok := dict.(*array.Data)
	return !ok || p != nil
}
