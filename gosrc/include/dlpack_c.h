// DLPack in C, for a binding's fast paths (no call into Go).
//
// Exports (gosrc/dlpack/export.c): dlpack.Export builds every tensor from a
// template of the array's values; a binding that keeps an array's template
// makes later tensors of it, for the same consumer stream, with no call into
// Go while the template says no wait is needed (gda_dlpack_template_fits).
//
// Imports (gosrc/dlpack/hold.c): a tensor that maps onto an Arrow array
// without a copy becomes a held import (held.h), checked as dlpack.Import
// checks it; Go builds an Array from it only when Go code reads it.
#pragma once

#include <stdint.h>

#include "held.h"

// gda_dlpack_template.reuse
enum {
  GDA_DLPACK_REUSE_NEVER = 0,
  // the array has no pending event: no consumer waits for anything
  GDA_DLPACK_REUSE_ALWAYS = 1,
  // the array's event is put off on the caller's default stream of its
  // device (cdevice's lazy_event.go), and the consumer named that stream:
  // no wait while it is still the calling thread's default stream there
  GDA_DLPACK_REUSE_CALLER_DEFAULT = 2,
};

typedef struct {
  void* data;            // the values buffer's start (NULL: an empty tensor)
  uint64_t byte_offset;  // where the values begin in it
  int64_t length;
  int32_t device_type, device_id;
  uint8_t code, bits;
  int reuse;             // GDA_DLPACK_REUSE_*
  int64_t stream;        // the consumer stream the template was made for, as __dlpack__ got it
  int stream_given;      // 0: stream=None
  uintptr_t queue;       // REUSE_CALLER_DEFAULT: the caller's default stream handle it needs
} gda_dlpack_template;

// A new tensor over t's values: a DLManagedTensorVersioned (versioned) or a
// DLManagedTensor, read-only unless copied (versioned only: flag IS_COPIED).
// It keeps the array alive by keeper (keeper_release(keeper) in its deleter,
// no call into Go) when keeper_release is set, else by the exports table's
// handle (released through Go). NULL when out of memory (nothing taken).
void* gda_dlpack_from_template(const gda_dlpack_template* t, int versioned, int copied, uintptr_t handle,
                               void (*keeper_release)(void*), void* keeper);

// Whether a tensor for the consumer stream (stream, given) may be made from
// t in C now (see gda_dlpack_template.reuse); a yes is counted as a tensor
// made from a template (the caller makes it).
int gda_dlpack_template_fits(const gda_dlpack_template* t, int64_t stream, int given);

// The live tensors a keeper keeps alive.
long long gda_dlpack_kept(void);
// The tensors made from templates so far (gda_dlpack_template_fits's yeses).
long long gda_dlpack_template_exports(void);

// Moves the tensor (a DLManagedTensorVersioned when versioned, else a
// DLManagedTensor) into a held import in *out: 1, its deleter now the held
// record's to call (under the release guard, once). 0 when the fast path
// declines it (untouched: dlpack.Import takes it and words any error): a
// tensor Import refuses or copies (booleans), one on a device other than
// the CPU or one with a C vtable (CUDA), or of a dtype whose schema the
// held-schema table does not know yet (dlpack.Import adds it). put_off_on:
// the caller's default stream of the tensor's device that the producer
// ordered its writes on (a handle of that device's C vtable,
// caller_default_stream, asked again after the producer returned), or 0
// when none was named (the producer synchronized).
int gda_dlpack_hold(void* tensor, int versioned, uintptr_t put_off_on, gda_held** out);
