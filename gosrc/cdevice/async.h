// Trampolines of the async device stream interface (arrow-c-abi.h,
// ARROW_C_ASYNC_STREAM_INTERFACE): the C side of async.go.
#pragma once
#include <stdint.h>

#include "arrow-c-abi.h"

// --- our producer driving any handler
struct ArrowAsyncProducer* gda_async_producer_new(int32_t device_type, const char* additional_metadata,
                                                  uintptr_t handle);
void gda_async_producer_free(struct ArrowAsyncProducer* p);
struct ArrowAsyncTask* gda_async_task_new(uintptr_t handle);
int gda_async_call_on_schema(struct ArrowAsyncDeviceStreamHandler* h, struct ArrowSchema* s);
int gda_async_call_on_next_task(struct ArrowAsyncDeviceStreamHandler* h, struct ArrowAsyncTask* t, const char* md);
void gda_async_call_on_error(struct ArrowAsyncDeviceStreamHandler* h, int code, const char* msg, const char* md);
void gda_async_call_release(struct ArrowAsyncDeviceStreamHandler* h);

// --- our handler driven by any producer
struct ArrowAsyncDeviceStreamHandler* gda_async_handler_new(uintptr_t handle);
void gda_async_call_request(struct ArrowAsyncProducer* p, int64_t n);
void gda_async_call_cancel(struct ArrowAsyncProducer* p);
int gda_async_call_extract(struct ArrowAsyncTask* t, struct ArrowDeviceArray* out);
