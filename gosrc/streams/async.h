// Trampolines of the async device stream interface (arrow-c-abi.h,
// ARROW_C_ASYNC_STREAM_INTERFACE): the C side of async.go.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "arrow-c-abi.h"

// Every allocation below may fail (NULL); nothing is then left allocated.

// --- our producer driving any handler
// A producer struct comes from a pool of type-stable slots that are never
// freed (async.c says why). retire makes its calls no-ops and returns it.
struct ArrowAsyncProducer* gda_async_producer_acquire(int32_t device_type, const char* additional_metadata,
                                                      uintptr_t handle);
void gda_async_producer_retire(struct ArrowAsyncProducer* p);
struct ArrowAsyncTask* gda_async_task_new(uintptr_t handle);
void gda_async_task_free(struct ArrowAsyncTask* t);
int gda_async_call_on_schema(struct ArrowAsyncDeviceStreamHandler* h, struct ArrowSchema* s);
int gda_async_call_on_next_task(struct ArrowAsyncDeviceStreamHandler* h, struct ArrowAsyncTask* t, const char* md);
void gda_async_call_on_error(struct ArrowAsyncDeviceStreamHandler* h, int code, const char* msg, const char* md);
void gda_async_call_release(struct ArrowAsyncDeviceStreamHandler* h);

// --- our handler driven by any producer
struct ArrowAsyncDeviceStreamHandler* gda_async_handler_new(uintptr_t handle);
void gda_async_call_request(struct ArrowAsyncProducer* p, int64_t n);
void gda_async_call_cancel(struct ArrowAsyncProducer* p);
int gda_async_call_extract(struct ArrowAsyncTask* t, struct ArrowDeviceArray* out);

// --- memory of both sides
void* gda_async_calloc(size_t size);
void gda_async_free(void* p);

// --- test hooks
// The n-th allocation from now (1: the next) fails; 0 disarms.
void gda_async_fail_allocation(int64_t n);
// Blocks allocated and not yet freed (producer slots, which are never freed, excluded).
int64_t gda_async_live_allocations(void);
