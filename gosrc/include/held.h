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
// the producer's sync_event. Returns 0, ENOMEM, ENOTSUP for a plain
// (!is_device) export of an array that is not on the CPU, or EAGAIN for a
// device export of one whose event is put off (nothing written: Go records
// the event and exports it).
int gda_held_export(gda_held* h, struct ArrowSchema* schema_out, void* array_out, int is_device);
// A held import whose data is ordered on the caller's default stream of its
// device (a handle the backend's C vtable gave, caller_default_stream), not
// by a sync_event: Go records its event on that stream when a reader needs
// one (cdevice's lazy_event.go). Set once, right after the import; 0: none.
void gda_held_put_off_on(gda_held* h, uintptr_t stream);
uintptr_t gda_held_put_off_stream(const gda_held* h);
// The schema alone: 0, or ENOMEM.
int gda_held_export_schema(const gda_held* h, struct ArrowSchema* out);

// ---- a foreign stream's reads ----
// One get_next of a foreign stream (exactly one of plain and dev; a plain
// stream's array gets device CPU). When e is not NULL and the array is on
// dev_type it is offered to the held fast path (as gda_held_import does for
// an array of schema e). rc is get_next's errno (what the producer filled is
// released); otherwise held is the held array, or cell a malloc'd cell with
// the array for the Go import (NULL with errno 0: the end of the stream;
// no_memory: the array could not be kept and was released).
typedef struct {
  int rc;
  int no_memory;
  struct ArrowDeviceArray* cell;
  gda_held* held;
} gda_stream_read;
gda_stream_read gda_stream_read_next(struct ArrowArrayStream* plain, struct ArrowDeviceArrayStream* dev,
                                     gda_held_schema* e, int32_t dev_type);

// The C half of an imported foreign stream (cdevice.StreamReader keeps one),
// which a binding reads without Go while the stream's read gate (gate.h)
// lets it: what gda_stream_read_next needs, and two flags. Only a reader the
// gate let in may touch it; Go frees it when the stream is closed or moved
// out, which the gate refuses during a read.
typedef struct {
  struct ArrowArrayStream* plain;
  struct ArrowDeviceArrayStream* dev;
  gda_held_schema* held;  // the schema's held entry (the reader's reference), or NULL
  int32_t dev_type;
  int read;    // get_next was called: the producer's stream is no longer pristine
  int failed;  // a read failed: Go words every later read (its error is Go's)
} gda_stream_source;

// One read of src: gda_stream_read_next with its held entry; marks it read.
// Call it only when src->failed is 0; any outcome but a held array or the
// end goes to Go (cdevice.StreamReader.FinishRead), which words errors and
// imports what the fast path declined.
gda_stream_read gda_stream_source_next(gda_stream_source* src);
