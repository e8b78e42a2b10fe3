#include "cuda.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

// The bound driver entry points.
static struct {
  CUresult (*cuInit)(unsigned int);
  CUresult (*cuDriverGetVersion)(int*);
  CUresult (*cuDeviceGetCount)(int*);
  CUresult (*cuDeviceGet)(CUdevice*, int);
  CUresult (*cuDeviceGetName)(char*, int, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuMemAlloc_v2)(CUdeviceptr*, size_t);
  CUresult (*cuMemFree_v2)(CUdeviceptr);
  CUresult (*cuMemAllocHost_v2)(void**, size_t);
  CUresult (*cuMemFreeHost)(void*);
  CUresult (*cuMemcpyHtoDAsync_v2)(CUdeviceptr, const void*, size_t, CUstream);
  CUresult (*cuMemcpyDtoHAsync_v2)(void*, CUdeviceptr, size_t, CUstream);
  CUresult (*cuMemcpyDtoDAsync_v2)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  CUresult (*cuMemcpyPeerAsync)(CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t, CUstream);
  CUresult (*cuStreamCreate)(CUstream*, unsigned int);
  CUresult (*cuStreamDestroy_v2)(CUstream);
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuStreamWaitEvent)(CUstream, CUevent, unsigned int);
  CUresult (*cuEventCreate)(CUevent*, unsigned int);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuEventDestroy_v2)(CUevent);
  CUresult (*cuPointerGetAttribute)(void*, int, CUdeviceptr);
  CUresult (*cuGetErrorName)(CUresult, const char**);
  CUresult (*cuGetErrorString)(CUresult, const char**);
} cu;

static pthread_once_t open_once = PTHREAD_ONCE_INIT;
static const char* open_error;
static const char* library_name;
static int device_count;
static CUcontext* contexts;  // primary context per device, retained for the process lifetime

static void open_driver(void) {
  const char* name = getenv("GODEVARROW_LIBCUDA");
  if (!name || !*name) name = "libcuda.so.1";
  library_name = name;
  void* lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    static char msg[512];
    const char* why = dlerror();
    snprintf(msg, sizeof(msg), "the driver library could not be loaded (%s)", why ? why : "dlopen failed");
    open_error = msg;
    return;
  }
#define BIND(fn)                                                   \
  if (!(*(void**)(&cu.fn) = dlsym(lib, #fn))) {                    \
    open_error = "the CUDA driver library lacks the function " #fn; \
    return;                                                        \
  }
  BIND(cuInit) BIND(cuDriverGetVersion) BIND(cuDeviceGetCount) BIND(cuDeviceGet) BIND(cuDeviceGetName)
  BIND(cuDevicePrimaryCtxRetain) BIND(cuCtxSetCurrent) BIND(cuMemAlloc_v2) BIND(cuMemFree_v2)
  BIND(cuMemAllocHost_v2) BIND(cuMemFreeHost) BIND(cuMemcpyHtoDAsync_v2) BIND(cuMemcpyDtoHAsync_v2)
  BIND(cuMemcpyDtoDAsync_v2) BIND(cuMemcpyPeerAsync) BIND(cuStreamCreate) BIND(cuStreamDestroy_v2)
  BIND(cuStreamSynchronize) BIND(cuStreamWaitEvent) BIND(cuEventCreate) BIND(cuEventRecord)
  BIND(cuEventSynchronize) BIND(cuEventDestroy_v2) BIND(cuPointerGetAttribute) BIND(cuGetErrorName)
  BIND(cuGetErrorString)
#undef BIND
  if (cu.cuInit(0) != GDA_CUDA_SUCCESS) {
    open_error = "cuInit failed: the driver is present but no usable CUDA device or driver was found";
    return;
  }
  if (cu.cuDeviceGetCount(&device_count) != GDA_CUDA_SUCCESS || device_count < 0) device_count = 0;
  contexts = calloc((size_t)(device_count ? device_count : 1), sizeof(CUcontext));
  if (!contexts) {
    open_error = "out of memory";
    return;
  }
  for (int i = 0; i < device_count; i++) {
    CUdevice d;
    if (cu.cuDeviceGet(&d, i) != GDA_CUDA_SUCCESS || cu.cuDevicePrimaryCtxRetain(&contexts[i], d) != GDA_CUDA_SUCCESS) {
      open_error = "retaining a device's primary context failed";
      return;
    }
  }
}

int gda_cuda_open(const char** err) {
  pthread_once(&open_once, open_driver);
  if (open_error) {
    *err = open_error;
    return -1;
  }
  return 0;
}

const char* gda_cuda_library(void) { return library_name; }

#define CALL(fn, ...)                       \
  do {                                      \
    *call = #fn;                            \
    CUresult r_ = cu.fn(__VA_ARGS__);       \
    if (r_ != GDA_CUDA_SUCCESS) return r_;  \
  } while (0)

static CUresult make_current(int dev, const char** call) {
  *call = "cuCtxSetCurrent";
  if (dev < 0 || dev >= device_count) return 101;  // CUDA_ERROR_INVALID_DEVICE
  return cu.cuCtxSetCurrent(contexts[dev]);
}

#define CURRENT(dev)                            \
  do {                                          \
    CUresult r_ = make_current((dev), call);    \
    if (r_ != GDA_CUDA_SUCCESS) return r_;      \
  } while (0)

CUresult gda_cuda_device_count(int* n, const char** call) {
  (void)call;
  *n = device_count;
  return GDA_CUDA_SUCCESS;
}

CUresult gda_cuda_driver_version(int* v, const char** call) {
  CALL(cuDriverGetVersion, v);
  return GDA_CUDA_SUCCESS;
}

CUresult gda_cuda_device_name(int dev, char* name, int len, const char** call) {
  CUdevice d;
  CALL(cuDeviceGet, &d, dev);
  CALL(cuDeviceGetName, name, len, d);
  return GDA_CUDA_SUCCESS;
}

CUresult gda_cuda_alloc(int dev, size_t n, CUdeviceptr* out, const char** call) {
  CURRENT(dev);
  CALL(cuMemAlloc_v2, out, n ? n : 1);
  return GDA_CUDA_SUCCESS;
}

CUresult gda_cuda_free(int dev, CUdeviceptr p, const char** call) {
  CURRENT(dev);
  CALL(cuMemFree_v2, p);
  return GDA_CUDA_SUCCESS;
}

CUresult gda_cuda_alloc_host(int dev, size_t n, void** out, const char** call) {
  CURRENT(dev);
  CALL(cuMemAllocHost_v2, out, n ? n : 1);
  return GDA_CUDA_SUCCESS;
}

CUresult gda_cuda_free_host(int dev, void* p, const char** call) {
  CURRENT(dev);
  CALL(cuMemFreeHost, p);
  return GDA_CUDA_SUCCESS;
}

CUresult gda_cuda_stream_create(int dev, CUstream* out, const char** call) {
  CURRENT(dev);
  CALL(cuStreamCreate, out, 1 /* CU_STREAM_NON_BLOCKING */);
  return GDA_CUDA_SUCCESS;
}

CUresult gda_cuda_stream_destroy(int dev, CUstream s, const char** call) {
  CURRENT(dev);
  CALL(cuStreamDestroy_v2, s);
  return GDA_CUDA_SUCCESS;
}

CUresult gda_cuda_stream_sync(int dev, CUstream s, const char** call) {
  CURRENT(dev);
  CALL(cuStreamSynchronize, s);
  return GDA_CUDA_SUCCESS;
}

CUresult gda_cuda_stream_wait_event(int dev, CUstream s, CUevent e, const char** call) {
  CURRENT(dev);
  CALL(cuStreamWaitEvent, s, e, 0);
  return GDA_CUDA_SUCCESS;
}

CUresult gda_cuda_event_create(int dev, CUevent* out, const char** call) {
  CURRENT(dev);
  CALL(cuEventCreate, out, 2 /* CU_EVENT_DISABLE_TIMING */);
  return GDA_CUDA_SUCCESS;
}

CUresult gda_cuda_event_record(int dev, CUevent e, CUstream s, const char** call) {
  CURRENT(dev);
  CALL(cuEventRecord, e, s);
  return GDA_CUDA_SUCCESS;
}

CUresult gda_cuda_event_sync(int dev, CUevent e, const char** call) {
  CURRENT(dev);
  CALL(cuEventSynchronize, e);
  return GDA_CUDA_SUCCESS;
}

CUresult gda_cuda_event_destroy(int dev, CUevent e, const char** call) {
  CURRENT(dev);
  CALL(cuEventDestroy_v2, e);
  return GDA_CUDA_SUCCESS;
}

CUresult gda_cuda_copy_async(int dev, int kind, void* dst, const void* src, size_t n, int src_dev, CUstream s,
                             const char** call) {
  if (n == 0) return GDA_CUDA_SUCCESS;
  CURRENT(dev);
  switch (kind) {
    case 1:
      CALL(cuMemcpyHtoDAsync_v2, (CUdeviceptr)(uintptr_t)dst, src, n, s);
      break;
    case 2:
      CALL(cuMemcpyDtoHAsync_v2, dst, (CUdeviceptr)(uintptr_t)src, n, s);
      break;
    case 3:
      CALL(cuMemcpyDtoDAsync_v2, (CUdeviceptr)(uintptr_t)dst, (CUdeviceptr)(uintptr_t)src, n, s);
      break;
    default:
      if (src_dev < 0 || src_dev >= device_count) return 101;
      CALL(cuMemcpyPeerAsync, (CUdeviceptr)(uintptr_t)dst, contexts[dev], (CUdeviceptr)(uintptr_t)src,
           contexts[src_dev], n, s);
  }
  return GDA_CUDA_SUCCESS;
}

CUresult gda_cuda_gather(int dev, CUstream s, int count, void* const* dst, const CUdeviceptr* src, const size_t* n,
                         const char** call) {
  CURRENT(dev);
  for (int i = 0; i < count; i++) {
    CUresult r = cu.cuMemcpyDtoHAsync_v2(dst[i], src[i], n[i], s);
    if (r != GDA_CUDA_SUCCESS) {
      *call = "cuMemcpyDtoHAsync_v2";
      // copies already queued write into dst: let them finish before the
      // caller frees it
      cu.cuStreamSynchronize(s);
      return r;
    }
  }
  CALL(cuStreamSynchronize, s);
  return GDA_CUDA_SUCCESS;
}

CUresult gda_cuda_pointer_device(CUdeviceptr p, int* dev, int* memtype, const char** call) {
  unsigned int mt = 0;
  int ordinal = -1;
  CALL(cuPointerGetAttribute, &mt, 2 /* CU_POINTER_ATTRIBUTE_MEMORY_TYPE */, p);
  CALL(cuPointerGetAttribute, &ordinal, 9 /* CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL */, p);
  *dev = ordinal;
  *memtype = (int)mt;
  return GDA_CUDA_SUCCESS;
}

const char* gda_cuda_error_name(CUresult r) {
  const char* s = NULL;
  if (cu.cuGetErrorName && cu.cuGetErrorName(r, &s) == GDA_CUDA_SUCCESS && s) return s;
  return "CUDA_ERROR_UNKNOWN";
}

const char* gda_cuda_error_string(CUresult r) {
  const char* s = NULL;
  if (cu.cuGetErrorString && cu.cuGetErrorString(r, &s) == GDA_CUDA_SUCCESS && s) return s;
  return "";
}
