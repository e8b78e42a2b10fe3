// The CUDA driver API, opened at run time with dlopen (no CUDA toolkit is
// needed to build godevarrow). Only the functions godevarrow uses are bound.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "../backend.h"

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef void* CUcontext;
typedef void* CUstream;
typedef void* CUevent;
// A stream as the functions below take it, and as Go holds it: an integer.
// The driver's special handles are not pointers (CU_STREAM_LEGACY is 0x1,
// CU_STREAM_PER_THREAD 0x2), and Go aborts the process when it finds such a
// value in a pointer-typed variable while it copies a stack ("invalid
// pointer found on stack").
typedef uintptr_t gda_stream;

#define GDA_CUDA_SUCCESS 0

// Opens the driver (GODEVARROW_LIBCUDA, read with getenv, or libcuda.so.1)
// and calls cuInit(0). Returns 0, or -1 with a message in err (static storage).
int gda_cuda_open(const char** err);
const char* gda_cuda_library(void);

// Every operation pushes the device's primary context (retained on the
// device's first use) onto the calling thread's context stack and pops it
// before returning, leaving the caller's current context as it was
// (goroutines move between threads, so nothing is assumed), and reports the
// failing driver call's name in *call.
CUresult gda_cuda_device_count(int* n, const char** call);
CUresult gda_cuda_driver_version(int* v, const char** call);
CUresult gda_cuda_device_name(int dev, char* name, int len, const char** call);
// Device memory, from the device's pool of freed blocks when one fits
// (devpool.c, which says when a block is reused).
CUresult gda_cuda_alloc(int dev, size_t n, CUdeviceptr* out, const char** call);
CUresult gda_cuda_free(int dev, CUdeviceptr p, const char** call);
CUresult gda_cuda_alloc_host(int dev, size_t n, void** out, const char** call);
CUresult gda_cuda_free_host(int dev, void* p, const char** call);
// Pins / unpins host memory the caller owns, for every context.
CUresult gda_cuda_host_register(void* p, size_t n, const char** call);
CUresult gda_cuda_host_unregister(void* p, const char** call);
CUresult gda_cuda_stream_create(int dev, gda_stream* out, const char** call);
CUresult gda_cuda_stream_destroy(int dev, gda_stream s, const char** call);
CUresult gda_cuda_stream_sync(int dev, gda_stream s, const char** call);
CUresult gda_cuda_stream_wait_event(int dev, gda_stream s, CUevent e, const char** call);
CUresult gda_cuda_event_create(int dev, CUevent* out, const char** call);
CUresult gda_cuda_event_record(int dev, CUevent e, gda_stream s, const char** call);
CUresult gda_cuda_event_sync(int dev, CUevent e, const char** call);
CUresult gda_cuda_event_destroy(int dev, CUevent e, const char** call);
// Copies on stream s (asynchronous; synchronize before using the result).
// kind: 1 HtoD, 2 DtoH, 3 DtoD (same device), 4 peer (src_dev -> dev).
CUresult gda_cuda_copy_async(int dev, int kind, void* dst, const void* src, size_t n, int src_dev, gda_stream s,
                             const char** call);
// Batched gather of small device values into host memory on one stream and
// one synchronization: dst[i] receives n[i] bytes from src[i].
CUresult gda_cuda_gather(int dev, gda_stream s, int count, void* const* dst, const CUdeviceptr* src, const size_t* n,
                         const char** call);
// Pinned staging blocks the gathers keep for reuse (pools.go, Pooled).
long long gda_cuda_pooled_host(void);
// What memory p is, in one cuPointerGetAttributes call: *kind 0 for memory
// the driver does not know (its documented NULL answer; *dev is -1), else
// CU_MEMORYTYPE_HOST (1, pinned), DEVICE (2) or 4 for managed memory
// (CU_POINTER_ATTRIBUTE_IS_MANAGED), with its device ordinal. Any other
// driver error is returned as an error.
CUresult gda_cuda_pointer_kind(CUdeviceptr p, int* dev, int* kind, const char** call);
// Checks that every pointer belongs to device dev, in one call: *bad is the
// index of the first that does not (-1 if all do), with its ordinal in
// *bad_dev (-1 when the driver does not know it, and then the error returned).
CUresult gda_cuda_pointers_on_device(int dev, int count, const uintptr_t* ptrs, int* bad, int* bad_dev,
                                     const char** call);
// Whether the calling thread's current context is device dev's primary one.
int gda_cuda_caller_context_is(int dev);
// The device whose context stream s belongs to (the caller's current one for
// the default-stream handles 1 and 2, dev when it has none).
CUresult gda_cuda_stream_device(int dev, gda_stream s, int* out, const char** call);
const char* gda_cuda_error_name(CUresult r);
const char* gda_cuda_error_string(CUresult r);
// The C vtable of device type CUDA (backend.h), which backend.go registers.
const struct gda_device_backend* gda_cuda_vtable(void);
// The device memory pool (devpool.c): its idle blocks and their bytes, and
// freeing them all.
void gda_cuda_devpool_idle(long long* blocks, long long* bytes);
void gda_cuda_devpool_release(void);
