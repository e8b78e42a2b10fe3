// A structure-aware builder for the fuzz target FuzzHostileTree: a schema
// and an array of any layout, built together from fuzz bytes. Formats,
// lengths, offsets, null counts, bitmaps, offsets and sizes buffers, type
// ids, run ends, view records, n_buffers and aliased children all come from
// the bytes; the producer stays honest about memory (every buffer holds
// what its declared lengths and its own offsets or sizes reach), so any
// crash is the consumer's fault. Aliased children make frees per node
// impossible: everything lives in an arena freed by cfz_tree_free.
#include <stdlib.h>
#include <string.h>

#include "cfuzz.h"

typedef struct {
  const unsigned char* p;
  size_t n, i;
} bytes_src;

static unsigned take(bytes_src* s) { return s->i < s->n ? s->p[s->i++] : 0; }

static void** arena;
static size_t arena_len, arena_cap;
static long long tree_releases;
static int map_entries;  // the next struct built is a map's entries: two children

static void* alloc(size_t n) {
  if (arena_len == arena_cap) {
    arena_cap = arena_cap ? 2 * arena_cap : 64;
    arena = realloc(arena, arena_cap * sizeof(void*));
  }
  void* p = calloc(1, n ? n : 1);
  arena[arena_len++] = p;
  return p;
}

static char* str(const char* s) {
  char* out = alloc(strlen(s) + 1);
  strcpy(out, s);
  return out;
}

void cfz_tree_free(void) {
  for (size_t i = 0; i < arena_len; i++) free(arena[i]);
  free(arena);
  arena = NULL;
  arena_len = arena_cap = 0;
}

long long cfz_tree_releases(void) { return tree_releases; }

static void child_schema_release(struct ArrowSchema* s) { s->release = NULL; }
static void root_schema_release(struct ArrowSchema* s) {
  s->release = NULL;
  tree_releases++;
}
static void child_array_release(struct ArrowArray* a) { a->release = NULL; }
static void root_array_release(struct ArrowArray* a) {
  a->release = NULL;
  tree_releases++;
}

enum {
  K_NULL, K_BOOL, K_INT8, K_INT32, K_INT64, K_FLOAT64, K_FIXED3, K_DECIMAL, K_TIMESTAMP,
  K_UTF8, K_BINARY, K_LARGE_UTF8, K_UTF8_VIEW, K_BINARY_VIEW,
  K_LIST, K_LARGE_LIST, K_LIST_VIEW, K_FIXED_LIST, K_STRUCT, K_MAP, K_SPARSE, K_DENSE, K_REE, K_DICT,
  NKINDS
};
static const char* kind_format[NKINDS] = {
    "n", "b", "c", "i", "l", "g", "w:3", "d:10,2", "tsu:UTC", "u", "z", "U", "vu", "vz",
    "+l", "+L", "+vl", "+w:2", "+s", "+m", "+us:0,1", "+ud:0,1", "+r", "i",
};
static const int kind_width[NKINDS] = {[K_INT8] = 1, [K_INT32] = 4, [K_INT64] = 8, [K_FLOAT64] = 8,
                                       [K_FIXED3] = 3, [K_DECIMAL] = 16, [K_TIMESTAMP] = 8, [K_DICT] = 4};

static void fill(bytes_src* s, void* p, size_t n) {
  for (size_t i = 0; i < n; i++) ((unsigned char*)p)[i] = (unsigned char)take(s);
}

// n+1 offsets of width w, mostly non-decreasing from a small start, at most
// hi; sometimes backwards or negative. Returns the largest.
static int64_t offsets(bytes_src* s, void* p, int w, size_t n, int64_t hi) {
  int64_t cur = take(s) % 3, top = 0;
  for (size_t i = 0; i <= n; i++) {
    unsigned b = take(s);
    if (b % 11 == 0) cur -= b % 4;
    else cur += b % 4;
    if (cur > hi) cur = hi;
    if (w == 4) ((int32_t*)p)[i] = (int32_t)cur;
    else ((int64_t*)p)[i] = cur;
    if (cur > top) top = cur;
  }
  return top;
}

static void build(bytes_src* s, struct ArrowSchema* sc, struct ArrowArray* a, int depth, int64_t want_len, int kind);

static void** pointers(size_t n) { return alloc(n * sizeof(void*)); }

// children of a node: n of them, each with length >= min_len (or fuzzed when
// min_len < 0); the last may alias the first (one struct reached twice).
static void children(bytes_src* s, struct ArrowSchema* sc, struct ArrowArray* a, int depth, int n, int64_t min_len,
                     const int* kinds) {
  sc->n_children = a->n_children = n;
  sc->children = (struct ArrowSchema**)pointers(n);
  a->children = (struct ArrowArray**)pointers(n);
  for (int i = 0; i < n; i++) {
    if (i > 0 && kinds[i] == kinds[0] && take(s) % 4 == 0) {
      sc->children[i] = sc->children[0];
      a->children[i] = a->children[0];
      continue;
    }
    sc->children[i] = alloc(sizeof(struct ArrowSchema));
    a->children[i] = alloc(sizeof(struct ArrowArray));
    int64_t len = min_len < 0 ? -1 : min_len + take(s) % 3;
    build(s, sc->children[i], a->children[i], depth + 1, len, kinds[i]);
  }
}

static int simple_kind(bytes_src* s) {
  static const int simple[] = {K_INT32, K_UTF8, K_BOOL, K_INT64, K_UTF8_VIEW, K_NULL, K_FLOAT64, K_BINARY};
  return simple[take(s) % (sizeof(simple) / sizeof(simple[0]))];
}

static int any_kind(bytes_src* s, int depth) { return depth >= 3 ? simple_kind(s) : (int)(take(s) % NKINDS); }

static void build(bytes_src* s, struct ArrowSchema* sc, struct ArrowArray* a, int depth, int64_t want_len, int kind) {
  memset(sc, 0, sizeof(*sc));
  memset(a, 0, sizeof(*a));
  sc->format = str(kind_format[kind]);
  sc->name = str(depth ? "c" : "root");
  sc->flags = 2;
  sc->release = depth ? child_schema_release : root_schema_release;
  a->release = depth ? child_array_release : root_array_release;

  int64_t len = want_len >= 0 ? want_len : take(s) % 10;
  int64_t off = take(s) % 4;
  int64_t end = off + len;
  a->length = len;
  a->offset = off;
  unsigned nc = take(s);
  a->null_count = nc % 5 == 0 ? -1 : (int64_t)(nc % (unsigned)(len + 2)) - (nc % 7 == 0);

  int nbuf = 0;
  void* bufs[8] = {0};
  size_t bits = (size_t)(end + 7) / 8;
  int has_validity = kind != K_NULL && kind != K_SPARSE && kind != K_DENSE && kind != K_REE;
  if (has_validity) {
    unsigned v = take(s) % 4;
    if (v) {
      bufs[0] = alloc(bits);
      if (v == 1) memset(bufs[0], 0xff, bits);  // all valid, null count perhaps unknown
      else fill(s, bufs[0], bits);
    }
  }
  switch (kind) {
    case K_NULL:
      break;
    case K_BOOL:
      nbuf = 2;
      fill(s, bufs[1] = alloc(bits), bits);
      break;
    case K_INT8: case K_INT32: case K_INT64: case K_FLOAT64: case K_FIXED3: case K_DECIMAL: case K_TIMESTAMP:
      nbuf = 2;
      fill(s, bufs[1] = alloc((size_t)end * kind_width[kind]), (size_t)end * kind_width[kind]);
      break;
    case K_UTF8: case K_BINARY: case K_LARGE_UTF8: {
      int w = kind == K_LARGE_UTF8 ? 8 : 4;
      nbuf = 3;
      bufs[1] = alloc((size_t)(end + 1) * w);
      int64_t top = offsets(s, bufs[1], w, (size_t)end, 40);
      bufs[2] = alloc((size_t)top + 1);
      for (int64_t i = 0; i <= top; i++) {
        unsigned b = take(s);
        ((unsigned char*)bufs[2])[i] = b % 13 == 0 ? (unsigned char)b : (unsigned char)('a' + b % 26);
      }
      break;
    }
    case K_UTF8_VIEW: case K_BINARY_VIEW: {
      int nvar = take(s) % 3;
      nbuf = 3 + nvar;
      int64_t* sizes = alloc(8 * (size_t)(nvar ? nvar : 1));
      for (int k = 0; k < nvar; k++) {
        sizes[k] = take(s) % 40;
        bufs[2 + k] = alloc((size_t)sizes[k]);
        for (int64_t i = 0; i < sizes[k]; i++) ((unsigned char*)bufs[2 + k])[i] = (unsigned char)('a' + take(s) % 26);
      }
      bufs[2 + nvar] = sizes;
      unsigned char* views = bufs[1] = alloc((size_t)end * 16);
      for (int64_t i = 0; i < end; i++) {
        unsigned char* v = views + 16 * i;
        int32_t l = (int32_t)(take(s) % 24) - (take(s) % 17 == 0);
        memcpy(v, &l, 4);
        if (l <= 12) {
          for (int j = 0; j < l && j < 12; j++) v[4 + j] = (unsigned char)('a' + take(s) % 26);
        } else {
          int32_t idx = (int32_t)(take(s) % (unsigned)(nvar + 1)), at = (int32_t)(take(s) % 30);
          memcpy(v + 8, &idx, 4);
          memcpy(v + 12, &at, 4);
          if (idx < nvar && at + l <= sizes[idx] && take(s) % 4) memcpy(v + 4, (char*)bufs[2 + idx] + at, 4);
          else fill(s, v + 4, 4);
        }
      }
      break;
    }
    case K_LIST: case K_LARGE_LIST: case K_MAP: {
      int w = kind == K_LARGE_LIST ? 8 : 4;
      nbuf = 2;
      int entries = K_STRUCT;
      int item = any_kind(s, depth);
      map_entries = kind == K_MAP;
      children(s, sc, a, depth, 1, -1, kind == K_MAP ? &entries : &item);
      if (kind == K_MAP) {
        // entries: a struct of a non-nullable key and a value
        struct ArrowSchema* e = sc->children[0];
        e->name = str("entries");
        e->flags = 0;
        e->children[0]->flags = 0;
      }
      bufs[1] = alloc((size_t)(end + 1) * w);
      offsets(s, bufs[1], w, (size_t)end, a->children[0]->length + (take(s) % 9 == 0));
      break;
    }
    case K_LIST_VIEW: {
      nbuf = 3;
      int item = any_kind(s, depth);
      children(s, sc, a, depth, 1, -1, &item);
      int64_t cl = a->children[0]->length;
      int32_t* o = bufs[1] = alloc((size_t)end * 4);
      int32_t* z = bufs[2] = alloc((size_t)end * 4);
      for (int64_t i = 0; i < end; i++) {
        o[i] = (int32_t)(take(s) % (unsigned)(cl + 2));
        z[i] = (int32_t)(take(s) % 4) - (take(s) % 19 == 0);
      }
      break;
    }
    case K_FIXED_LIST: {
      nbuf = 1;
      int item = any_kind(s, depth);
      children(s, sc, a, depth, 1, take(s) % 8 ? 2 * end : -1, &item);
      break;
    }
    case K_STRUCT: {
      nbuf = 1;
      int n = map_entries ? 2 : depth >= 3 ? 1 : 1 + take(s) % 3;
      map_entries = 0;
      int kinds[3];
      for (int i = 0; i < n; i++) kinds[i] = any_kind(s, depth);
      children(s, sc, a, depth, n, take(s) % 8 ? end : -1, kinds);
      break;
    }
    case K_SPARSE: case K_DENSE: {
      nbuf = kind == K_DENSE ? 2 : 1;
      int kinds[2] = {simple_kind(s), simple_kind(s)};
      children(s, sc, a, depth, 2, kind == K_SPARSE && take(s) % 8 ? end : -1, kinds);
      unsigned char* ids = bufs[0] = alloc((size_t)end);
      int32_t* o = kind == K_DENSE ? (bufs[1] = alloc((size_t)end * 4)) : NULL;
      for (int64_t i = 0; i < end; i++) {
        ids[i] = (unsigned char)(take(s) % 5 == 0 ? take(s) % 8 : take(s) % 2);
        if (o) o[i] = (int32_t)(take(s) % (unsigned)(a->children[ids[i] % 2]->length + 1));
      }
      break;
    }
    case K_REE: {
      int kinds[2] = {K_INT32, simple_kind(s)};
      int64_t runs = take(s) % 5;
      sc->n_children = a->n_children = 2;
      sc->children = (struct ArrowSchema**)pointers(2);
      a->children = (struct ArrowArray**)pointers(2);
      for (int i = 0; i < 2; i++) {
        sc->children[i] = alloc(sizeof(struct ArrowSchema));
        a->children[i] = alloc(sizeof(struct ArrowArray));
        build(s, sc->children[i], a->children[i], depth + 1, runs, kinds[i]);
      }
      sc->children[0]->flags = 0;
      sc->children[0]->name = str("run_ends");
      sc->children[1]->name = str("values");
      // run ends: increasing by 0..3 from the child's offset on
      struct ArrowArray* re = a->children[0];
      int32_t* ends = (int32_t*)re->buffers[1];
      int32_t cur = 0;
      for (int64_t i = re->offset; i < re->offset + re->length; i++) ends[i] = cur += (int32_t)(take(s) % 4);
      if (take(s) % 4) a->length = cur > off ? cur - off : 0;
      if (take(s) % 3) a->null_count = 0;
      break;
    }
    case K_DICT: {
      nbuf = 2;
      struct ArrowSchema* ds = sc->dictionary = alloc(sizeof(struct ArrowSchema));
      struct ArrowArray* da = a->dictionary = alloc(sizeof(struct ArrowArray));
      build(s, ds, da, depth + 1, -1, take(s) % 2 ? K_UTF8 : K_INT64);
      int32_t* idx = bufs[1] = alloc((size_t)end * 4);
      for (int64_t i = 0; i < end; i++) idx[i] = (int32_t)(take(s) % (unsigned)(da->length + 2)) - (take(s) % 23 == 0);
      break;
    }
  }
  // now and then a wrong n_buffers (the pointer array stays honest: NULLs).
  // A binary view declaring fewer buffers than it has would be a lie about
  // memory (a data buffer read as the variadic sizes), so views only
  // declare more.
  unsigned lie = take(s);
  int declared = lie % 29 == 0 ? (int)(lie % 5) : nbuf;
  if ((kind == K_UTF8_VIEW || kind == K_BINARY_VIEW) && declared < nbuf) declared = nbuf + (int)(lie % 2);
  int slots = declared > nbuf ? declared : nbuf;
  a->n_buffers = declared;
  a->buffers = (const void**)pointers((size_t)(slots ? slots : 1));
  for (int i = 0; i < nbuf; i++) a->buffers[i] = bufs[i];
}

void cfz_build_tree(const unsigned char* data, size_t n, struct ArrowSchema** schema, struct ArrowArray** array) {
  bytes_src s = {data, n, 0};
  tree_releases = 0;
  map_entries = 0;
  *schema = alloc(sizeof(struct ArrowSchema));
  *array = alloc(sizeof(struct ArrowArray));
  build(&s, *schema, *array, 0, -1, (int)(take(&s) % NKINDS));
}
