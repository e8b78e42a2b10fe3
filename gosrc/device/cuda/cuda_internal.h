// What cuda.c gives the rest of the package's C (devpool.c): the driver's
// allocation calls without the pool, and the table of godevarrow's own
// device allocations that pointer checks consult.
#pragma once
#include "cuda.h"

// cuMemAlloc / cuMemFree / cuCtxSynchronize with dev's primary context pushed.
CUresult gda_cuda_mem_alloc(int dev, size_t n, CUdeviceptr* out, const char** call);
CUresult gda_cuda_mem_free(int dev, CUdeviceptr p, const char** call);
CUresult gda_cuda_ctx_sync(int dev, const char** call);
// Records that [p, p+size) is godevarrow's memory on dev (the pointer checks
// of gda_cuda_pointers_on_device ask no driver about it), and forgets it:
// the size recorded, 0 when p was not recorded.
void gda_cuda_own_set(CUdeviceptr p, size_t size, int dev);
size_t gda_cuda_own_forget(CUdeviceptr p);
