#include "gda.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include "_cgo_export.h"

// ----------------------------------------------------------------- arrays

struct gda_shared {
  _Atomic int64_t refs;
  uintptr_t handle;
  void (*release)(uintptr_t handle);  // called once, when the last node is released
};

static _Atomic int64_t live_nodes;

int64_t gda_live_exported_nodes(void) { return atomic_load(&live_nodes); }

static void release_go_export(uintptr_t handle) { gdaReleaseExport(handle); }

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

