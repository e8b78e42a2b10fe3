package streams

/*
#include "gda.h"
#include "gate.h"

// One read of src, measured by the read-blocked rule (gate.h) in C, around
// the read alone: what Go's scheduler does on the way back from C is not
// the producer's (ProbeHeld's probe).
static gda_stream_read gda_stream_source_next_measured(gda_stream_source* src, int* blocked) {
  gda_read_clock t0 = gda_read_clock_now(1);
  gda_stream_read r = gda_stream_source_next(src);
  *blocked = gda_read_blocked(t0, gda_read_clock_now(1), 1);
  return r;
}

// A foreign stream's C half and the producer's struct, in one allocation,
// with room for the producer's schema while the import reads it.
typedef struct {
  gda_stream_source src;
  union {
    struct ArrowArrayStream plain;
    struct ArrowDeviceArrayStream dev;
  } stream;
  struct ArrowSchema schema;
} gda_stream_cell;

// The producer's schema (get_schema into *out) and, when it is cached, its
// entry of the held-schema table (*held, a reference, and its Go Schema's
// handle in *go; *out is then released), in one call from Go: a call from
// Go into C costs as much as a short stream's other import steps. Returns
// get_schema's errno.
static int gda_stream_schema_held(struct ArrowArrayStream* plain, struct ArrowDeviceArrayStream* dev,
                                  struct ArrowSchema* out, gda_held_schema** held, uintptr_t* go) {
  int rc = plain ? gda_call_stream_get_schema(plain, out) : gda_call_device_stream_get_schema(dev, out);
  *held = NULL;
  if (rc != 0 || !out->release) return rc;
  uint64_t hash;
  if ((*held = gda_held_schema_find(out, &hash))) {
    *go = gda_held_schema_go(*held);
    gda_call_schema_release(out);
  }
  return rc;
}

// Closes a stream's C half in one call from Go: drops the held-schema entry
// (NULL: none), releases the producer's stream unless it was moved out, and
// frees the cell.
static void gda_stream_cell_close(gda_stream_cell* cell, gda_held_schema* held) {
  if (held) gda_held_schema_unref(held);
  if (!cell) return;
  if (cell->src.plain && cell->src.plain->release) gda_call_stream_release(cell->src.plain);
  if (cell->src.dev && cell->src.dev->release) gda_call_device_stream_release(cell->src.dev);
  free(cell);
}
*/
import "C"

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"syscall"
	"unsafe"

	"github.com/godevarrow/godevarrow/gosrc/cdevice"
	"github.com/godevarrow/godevarrow/gosrc/cschema"
	"github.com/godevarrow/godevarrow/gosrc/device"
	"github.com/godevarrow/godevarrow/gosrc/errs"
	"github.com/godevarrow/godevarrow/gosrc/handle"
)

// ---------------------------------------------------------------- import

// StreamReader reads a foreign ArrowArrayStream or ArrowDeviceArrayStream.
// It is safe for concurrent use. Next blocks in the producer's get_next; the
// producer's release runs exactly once, in Close, on the calling goroutine.
type StreamReader struct {
	mu      sync.Mutex
	plain   *C.struct_ArrowArrayStream       // exactly one of plain and dev is set
	dev     *C.struct_ArrowDeviceArrayStream // (C-allocated cells we own)
	schema  *cschema.Schema
	devType device.Type
	err     error // sticky error after a failed get_next (src.failed tells C)
	closed  bool
	// the held-schema entry of schema (a reference), or nil: NextHeld keeps
	// each array in C when the gate takes it
	held *C.gda_held_schema
	// src is the C half (held.h) that reads run on, from Go (next) or from a
	// binding's C (CSource); its read flag says the producer's stream is no
	// longer pristine. Set once the schema is read; freed by Close/handOver.
	src *C.gda_stream_source
}

// ImportArrayStream moves a C stream (CPU data) into a StreamReader and reads
// its schema. On error the stream has been released.
func ImportArrayStream(c *CArrowArrayStream) (*StreamReader, error) {
	return importArrayStream(c, nil, 0)
}

// ImportPeekedArrayStream is ImportArrayStream for a consumer that has
// already called the producer's get_schema once: getSchemaErrno is what it
// returned and, when that is 0, schema holds the result. Both are moved in
// (released here on error); the producer is not asked again. The Python
// layer looks at a stream's schema before deciding whether Go is needed at
// all (docs/design.md, "Streams passed through").
func ImportPeekedArrayStream(c *CArrowArrayStream, schema *cschema.CArrowSchema, getSchemaErrno int) (*StreamReader, error) {
	if schema == nil {
		if c != nil && c.release != nil {
			C.gda_call_stream_release(c)
		}
		return nil, errs.Errorf(errs.ErrInvalid, "ArrowSchema pointer is NULL")
	}
	return importArrayStream(c, cSchema(schema), C.int(getSchemaErrno))
}

// importArrayStream moves c into a StreamReader and starts it (see start for
// peeked, which is released on every error).
func importArrayStream(c *CArrowArrayStream, peeked *C.struct_ArrowSchema, peekedErrno C.int) (*StreamReader, error) {
	fail := func(err error) (*StreamReader, error) {
		if peeked != nil && peeked.release != nil {
			C.gda_call_schema_release(peeked)
		}
		return nil, err
	}
	if c == nil {
		return fail(errs.Errorf(errs.ErrInvalid, "ArrowArrayStream pointer is NULL"))
	}
	if c.release == nil {
		return fail(errs.Errorf(errs.ErrInvalid, "ArrowArrayStream was already released (consumed twice?)"))
	}
	block := newStreamCell()
	if block == nil {
		C.gda_call_stream_release(c)
		return fail(errs.Errorf(errs.ErrNoMemory, "out of memory importing a stream"))
	}
	cell := (*C.struct_ArrowArrayStream)(unsafe.Pointer(&block.stream))
	*cell = *c
	c.release = nil
	block.src.plain = cell
	r := &StreamReader{plain: cell, devType: device.CPU, src: &block.src}
	return r.start(peeked, peekedErrno)
}

// ImportDeviceArrayStream moves a C device stream into a StreamReader and
// reads its schema. On error the stream has been released.
func ImportDeviceArrayStream(c *CArrowDeviceArrayStream) (*StreamReader, error) {
	if c == nil {
		return nil, errs.Errorf(errs.ErrInvalid, "ArrowDeviceArrayStream pointer is NULL")
	}
	if c.release == nil {
		return nil, errs.Errorf(errs.ErrInvalid, "ArrowDeviceArrayStream was already released (consumed twice?)")
	}
	block := newStreamCell()
	if block == nil {
		C.gda_call_device_stream_release(c)
		return nil, errs.Errorf(errs.ErrNoMemory, "out of memory importing a stream")
	}
	cell := (*C.struct_ArrowDeviceArrayStream)(unsafe.Pointer(&block.stream))
	*cell = *c
	c.release = nil
	block.src.dev = cell
	r := &StreamReader{dev: cell, devType: device.Type(cell.device_type), src: &block.src}
	return r.start(nil, 0)
}

// newStreamCell allocates a stream's C half with room for the producer's
// struct (nil when out of memory); freeSource frees both.
func newStreamCell() *C.gda_stream_cell {
	return (*C.gda_stream_cell)(C.calloc(1, C.sizeof_gda_stream_cell))
}

// start reads the schema: from peeked (get_schema's result peekedErrno) when
// the consumer already asked the producer for it, otherwise from get_schema.
func (r *StreamReader) start(peeked *C.struct_ArrowSchema, peekedErrno C.int) (*StreamReader, error) {
	liveStreamImports.Add(1)
	fail := func(err error) (*StreamReader, error) {
		if peeked != nil && peeked.release != nil {
			C.gda_call_schema_release(peeked)
		}
		r.Close()
		return nil, err
	}
	if !r.devType.Known() {
		return fail(errs.Errorf(errs.ErrInvalid, "ArrowDeviceArrayStream has unknown device_type %d", int32(r.devType)))
	}
	if r.plain != nil {
		if r.plain.get_schema == nil || r.plain.get_next == nil || r.plain.get_last_error == nil {
			return fail(errs.Errorf(errs.ErrInvalid, "ArrowArrayStream has a NULL callback"))
		}
	} else if r.dev.get_schema == nil || r.dev.get_next == nil || r.dev.get_last_error == nil {
		return fail(errs.Errorf(errs.ErrInvalid, "ArrowDeviceArrayStream has a NULL callback"))
	}
	cs := &(*C.gda_stream_cell)(unsafe.Pointer(r.src)).schema // the cell starts with src
	var rc C.int
	var held *C.gda_held_schema
	var goSchema C.uintptr_t
	if peeked != nil {
		*cs, rc = *peeked, peekedErrno
		peeked.release = nil
	} else {
		rc = C.gda_stream_schema_held(r.plain, r.dev, cs, &held, &goSchema)
	}
	if rc != 0 {
		if cs.release != nil {
			C.gda_call_schema_release(cs)
		}
		return fail(r.producerError("get_schema", rc))
	}
	if held != nil { // a schema imported before: cs was released
		r.schema, r.held = cschema.HeldSchema(uintptr(goSchema)), held
	} else {
		s, h, err := cschema.ImportSchemaHeld(schemaOf(cs))
		if err != nil {
			return fail(err)
		}
		r.schema, r.held = s, (*C.gda_held_schema)(h)
	}
	r.src.held, r.src.dev_type = r.held, C.int32_t(r.devType)
	return r, nil
}

// CSource is the C half of the stream (held.h's gda_stream_source), which a
// binding reads without Go once the stream's read gate lets it in (see
// OneShotStream.CRead); nil once the reader is closed.
func (r *StreamReader) CSource() unsafe.Pointer { return unsafe.Pointer(r.src) }

func (r *StreamReader) producerError(call string, rc C.int) error {
	var msg *C.char
	if r.plain != nil {
		msg = C.gda_call_stream_get_last_error(r.plain)
	} else {
		msg = C.gda_call_device_stream_get_last_error(r.dev)
	}
	e := &errs.StreamError{Errno: syscall.Errno(rc)}
	if msg != nil {
		e.Msg = C.GoString(msg)
	} else {
		e.Msg = fmt.Sprintf("stream producer's %s failed: %s (errno %d)", call, syscall.Errno(rc).Error(), int(rc))
	}
	return e
}

// Schema returns the stream's schema.
func (r *StreamReader) Schema() *cschema.Schema { return r.schema }

// DeviceType returns the stream's declared device type.
func (r *StreamReader) DeviceType() device.Type { return r.devType }

// EndedBy is what a stream answers after it failed with err: the failure
// itself is reported once (a Ctrl-C in a Python producer is one
// KeyboardInterrupt, not one per later read), later reads that the stream
// ended, and why. io.EOF stays io.EOF.
func EndedBy(err error) error {
	if err == io.EOF {
		return err
	}
	return errs.Errorf(errs.ErrConsumed, "the stream ended with an error on an earlier read: %v", err)
}

// Next reads the next array. A producer error is returned as *errs.StreamError;
// every later call reports that the stream ended with it (see EndedBy).
func (r *StreamReader) Next() (*cdevice.Array, error) {
	_, a, err := r.next(false)
	return a, err
}

// NextHeld is Next for a binding that holds arrays in C (held.h): an array
// the held gate takes is returned as a held record (the caller owns its
// reference; no Go data is built), any other as an cdevice.Array.
func (r *StreamReader) NextHeld() (unsafe.Pointer, *cdevice.Array, error) {
	return r.next(true)
}

// nextHeldMeasured is NextHeld that also says whether the producer's read
// blocked (gda_read_blocked, measured in C around the read).
func (r *StreamReader) nextHeldMeasured() (unsafe.Pointer, *cdevice.Array, error, bool) {
	var blocked C.int
	held, a, err := r.read(true, &blocked)
	return held, a, err, blocked != 0
}

func (r *StreamReader) next(wantHeld bool) (unsafe.Pointer, *cdevice.Array, error) {
	return r.read(wantHeld, nil)
}

// read is next, measured when blocked is not nil.
func (r *StreamReader) read(wantHeld bool, blocked *C.int) (unsafe.Pointer, *cdevice.Array, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, nil, errs.Errorf(errs.ErrConsumed, "the stream is closed")
	}
	if r.err != nil {
		return nil, nil, EndedBy(r.err)
	}
	// one call into C per array: get_next, and the held gate
	var got C.gda_stream_read
	if blocked != nil {
		got = C.gda_stream_source_next_measured(r.src, blocked)
	} else if wantHeld {
		got = C.gda_stream_source_next(r.src)
	} else {
		r.src.read = 1
		got = C.gda_stream_read_next(r.plain, r.dev, nil, C.int32_t(r.devType))
	}
	return r.finish(got)
}

// FinishRead ends a read that a binding made in C (gda_stream_source_next on
// CSource, inside the stream's read gate) with an outcome other than a held
// array or the end: got points to its gda_stream_read. With got nil the
// binding did not read (the source had failed) and this is NextHeld.
func (r *StreamReader) FinishRead(got unsafe.Pointer) (unsafe.Pointer, *cdevice.Array, error) {
	if got == nil {
		return r.NextHeld()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.finish(*(*C.gda_stream_read)(got))
}

// finish turns what one get_next gave into next's result (r.mu is held): a
// failure is kept as the stream's sticky error.
func (r *StreamReader) finish(got C.gda_stream_read) (unsafe.Pointer, *cdevice.Array, error) {
	switch {
	case got.no_memory != 0:
		return nil, nil, errs.Errorf(errs.ErrNoMemory, "out of memory reading a stream")
	case got.rc != 0:
		r.fail(r.producerError("get_next", got.rc))
		return nil, nil, r.err
	case got.held != nil:
		return unsafe.Pointer(got.held), nil, nil
	case got.cell == nil:
		return nil, nil, io.EOF
	}
	cell := got.cell
	if dt := device.Type(cell.device_type); dt != r.devType {
		C.gda_call_array_release(&cell.array)
		C.free(unsafe.Pointer(cell))
		r.fail(errs.Errorf(errs.ErrInvalid, "stream declared device type %s but get_next returned an array on %s", r.devType, dt))
		return nil, nil, r.err
	}
	a, err := cdevice.ImportCell(unsafe.Pointer(cell), r.schema)
	if err != nil {
		r.fail(err)
	}
	return nil, a, err
}

// fail keeps err as the stream's sticky error (r.mu is held), and tells a
// binding's C reads to leave every later read to Go.
func (r *StreamReader) fail(err error) {
	r.err = err
	r.src.failed = 1
}

// Close releases the producer's stream (once); later calls do nothing.
func (r *StreamReader) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	// the held entry, the producer's stream and the cell (with the
	// producer's struct in it), in one call into C
	C.gda_stream_cell_close((*C.gda_stream_cell)(unsafe.Pointer(r.src)), r.held)
	r.held, r.src = nil, nil
	liveStreamImports.Add(-1)
	return nil
}

// handOver moves the producer's own C stream into out (one of plain and dev)
// if the reader is pristine: not read, not closed. A CPU device stream asked
// for as a plain one is handed over behind a C adapter that checks each
// array's device. The reader is then closed without releasing anything: the
// consumer of out owns the producer's stream. Exporting an imported stream
// unchanged this way costs nothing per array (the consumer talks to the
// producer directly) and is exactly equivalent, since the reader would pass
// on every array and error unchanged.
func (r *StreamReader) handOver(plain *C.struct_ArrowArrayStream, dev *C.struct_ArrowDeviceArrayStream) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed || r.err != nil || (r.src != nil && r.src.read != 0) {
		return false
	}
	switch {
	case plain != nil && r.plain != nil:
		*plain = *r.plain
	case dev != nil && r.dev != nil:
		*dev = *r.dev
	case plain != nil && r.dev != nil && r.devType == device.CPU:
		// a CPU device stream consumed as a plain stream: a C adapter
		if C.gda_plain_stream_over_device_stream(r.dev, plain) != 0 {
			return false
		}
	default:
		return false
	}
	r.plain, r.dev = nil, nil
	r.closed = true
	r.dropHeld()
	r.freeSource() // the producer's struct moved out of it above
	liveStreamImports.Add(-1)
	return true
}

// freeSource frees the stream's C half and the producer's struct in it
// (newStreamCell).
func (r *StreamReader) freeSource() {
	if r.src != nil {
		C.free(unsafe.Pointer(r.src))
		r.src = nil
	}
}

func (r *StreamReader) dropHeld() {
	if r.held != nil {
		C.gda_held_schema_unref(r.held)
		r.held = nil
	}
}

// ---------------------------------------------------------------- export

type exportedStream struct {
	mu      sync.Mutex
	reader  cdevice.ArrayReader
	device  bool // exported as ArrowDeviceArrayStream
	lastErr *C.char
}

// exportedStreams holds the state of every exported stream until its
// release; a callback through a released stream's handle finds nothing.
var exportedStreams handle.Table

// ExportArrayStream exports r as an ArrowArrayStream (CPU arrays only). The
// stream owns r: its release (from any thread) closes r. A StreamReader of an
// ArrowArrayStream that was never read is not wrapped: out receives the
// producer's own stream.
func ExportArrayStream(r cdevice.ArrayReader, out *CArrowArrayStream) error {
	if out == nil {
		return errs.Errorf(errs.ErrInvalid, "output ArrowArrayStream pointer is NULL")
	}
	if r.DeviceType() != device.CPU {
		return errs.Errorf(errs.ErrNotImplemented, "ArrowArrayStream can only carry CPU memory; the stream is on %s", r.DeviceType())
	}
	if sr, ok := r.(*StreamReader); ok && sr.handOver(out, nil) {
		return nil
	}
	h := exportedStreams.Put(&exportedStream{reader: r})
	if C.gda_stream_init(out, C.uintptr_t(h)) != 0 {
		exportedStreams.Delete(h)
		return errs.Errorf(errs.ErrNoMemory, "out of memory exporting a stream")
	}
	liveStreamExports.Add(1)
	return nil
}

// ExportDeviceArrayStream exports r as an ArrowDeviceArrayStream; as with
// ExportArrayStream, an unread StreamReader of an ArrowDeviceArrayStream hands
// over the producer's own stream.
func ExportDeviceArrayStream(r cdevice.ArrayReader, out *CArrowDeviceArrayStream) error {
	if out == nil {
		return errs.Errorf(errs.ErrInvalid, "output ArrowDeviceArrayStream pointer is NULL")
	}
	if sr, ok := r.(*StreamReader); ok && sr.handOver(nil, out) {
		return nil
	}
	h := exportedStreams.Put(&exportedStream{reader: r, device: true})
	if C.gda_device_stream_init(out, C.uintptr_t(h), C.ArrowDeviceType(r.DeviceType())) != 0 {
		exportedStreams.Delete(h)
		return errs.Errorf(errs.ErrNoMemory, "out of memory exporting a stream")
	}
	liveStreamExports.Add(1)
	return nil
}

// errReleasedStream answers a callback through a released stream's handle.
var errReleasedStream = errs.Errorf(errs.ErrInvalid, "the stream was released")

func exportedStreamOf(h C.uintptr_t) (*exportedStream, bool) {
	v, ok := exportedStreams.Get(handle.Handle(h))
	if !ok {
		return nil, false
	}
	return v.(*exportedStream), true
}

// fail records err for get_last_error and returns its code; s.mu is held.
func (s *exportedStream) fail(err error) C.int {
	if s.lastErr != nil {
		C.free(unsafe.Pointer(s.lastErr))
	}
	s.lastErr = C.CString(err.Error())
	return C.int(errs.Errno(err))
}

// failRecovered is fail for a recovered panic: the deferred unlock has
// already run, and the panic may have come before s was known.
func (s *exportedStream) failRecovered(err error) C.int {
	if s == nil {
		return C.int(errs.Errno(err))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fail(err)
}

// withExportedStream runs op on the stream of handle h with its lock held,
// and answers as a stream callback: 0, or the errno of op's error (kept for
// get_last_error), of a released stream, or of a recovered panic.
func withExportedStream(h C.uintptr_t, op func(s *exportedStream) error) (rc C.int) {
	var s *exportedStream
	defer errs.RecoverInto(func(err error) { rc = s.failRecovered(err) })
	s, ok := exportedStreamOf(h)
	if !ok {
		return C.int(errs.Errno(errReleasedStream))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := op(s); err != nil {
		return s.fail(err)
	}
	return 0
}

//export gdaStreamGetSchema
func gdaStreamGetSchema(h C.uintptr_t, out *C.struct_ArrowSchema) C.int {
	return withExportedStream(h, func(s *exportedStream) error {
		return cschema.ExportSchema(s.reader.Schema(), schemaOf(out))
	})
}

//export gdaStreamGetNext
func gdaStreamGetNext(h C.uintptr_t, out *C.struct_ArrowArray, outDev *C.struct_ArrowDeviceArray) C.int {
	return withExportedStream(h, func(s *exportedStream) error {
		a, err := s.reader.Next()
		if errors.Is(err, io.EOF) {
			if outDev != nil {
				*outDev = C.struct_ArrowDeviceArray{}
			} else {
				*out = C.struct_ArrowArray{}
			}
			return nil
		}
		if err != nil {
			return err
		}
		defer a.Release()
		if outDev == nil {
			return cdevice.ExportArray(a, cdevice.ArrayAt(unsafe.Pointer(out)))
		}
		if a.Device().Type != s.reader.DeviceType() {
			return errs.Errorf(errs.ErrInvalid, "stream declared device type %s but produced an array on %s", s.reader.DeviceType(), a.Device())
		}
		return cdevice.ExportDeviceArray(a, cdevice.DeviceArrayAt(unsafe.Pointer(outDev)))
	})
}

//export gdaStreamGetLastError
func gdaStreamGetLastError(h C.uintptr_t) (msg *C.char) {
	defer errs.RecoverInto(func(error) { msg = nil })
	s, ok := exportedStreamOf(h)
	if !ok {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastErr
}

//export gdaStreamRelease
func gdaStreamRelease(h C.uintptr_t) {
	defer errs.RecoverInto(func(error) {})
	v, ok := exportedStreams.Delete(handle.Handle(h))
	if !ok {
		return // released twice: the first release did everything
	}
	s := v.(*exportedStream)
	s.mu.Lock()
	defer s.mu.Unlock()
	liveStreamExports.Add(-1)
	s.reader.Close()
	if s.lastErr != nil {
		C.free(unsafe.Pointer(s.lastErr))
		s.lastErr = nil
	}
}
