// C helpers of the gosrc packages, declared once here: each function is
// defined in the package its section names. Everything here is internal:
// the Go APIs of the packages are the only public surface.
#pragma once

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include "arrow-c-abi.h"
#include "held.h"

// ---- calling foreign callbacks (Go cannot call C function pointers) ----
// A producer's release runs through the binding's release guard when one is
// set (gda_set_release_guard, held.h): a consumer may drop our export, and
// with it the last reference to a foreign struct, on a thread of its own.
extern gda_release_guard_fn gda_release_guard;
static inline void gda_release_foreign(void (*call)(void*), void* self) {
  gda_release_guard_fn guard = __atomic_load_n(&gda_release_guard, __ATOMIC_ACQUIRE);
  if (guard) {
    guard(call, self);
  } else {
    call(self);
  }
}
static inline void gda_schema_release_thunk(void* s) { ((struct ArrowSchema*)s)->release(s); }
static inline void gda_array_release_thunk(void* a) { ((struct ArrowArray*)a)->release(a); }
static inline void gda_stream_release_thunk(void* s) { ((struct ArrowArrayStream*)s)->release(s); }
static inline void gda_device_stream_release_thunk(void* s) { ((struct ArrowDeviceArrayStream*)s)->release(s); }
static inline void gda_call_schema_release(struct ArrowSchema* s) { gda_release_foreign(gda_schema_release_thunk, s); }
static inline void gda_call_array_release(struct ArrowArray* a) { gda_release_foreign(gda_array_release_thunk, a); }
static inline void gda_call_stream_release(struct ArrowArrayStream* s) {
  gda_release_foreign(gda_stream_release_thunk, s);
}
static inline void gda_call_device_stream_release(struct ArrowDeviceArrayStream* s) {
  gda_release_foreign(gda_device_stream_release_thunk, s);
}
static inline int gda_call_stream_get_schema(struct ArrowArrayStream* s, struct ArrowSchema* out) {
  return s->get_schema(s, out);
}
static inline int gda_call_stream_get_next(struct ArrowArrayStream* s, struct ArrowArray* out) {
  return s->get_next(s, out);
}
static inline const char* gda_call_stream_get_last_error(struct ArrowArrayStream* s) {
  return s->get_last_error(s);
}
static inline int gda_call_device_stream_get_schema(struct ArrowDeviceArrayStream* s, struct ArrowSchema* out) {
  return s->get_schema(s, out);
}
static inline int gda_call_device_stream_get_next(struct ArrowDeviceArrayStream* s, struct ArrowDeviceArray* out) {
  return s->get_next(s, out);
}
static inline const char* gda_call_device_stream_get_last_error(struct ArrowDeviceArrayStream* s) {
  return s->get_last_error(s);
}

// ---- pointers a producer hands over ----
// No allocation lies in the first page, so a non-NULL pointer below
// GDA_MIN_POINTER points at nothing: an empty buffer's dangling pointer
// (polars exports an empty Rust vector's, its alignment: 0x1 to 0x8), valid
// for zero bytes, or a bad value. Neither is read, and neither may sit in a
// Go pointer: Go aborts the process on finding such a value in a
// pointer-typed variable while it copies a stack.
#define GDA_MIN_POINTER 4096
// Whether d's sync_event cannot be a pointer to an event (both imports,
// held.c's gate and cdevice's, refuse it before anything holds it).
static inline int gda_sync_event_not_a_pointer(const struct ArrowDeviceArray* d) {
  return d->sync_event != NULL && (uintptr_t)d->sync_event < GDA_MIN_POINTER;
}
static inline uintptr_t gda_sync_event_value(const struct ArrowDeviceArray* d) { return (uintptr_t)d->sync_event; }

// ---- exported schemas: plain C trees released without Go ----
// Deep-copies src (a template built by Go) into dst; dst->release frees it.
// Returns 0, or ENOMEM.
int gda_schema_copy(const struct ArrowSchema* src, struct ArrowSchema* dst);
// Allocates a zeroed schema node with room for n_children child pointers
// (each child allocated too) and sets its release to the C release.
struct ArrowSchema* gda_schema_node_new(int64_t n_children);
int gda_schema_node_init(struct ArrowSchema* s, int64_t n_children);
void gda_schema_free_template(struct ArrowSchema* s);
// gda_schema_copy for copies we keep (not counted as live exports).
int gda_schema_copy_uncounted(const struct ArrowSchema* src, struct ArrowSchema* dst);
int64_t gda_live_exported_schemas(void);

// ---- the schema import cache (schema_cache.go) ----
// A hash of every member an import reads (format, name, flags, metadata,
// children, dictionary), or 0 when the tree is not plainly well-formed (NULL
// format or children, a released child, absurd counts, too deep): such trees
// take the full, error-reporting import path. Metadata is read as far as its
// declared lengths go, as the full import would.
uint64_t gda_schema_hash(const struct ArrowSchema* s);
// 1 when the foreign tree s imports to the same Schema as the template t (a
// NULL name or metadata equals an empty one, as the import makes them). Safe
// on any s whose pointers are NULL or valid: a malformed s does not match.
int gda_schema_matches(const struct ArrowSchema* s, const struct ArrowSchema* t);

// ---- exported arrays: one private block per node, one shared record per export ----
// The shared record counts the nodes of one export that are not yet released;
// when it reaches zero the Go handle is released (one Go call per export), or
// for an export of a held import (held.c) the held record is unreferenced.
typedef struct gda_shared gda_shared;
gda_shared* gda_shared_new(uintptr_t handle);
// A shared record whose last node calls release(handle) instead.
gda_shared* gda_shared_new_with(uintptr_t handle, void (*release)(uintptr_t handle));
// Initializes `a` as an exported node with n_buffers buffer slots and
// n_children child structs (plus a dictionary struct when has_dictionary),
// all zeroed; returns the buffers array to fill. Takes one reference on shared.
const void** gda_array_node_init(struct ArrowArray* a, gda_shared* shared, int64_t n_buffers,
                                 int64_t n_children, int has_dictionary);
int64_t gda_live_exported_nodes(void);

// A block of zero bytes for buffers that must not be NULL but hold nothing
// (e.g. the single offset of an empty string array). Never written.
const void* gda_zero_block(void);
#define GDA_ZERO_BLOCK_SIZE 64

// ---- exported streams ----
// Moves the CPU device stream *dev into out as a plain ArrowArrayStream that
// forwards to it in C (no Go call per array); arrays on another device or with
// a sync event fail get_next with EINVAL. Returns 0, or ENOMEM (dev untouched).
int gda_plain_stream_over_device_stream(struct ArrowDeviceArrayStream* dev, struct ArrowArrayStream* out);
int gda_stream_init(struct ArrowArrayStream* s, uintptr_t handle);
int gda_device_stream_init(struct ArrowDeviceArrayStream* s, uintptr_t handle, ArrowDeviceType device_type);

// ---- held imports (held.c): the public part is held.h ----

// The gate's view of one node of a schema, in preorder (node, children,
// dictionary): what the checks of ImportArray need to know of its format.
enum {
  GDA_GATE_NULL = 1,   // no buffers
  GDA_GATE_BOOL,       // validity, bits
  GDA_GATE_FIXED,      // validity, values of `width` bytes
  GDA_GATE_BINARY,     // validity, offsets of `width` bytes, data
  GDA_GATE_LIST,       // validity, offsets of `width` bytes; one child (lists, maps)
  GDA_GATE_FIXED_LIST, // validity; one child of `width` values per list
  GDA_GATE_STRUCT,     // validity; children at least as long as the struct
};
typedef struct {
  int32_t kind;  // GDA_GATE_*
  int32_t n_buffers;
  int64_t width;
  int64_t n_children;
  int32_t has_dictionary;
  int32_t has_validity;
} gda_gate_node;

// The held-schema table is the schema import cache (schema_cache.go): one
// entry per cached Schema, holding the handle of the Go Schema (go_schema),
// a copy of its export template, and its n_nodes gate nodes; no nodes (0)
// marks a schema whose arrays always take the Go import. The table keeps at
// most GDA_HELD_SCHEMAS entries of GDA_HELD_SCHEMA_BYTES bytes in all, and
// is emptied when an entry would pass either bound; an entry larger than the
// byte budget by itself is not added (EFBIG). An entry's bytes count every
// copy the cache keeps of the schema: GDA_HELD_SCHEMA_COPIES (the Go
// Schema, its C export template, the entry's own template) times
// gda_schema_template_bytes, plus the entry and its gate nodes. An entry
// lives on while held imports refer to it, and when it goes the Go side is
// told (gdaHeldSchemaDropped). Returns 0, ENOMEM or EFBIG.
#define GDA_HELD_SCHEMAS 256
#define GDA_HELD_SCHEMA_BYTES ((int64_t)64 << 20)
#define GDA_HELD_SCHEMA_COPIES 3
int gda_held_schema_add(uint64_t hash, uintptr_t go_schema, const struct ArrowSchema* tmpl, int is_record_batch,
                        const gda_gate_node* nodes, int64_t n_nodes);
void gda_held_schemas_clear(void);
// The entries of the table and their bytes (as counted against the budget).
void gda_held_schemas_size(int64_t* entries, int64_t* bytes);
// The bytes of one copy of a schema template (a tree this package built):
// its structs, strings, metadata and children arrays.
int64_t gda_schema_template_bytes(const struct ArrowSchema* s);
// The entry equal to the foreign tree (with a reference), or NULL; *hash is
// the tree's hash (gda_schema_hash; 0 when it is not cacheable).
gda_held_schema* gda_held_schema_find(const struct ArrowSchema* schema, uint64_t* hash);
uintptr_t gda_held_schema_go(const gda_held_schema* e);
// gda_held_schema_find without the release check (a reference, or NULL).
gda_held_schema* gda_held_schema_lookup(const struct ArrowSchema* s, uint64_t* hash_out);
// An entry of the table (defined in cschema, read by the gate in cdevice).
struct gda_held_schema {
  _Atomic int64_t refs;  // the table's and one per held import
  uint64_t hash;
  uintptr_t go_schema;      // the handle of the Go Schema this entry caches (held.go)
  struct ArrowSchema tmpl;  // our copy of the Schema's export template
  int is_record_batch;      // Go's answer (Schema.IsRecordBatch)
  int flat;                 // see gda_held_flat_schema
  int64_t bytes;            // counted against GDA_HELD_SCHEMA_BYTES (cdevice.h)
  int64_t n_nodes;
  gda_gate_node nodes[];  // preorder
};

// gda_held_import for an ArrowDeviceArray, which also tells a driver failure
// of the CUDA gate apart: -2 with the failing call's name and result (the
// structs untouched).
int gda_held_import_device(struct ArrowSchema* schema, struct ArrowDeviceArray* d, gda_held** out, const char** call,
                           int* result);
// The held import of an array of a known held schema e (a stream's arrays):
// 1 when d was moved into *out, -1 when declined (d untouched). A CUDA array
// is gated as gda_held_import does; a driver failure declines.
int gda_held_import_entry(gda_held_schema* e, struct ArrowDeviceArray* d, gda_held** out);
// Like gda_held_import's checks alone: 1 when it would take the pair. Touches nothing.
int gda_held_accepts(const struct ArrowSchema* schema, const struct ArrowArray* array);
// The moved array (on the CPU or CUDA) and the Go Schema handle of a held import.
struct ArrowDeviceArray* gda_held_array(gda_held* h);
uintptr_t gda_held_go_schema(const gda_held* h);
int64_t gda_live_held(void);
int64_t gda_live_held_exports(void);

// ---- host reads of memory nobody vouched for ----
// Copies n bytes at src into dst through the kernel, which reports memory
// that is not mapped readable (EFAULT) instead of faulting. Returns 0 or an
// errno. For the few bytes an import must read from a pointer that no driver
// placed (see readUnvouched in device_import.go).
int gda_read_host_checked(void* dst, const void* src, size_t n);

// The calling thread's name for OneShotStream's re-entry check (ThreadID).
static inline uint64_t gda_current_thread(void) { return (uint64_t)pthread_self(); }

// The release of a schema BorrowSchema made: it frees nothing.
void gda_borrowed_schema_release(struct ArrowSchema* s);
