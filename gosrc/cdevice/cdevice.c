#include "cdevice.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include "_cgo_export.h"

gda_release_guard_fn gda_release_guard;
void gda_set_release_guard(gda_release_guard_fn guard) { __atomic_store_n(&gda_release_guard, guard, __ATOMIC_RELEASE); }

// ---------------------------------------------------------------- schemas
// An exported schema node owns format, name, metadata, its children array
// (pointers to separately allocated children) and its dictionary.

static void gda_schema_release(struct ArrowSchema* s);

// Roots of exported copies carry this marker in private_data so that live
// exports can be counted (templates and children are not counted).
static char root_marker;
static _Atomic int64_t live_schemas;

int gda_schema_node_init(struct ArrowSchema* s, int64_t n_children) {
  memset(s, 0, sizeof(*s));
  s->release = gda_schema_release;
  if (n_children > 0) {
    s->children = calloc((size_t)n_children, sizeof(struct ArrowSchema*));
    if (!s->children) return ENOMEM;
    for (int64_t i = 0; i < n_children; i++) {
      s->children[i] = calloc(1, sizeof(struct ArrowSchema));
      if (!s->children[i]) {
        s->n_children = i;
        return ENOMEM;
      }
      // a child is valid (releasable) from the start, empty until filled
      s->children[i]->release = gda_schema_release;
    }
  }
  s->n_children = n_children;
  return 0;
}

struct ArrowSchema* gda_schema_node_new(int64_t n_children) {
  struct ArrowSchema* s = malloc(sizeof(struct ArrowSchema));
  if (!s) return NULL;
  if (gda_schema_node_init(s, n_children) != 0) {
    gda_schema_release(s);
    free(s);
    return NULL;
  }
  return s;
}

static void gda_schema_release(struct ArrowSchema* s) {
  if (!s || !s->release) return;
  if (s->private_data == &root_marker) atomic_fetch_sub(&live_schemas, 1);
  free((void*)s->format);
  free((void*)s->name);
  free((void*)s->metadata);
  for (int64_t i = 0; i < s->n_children; i++) {
    struct ArrowSchema* c = s->children[i];
    if (c) {
      if (c->release) c->release(c);
      free(c);
    }
  }
  free(s->children);
  if (s->dictionary) {
    if (s->dictionary->release) s->dictionary->release(s->dictionary);
    free(s->dictionary);
  }
  s->release = NULL;
}

void gda_schema_free_template(struct ArrowSchema* s) {
  if (!s) return;
  gda_schema_release(s);
  free(s);
}

// --------------------------------------------------------- metadata blobs
// Limits as in the Go import (schema.go): beyond them the import cache does
// not hash a tree, and the full import reports the problem.
#define CACHE_MAX_DEPTH 256
#define CACHE_MAX_CHILDREN (1 << 20)
#define CACHE_MAX_METADATA_ENTRIES (1 << 20)
#define CACHE_MAX_METADATA_LENGTH (1 << 28)
// Budgets of a whole walk (maxSchemaNodes, maxSchemaMetadataBytes): aliased
// children make a small DAG of pointers walk as a huge tree.
#define CACHE_MAX_NODES (1 << 20)
#define CACHE_MAX_METADATA_BYTES (1 << 28)

// The size of a metadata blob within the limits, -1 beyond them; 0 for NULL
// and for a blob of no entries (which imports as no metadata).
static int64_t bounded_metadata_size(const char* m) {
  if (!m) return 0;
  int32_t n;
  memcpy(&n, m, 4);
  if (n < 0 || n > CACHE_MAX_METADATA_ENTRIES) return -1;
  if (n == 0) return 0;
  int64_t size = 4;
  for (int32_t i = 0; i < 2 * n; i++) {
    int32_t len;
    memcpy(&len, m + size, 4);
    if (len < 0 || len > CACHE_MAX_METADATA_LENGTH) return -1;
    size += 4 + (int64_t)len;
  }
  return size;
}

int64_t gda_schema_template_bytes(const struct ArrowSchema* s) {
  int64_t n = (int64_t)sizeof(*s) + (int64_t)strlen(s->format) + 1 + (s->name ? (int64_t)strlen(s->name) + 1 : 0) +
              bounded_metadata_size(s->metadata) + s->n_children * (int64_t)sizeof(struct ArrowSchema*);
  for (int64_t i = 0; i < s->n_children; i++) n += gda_schema_template_bytes(s->children[i]);
  if (s->dictionary) n += gda_schema_template_bytes(s->dictionary);
  return n;
}

static char* dup_bytes(const char* src, size_t n) {
  char* d = malloc(n ? n : 1);
  if (d && n) memcpy(d, src, n);
  return d;
}

int64_t gda_live_exported_schemas(void) { return atomic_load(&live_schemas); }

static int schema_copy(const struct ArrowSchema* src, struct ArrowSchema* dst);

int gda_schema_copy_uncounted(const struct ArrowSchema* src, struct ArrowSchema* dst) { return schema_copy(src, dst); }

int gda_schema_copy(const struct ArrowSchema* src, struct ArrowSchema* dst) {
  int rc = schema_copy(src, dst);
  if (rc == 0) {
    dst->private_data = &root_marker;
    atomic_fetch_add(&live_schemas, 1);
  }
  return rc;
}

static int schema_copy(const struct ArrowSchema* src, struct ArrowSchema* dst) {
  if (gda_schema_node_init(dst, src->n_children) != 0) goto fail;
  dst->flags = src->flags;
  if (src->format && !(dst->format = dup_bytes(src->format, strlen(src->format) + 1))) goto fail;
  if (src->name && !(dst->name = dup_bytes(src->name, strlen(src->name) + 1))) goto fail;
  // a template's metadata is within the limits and never an empty blob (Go encodes no entries as NULL)
  if (src->metadata && !(dst->metadata = dup_bytes(src->metadata, (size_t)bounded_metadata_size(src->metadata))))
    goto fail;
  for (int64_t i = 0; i < src->n_children; i++) {
    if (schema_copy(src->children[i], dst->children[i]) != 0) goto fail;
  }
  if (src->dictionary) {
    dst->dictionary = calloc(1, sizeof(struct ArrowSchema));
    if (!dst->dictionary || schema_copy(src->dictionary, dst->dictionary) != 0) goto fail;
  }
  return 0;
fail:
  if (dst->release) dst->release(dst);
  return ENOMEM;
}

// ------------------------------------------------------ the import cache

// An FNV-style hash taken 8 bytes at a time (imports hash wide schemas once
// per exchange; lookups compare the trees, so collisions are harmless).
static uint64_t mix(uint64_t h, uint64_t w) {
  h = (h ^ w) * 1099511628211ULL;
  return h ^ (h >> 29);
}

static uint64_t fnv(uint64_t h, const void* p, size_t n) {
  const unsigned char* b = p;
  for (; n >= 8; b += 8, n -= 8) {
    uint64_t w;
    memcpy(&w, b, 8);
    h = mix(h, w);
  }
  uint64_t tail = (uint64_t)n << 56;  // the length keeps "a" and "a\0" apart
  memcpy(&tail, b, n);
  return mix(h, tail);
}

typedef struct {
  int64_t nodes, metadata_bytes;
} walk_budget;

static uint64_t schema_hash(const struct ArrowSchema* s, int depth, uint64_t h, walk_budget* left) {
  if (depth > CACHE_MAX_DEPTH || !s->format || (depth > 0 && !s->release)) return 0;
  if (--left->nodes < 0) return 0;
  if (s->n_children < 0 || s->n_children > CACHE_MAX_CHILDREN || (s->n_children > 0 && !s->children)) return 0;
  int64_t md = bounded_metadata_size(s->metadata);
  if (md < 0 || (left->metadata_bytes -= md) < 0) return 0;
  h = fnv(h, s->format, strlen(s->format) + 1);
  h = s->name ? fnv(h, s->name, strlen(s->name) + 1) : fnv(h, "", 1);
  h = mix(mix(h, (uint64_t)s->flags), (uint64_t)md);
  if (md) h = fnv(h, s->metadata, (size_t)md);
  h = mix(h, (uint64_t)s->n_children);
  for (int64_t i = 0; i < s->n_children; i++) {
    if (!s->children[i] || !(h = schema_hash(s->children[i], depth + 1, h, left))) return 0;
  }
  if (s->dictionary) {
    h = mix(h, 'd');
    if (!(h = schema_hash(s->dictionary, depth + 1, h, left))) return 0;
  }
  return h ? h : 1;
}

uint64_t gda_schema_hash(const struct ArrowSchema* s) {
  walk_budget left = {CACHE_MAX_NODES, CACHE_MAX_METADATA_BYTES};
  return schema_hash(s, 0, 14695981039346656037ULL, &left);
}

// Equal strings, NULL being "". Inline: names and formats are a few bytes,
// and a wide schema compares thousands of them per import.
static int same_string(const char* a, const char* b) {
  if (!a) a = "";
  if (!b) b = "";
  while (*a && *a == *b) a++, b++;
  return *a == *b;
}

// Whether the foreign blob s encodes the same metadata as the template's
// blob t (NULL and no entries alike). s is read only as far as it matches
// t, so a lookup never walks more metadata than the template holds.
static int metadata_matches(const char* s, const char* t) {
  int32_t ns = 0, nt = 0;
  if (s) memcpy(&ns, s, 4);
  if (t) memcpy(&nt, t, 4);
  if (ns != nt) return 0;
  size_t pos = 4;
  for (int32_t i = 0; i < 2 * nt; i++) {
    int32_t ls, lt;
    memcpy(&ls, s + pos, 4);
    memcpy(&lt, t + pos, 4);
    if (ls != lt) return 0;
    pos += 4;
    if (memcmp(s + pos, t + pos, (size_t)lt) != 0) return 0;
    pos += (size_t)lt;
  }
  return 1;
}

// One node of s against one node of t, children and dictionary aside.
static inline int schema_node_matches(const struct ArrowSchema* s, const struct ArrowSchema* t) {
  if (!same_string(s->format, t->format) || !same_string(s->name, t->name) || s->flags != t->flags ||
      s->n_children != t->n_children || !s->dictionary != !t->dictionary || (s->n_children > 0 && !s->children))
    return 0;
  return (!s->metadata && !t->metadata) || metadata_matches(s->metadata, t->metadata);
}

int gda_schema_matches(const struct ArrowSchema* s, const struct ArrowSchema* t) {
  // t is a template, well-formed and bounded; s is checked on the way, so
  // it need not have been hashed
  if (!schema_node_matches(s, t)) return 0;
  for (int64_t i = 0; i < s->n_children; i++) {
    const struct ArrowSchema* c = s->children[i];
    const struct ArrowSchema* tc = t->children[i];
    if (!c || !c->release) return 0;
    // a leaf (the columns of a wide batch) is compared here, not in a call
    if (tc->n_children == 0 && !tc->dictionary ? !schema_node_matches(c, tc) : !gda_schema_matches(c, tc)) return 0;
  }
  return !s->dictionary || (s->dictionary->release && gda_schema_matches(s->dictionary, t->dictionary));
}

// ----------------------------------------------------------------- arrays

struct gda_shared {
  _Atomic int64_t refs;
  uintptr_t handle;
  void (*release)(uintptr_t handle);  // called once, when the last node is released
};

static _Atomic int64_t live_nodes;

int64_t gda_live_exported_nodes(void) { return atomic_load(&live_nodes); }

static void release_go_export(uintptr_t handle) { godevarrowReleaseExport(handle); }

gda_shared* gda_shared_new_with(uintptr_t handle, void (*release)(uintptr_t)) {
  gda_shared* s = malloc(sizeof(gda_shared));
  if (!s) return NULL;
  atomic_init(&s->refs, 0);
  s->handle = handle;
  s->release = release;
  return s;
}

gda_shared* gda_shared_new(uintptr_t handle) { return gda_shared_new_with(handle, release_go_export); }

static void gda_shared_unref(gda_shared* s) {
  if (atomic_fetch_sub(&s->refs, 1) == 1) {
    uintptr_t h = s->handle;
    void (*release)(uintptr_t) = s->release;
    free(s);
    release(h);
  }
}

typedef struct {
  gda_shared* shared;
  int64_t n_children;
  int has_dictionary;
  // followed by: const void* buffers[n_buffers]; struct ArrowArray* children[n_children];
  //              struct ArrowArray child_structs[n_children (+1 for the dictionary)];
} gda_node;

static void gda_array_release(struct ArrowArray* a) {
  if (!a || !a->release) return;
  gda_node* node = a->private_data;
  for (int64_t i = 0; i < a->n_children; i++) {
    struct ArrowArray* c = a->children[i];
    if (c->release) c->release(c);
  }
  if (a->dictionary && a->dictionary->release) a->dictionary->release(a->dictionary);
  gda_shared* shared = node->shared;
  free(node);
  a->release = NULL;
  atomic_fetch_sub(&live_nodes, 1);
  gda_shared_unref(shared);
}

const void** gda_array_node_init(struct ArrowArray* a, gda_shared* shared, int64_t n_buffers,
                                 int64_t n_children, int has_dictionary) {
  size_t n_structs = (size_t)n_children + (has_dictionary ? 1 : 0);
  size_t size = sizeof(gda_node) + (size_t)n_buffers * sizeof(void*) +
                (size_t)n_children * sizeof(struct ArrowArray*) + n_structs * sizeof(struct ArrowArray);
  gda_node* node = calloc(1, size);
  if (!node) return NULL;
  node->shared = shared;
  node->n_children = n_children;
  node->has_dictionary = has_dictionary;
  const void** buffers = (const void**)(node + 1);
  struct ArrowArray** children = (struct ArrowArray**)(buffers + n_buffers);
  struct ArrowArray* structs = (struct ArrowArray*)(children + n_children);
  for (int64_t i = 0; i < n_children; i++) children[i] = &structs[i];
  memset(a, 0, sizeof(*a));
  a->n_buffers = n_buffers;
  a->n_children = n_children;
  a->buffers = n_buffers ? buffers : NULL;
  a->children = n_children ? children : NULL;
  a->dictionary = has_dictionary ? &structs[n_children] : NULL;
  a->private_data = node;
  a->release = gda_array_release;
  atomic_fetch_add(&shared->refs, 1);
  atomic_fetch_add(&live_nodes, 1);
  return buffers;
}

static const uint64_t zero_block[GDA_ZERO_BLOCK_SIZE / 8];
const void* gda_zero_block(void) { return zero_block; }

// ---------------------------------------------------------------- streams

typedef struct {
  uintptr_t handle;
} gda_stream_private;

static int gda_stream_get_schema(struct ArrowArrayStream* s, struct ArrowSchema* out) {
  return godevarrowStreamGetSchema(((gda_stream_private*)s->private_data)->handle, out);
}
static int gda_stream_get_next(struct ArrowArrayStream* s, struct ArrowArray* out) {
  return godevarrowStreamGetNext(((gda_stream_private*)s->private_data)->handle, out, NULL);
}
static const char* gda_stream_get_last_error(struct ArrowArrayStream* s) {
  return godevarrowStreamGetLastError(((gda_stream_private*)s->private_data)->handle);
}
static void gda_stream_release(struct ArrowArrayStream* s) {
  if (!s || !s->release) return;
  gda_stream_private* p = s->private_data;
  uintptr_t h = p->handle;
  free(p);
  s->release = NULL;
  godevarrowStreamRelease(h);
}

int gda_stream_init(struct ArrowArrayStream* s, uintptr_t handle) {
  gda_stream_private* p = malloc(sizeof(gda_stream_private));
  if (!p) return ENOMEM;
  p->handle = handle;
  s->get_schema = gda_stream_get_schema;
  s->get_next = gda_stream_get_next;
  s->get_last_error = gda_stream_get_last_error;
  s->release = gda_stream_release;
  s->private_data = p;
  return 0;
}

static int gda_device_stream_get_schema(struct ArrowDeviceArrayStream* s, struct ArrowSchema* out) {
  return godevarrowStreamGetSchema(((gda_stream_private*)s->private_data)->handle, out);
}
static int gda_device_stream_get_next(struct ArrowDeviceArrayStream* s, struct ArrowDeviceArray* out) {
  return godevarrowStreamGetNext(((gda_stream_private*)s->private_data)->handle, NULL, out);
}
static const char* gda_device_stream_get_last_error(struct ArrowDeviceArrayStream* s) {
  return godevarrowStreamGetLastError(((gda_stream_private*)s->private_data)->handle);
}
static void gda_device_stream_release(struct ArrowDeviceArrayStream* s) {
  if (!s || !s->release) return;
  gda_stream_private* p = s->private_data;
  uintptr_t h = p->handle;
  free(p);
  s->release = NULL;
  godevarrowStreamRelease(h);
}

int gda_device_stream_init(struct ArrowDeviceArrayStream* s, uintptr_t handle, ArrowDeviceType device_type) {
  gda_stream_private* p = malloc(sizeof(gda_stream_private));
  if (!p) return ENOMEM;
  p->handle = handle;
  s->device_type = device_type;
  s->get_schema = gda_device_stream_get_schema;
  s->get_next = gda_device_stream_get_next;
  s->get_last_error = gda_device_stream_get_last_error;
  s->release = gda_device_stream_release;
  s->private_data = p;
  return 0;
}

// ------------------------------------------- a plain view of a device stream

typedef struct {
  struct ArrowDeviceArrayStream dev;
  const char* error;  // our own get_next error, or NULL: ask the producer
} gda_plain_over_device;

static int plain_over_device_get_schema(struct ArrowArrayStream* s, struct ArrowSchema* out) {
  gda_plain_over_device* p = s->private_data;
  p->error = NULL;
  return p->dev.get_schema(&p->dev, out);
}

static int plain_over_device_get_next(struct ArrowArrayStream* s, struct ArrowArray* out) {
  gda_plain_over_device* p = s->private_data;
  p->error = NULL;
  struct ArrowDeviceArray a;
  memset(&a, 0, sizeof(a));
  int rc = p->dev.get_next(&p->dev, &a);
  if (rc != 0) return rc;
  if (a.array.release && (a.device_type != ARROW_DEVICE_CPU || a.sync_event != NULL)) {
    a.array.release(&a.array);
    p->error = a.device_type != ARROW_DEVICE_CPU
                   ? "the producer's CPU device stream returned an array on another device"
                   : "the producer's CPU device stream returned an array with a sync event";
    return EINVAL;
  }
  *out = a.array;  // moved; a released (end-of-stream) array stays released
  return 0;
}

static const char* plain_over_device_get_last_error(struct ArrowArrayStream* s) {
  gda_plain_over_device* p = s->private_data;
  return p->error ? p->error : p->dev.get_last_error(&p->dev);
}

static void plain_over_device_release(struct ArrowArrayStream* s) {
  if (!s || !s->release) return;
  gda_plain_over_device* p = s->private_data;
  if (p->dev.release) p->dev.release(&p->dev);
  free(p);
  s->release = NULL;
}

int gda_plain_stream_over_device_stream(struct ArrowDeviceArrayStream* dev, struct ArrowArrayStream* out) {
  gda_plain_over_device* p = malloc(sizeof(*p));
  if (!p) return ENOMEM;
  p->dev = *dev;
  p->error = NULL;
  dev->release = NULL;
  out->get_schema = plain_over_device_get_schema;
  out->get_next = plain_over_device_get_next;
  out->get_last_error = plain_over_device_get_last_error;
  out->release = plain_over_device_release;
  out->private_data = p;
  return 0;
}

void gda_borrowed_schema_release(struct ArrowSchema* s) { s->release = NULL; }
