#include "gda.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>

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

void gda_borrowed_schema_release(struct ArrowSchema* s) { s->release = NULL; }
