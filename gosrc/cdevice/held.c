// Held imports: the C fast path of a CPU or device import (docs/design.md,
// "Held imports"). A pass-through exchange (import, export again, release)
// then never calls into Go and builds no Go data.
//
// The gate below accepts only what ImportArray accepts (FuzzArrayImport holds
// it to that); it may decline more, and what it declines takes the full Go
// import, which also writes the error messages.
//
// An array in device memory (a device type whose backend registered a C
// vtable, ../device/backend.h: CUDA's) is gated on the host alone, as
// ImportDeviceArray does (device_import.go): its offsets are not read (the
// operations that need them fetch and check them), and the driver is asked
// once whether every buffer belongs to the array's device.
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "../device/backend.h"
#include "gda.h"

struct gda_held {
  _Atomic int64_t refs;
  struct ArrowDeviceArray array;  // moved from the producer: on the CPU, or a device with its sync_event
  gda_held_schema* schema;
  // set (gda_held_put_off_on): the array's data is ordered on the caller's
  // default stream of its device, whose event Go records when a reader
  // needs it (cdevice's lazy_event.go); no sync_event can be exported in C
  uintptr_t put_off_on;
};

static _Atomic int64_t live_held, live_held_exports;
int64_t gda_live_held(void) { return atomic_load(&live_held); }
int64_t gda_live_held_exports(void) { return atomic_load(&live_held_exports); }

// ------------------------------------------------------------- the gate

#define GATE_MAX_DEPTH 256  // maxNesting of the Go import

// a*b for non-negative a, b; -1 on overflow (no division: this runs per node)
static int64_t mul(int64_t a, int64_t b) {
  int64_t r;
  if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, &r)) return -1;
  return r;
}

static int64_t read_offset(const void* p, int64_t i, int64_t width) {
  if (width == 4) {
    int32_t v;
    memcpy(&v, (const char*)p + i * 4, 4);
    return v;
  }
  int64_t v;
  memcpy(&v, (const char*)p + i * 8, 8);
  return v;
}

// The buffers of a device gate (see the top of the file).
typedef struct {
  int64_t n_buffers, max_buffers;
  uintptr_t* buffers;  // every non-NULL buffer pointer
} device_reads;

// The last offset of the range [offset, end] of an offsets buffer, or -1
// when the offsets are missing, negative or decreasing there. Device offsets
// are not read (0): the operations that read them check them.
static int64_t last_offset(const void* offsets, int64_t offset, int64_t end, int64_t width, device_reads* dr) {
  if (mul(end + 1, width) < 0) return -1;
  if (!offsets) return end == 0 ? 0 : -1;
  if (dr) return 0;
  int64_t first = read_offset(offsets, offset, width), last = read_offset(offsets, end, width);
  return first < 0 || last < first ? -1 : last;
}

// The checks of one node c against its gate node p that look at no child
// beyond its pointer and length: what a leaf needs, all of it. The lengths of
// a struct's children are checked by gate, in the loop over them.
static inline int gate_node(const struct ArrowArray* c, const gda_gate_node* p, int depth, device_reads* dr) {
  if (depth > 0 && !c->release) return 0;
  int64_t length = c->length, offset = c->offset, nulls = c->null_count;
  // 8 bytes of headroom: bitmap sizes are (end + 7) / 8
  if (length < 0 || offset < 0 || nulls < -1 || nulls > length || offset > INT64_MAX - 8 - length) return 0;
  int64_t end = offset + length;
  if (c->n_buffers != p->n_buffers || (p->n_buffers > 0 && !c->buffers)) return 0;
  if (c->n_children != p->n_children || (c->n_children > 0 && !c->children)) return 0;
  if (!c->dictionary != !p->has_dictionary) return 0;
  const void* const* b = c->buffers;
  if (p->has_validity && !b[0] && nulls > 0) return 0;
  for (int32_t i = 0; i < p->n_buffers; i++) {
    if (!b[i]) continue;
    // a dangling buffer pointer (gda.h, GDA_MIN_POINTER) is never read here:
    // Go's import takes the array, holding no such value in a pointer
    if ((uintptr_t)b[i] < GDA_MIN_POINTER) return 0;
    if (!dr) continue;
    if (dr->n_buffers >= dr->max_buffers) return 0;
    dr->buffers[dr->n_buffers++] = (uintptr_t)b[i];
  }
  int64_t need, last;
  switch (p->kind) {
    case GDA_GATE_NULL:
    case GDA_GATE_STRUCT:
      return 1;
    case GDA_GATE_BOOL:
      return b[1] || end == 0;
    case GDA_GATE_FIXED:
      return (need = mul(end, p->width)) >= 0 && (b[1] || need == 0);
    case GDA_GATE_BINARY:
      return (last = last_offset(b[1], offset, end, p->width, dr)) >= 0 && (b[2] || last == 0);
    case GDA_GATE_LIST:
      return c->children[0] && (last = last_offset(b[1], offset, end, p->width, dr)) >= 0 &&
             last <= c->children[0]->length;
    case GDA_GATE_FIXED_LIST:
      return c->children[0] && (need = mul(end, p->width)) >= 0 && c->children[0]->length >= need;
    default:
      return 0;
  }
}

static int gate(const struct ArrowArray* c, const gda_held_schema* e, int64_t* next, int depth, device_reads* dr) {
  if (*next >= e->n_nodes || depth > GATE_MAX_DEPTH) return 0;
  const gda_gate_node* p = &e->nodes[(*next)++];
  if (!gate_node(c, p, depth, dr)) return 0;
  int64_t end = c->offset + c->length;  // no overflow: gate_node checked
  for (int64_t i = 0; i < c->n_children; i++) {
    const struct ArrowArray* child = c->children[i];
    if (!child || (p->kind == GDA_GATE_STRUCT && child->length < end)) return 0;
    // a leaf (the columns of a wide batch) is gated here, not in a call
    const gda_gate_node* q = *next < e->n_nodes ? &e->nodes[*next] : NULL;
    if (q && q->n_children == 0 && !q->has_dictionary && depth < GATE_MAX_DEPTH) {
      (*next)++;
      if (!gate_node(child, q, depth + 1, dr)) return 0;
    } else if (!gate(child, e, next, depth + 1, dr)) {
      return 0;
    }
  }
  return !c->dictionary || gate(c->dictionary, e, next, depth + 1, dr);
}

static int gate_tree(const struct ArrowArray* c, const gda_held_schema* e, device_reads* dr) {
  int64_t next = 0;
  return e->n_nodes > 0 && c->release && gate(c, e, &next, 0, dr) && next == e->n_nodes;
}

// The device gate (see the top of the file), with the vtable b of the
// array's device type: 1 when d, an array on device d->device_id, passes
// every check ImportDeviceArray makes; 0 when it does not (the Go import then
// says why). It makes no driver call that fails an import: *call and *result
// are left alone (a failed pointer query declines, and the Go import words it).
static int gate_device(const struct gda_device_backend* b, const struct ArrowDeviceArray* d,
                       const gda_held_schema* e, const char** call, int* result) {
  (void)call, (void)result;
  const char* msg;
  if (d->device_id < 0 || d->device_id > INT32_MAX || e->n_nodes <= 0 || gda_sync_event_not_a_pointer(d) ||
      b->open(&msg) != 0)
    return 0;
  // a gated node has at most 3 buffers; a batch of a few hundred columns
  // lists them on the stack
  uintptr_t on_stack[1024];
  device_reads dr = {.max_buffers = 3 * e->n_nodes, .buffers = on_stack};
  if (dr.max_buffers > 1024 && !(dr.buffers = malloc((size_t)dr.max_buffers * sizeof(uintptr_t)))) return 0;
  int ok = gate_tree(&d->array, e, &dr), bad = -1, bad_dev = -1;
  const char* ignored;
  // a buffer the driver does not place on dev: the Go import words it
  if (ok && dr.n_buffers > 0)
    ok = b->pointers_on_device((int)d->device_id, (int)dr.n_buffers, dr.buffers, &bad, &bad_dev, &ignored) == 0 &&
         bad < 0;
  if (dr.buffers != on_stack) free(dr.buffers);
  return ok;
}

// ------------------------------------------------------- import, export

// The held schema of a foreign pair: 1 (*out, with a reference), 0 (the
// schema is not in the table) or -1 (a struct is missing or released).
static int find_held_schema(const struct ArrowSchema* schema, const struct ArrowArray* a, gda_held_schema** out) {
  if (!schema || !schema->release || !a) return -1;
  *out = gda_held_schema_lookup(schema, NULL);
  return *out ? 1 : 0;
}



int gda_held_accepts(const struct ArrowSchema* schema, const struct ArrowArray* array) {
  gda_held_schema* e;
  if (find_held_schema(schema, array, &e) != 1) return 0;
  int accepted = gate_tree(array, e, NULL);
  gda_held_schema_unref(e);
  return accepted;
}

// The CPU array of a foreign ArrowArray or ArrowDeviceArray, or NULL when it
// is elsewhere or comes with a sync event.
static struct ArrowArray* cpu_array(void* array, int is_device) {
  if (!is_device || !array) return array;
  struct ArrowDeviceArray* d = array;
  return d->device_type == ARROW_DEVICE_CPU && !d->sync_event ? &d->array : NULL;
}

// Moves d into a new held record of e (which gets the record's reference):
// 1, or -1 with d untouched. d has passed the gate.
static int hold(gda_held_schema* e, struct ArrowDeviceArray* d, gda_held** out) {
  gda_held* h = malloc(sizeof(*h));
  if (!h) return -1;
  atomic_init(&h->refs, 1);
  h->put_off_on = 0;
  h->array = *d;
  memset(h->array.reserved, 0, sizeof(h->array.reserved));
  gda_held_schema_ref(e);
  h->schema = e;
  d->array.release = NULL;
  atomic_fetch_add(&live_held, 1);
  *out = h;
  return 1;
}

// hold for a CPU ArrowArray, when the gate takes it.
static int hold_cpu(gda_held_schema* e, struct ArrowArray* a, gda_held** out) {
  if (!a || !gate_tree(a, e, NULL)) return -1;
  struct ArrowDeviceArray d = {.array = *a, .device_id = -1, .device_type = ARROW_DEVICE_CPU};
  if (hold(e, &d, out) != 1) return -1;
  a->release = NULL;
  return 1;
}

int gda_held_import_device(struct ArrowSchema* schema, struct ArrowDeviceArray* d, gda_held** out, const char** call,
                           int* result) {
  const struct gda_device_backend* b = gda_backend_for(d->device_type);
  if (!b) return gda_held_import(schema, d, 1, out);
  gda_held_schema* e;
  int found = find_held_schema(schema, &d->array, &e);
  if (found != 1) return found;
  int taken = d->array.release ? gate_device(b, d, e, call, result) : 0;
  if (taken == 1) taken = hold(e, d, out);
  gda_held_schema_unref(e);
  if (taken == 1) gda_call_schema_release(schema);
  return taken == 0 ? -1 : taken;
}

int gda_held_import_entry(gda_held_schema* e, struct ArrowDeviceArray* d, gda_held** out) {
  const struct gda_device_backend* b = gda_backend_for(d->device_type);
  if (!b) return hold_cpu(e, cpu_array(d, 1), out);
  const char* call;
  int result;
  return d->array.release && gate_device(b, d, e, &call, &result) == 1 ? hold(e, d, out) : -1;
}

gda_stream_read gda_stream_read_next(struct ArrowArrayStream* plain, struct ArrowDeviceArrayStream* dev,
                                     gda_held_schema* e, int32_t dev_type) {
  gda_stream_read r = {0};
  struct ArrowDeviceArray got = {0};  // on the stack: a held array needs no cell
  if (plain) {
    r.rc = gda_call_stream_get_next(plain, &got.array);
    got.device_type = ARROW_DEVICE_CPU;
    got.device_id = -1;
  } else {
    r.rc = gda_call_device_stream_get_next(dev, &got);
  }
  if (r.rc != 0 || !got.array.release) {
    // a producer that failed but still filled the struct is released
    if (r.rc != 0 && got.array.release) gda_call_array_release(&got.array);
    return r;
  }
  if (e && got.device_type == dev_type && gda_held_import_entry(e, &got, &r.held) == 1) return r;
  if (!(r.cell = malloc(sizeof(*r.cell)))) {
    gda_call_array_release(&got.array);
    r.no_memory = 1;
    return r;
  }
  *r.cell = got;
  return r;
}

int gda_held_import(struct ArrowSchema* schema, void* array, int is_device, gda_held** out) {
  if (is_device && array && gda_backend_for(((struct ArrowDeviceArray*)array)->device_type)) {
    const char* call;
    int result;
    int taken = gda_held_import_device(schema, array, out, &call, &result);
    return taken == -2 ? -1 : taken;
  }
  struct ArrowArray* a = cpu_array(array, is_device);
  gda_held_schema* e;
  int found = find_held_schema(schema, a, &e);
  if (found != 1) return found;
  int taken = hold_cpu(e, a, out);
  gda_held_schema_unref(e);
  if (taken == 1) gda_call_schema_release(schema);
  return taken;
}

int gda_held_import_known(gda_held_schema* e, struct ArrowDeviceArray* array, gda_held** out) {
  return e->flat ? hold_cpu(e, cpu_array(array, 1), out) : -1;
}

gda_held_schema* gda_held_flat_schema(gda_held* h) {
  if (!h->schema->flat) return NULL;
  gda_held_schema_ref(h->schema);
  return h->schema;
}

int64_t gda_held_schema_columns(const gda_held_schema* e) { return e->tmpl.n_children; }
int gda_held_schema_export(const gda_held_schema* e, struct ArrowSchema* out) { return gda_schema_copy(&e->tmpl, out); }

void gda_held_ref(gda_held* h) { atomic_fetch_add(&h->refs, 1); }

void gda_held_unref(gda_held* h) {
  if (atomic_fetch_sub(&h->refs, 1) == 1) {
    gda_call_array_release(&h->array.array);
    gda_held_schema_unref(h->schema);
    free(h);
    atomic_fetch_sub(&live_held, 1);
  }
}

struct ArrowDeviceArray* gda_held_array(gda_held* h) { return &h->array; }
uintptr_t gda_held_go_schema(const gda_held* h) { return h->schema->go_schema; }
int gda_held_export_schema(const gda_held* h, struct ArrowSchema* out) { return gda_held_schema_export(h->schema, out); }
int gda_held_is_record_batch(gda_held* h) { return h->schema->is_record_batch; }

static void release_held_export(uintptr_t h) {
  atomic_fetch_sub(&live_held_exports, 1);
  gda_held_unref((gda_held*)h);
}

// The nulls of a validity bitmap's bits [offset, offset + length).
static int64_t count_nulls(const uint8_t* bitmap, int64_t offset, int64_t length) {
  if (!bitmap) return 0;
  int64_t nulls = 0;
  for (int64_t i = offset; i < offset + length; i++) nulls += !(bitmap[i >> 3] >> (i & 7) & 1);
  return nulls;
}

// Fills dst as a node of the export sharing src's buffers (s is its schema);
// a failure leaves what was filled for the caller to release.
//
// A map's entries and their keys (map_part 1 and 2) keep no unknown null
// count on the host: the format lets a producer leave it -1, but pyarrow
// before 26 aborts the process on a map whose entries' or keys' count is not
// 0 (it checks the count, not the bitmap), so a CPU export counts them, as
// the Go export does (exportedNullCount in export.go).
static int copy_node(const struct ArrowArray* src, const struct ArrowSchema* s, int map_part, struct ArrowArray* dst,
                     gda_shared* shared, int on_cpu) {
  const void** buffers = gda_array_node_init(dst, shared, src->n_buffers, src->n_children, src->dictionary != NULL);
  if (!buffers) return ENOMEM;
  dst->length = src->length;
  dst->offset = src->offset;
  dst->null_count = src->null_count;
  if (map_part && on_cpu && src->null_count == -1 && src->n_buffers > 0)
    dst->null_count = count_nulls(src->buffers[0], src->offset, src->length);
  if (src->n_buffers > 0) memcpy(buffers, src->buffers, (size_t)src->n_buffers * sizeof(void*));
  int is_map = strcmp(s->format, "+m") == 0;
  for (int64_t i = 0; i < src->n_children; i++) {
    int part = is_map ? 1 : (map_part == 1 && i == 0 ? 2 : 0);
    if (copy_node(src->children[i], s->children[i], part, dst->children[i], shared, on_cpu) != 0) return ENOMEM;
  }
  return src->dictionary ? copy_node(src->dictionary, s->dictionary, 0, dst->dictionary, shared, on_cpu) : 0;
}

int gda_held_on_cpu(const gda_held* h) { return h->array.device_type == ARROW_DEVICE_CPU; }

void gda_held_put_off_on(gda_held* h, uintptr_t stream) { h->put_off_on = stream; }
uintptr_t gda_held_put_off_stream(const gda_held* h) { return h->put_off_on; }

int gda_held_export(gda_held* h, struct ArrowSchema* schema_out, void* array_out, int is_device) {
  if (!is_device && !gda_held_on_cpu(h)) return ENOTSUP;
  if (is_device && h->put_off_on) return EAGAIN;
  struct ArrowArray* a = is_device ? &((struct ArrowDeviceArray*)array_out)->array : array_out;
  memset(a, 0, sizeof(*a));
  gda_shared* shared = gda_shared_new_with((uintptr_t)h, release_held_export);
  if (!shared) return ENOMEM;
  gda_held_ref(h);
  atomic_fetch_add(&live_held_exports, 1);
  if (copy_node(&h->array.array, &h->schema->tmpl, 0, a, shared, gda_held_on_cpu(h)) != 0) {
    if (a->release) {
      a->release(a);  // the last node released ends the shared record and its reference
    } else {
      free(shared);
      release_held_export((uintptr_t)h);
    }
    return ENOMEM;
  }
  if (gda_schema_copy(&h->schema->tmpl, schema_out) != 0) {
    a->release(a);
    return ENOMEM;
  }
  if (is_device) {
    // the producer's event, alive as long as the record: readers of the
    // export wait on it as we would have
    struct ArrowDeviceArray* d = array_out;
    d->device_id = h->array.device_id;
    d->device_type = h->array.device_type;
    d->sync_event = h->array.sync_event;
    memset(d->reserved, 0, sizeof(d->reserved));
  }
  return 0;
}

gda_stream_read gda_stream_source_next(gda_stream_source* src) {
  src->read = 1;
  return gda_stream_read_next(src->plain, src->dev, src->held, src->dev_type);
}
