// Package casync is a C consumer handler and a C producer of the async
// device stream interface, for tests that cross the ABI as C programs do.
package casync

/*
#cgo CFLAGS: -O1 -std=c11 -D_GNU_SOURCE
#cgo LDFLAGS: -lpthread
#include <stdlib.h>
#include "casync.h"
*/
import "C"

import (
	"unsafe"

	"github.com/godevarrow/godevarrow/gosrc/streams"
)

// Consumer is a C handler and what it observed.
type Consumer struct{ c *C.ca_consumer }

// Config sets the consumer's behaviour.
type Config struct {
	InitialRequest int64
	RequestInTask  bool
	FailAtTask     int // -1: never
	FailSchema     bool
	CancelAtTask   int // -1: never
}

// NewConsumer allocates a C consumer (free it with Free after release).
func NewConsumer(cfg Config) *Consumer {
	c := (*C.ca_consumer)(C.calloc(1, C.sizeof_ca_consumer))
	C.ca_consumer_init(c)
	c.initial_request = C.int64_t(cfg.InitialRequest)
	if cfg.RequestInTask {
		c.request_in_task = 1
	}
	c.fail_at_task = C.int(cfg.FailAtTask)
	if cfg.FailSchema {
		c.fail_schema = 1
	}
	c.cancel_at_task = C.int(cfg.CancelAtTask)
	return &Consumer{c}
}

// Handler is the C handler to give to a producer.
func (c *Consumer) Handler() *streams.CArrowAsyncDeviceStreamHandler {
	return streams.AsyncHandlerAt(unsafe.Pointer(&c.c.handler))
}

// Observed is what the consumer saw.
type Observed struct {
	OnSchema, OnNextTask, EndMarker, OnError, Release int
	ErrorCode                                         int
	ErrorMessage                                      string
	ProducerSetBeforeSchema                           bool
	Overlap, CallsAfterRelease, TasksBeyondRequest    int
	Rows                                              int64
	AdditionalMetadata, TaskMetadata                  bool
}

// Observed returns the observations so far.
func (c *Consumer) Observed() Observed {
	x := c.c
	return Observed{
		OnSchema: int(x.on_schema), OnNextTask: int(x.on_next_task), EndMarker: int(x.end_marker),
		OnError: int(x.on_error), Release: int(x.release), ErrorCode: int(x.error_code),
		ErrorMessage:            C.GoString(&x.error_message[0]),
		ProducerSetBeforeSchema: x.producer_set_before_schema != 0,
		Overlap:                 int(x.overlap), CallsAfterRelease: int(x.calls_after_release),
		TasksBeyondRequest: int(x.tasks_beyond_request), Rows: int64(x.rows),
		AdditionalMetadata: x.additional_metadata_seen != 0, TaskMetadata: x.task_metadata_seen != 0,
	}
}

// Free frees the consumer.
func (c *Consumer) Free() { C.free(unsafe.Pointer(c.c)) }

// ProducerResult is what a C producer saw of the consumer.
type ProducerResult struct{ Requests, Cancels int }

// RunProducer drives h from C with n int64 arrays [k] (an error at failAt,
// -1 for none) and returns after it called release.
func RunProducer(h *streams.CArrowAsyncDeviceStreamHandler, n, failAt int) ProducerResult {
	p := (*C.ca_producer)(C.calloc(1, C.sizeof_ca_producer))
	defer C.free(unsafe.Pointer(p))
	p.n, p.fail_at = C.int(n), C.int(failAt)
	C.ca_producer_run(p, (*C.struct_ArrowAsyncDeviceStreamHandler)(unsafe.Pointer(h)))
	return ProducerResult{Requests: int(p.requests_seen), Cancels: int(p.cancels_seen)}
}

// LateCalls calls request(1) and cancel through the producer struct the
// consumer was given, whatever happened to the stream since.
func (c *Consumer) LateCalls() { C.ca_consumer_late_calls(c.c) }
