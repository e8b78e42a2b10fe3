// Held imports: the C fast path of a CPU or CUDA import, and the public C
// API of the held-schema table (held.c). A binding calls these without Go.
//
// An import whose schema is in the held-schema table (the Go import has read
// and checked an equal schema before) and whose CPU or CUDA array passes the
// checks ImportArray / ImportDeviceArray make is kept as the producer made
// it, in a reference-counted C record, with no Go data built; exporting it
// again is a shallow copy of the tree in C. Go builds an Array from a record
// only when Go code reads it (cdevice.ImportHeld). See docs/design.md, "Held
// imports".
//
// Every function is safe to call from any thread; none calls a producer
// callback except a release.
#pragma once

#include <stdint.h>

#include "arrow-c-abi.h"

// The release guard: every release of a producer's struct that godevarrow
// makes runs as guard(call, self), which must call call(self) exactly once.
// A Python binding takes the GIL there: some producers (pylibcudf) touch
// Python objects in release without taking it, and a consumer (a DuckDB
// scan thread) may drop the last reference on a thread that does not hold
// it. NULL (the default): releases are called directly.
typedef void (*gda_release_guard_fn)(void (*call)(void*), void* self);
void gda_set_release_guard(gda_release_guard_fn guard);

typedef struct gda_held_schema gda_held_schema;
typedef struct gda_held gda_held;

// Tries the fast path for a foreign schema and array (an ArrowDeviceArray when
// is_device, else an ArrowArray). On success (1) the array was moved into
// *out (its release set to NULL) and the schema released. Otherwise both are
// untouched and the caller takes the full import, which reports errors: 0
// when the schema is not in the table (importing it in Go adds it), -1 when
// the fast path declines this pair. An array in device memory (CUDA) is
// checked on the host, with the driver asked where its buffers are; nothing
// is read from the device and nothing is waited for (held.c).
int gda_held_import(struct ArrowSchema* schema, void* array, int is_device, gda_held** out);

// Known schemas (docs/design.md, "pyarrow's schema, exported once"): a
// producer that can export an array without its schema, and can tell whether
// two of its schemas are equal, needs to export each schema only once.
// gda_held_flat_schema gives the held schema of h, with a reference, when
// such an equality decides it (a record batch of leaf columns, or one leaf,
// with no metadata and no dictionary, that the gate checks), else NULL.
gda_held_schema* gda_held_flat_schema(gda_held* h);
void gda_held_schema_ref(gda_held_schema* e);
void gda_held_schema_unref(gda_held_schema* e);
// The columns (children) of e.
int64_t gda_held_schema_columns(const gda_held_schema* e);
// A fresh export of e's schema into *out (released by its consumer): 0 or ENOMEM.
int gda_held_schema_export(const gda_held_schema* e, struct ArrowSchema* out);
// gda_held_import for an array known to be of schema e (a flat schema): 1
// when it was moved into *out, -1 when declined (untouched; the Go import,
// given an export of e's schema, reports why).
int gda_held_import_known(gda_held_schema* e, struct ArrowDeviceArray* array, gda_held** out);

void gda_held_ref(gda_held* h);
// Drops a reference; the last one calls the producer's release.
void gda_held_unref(gda_held* h);
// Whether the held array is a record batch (Schema.IsRecordBatch, kept when
// its schema entered the table).
int gda_held_is_record_batch(gda_held* h);
// Whether the held array is on the CPU (else it is on a CUDA device).
int gda_held_on_cpu(const gda_held* h);
// Exports the held array again: a deep copy of the schema template into
// *schema_out and a shallow copy of the array tree that keeps the record
// alive; when is_device, an ArrowDeviceArray on the held array's device with
// the producer's sync_event. Returns 0, ENOMEM, or ENOTSUP for a plain
// (!is_device) export of an array that is not on the CPU (nothing written).
int gda_held_export(gda_held* h, struct ArrowSchema* schema_out, void* array_out, int is_device);
// The schema alone: 0, or ENOMEM.
int gda_held_export_schema(const gda_held* h, struct ArrowSchema* out);
