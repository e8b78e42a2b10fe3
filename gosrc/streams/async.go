package streams

/*
#include <stdlib.h>
#include "async.h"
#include "gda.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/godevarrow/godevarrow/gosrc/cdevice"
	"github.com/godevarrow/godevarrow/gosrc/cschema"
	"github.com/godevarrow/godevarrow/gosrc/device"
	"github.com/godevarrow/godevarrow/gosrc/errs"
	"github.com/godevarrow/godevarrow/gosrc/handle"
)

// The C structs of both sides hold handles into these tables; a callback
// whose handle is stale (its stream released, its task extracted) finds
// nothing and does nothing, or returns EINVAL.
var (
	asyncProducers handle.Table // *asyncProducer, until its ArrowAsyncProducer retires
	asyncTasks     handle.Table // *asyncTask, until extracted
	asyncReaders   handle.Table // *AsyncReader, until its handler is released
)

// errOutOfMemory reports a failed C allocation of the async interface.
func errOutOfMemory(what string) error {
	return &errs.StreamError{Errno: syscall.ENOMEM, Msg: "out of memory allocating " + what}
}

// failAsyncAllocation makes the n-th C allocation of the async interface
// from now fail (0 disarms): a hook for the tests of the ENOMEM paths.
func failAsyncAllocation(n int) { C.gda_async_fail_allocation(C.int64_t(n)) }

// liveAsyncAllocations counts the async interface's C blocks not yet freed.
func liveAsyncAllocations() int64 { return int64(C.gda_async_live_allocations()) }

var (
	liveAsyncTasks    atomic.Int64
	liveAsyncHandlers atomic.Int64
)

// Stats counts the streams and async objects of this package that are alive, for leak
// checks (LiveStats counts the arrays and exports).
type Stats struct {
	ExportedStreams int64 // exported streams not yet released
	ImportedStreams int64 // foreign streams we hold
	AsyncTasks      int64 // async tasks offered and not yet extracted
	AsyncHandlers   int64 // async handlers of NewAsyncReader not yet released by their producer
}

// LiveStats returns the current counters.
func LiveStats() Stats {
	return Stats{
		ExportedStreams: liveStreamExports.Load(), ImportedStreams: liveStreamImports.Load(),
		AsyncTasks: liveAsyncTasks.Load(), AsyncHandlers: liveAsyncHandlers.Load(),
	}
}

// CArrowAsyncDeviceStreamHandler and its companions are the canonical structs.
type (
	CArrowAsyncDeviceStreamHandler = C.struct_ArrowAsyncDeviceStreamHandler
	CArrowAsyncProducer            = C.struct_ArrowAsyncProducer
	CArrowAsyncTask                = C.struct_ArrowAsyncTask
)

// AsyncHandlerAt views a pointer obtained elsewhere as a handler.
func AsyncHandlerAt(p unsafe.Pointer) *CArrowAsyncDeviceStreamHandler {
	return (*CArrowAsyncDeviceStreamHandler)(p)
}

// ------------------------------------------------------------- producer

// AsyncExportOptions tune ExportAsyncDeviceStream.
type AsyncExportOptions struct {
	// AdditionalMetadata is offered as ArrowAsyncProducer.additional_metadata.
	AdditionalMetadata map[string]string
	// TaskMetadata, if set, gives the metadata passed with the k-th task.
	TaskMetadata func(k int) map[string]string
}

type asyncProducer struct {
	r       cdevice.ArrayReader
	handler *C.struct_ArrowAsyncDeviceStreamHandler
	opts    AsyncExportOptions

	h    handle.Handle                // in asyncProducers
	prod *C.struct_ArrowAsyncProducer // a pool slot (async.c), until retire

	mu          sync.Mutex
	demand      int64
	cancelled   bool
	badN        int64 // a request(n <= 0) to report
	released    bool  // the handler's release was called
	outstanding int   // tasks handed out and not yet extracted
	wake        chan struct{}
}

// ExportAsyncDeviceStream drives handler with the arrays of r, on a new
// goroutine, and returns at once. The producer owns r from now on and closes
// it when the stream ends. Errors of r reach the handler through on_error;
// a non-zero return of on_schema or on_next_task stops the stream (only
// release follows). cancel stops it without on_error. handler must not be
// used by the caller afterwards.
func ExportAsyncDeviceStream(r cdevice.ArrayReader, handler *CArrowAsyncDeviceStreamHandler, opts AsyncExportOptions) error {
	if handler == nil {
		return errs.Errorf(errs.ErrInvalid, "ArrowAsyncDeviceStreamHandler pointer is NULL")
	}
	if handler.on_schema == nil || handler.on_next_task == nil || handler.on_error == nil || handler.release == nil {
		return errs.Errorf(errs.ErrInvalid, "the ArrowAsyncDeviceStreamHandler lacks a mandatory callback")
	}
	p := &asyncProducer{r: r, handler: handler, opts: opts, wake: make(chan struct{}, 1)}
	go p.drive()
	return nil
}

func (p *asyncProducer) signal() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

func encodeMetadataMap(md map[string]string) []byte {
	keys := make([]string, 0, len(md))
	vals := make([]string, 0, len(md))
	for k, v := range md {
		keys = append(keys, k)
		vals = append(vals, v)
	}
	return cschema.EncodeMetadata(arrow.NewMetadata(keys, vals))
}

func metadataCString(md map[string]string) *C.char {
	if len(md) == 0 {
		return nil
	}
	return (*C.char)(C.CBytes(encodeMetadataMap(md)))
}

// producerMetadata is additional_metadata in async memory: the producer's
// slot frees it when it retires.
func producerMetadata(md map[string]string) (*C.char, error) {
	if len(md) == 0 {
		return nil, nil
	}
	b := encodeMetadataMap(md)
	c := C.gda_async_calloc(C.size_t(len(b)))
	if c == nil {
		return nil, errOutOfMemory("the producer's metadata")
	}
	copy(unsafe.Slice((*byte)(c), len(b)), b)
	return (*C.char)(c), nil
}

// start gives the handler its ArrowAsyncProducer.
func (p *asyncProducer) start() error {
	md, err := producerMetadata(p.opts.AdditionalMetadata)
	if err != nil {
		return err
	}
	p.h = asyncProducers.Put(p)
	p.prod = C.gda_async_producer_acquire(C.int32_t(p.r.DeviceType()), md, C.uintptr_t(p.h))
	if p.prod == nil {
		asyncProducers.Delete(p.h)
		C.gda_async_free(unsafe.Pointer(md))
		return errOutOfMemory("an ArrowAsyncProducer")
	}
	// the handler is the consumer's memory: its producer member may hold anything
	cdevice.StoreCPointer(unsafe.Pointer(&p.handler.producer), unsafe.Pointer(p.prod))
	return nil
}

// finish is the handler's release: the last call on it. The producer
// struct retires once no task is left to extract (see async.c).
func (p *asyncProducer) finish() {
	C.gda_async_call_release(p.handler)
	p.mu.Lock()
	p.released = true
	retire := p.outstanding == 0 && p.prod != nil
	p.mu.Unlock()
	if retire {
		p.retire()
	}
	_ = p.r.Close()
}

// taskDone records an extracted task; the last one after release retires
// the producer struct.
func (p *asyncProducer) taskDone() {
	p.mu.Lock()
	p.outstanding--
	retire := p.released && p.outstanding == 0
	p.mu.Unlock()
	if retire {
		p.retire()
	}
}

// retire runs once: after it, calls through the struct do nothing.
func (p *asyncProducer) retire() {
	asyncProducers.Delete(p.h)
	C.gda_async_producer_retire(p.prod)
}

func (p *asyncProducer) drive() {
	defer p.finish()
	onError := func(err error) {
		msg := C.CString(err.Error())
		defer C.free(unsafe.Pointer(msg))
		C.gda_async_call_on_error(p.handler, C.int(errs.Errno(err)), msg, nil)
	}
	if err := p.start(); err != nil {
		onError(err)
		return
	}
	schema := (*C.struct_ArrowSchema)(C.gda_async_calloc(C.sizeof_struct_ArrowSchema))
	if schema == nil {
		onError(errOutOfMemory("an ArrowSchema"))
		return
	}
	defer C.gda_async_free(unsafe.Pointer(schema))
	if err := cschema.ExportSchema(p.r.Schema(), cschema.SchemaAt(unsafe.Pointer(schema))); err != nil {
		onError(err)
		return
	}
	rc := C.gda_async_call_on_schema(p.handler, schema)
	if schema.release != nil { // the consumer did not move it
		C.gda_call_schema_release(schema)
	}
	if rc != 0 {
		return
	}
	for k := 0; ; k++ {
		// wait for demand, a cancel, or a request to report
		p.mu.Lock()
		for p.demand == 0 && !p.cancelled && p.badN == 0 {
			p.mu.Unlock()
			<-p.wake
			p.mu.Lock()
		}
		cancelled, badN := p.cancelled, p.badN
		if !cancelled && badN == 0 {
			p.demand--
		}
		p.mu.Unlock()
		switch {
		case cancelled:
			return
		case badN != 0:
			onError(&errs.StreamError{Errno: syscall.EINVAL, Msg: fmt.Sprintf("ArrowAsyncProducer.request(%d): n must be positive", badN)})
			return
		}
		a, err := p.r.Next()
		if errors.Is(err, io.EOF) {
			C.gda_async_call_on_next_task(p.handler, nil, nil)
			return
		}
		if err != nil {
			onError(err)
			return
		}
		if a.Device().Type != p.r.DeviceType() {
			a.Release()
			onError(errs.Errorf(errs.ErrInvalid, "array %d is on %s but the stream is on %s", k, a.Device(), p.r.DeviceType()))
			return
		}
		task, err := p.newTask(a)
		if err != nil {
			a.Release()
			onError(err)
			return
		}
		var md *C.char
		if p.opts.TaskMetadata != nil {
			md = metadataCString(p.opts.TaskMetadata(k))
		}
		rc := C.gda_async_call_on_next_task(p.handler, task.c, md)
		C.free(unsafe.Pointer(md))
		task.handedOver(rc == 0)
		if rc != 0 {
			return
		}
	}
}

// request and cancel come from the consumer, on any thread.

func producerOf(h C.uintptr_t) (*asyncProducer, bool) {
	v, ok := asyncProducers.Get(handle.Handle(h))
	if !ok {
		return nil, false
	}
	return v.(*asyncProducer), true
}

//export gdaAsyncRequest
func gdaAsyncRequest(h C.uintptr_t, n C.int64_t) {
	defer errs.RecoverInto(func(error) {})
	p, ok := producerOf(h)
	if !ok {
		return // retired: request is a no-op
	}
	p.mu.Lock()
	if !p.cancelled {
		if n <= 0 {
			if p.badN == 0 {
				p.badN = int64(n)
				if p.badN == 0 {
					p.badN = -1 << 63 // request(0): still report it
				}
			}
		} else {
			p.demand += int64(n)
		}
	}
	p.mu.Unlock()
	p.signal()
}

//export gdaAsyncCancel
func gdaAsyncCancel(h C.uintptr_t) {
	defer errs.RecoverInto(func(error) {})
	p, ok := producerOf(h)
	if !ok {
		return // retired: cancel is a no-op
	}
	p.mu.Lock()
	p.cancelled = true
	p.mu.Unlock()
	p.signal()
}

// asyncTask is one array offered through on_next_task: extract_data moves it
// out (or just drops it, for NULL), exactly once.
type asyncTask struct {
	mu        sync.Mutex
	a         *cdevice.Array
	producer  *asyncProducer
	c         *C.struct_ArrowAsyncTask
	extracted bool
}

// newTask wraps a for on_next_task; the producer struct stays in service
// until the task is extracted.
func (p *asyncProducer) newTask(a *cdevice.Array) (*asyncTask, error) {
	t := &asyncTask{a: a, producer: p}
	h := asyncTasks.Put(t)
	t.c = C.gda_async_task_new(C.uintptr_t(h))
	if t.c == nil {
		asyncTasks.Delete(h)
		return nil, errOutOfMemory("an ArrowAsyncTask")
	}
	p.mu.Lock()
	p.outstanding++
	p.mu.Unlock()
	liveAsyncTasks.Add(1)
	return t, nil
}

// handedOver is called after on_next_task: when the consumer refused the
// task and did not extract it, the producer cleans it up.
func (t *asyncTask) handedOver(accepted bool) {
	if accepted {
		return
	}
	t.mu.Lock()
	done := t.extracted
	t.mu.Unlock()
	if !done {
		C.gda_async_call_extract(t.c, nil)
	}
}

//export gdaAsyncExtract
func gdaAsyncExtract(h C.uintptr_t, out *C.struct_ArrowDeviceArray) (rc C.int) {
	defer errs.RecoverInto(func(error) { rc = C.int(syscall.EIO) })
	v, ok := asyncTasks.Delete(handle.Handle(h))
	if !ok {
		return C.int(syscall.EINVAL) // extracted already, or no task of ours
	}
	t := v.(*asyncTask)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.extracted = true
	defer func() {
		t.a.Release()
		t.a = nil
		C.gda_async_task_free(t.c)
		liveAsyncTasks.Add(-1)
		t.producer.taskDone()
	}()
	if out == nil {
		return 0
	}
	if err := cdevice.ExportDeviceArray(t.a, (*cdevice.CArrowDeviceArray)(unsafe.Pointer(out))); err != nil {
		return C.int(errs.Errno(err))
	}
	return 0
}

// ------------------------------------------------------------- consumer

// AsyncReader reads what a producer hands to the handler of NewAsyncReader.
// It is an cdevice.ArrayReader: Next blocks until the next array, the end (io.EOF)
// or the producer's error (a *errs.StreamError with its code and message), each
// delivered in the producer's order.
type AsyncReader struct {
	queue int
	items chan asyncItem
	ready chan struct{} // closed when the schema (or an early error/end) arrived

	mu       sync.Mutex
	producer *C.struct_ArrowAsyncProducer // valid between on_schema and release
	schema   *cschema.Schema
	devType  device.Type
	md       string // producer's additional metadata (encoded)
	released bool
	closed   bool
	ended    bool // the producer sent its end marker or an error: request no more
	final    error
	readyErr error
	once     sync.Once
}

type asyncItem struct {
	a   *cdevice.Array
	md  string
	err error
}

// NewAsyncReader returns a reader and the C handler to give to a producer.
// queue (at least 1) bounds how many arrays are requested ahead. The handler
// is freed by its release callback. The only error is ENOMEM.
func NewAsyncReader(queue int) (*AsyncReader, *CArrowAsyncDeviceStreamHandler, error) {
	queue = max(queue, 1)
	r := &AsyncReader{queue: queue, items: make(chan asyncItem, queue+2), ready: make(chan struct{})}
	h := asyncReaders.Put(r)
	c := C.gda_async_handler_new(C.uintptr_t(h))
	if c == nil {
		asyncReaders.Delete(h)
		return nil, nil, errOutOfMemory("an ArrowAsyncDeviceStreamHandler")
	}
	liveAsyncHandlers.Add(1)
	return r, c, nil
}

func (r *AsyncReader) markReady(err error) {
	r.once.Do(func() {
		r.readyErr = err
		close(r.ready)
	})
}

// Wait blocks until the producer sent the schema (nil) or failed first.
func (r *AsyncReader) Wait() error {
	<-r.ready
	return r.readyErr
}

// Schema returns the stream's schema (nil until Wait returns nil).
func (r *AsyncReader) Schema() *cschema.Schema {
	<-r.ready
	return r.schema
}

// DeviceType returns the producer's device type.
func (r *AsyncReader) DeviceType() device.Type {
	<-r.ready
	return r.devType
}

// AdditionalMetadata returns the producer's additional_metadata.
func (r *AsyncReader) AdditionalMetadata() map[string]string {
	<-r.ready
	return decodeToMap(r.md)
}

// Next returns the next array, io.EOF at the end, or the producer's error.
func (r *AsyncReader) Next() (*cdevice.Array, error) {
	a, _, err := r.NextWithMetadata()
	return a, err
}

// NextWithMetadata is Next with the metadata the producer passed with the task.
func (r *AsyncReader) NextWithMetadata() (*cdevice.Array, map[string]string, error) {
	if err := r.Wait(); err != nil {
		return nil, nil, err
	}
	r.mu.Lock()
	if r.final != nil {
		err := r.final
		r.mu.Unlock()
		return nil, nil, err
	}
	r.mu.Unlock()
	it := <-r.items
	if it.err != nil {
		r.mu.Lock()
		r.final = it.err
		r.mu.Unlock()
		return nil, nil, it.err
	}
	// room in the queue again: ask for one more
	r.mu.Lock()
	if !r.released && !r.closed && !r.ended && r.producer != nil {
		C.gda_async_call_request(r.producer, 1)
	}
	r.mu.Unlock()
	return it.a, decodeToMap(it.md), nil
}

// Close cancels the producer (if it is still running) and drops the arrays
// already received. Idempotent.
func (r *AsyncReader) Close() error {
	r.mu.Lock()
	if !r.closed {
		r.closed = true
		if !r.released && r.producer != nil {
			C.gda_async_call_cancel(r.producer)
		}
		if r.final == nil {
			r.final = errs.Errorf(errs.ErrConsumed, "the async stream was closed")
		}
	}
	r.mu.Unlock()
	for {
		select {
		case it := <-r.items:
			if it.a != nil {
				it.a.Release()
			}
			continue
		default:
		}
		return nil
	}
}

func decodeToMap(encoded string) map[string]string {
	if encoded == "" {
		return nil
	}
	md, err := cschema.DecodeMetadata([]byte(encoded))
	if err != nil {
		return nil
	}
	out := make(map[string]string, md.Len())
	for i, k := range md.Keys() {
		out[k] = md.Values()[i]
	}
	return out
}

func readerOf(h C.uintptr_t) (*AsyncReader, bool) {
	v, ok := asyncReaders.Get(handle.Handle(h))
	if !ok {
		return nil, false
	}
	return v.(*AsyncReader), true
}

//export gdaAsyncOnSchema
func gdaAsyncOnSchema(h C.uintptr_t, prod *C.struct_ArrowAsyncProducer, s *C.struct_ArrowSchema) (rc C.int) {
	defer errs.RecoverInto(func(error) { rc = C.int(syscall.EIO) })
	r, ok := readerOf(h)
	if !ok {
		return C.int(syscall.EINVAL) // the handler was released
	}
	schema, err := cschema.ImportSchema((*cschema.CArrowSchema)(unsafe.Pointer(s)))
	if err == nil && prod == nil {
		err = errs.Errorf(errs.ErrInvalid, "on_schema was called before the producer populated handler->producer")
	}
	if err != nil {
		r.markReady(err)
		return C.int(syscall.EINVAL)
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		r.markReady(errs.Errorf(errs.ErrConsumed, "the async stream was closed"))
		return C.int(syscall.ECANCELED)
	}
	r.schema, r.producer = schema, prod
	r.devType = device.Type(prod.device_type)
	r.md = cschema.MetadataBlobCopy(unsafe.Pointer(prod.additional_metadata))
	r.mu.Unlock()
	r.markReady(nil)
	// allowed from inside on_schema by the spec
	C.gda_async_call_request(prod, C.int64_t(r.queue))
	return 0
}

// end records that the producer finished. Taking r.mu also orders it after
// any request call in flight (made under r.mu): a producer may tear its
// state down as soon as this callback returns (arrow-go's does).
func (r *AsyncReader) end() {
	r.mu.Lock()
	r.ended = true
	r.mu.Unlock()
}

// push queues an item without ever blocking the producer's thread: a full
// queue means the producer sent more than was requested.
func (r *AsyncReader) push(it asyncItem) bool {
	select {
	case r.items <- it:
		return true
	default:
		if it.a != nil {
			it.a.Release()
		}
		return false
	}
}

// asyncImportedHook, when set (by tests only), runs in on_next_task between
// the import of a task's array and its delivery to the reader: the window in
// which a Close can land.
var asyncImportedHook atomic.Pointer[func()]

//export gdaAsyncOnNextTask
func gdaAsyncOnNextTask(h C.uintptr_t, t *C.struct_ArrowAsyncTask, md *C.char) (rc C.int) {
	defer errs.RecoverInto(func(error) { rc = C.int(syscall.EIO) })
	r, ok := readerOf(h)
	if !ok {
		return C.int(syscall.EINVAL) // the handler was released
	}
	if t == nil {
		r.end()
		r.push(asyncItem{err: io.EOF})
		return 0
	}
	r.mu.Lock()
	closed := r.closed
	schema := r.schema
	r.mu.Unlock()
	if closed {
		C.gda_async_call_extract(t, nil) // clean up, as the spec asks
		return C.int(syscall.ECANCELED)
	}
	out := (*C.struct_ArrowDeviceArray)(C.gda_async_calloc(C.sizeof_struct_ArrowDeviceArray))
	if out == nil {
		C.gda_async_call_extract(t, nil) // the task is still cleaned up
		err := errOutOfMemory("an ArrowDeviceArray")
		r.push(asyncItem{err: err})
		return C.int(syscall.ENOMEM)
	}
	defer C.gda_async_free(unsafe.Pointer(out))
	if code := C.gda_async_call_extract(t, out); code != 0 {
		return 0 // the producer follows with on_error
	}
	a, err := cdevice.ImportDeviceArray((*cdevice.CArrowDeviceArray)(unsafe.Pointer(out)), schema)
	if err == nil && a.Device().Type != r.devType {
		err = errs.Errorf(errs.ErrInvalid, "a task's array is on %s but the producer declared %s", a.Device(), r.devType)
		a.Release()
	}
	if err != nil {
		r.push(asyncItem{err: err})
		return C.int(syscall.EINVAL)
	}
	if hook := asyncImportedHook.Load(); hook != nil {
		(*hook)()
	}
	// Close may have run since the check above and drained the queue: it
	// never drains again, so the array is queued only while r.closed is
	// false under r.mu (Close sets it under r.mu before draining).
	it := asyncItem{a: a, md: cschema.MetadataBlobCopy(unsafe.Pointer(md))}
	r.mu.Lock()
	closed = r.closed
	queued := false
	if !closed {
		select {
		case r.items <- it:
			queued = true
		default:
		}
	}
	r.mu.Unlock()
	switch {
	case queued:
		return 0
	case closed:
		a.Release()
		return C.int(syscall.ECANCELED)
	}
	a.Release()
	r.push(asyncItem{err: &errs.StreamError{Errno: syscall.EOVERFLOW, Msg: "the async producer sent more arrays than were requested"}})
	return C.int(syscall.EOVERFLOW)
}

//export gdaAsyncOnError
func gdaAsyncOnError(h C.uintptr_t, code C.int, msg, md *C.char) {
	defer errs.RecoverInto(func(error) {})
	r, ok := readerOf(h)
	if !ok {
		return // the handler was released
	}
	text := "the async producer failed"
	if msg != nil {
		text = C.GoString(msg)
	}
	err := &errs.StreamError{Errno: syscall.Errno(code), Msg: text}
	r.end()
	r.markReady(err)
	r.push(asyncItem{err: err})
}

//export gdaAsyncRelease
func gdaAsyncRelease(h C.uintptr_t) {
	defer errs.RecoverInto(func(error) {})
	v, ok := asyncReaders.Delete(handle.Handle(h))
	if !ok {
		return // released twice
	}
	r := v.(*AsyncReader)
	r.mu.Lock()
	r.released = true
	r.producer = nil
	r.mu.Unlock()
	r.markReady(errs.Errorf(errs.ErrInvalid, "the async producer released the handler without sending a schema"))
	r.push(asyncItem{err: &errs.StreamError{Errno: syscall.EPIPE, Msg: "the async producer ended the stream without an end marker"}})
	liveAsyncHandlers.Add(-1)
}

// CancelAsyncProducer calls cancel on the producer a handler was given (a
// convenience for Go code that holds a C handler it did not make).
func CancelAsyncProducer(h *CArrowAsyncDeviceStreamHandler) {
	if h != nil && h.producer != nil {
		C.gda_async_call_cancel(h.producer)
	}
}
