// Builders of C Data Interface structs from fuzz bytes, for the fuzz targets
// in tests_go. They play an honest producer with hostile contents: every
// buffer really holds the bytes its declared length and offset need, so a
// crash is godevarrow's fault; the values (offsets, indices, counts, flags,
// formats) are whatever the fuzzer chose.
#include "cfuzz.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
  const unsigned char* p;
  size_t n, i;
} src;

static unsigned next(src* s) { return s->i < s->n ? s->p[s->i++] : 0; }

static long long releases;
long long cfz_releases(void) { return releases; }
void cfz_reset(void) { releases = 0; }

// ----------------------------------------------------------------- schemas

static const char* formats[] = {
    "n", "b", "c", "C", "s", "S", "i", "I", "l", "L", "e", "f", "g", "z", "Z", "u", "U", "vz", "vu",
    "d:10,2", "d:38,10,256", "d:9,2,32", "w:4", "w:", "tdD", "tts", "tsu:UTC", "tDn", "tin", "+l", "+L",
    "+vl", "+w:2", "+w:0", "+s", "+m", "+ud:0,1", "+us:0,5", "+r", "+ud:", "zz", "", "d:x", "+w:-1",
};
#define NFORMATS (sizeof(formats) / sizeof(formats[0]))

static void free_schema(struct ArrowSchema* s) {
  for (int64_t i = 0; i < s->n_children; i++) {
    free_schema(s->children[i]);
    free(s->children[i]);
  }
  free(s->children);
  if (s->dictionary) {
    free_schema(s->dictionary);
    free(s->dictionary);
  }
  free((void*)s->format);
  free((void*)s->name);
  free((void*)s->metadata);
}

static void child_schema_release(struct ArrowSchema* s) { s->release = NULL; }
static void root_schema_release(struct ArrowSchema* s) {
  free_schema(s);
  s->release = NULL;
  releases++;
}

static char* dup_bytes(src* s, unsigned n) {
  char* out = malloc(n + 1);
  for (unsigned i = 0; i < n; i++) out[i] = (char)('a' + next(s) % 26);
  out[n] = 0;
  return out;
}

static void build_schema(src* s, struct ArrowSchema* out, int depth) {
  memset(out, 0, sizeof(*out));
  out->format = strdup(formats[next(s) % NFORMATS]);
  out->name = dup_bytes(s, next(s) % 4);
  out->flags = next(s) & 7;
  if (next(s) % 4 == 0) {
    // well-formed metadata: int32 count, then length-prefixed keys and values
    int32_t pairs = next(s) % 3;
    size_t size = 4;
    unsigned char* md = malloc(4 + pairs * (8 + 8));
    memcpy(md, &pairs, 4);
    for (int32_t i = 0; i < pairs; i++) {
      for (int kv = 0; kv < 2; kv++) {
        int32_t l = next(s) % 5;
        memcpy(md + size, &l, 4);
        size += 4;
        for (int32_t j = 0; j < l; j++) md[size++] = (unsigned char)next(s);
      }
    }
    out->metadata = (const char*)md;
  }
  int nested = out->format[0] == '+';
  out->n_children = nested && depth < 4 ? next(s) % 4 : 0;
  if (out->n_children) {
    out->children = calloc(out->n_children, sizeof(struct ArrowSchema*));
    for (int64_t i = 0; i < out->n_children; i++) {
      out->children[i] = malloc(sizeof(struct ArrowSchema));
      build_schema(s, out->children[i], depth + 1);
    }
  }
  if (depth < 3 && next(s) % 8 == 0) {
    out->dictionary = malloc(sizeof(struct ArrowSchema));
    build_schema(s, out->dictionary, depth + 1);
  }
  out->release = depth == 0 ? root_schema_release : child_schema_release;
}

void cfz_build_schema(const unsigned char* data, size_t n, struct ArrowSchema* out) {
  src s = {data, n, 0};
  build_schema(&s, out, 0);
}

// ------------------------------------------------------------------ arrays
// Shapes with a known schema (built by cfz_shape_schema) and fuzzed arrays.

typedef struct node {
  void** allocs;
  int n_allocs;
} node;

static void* track(node* nd, size_t size) {
  nd->allocs = realloc(nd->allocs, sizeof(void*) * (nd->n_allocs + 1));
  void* p = calloc(1, size ? size : 1);
  nd->allocs[nd->n_allocs++] = p;
  return p;
}

static void free_array(struct ArrowArray* a) {
  node* nd = a->private_data;
  for (int64_t i = 0; i < a->n_children; i++) {
    free_array(a->children[i]);
    free(a->children[i]);
  }
  free(a->children);
  if (a->dictionary) {
    free_array(a->dictionary);
    free(a->dictionary);
  }
  for (int i = 0; i < nd->n_allocs; i++) free(nd->allocs[i]);
  free(nd->allocs);
  free(nd);
  free(a->buffers);
}

static void child_array_release(struct ArrowArray* a) { a->release = NULL; }
static void root_array_release(struct ArrowArray* a) {
  free_array(a);
  a->release = NULL;
  releases++;
}

static void fill(src* s, unsigned char* p, size_t n) {
  for (size_t i = 0; i < n; i++) p[i] = (unsigned char)next(s);
}

static void fill_offsets(src* s, int32_t* p, size_t n, int lo, int hi) {
  for (size_t i = 0; i < n; i++) p[i] = lo + (int)(next(s) % (unsigned)(hi - lo + 1));
}

enum { SHAPE_INT32, SHAPE_UTF8, SHAPE_BOOL, SHAPE_LIST, SHAPE_STRUCT, SHAPE_DICT, SHAPE_FIXED_LIST, SHAPE_SPARSE, NSHAPES };

static void build_array(src* s, int shape, struct ArrowArray* a, int root);

static void base(src* s, struct ArrowArray* a, node* nd, int nbuf) {
  a->length = next(s) % 16;
  a->offset = next(s) % 8;
  a->null_count = (int64_t)(next(s) % 20) - 2;
  a->n_buffers = nbuf;
  a->buffers = calloc(nbuf ? nbuf : 1, sizeof(void*));
  a->private_data = nd;
  size_t bits = (size_t)(a->offset + a->length + 7) / 8;
  if (nbuf > 0 && next(s) % 2) {
    a->buffers[0] = track(nd, bits);
    fill(s, (unsigned char*)a->buffers[0], bits);
  }
}

static void build_array(src* s, int shape, struct ArrowArray* a, int root) {
  memset(a, 0, sizeof(*a));
  node* nd = calloc(1, sizeof(node));
  size_t end;
  switch (shape) {
    case SHAPE_INT32:
      base(s, a, nd, 2);
      end = a->offset + a->length;
      a->buffers[1] = track(nd, end * 4);
      fill(s, (unsigned char*)a->buffers[1], end * 4);
      break;
    case SHAPE_BOOL:
      base(s, a, nd, 2);
      end = a->offset + a->length;
      a->buffers[1] = track(nd, (end + 7) / 8);
      fill(s, (unsigned char*)a->buffers[1], (end + 7) / 8);
      break;
    case SHAPE_UTF8:
      base(s, a, nd, 3);
      end = a->offset + a->length;
      a->buffers[1] = track(nd, (end + 1) * 4);
      fill_offsets(s, (int32_t*)a->buffers[1], end + 1, -3, 64);
      a->buffers[2] = track(nd, 64);
      fill(s, (unsigned char*)a->buffers[2], 64);
      break;
    case SHAPE_LIST:
    case SHAPE_FIXED_LIST:
    case SHAPE_STRUCT:
    case SHAPE_SPARSE: {
      int is_list = shape == SHAPE_LIST;
      base(s, a, nd, shape == SHAPE_SPARSE ? 1 : is_list ? 2 : 1);
      end = a->offset + a->length;
      if (shape == SHAPE_SPARSE) {
        a->buffers[0] = track(nd, end);
        for (size_t i = 0; i < end; i++) ((unsigned char*)a->buffers[0])[i] = (unsigned char)(next(s) % 8);
      }
      if (is_list) {
        a->buffers[1] = track(nd, (end + 1) * 4);
        fill_offsets(s, (int32_t*)a->buffers[1], end + 1, -2, 24);
      }
      a->n_children = shape == SHAPE_STRUCT || shape == SHAPE_SPARSE ? 2 : 1;
      a->children = calloc(a->n_children, sizeof(struct ArrowArray*));
      for (int64_t i = 0; i < a->n_children; i++) {
        a->children[i] = malloc(sizeof(struct ArrowArray));
        build_array(s, i == 1 ? SHAPE_UTF8 : SHAPE_INT32, a->children[i], 0);
      }
      break;
    }
    case SHAPE_DICT:
      base(s, a, nd, 2);
      end = a->offset + a->length;
      a->buffers[1] = track(nd, end * 4);
      fill_offsets(s, (int32_t*)a->buffers[1], end, -2, 12);
      a->dictionary = malloc(sizeof(struct ArrowArray));
      build_array(s, SHAPE_UTF8, a->dictionary, 0);
      break;
  }
  a->release = root ? root_array_release : child_array_release;
}

int cfz_build_array(const unsigned char* data, size_t n, struct ArrowSchema* schema, struct ArrowArray* out) {
  src s = {data, n, 0};
  int shape = (int)(next(&s) % NSHAPES);
  memset(schema, 0, sizeof(*schema));
  static const char* shape_formats[] = {"i", "u", "b", "+l", "+s", "i", "+w:2", "+us:0,1"};
  // the schema: children/dictionary as the shape needs
  schema->format = strdup(shape_formats[shape]);
  schema->name = strdup("x");
  schema->flags = 2;
  int kids = shape == SHAPE_LIST || shape == SHAPE_FIXED_LIST ? 1 : shape == SHAPE_STRUCT || shape == SHAPE_SPARSE ? 2 : 0;
  schema->n_children = kids;
  if (kids) {
    schema->children = calloc(kids, sizeof(struct ArrowSchema*));
    for (int i = 0; i < kids; i++) {
      struct ArrowSchema* c = calloc(1, sizeof(struct ArrowSchema));
      c->format = strdup(i == 1 ? "u" : "i");
      c->name = strdup(i == 1 ? "b" : "a");
      c->flags = 2;
      c->release = child_schema_release;
      schema->children[i] = c;
    }
  }
  if (shape == SHAPE_DICT) {
    struct ArrowSchema* d = calloc(1, sizeof(struct ArrowSchema));
    d->format = strdup("u");
    d->name = strdup("");
    d->flags = 2;
    d->release = child_schema_release;
    schema->dictionary = d;
  }
  schema->release = root_schema_release;
  build_array(&s, shape, out, 1);
  return shape;
}
