// C helpers of package cdevice. Everything here is internal: the Go API of
// the package is the only public surface.
#pragma once

#include <stdint.h>
#include <stdlib.h>
#include "arrow-c-abi.h"

// ---- calling foreign callbacks (Go cannot call C function pointers) ----
static inline void gda_call_schema_release(struct ArrowSchema* s) { s->release(s); }
static inline void gda_call_array_release(struct ArrowArray* a) { a->release(a); }
static inline void gda_call_stream_release(struct ArrowArrayStream* s) { s->release(s); }
static inline void gda_call_device_stream_release(struct ArrowDeviceArrayStream* s) { s->release(s); }
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

// ---- held imports: the C fast path of a CPU import (held.c) ----
// An import whose schema is in the held-schema table and whose CPU array
// passes the checks ImportArray makes is kept as the producer made it, in a
// reference-counted C record, with no Go data built; exporting it again is a
// shallow copy of the tree in C. Go builds an Array from a record only when
// Go code reads it (ImportHeld). See docs/design.md, "Held imports".

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

typedef struct gda_held_schema gda_held_schema;
typedef struct gda_held gda_held;

// Adds a schema to the held-schema table: hash (gda_schema_hash of the trees
// it matches), a copy of its export template, and its n_nodes gate nodes; no
// nodes (0) marks a schema whose arrays always take the Go import. The table
// keeps at most GDA_HELD_SCHEMAS entries and is emptied when full. Returns 0
// or ENOMEM.
#define GDA_HELD_SCHEMAS 256
int gda_held_schema_add(uint64_t hash, const struct ArrowSchema* tmpl, int is_record_batch, const gda_gate_node* nodes,
                        int64_t n_nodes);
void gda_held_schemas_clear(void);

// Tries the fast path for a foreign schema and array (an ArrowDeviceArray when
// is_device, else an ArrowArray). On success (1) the array was moved into
// *out (its release set to NULL) and the schema released. Otherwise both are
// untouched and the caller takes the full import, which reports errors: 0
// when the schema is not in the table (importing it in Go adds it), -1 when
// the fast path declines this pair.
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
// The columns (children) of e, and its export template.
int64_t gda_held_schema_columns(const gda_held_schema* e);
const struct ArrowSchema* gda_held_schema_template(const gda_held_schema* e);
// gda_held_import for an array known to be of schema e (a flat schema): 1
// when it was moved into *out, -1 when declined (untouched; the Go import,
// given a copy of e's template, reports why).
int gda_held_import_known(gda_held_schema* e, struct ArrowDeviceArray* array, gda_held** out);
// 1 when the foreign schema is in the held-schema table, i.e. the Go import
// has read and checked an equal one (*is_record_batch is then set); 0
// otherwise. Touches nothing.
int gda_held_schema_known(const struct ArrowSchema* schema, int* is_record_batch);
// Like gda_held_import's checks alone: 1 when it would take the pair. Touches nothing.
int gda_held_accepts(const struct ArrowSchema* schema, const struct ArrowArray* array);
void gda_held_ref(gda_held* h);
// Drops a reference; the last one calls the producer's release.
void gda_held_unref(gda_held* h);
// The moved array (device CPU) and the export template of its schema.
struct ArrowDeviceArray* gda_held_array(gda_held* h);
const struct ArrowSchema* gda_held_template(gda_held* h);
// Whether the held array is a record batch (Schema.IsRecordBatch, kept when
// its schema entered the table).
int gda_held_is_record_batch(gda_held* h);
// Exports the held array again: a deep copy of the schema template into
// *schema_out and a shallow copy of the array tree (an ArrowDeviceArray on
// the CPU when is_device) that keeps the record alive. Returns 0, or ENOMEM
// (nothing written).
int gda_held_export(gda_held* h, struct ArrowSchema* schema_out, void* array_out, int is_device);
int64_t gda_live_held(void);
int64_t gda_live_held_exports(void);
