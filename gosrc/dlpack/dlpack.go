// Package dlpack converts between godevarrow arrays and DLPack tensors
// (DLManagedTensor and DLManagedTensorVersioned, DLPack 1.x), zero-copy.
//
// Only one-dimensional, contiguous tensors of fixed-width numbers map onto
// Arrow arrays without a copy. Boolean tensors (one byte per value) are the
// exception: Arrow packs booleans into bits, so importing them copies.
package dlpack

/*
#cgo CFLAGS: -O2 -std=c11 -I${SRCDIR}/../include
#include <stdlib.h>
#include "dlpack.h"
#include "dlpack_c.h"

static void gda_call_versioned_deleter(struct DLManagedTensorVersioned* t) { if (t->deleter) t->deleter(t); }
static void gda_call_legacy_deleter(DLManagedTensor* t) { if (t->deleter) t->deleter(t); }
*/
import "C"

import (
	"math"
	"sync"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/godevarrow/godevarrow/gosrc/cdevice"
	"github.com/godevarrow/godevarrow/gosrc/cschema"
	"github.com/godevarrow/godevarrow/gosrc/device"
	"github.com/godevarrow/godevarrow/gosrc/errs"
	"github.com/godevarrow/godevarrow/gosrc/handle"
)

// Version is the DLPack version this package produces.
var Version = [2]int{int(C.DLPACK_MAJOR_VERSION), int(C.DLPACK_MINOR_VERSION)}

// DLPack data type codes.
const (
	codeInt   = C.kDLInt
	codeUInt  = C.kDLUInt
	codeFloat = C.kDLFloat
	codeBool  = C.kDLBool
)

type dtype struct {
	code uint8
	bits uint8
}

var formatToDtype = map[string]dtype{
	"c": {codeInt, 8}, "s": {codeInt, 16}, "i": {codeInt, 32}, "l": {codeInt, 64},
	"C": {codeUInt, 8}, "S": {codeUInt, 16}, "I": {codeUInt, 32}, "L": {codeUInt, 64},
	"e": {codeFloat, 16}, "f": {codeFloat, 32}, "g": {codeFloat, 64},
}

// dtypeSchemas is the schema of an imported tensor of each dtype, made once
// (schemas are immutable): a schema per import was a tenth of its Go time.
var dtypeSchemas = func() map[dtype]*cschema.Schema {
	m := map[dtype]*cschema.Schema{}
	for f, d := range formatToDtype {
		s, err := cschema.NewSchema(f, "", cschema.FlagNullable, arrow.Metadata{}, nil, nil)
		if err != nil {
			panic(err) // the formats above are constants
		}
		m[d] = s
	}
	return m
}()

func errorf(kind error, format string, args ...any) error {
	return &errs.Error{Kind: kind, Msg: sprintf(format, args...)}
}

// ErrNotExportable is wrapped by errors about arrays that DLPack cannot
// describe (nulls, nested or non-numeric types); Python raises BufferError.
var ErrNotExportable = &errs.Error{Kind: errs.ErrInvalid, Msg: "not exportable through DLPack"}

func notExportable(format string, args ...any) error {
	return &errs.Error{Kind: ErrNotExportable, Msg: sprintf(format, args...)}
}

// DeviceOf returns the DLPack (device_type, device_id) of an array: DLPack's
// device types have the Arrow values; the CPU's id is 0.
func DeviceOf(a *cdevice.Array) (int32, int64) {
	d := a.Device()
	if d.Type == device.CPU {
		return int32(device.CPU), 0
	}
	return int32(d.Type), d.ID
}

// Tensor describes the values of a 1-D fixed-width numeric array the way
// DLPack and the CUDA Array Interface see them.
type Tensor struct {
	Data       uintptr // address of the first element (offset applied); 0 when empty
	Length     int64
	Code, Bits uint8 // DLPack dtype code (0 int, 1 uint, 2 float) and width
	Device     int32 // DLPack device type (the Arrow values)
	DeviceID   int64
}

// Describe returns the tensor view of a: a 1-D fixed-width integer or float
// array without nulls. Arrays with nulls are refused because neither DLPack
// nor an unmasked CUDA Array Interface can say which values are missing; on
// a device the null count may be unknown, and then a validity bitmap is
// enough to refuse.
func Describe(a *cdevice.Array) (Tensor, error) {
	s := a.Schema()
	dt, ok := formatToDtype[s.Format]
	if !ok || s.Dictionary != nil {
		return Tensor{}, notExportable("only fixed-width integers and floats are tensors; the array's type is %s", s)
	}
	values := a.Data().Buffers()[1]
	switch n := a.NullN(); {
	case n > 0:
		return Tensor{}, notExportable("tensors have no nulls; the array has %d null values (fill them first)", n)
	case n < 0 && a.Data().Buffers()[0] != nil:
		return Tensor{}, notExportable("tensors have no nulls; the array is on %s with a validity bitmap and an unknown null count", a.Device())
	}
	t := Tensor{Length: int64(a.Len()), Code: dt.code, Bits: dt.bits}
	t.Device, t.DeviceID = DeviceOf(a)
	if values != nil && values.Len() > 0 && a.Len() > 0 {
		t.Data = uintptr(unsafe.Pointer(unsafe.SliceData(values.Bytes()))) + uintptr(a.Offset()*int(dt.bits)/8)
	}
	return t, nil
}

// ExportOptions are the choices of a DLPack export.
type ExportOptions struct {
	// Versioned selects DLManagedTensorVersioned (DLPack >= 1.0) over the
	// legacy DLManagedTensor.
	Versioned bool
	// Copied sets DLPACK_FLAG_BITMASK_IS_COPIED: the array is a copy made
	// for this export (versioned tensors only).
	Copied bool
	// Stream, when non-nil, is the consumer's stream: it is made to wait
	// for the array's sync_event before the tensor is handed over.
	Stream device.Stream
	// KeeperRelease and Keeper, when set, are what keeps the array alive
	// instead of the tensor: the caller holds a reference (a Python
	// object's, the binding's) and the deleter calls the C function
	// KeeperRelease(Keeper), with no call into Go. A deleter runs on any
	// thread, often the consumer's last reference's, and the Go call it
	// would make otherwise cost a tenth of a DLPack exchange (docs/cuda.md).
	KeeperRelease, Keeper unsafe.Pointer
	// Template, when set, receives the tensor's template (a C
	// gda_dlpack_template, dlpack_c.h) with the consumer stream the
	// caller passed (ConsumerStream's stream and given) and whether a later
	// tensor for that stream may be made from it in C
	// (gda_dlpack_from_template, with a keeper): when the array has no
	// pending event, or its event is put off on the caller's default stream
	// and the consumer named that stream, a later export waits for nothing
	// either, for as long as the template's rule says.
	Template       unsafe.Pointer
	TemplateStream int64
	TemplateGiven  bool
}

// Export returns a new DLManagedTensorVersioned or DLManagedTensor over the
// values of a (see Describe), zero-copy. The tensor keeps a alive until its
// deleter is called and is marked read-only (Arrow data is immutable),
// unless a is a copy made for this export (opts.Copied).
func Export(a *cdevice.Array, opts ExportOptions) (unsafe.Pointer, error) {
	desc, err := Describe(a)
	if err != nil {
		return nil, err
	}
	reuse := C.int(C.GDA_DLPACK_REUSE_NEVER)
	var queue uintptr
	switch {
	case opts.Stream != nil:
		if a.NoEventToWaitFor() {
			reuse = C.GDA_DLPACK_REUSE_ALWAYS
		} else if a.EventPutOffOn(opts.Stream) {
			reuse, queue = C.GDA_DLPACK_REUSE_CALLER_DEFAULT, opts.Stream.Handle()
		}
		if err := a.WaitReadyOn(opts.Stream); err != nil {
			return nil, err
		}
	case a.Device().Type.HostAccessible():
		// pinned or managed memory written by the device: DLPack has no
		// stream for host memory, so the data must be complete now
		if err := a.WaitOnHost(); err != nil {
			return nil, err
		}
		reuse = C.GDA_DLPACK_REUSE_ALWAYS
	default:
		// CPU memory, or a consumer stream of -1 (no synchronization asked)
		reuse = C.GDA_DLPACK_REUSE_ALWAYS
	}
	var t C.gda_dlpack_template
	if values := a.Data().Buffers()[1]; values != nil && values.Len() > 0 && desc.Length > 0 {
		t.data = unsafe.Pointer(unsafe.SliceData(values.Bytes()))
		t.byte_offset = C.uint64_t(a.Offset() * int(desc.Bits) / 8)
	}
	t.length = C.int64_t(desc.Length)
	t.device_type, t.device_id = C.int32_t(desc.Device), C.int32_t(desc.DeviceID)
	t.code, t.bits = C.uint8_t(desc.Code), C.uint8_t(desc.Bits)
	var h handle.Handle
	if opts.KeeperRelease == nil {
		h = exports.Put(a)
	}
	versioned, copied := C.int(0), C.int(0)
	if opts.Versioned {
		versioned = 1
	}
	if opts.Copied {
		copied = 1
	}
	p := C.gda_dlpack_from_template(&t, versioned, copied, C.uintptr_t(h), (*[0]byte)(opts.KeeperRelease), opts.Keeper)
	if p == nil {
		if opts.KeeperRelease == nil {
			exports.Delete(h)
		}
		return nil, errorf(errs.ErrNoMemory, "out of memory exporting a DLPack tensor")
	}
	if opts.KeeperRelease == nil {
		a.Retain()
		liveExports.add(1)
	}
	if opts.Template != nil {
		if opts.Copied {
			reuse = C.GDA_DLPACK_REUSE_NEVER // a copy is made for one export
		}
		t.reuse, t.queue = reuse, C.uintptr_t(queue)
		t.stream = C.int64_t(opts.TemplateStream)
		if opts.TemplateGiven {
			t.stream_given = 1
		}
		*(*C.gda_dlpack_template)(opts.Template) = t
	}
	return p, nil
}

// exports holds the array behind every exported tensor until its deleter.
var exports handle.Table

//export gdaDLPackRelease
func gdaDLPackRelease(h C.uintptr_t) {
	defer errs.RecoverInto(func(error) {})
	v, ok := exports.Delete(handle.Handle(h))
	if !ok {
		return // a deleter called twice, or a foreign value: nothing of ours to release
	}
	v.(*cdevice.Array).Release()
	liveExports.add(-1)
}

// Delete calls the deleter of a tensor we were handed but will not import.
func Delete(p unsafe.Pointer, versioned bool) {
	if versioned {
		C.gda_call_versioned_deleter((*C.struct_DLManagedTensorVersioned)(p))
	} else {
		C.gda_call_legacy_deleter((*C.DLManagedTensor)(p))
	}
}

// Import takes ownership of a DLManagedTensorVersioned (versioned) or
// DLManagedTensor and returns an Array over its memory (zero-copy, except for
// booleans on the CPU). The tensor's deleter is called exactly once: when the
// Array's last reference goes, or before Import returns an error.
//
// CPU, CUDA, CUDA host (pinned) and CUDA managed tensors are imported. For a
// CUDA, pinned or managed tensor, stream is the stream the consumer passed
// to the producer's __dlpack__ (the producer ordered its writes before it):
// the Array gets an event recorded on it, which host reads of pinned and
// managed memory wait for. A nil stream means the producer synchronized (or
// was told not to, with stream -1).
func Import(p unsafe.Pointer, versioned bool, stream device.Stream) (*cdevice.Array, error) {
	if p == nil {
		return nil, errorf(errs.ErrInvalid, "DLPack tensor pointer is NULL")
	}
	var t *C.DLTensor
	if versioned {
		v := (*C.struct_DLManagedTensorVersioned)(p)
		if int(v.version.major) != Version[0] {
			Delete(p, true)
			return nil, errorf(errs.ErrInvalid, "DLPack tensor has major version %d; this build reads version %d", int(v.version.major), Version[0])
		}
		t = &v.dl_tensor
	} else {
		t = &(*C.DLManagedTensor)(p).dl_tensor
	}
	release := func() { Delete(p, versioned) }
	fail := func(err error) (*cdevice.Array, error) {
		release()
		return nil, err
	}
	if t.ndim != 1 {
		return fail(errorf(errs.ErrInvalid, "only 1-D tensors become Arrow arrays; this one has %d dimensions", int(t.ndim)))
	}
	if t.dtype.lanes != 1 {
		return fail(errorf(errs.ErrInvalid, "vector dtypes (lanes=%d) have no Arrow equivalent", int(t.dtype.lanes)))
	}
	if t.shape == nil {
		return fail(errorf(errs.ErrInvalid, "a 1-D tensor has a NULL shape"))
	}
	n := int64(*t.shape)
	if n < 0 {
		return fail(errorf(errs.ErrInvalid, "negative tensor shape %d", n))
	}
	if t.strides != nil && n > 1 && int64(*t.strides) != 1 {
		return fail(errorf(errs.ErrInvalid, "strided tensors (stride %d elements) are not contiguous; make a contiguous copy first", int64(*t.strides)))
	}
	dev := device.Device{Type: device.Type(t.device.device_type), ID: int64(t.device.device_id)}
	switch dev.Type {
	case device.CPU:
		dev = device.Host
	default:
		// a device tensor comes with the consumer's stream: its backend must have streams
		b, err := device.BackendFor(dev.Type)
		if err != nil || !b.Traits().Streams {
			return fail(device.Unavailable("cannot import a DLPack tensor on %s: godevarrow reads CPU and CUDA tensors", dev))
		}
		if err := b.CheckDevice(int(dev.ID)); err != nil {
			return fail(err)
		}
	}
	if dev.Type == device.CPU {
		stream = nil // no device work to order
	}
	d := dtype{uint8(t.dtype.code), uint8(t.dtype.bits)}
	base := unsafe.Add(t.data, uintptr(t.byte_offset))
	if d.code == codeBool && d.bits == 8 && !dev.Type.HostAccessible() {
		return fail(errorf(errs.ErrNotImplemented, "boolean tensors on %s are one byte per value and Arrow packs bits: copy the tensor to the host first", dev))
	}
	if d.code == codeBool && d.bits == 8 {
		if n > 0 && t.data == nil {
			return fail(errorf(errs.ErrInvalid, "a tensor of %d values has a NULL data pointer", n))
		}
		a, err := packBooleans(base, n)
		release() // the booleans were copied
		return a, err
	}
	schema, ok := dtypeSchemas[d]
	if !ok {
		return fail(errorf(errs.ErrNotImplemented, "DLPack dtype (code %d, %d bits) has no Arrow equivalent", d.code, d.bits))
	}
	makeHoldable(d, schema)
	// t.data, not base: the compiler takes the result of unsafe.Add for non-nil
	if n == 0 {
		base = nil
	} else if t.data == nil {
		return fail(errorf(errs.ErrInvalid, "a tensor of %d values has a NULL data pointer", n))
	}
	width := int64(d.bits) / 8
	if n > math.MaxInt64/width {
		return fail(errorf(errs.ErrInvalid, "a tensor of %d values of %d bits is larger than memory", n, d.bits))
	}
	return cdevice.WrapForeign(schema, dev, n, 0, []unsafe.Pointer{nil, base}, []int64{0, n * width}, stream, release)
}

// holdable records the dtypes whose schema makeHoldable put in the
// held-schema table.
var holdable sync.Map

// makeHoldable puts the schema of dtype d in the held-schema table (once),
// where the C fast path of a binding finds it (gda_dlpack_hold, hold.c): the
// first import of each dtype is Go's, the next ones may be held in C. The
// table may be emptied later (cschema's cache bounds); hold.c keeps a
// reference to each entry it found, so an entry it knows lives on.
func makeHoldable(d dtype, s *cschema.Schema) {
	if _, done := holdable.Load(d); !done && cschema.Hold(s) {
		holdable.Store(d, true)
	}
}

// packBooleans copies n one-byte booleans into an Arrow boolean array.
// The size comes from the producer: a failed allocation is an ErrNoMemory
// error.
func packBooleans(p unsafe.Pointer, n int64) (*cdevice.Array, error) {
	buf, err := cdevice.NewHostBuffer(bitutil.BytesForBits(n))
	if err != nil {
		return nil, err
	}
	bits := buf.Bytes()
	clear(bits)
	if n > 0 {
		for i, b := range unsafe.Slice((*byte)(p), n) {
			if b != 0 {
				bitutil.SetBit(bits, i)
			}
		}
	}
	data := array.NewData(arrow.FixedWidthTypes.Boolean, int(n), []*memory.Buffer{nil, buf}, nil, 0, 0)
	buf.Release()
	defer data.Release()
	schema, err := cschema.NewSchema("b", "", cschema.FlagNullable, arrow.Metadata{}, nil, nil)
	if err != nil {
		return nil, err
	}
	return cdevice.NewArray(schema, data, device.Host)
}

// keptExports is the number of live tensors that a keeper keeps alive.
func keptExports() int64 { return int64(C.gda_dlpack_kept()) }

// TemplateExports is the number of tensors a binding made from templates in
// C so far (gda_dlpack_template_fits).
func TemplateExports() int64 { return int64(C.gda_dlpack_template_exports()) }
