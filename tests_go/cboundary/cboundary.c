#define _GNU_SOURCE
#include "cboundary.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Atomic int64_t releases;
int64_t cb_releases(void) { return atomic_load(&releases); }
void cb_reset_releases(void) { atomic_store(&releases, 0); }

static char root_schema;  // private_data of root schemas, whose release counts

// ------------------------------------------------------------------ schemas
// Schema nodes own malloc'd format/name strings and children.

static void release_schema(struct ArrowSchema* s) {
  for (int64_t i = 0; i < s->n_children; i++) {
    if (s->children[i]->release) s->children[i]->release(s->children[i]);
    free(s->children[i]);
  }
  free(s->children);
  if (s->dictionary) {
    if (s->dictionary->release) s->dictionary->release(s->dictionary);
    free(s->dictionary);
  }
  free((void*)s->format);
  free((void*)s->name);
  free((void*)s->metadata);
  int root = s->private_data == &root_schema;
  s->release = NULL;
  if (root) atomic_fetch_add(&releases, 1);
}

static void schema_init(struct ArrowSchema* s, const char* format, const char* name, int64_t flags, int64_t n_children) {
  memset(s, 0, sizeof(*s));
  s->format = format ? strdup(format) : NULL;
  s->name = name ? strdup(name) : NULL;
  s->flags = flags;
  s->n_children = n_children;
  s->children = n_children ? calloc((size_t)n_children, sizeof(struct ArrowSchema*)) : NULL;
  for (int64_t i = 0; i < n_children; i++) s->children[i] = calloc(1, sizeof(struct ArrowSchema));
  s->release = release_schema;
}

// ------------------------------------------------------------------- arrays
// Array nodes own their malloc'd buffers (listed in private_data) and children.

typedef struct {
  void* buffers[4];
  int root;  // only the release of a root counts (children go with it)
} node_private;

static void release_array(struct ArrowArray* a) {
  for (int64_t i = 0; i < a->n_children; i++) {
    if (a->children[i]->release) a->children[i]->release(a->children[i]);
    free(a->children[i]);
  }
  free(a->children);
  if (a->dictionary) {
    if (a->dictionary->release) a->dictionary->release(a->dictionary);
    free(a->dictionary);
  }
  node_private* p = a->private_data;
  for (int i = 0; i < 4; i++) free(p->buffers[i]);
  int root = p->root;
  free(p);
  free(a->buffers);
  a->release = NULL;
  if (root) atomic_fetch_add(&releases, 1);
}

static void array_init(struct ArrowArray* a, int64_t length, int64_t null_count, int64_t offset, int64_t n_buffers,
                       int64_t n_children) {
  memset(a, 0, sizeof(*a));
  a->length = length;
  a->null_count = null_count;
  a->offset = offset;
  a->n_buffers = n_buffers;
  a->buffers = n_buffers ? calloc((size_t)n_buffers, sizeof(void*)) : NULL;
  a->n_children = n_children;
  a->children = n_children ? calloc((size_t)n_children, sizeof(struct ArrowArray*)) : NULL;
  for (int64_t i = 0; i < n_children; i++) a->children[i] = calloc(1, sizeof(struct ArrowArray));
  a->private_data = calloc(1, sizeof(node_private));
  a->release = release_array;
}

static void mark_root(struct ArrowSchema* s, struct ArrowArray* a) {
  s->private_data = &root_schema;
  ((node_private*)a->private_data)->root = 1;
}

static void* own(struct ArrowArray* a, int i, size_t n) {
  void* p = calloc(1, n ? n : 1);
  ((node_private*)a->private_data)->buffers[i] = p;
  a->buffers[i] = p;
  return p;
}

static void set_bit(uint8_t* bits, int64_t i) { bits[i / 8] |= (uint8_t)(1u << (i % 8)); }

void cb_make_int32(struct ArrowSchema* s, struct ArrowArray* a, int64_t n, int64_t offset, int with_nulls) {
  schema_init(s, "i", "ints", ARROW_FLAG_NULLABLE, 0);
  int64_t total = offset + n, nulls = 0;
  array_init(a, n, 0, offset, 2, 0);
  uint8_t* valid = own(a, 0, (size_t)(total + 7) / 8);
  int32_t* v = own(a, 1, (size_t)total * 4);
  for (int64_t i = 0; i < total; i++) {
    v[i] = (int32_t)i;
    if (with_nulls && i % 3 == 2) {
      if (i >= offset) nulls++;
    } else {
      set_bit(valid, i);
    }
  }
  a->null_count = nulls;
  mark_root(s, a);
}

static void fill_utf8(struct ArrowArray* a, const char* const* values, int64_t n) {
  array_init(a, n, 0, 0, 3, 0);
  uint8_t* valid = own(a, 0, (size_t)(n + 7) / 8);
  int32_t* offsets = own(a, 1, (size_t)(n + 1) * 4);
  size_t total = 0;
  for (int64_t i = 0; i < n; i++) total += values[i] ? strlen(values[i]) : 0;
  char* data = own(a, 2, total);
  offsets[0] = 0;
  for (int64_t i = 0; i < n; i++) {
    size_t len = values[i] ? strlen(values[i]) : 0;
    if (values[i]) {
      set_bit(valid, i);
      memcpy(data + offsets[i], values[i], len);
    } else {
      a->null_count++;
    }
    offsets[i + 1] = offsets[i] + (int32_t)len;
  }
}

void cb_make_utf8(struct ArrowSchema* s, struct ArrowArray* a) {
  static const char* const values[] = {"alpha", NULL, "", "delta"};
  schema_init(s, "u", "words", ARROW_FLAG_NULLABLE, 0);
  fill_utf8(a, values, 4);
  mark_root(s, a);
}

// An empty batch as polars exports one (polars 2.1, read off its
// __arrow_c_stream__): an int64, a utf8 and a boolean column of length 0 whose
// buffers are Rust's dangling pointers for empty vectors, the element's
// alignment (0x8; 0x4 and 0x8; 0x1), never dereferenced and never freed.
void cb_make_dangling_empty(struct ArrowSchema* s, struct ArrowArray* a) {
  schema_init(s, "+s", "", 0, 3);
  schema_init(s->children[0], "l", "i64", ARROW_FLAG_NULLABLE, 0);
  schema_init(s->children[1], "u", "str", ARROW_FLAG_NULLABLE, 0);
  schema_init(s->children[2], "b", "bool", ARROW_FLAG_NULLABLE, 0);
  array_init(a, 0, 0, 0, 1, 3);
  array_init(a->children[0], 0, 0, 0, 2, 0);
  a->children[0]->buffers[1] = (void*)(uintptr_t)8;
  array_init(a->children[1], 0, 0, 0, 3, 0);
  a->children[1]->buffers[1] = (void*)(uintptr_t)4;
  a->children[1]->buffers[2] = (void*)(uintptr_t)8;
  array_init(a->children[2], 0, 0, 0, 2, 0);
  a->children[2]->buffers[1] = (void*)(uintptr_t)1;
  mark_root(s, a);
}

void cb_make_struct(struct ArrowSchema* s, struct ArrowArray* a) {
  static const char* const values[] = {"alpha", NULL, ""};
  schema_init(s, "+s", "", 0, 2);
  schema_init(s->children[0], "i", "i", ARROW_FLAG_NULLABLE, 0);
  schema_init(s->children[1], "u", "s", ARROW_FLAG_NULLABLE, 0);
  array_init(a, 3, 0, 0, 1, 2);
  array_init(a->children[0], 3, 0, 0, 2, 0);
  int32_t* v = own(a->children[0], 1, 12);
  for (int i = 0; i < 3; i++) v[i] = i;
  fill_utf8(a->children[1], values, 3);
  mark_root(s, a);
}

void cb_make_list(struct ArrowSchema* s, struct ArrowArray* a) {
  schema_init(s, "+l", "lists", ARROW_FLAG_NULLABLE, 1);
  schema_init(s->children[0], "l", "item", ARROW_FLAG_NULLABLE, 0);
  array_init(a, 4, 1, 0, 2, 1);
  uint8_t* valid = own(a, 0, 1);
  valid[0] = 0x0b;  // 1101: element 2 is null
  int32_t* offsets = own(a, 1, 5 * 4);
  int32_t o[] = {0, 2, 2, 2, 3};
  memcpy(offsets, o, sizeof(o));
  array_init(a->children[0], 3, 0, 0, 2, 0);
  int64_t* v = own(a->children[0], 1, 3 * 8);
  v[0] = 1, v[1] = 2, v[2] = 3;
  mark_root(s, a);
}

void cb_make_dictionary(struct ArrowSchema* s, struct ArrowArray* a) {
  static const char* const values[] = {"x", "y"};
  schema_init(s, "c", "dict", ARROW_FLAG_NULLABLE, 0);
  s->dictionary = calloc(1, sizeof(struct ArrowSchema));
  schema_init(s->dictionary, "u", NULL, ARROW_FLAG_NULLABLE, 0);
  array_init(a, 4, 1, 0, 2, 0);
  uint8_t* valid = own(a, 0, 1);
  valid[0] = 0x0b;
  int8_t* idx = own(a, 1, 4);
  idx[0] = 1, idx[1] = 0, idx[2] = 0, idx[3] = 1;
  a->dictionary = calloc(1, sizeof(struct ArrowArray));
  fill_utf8(a->dictionary, values, 2);
  mark_root(s, a);
}

void cb_make_decimal32(struct ArrowSchema* s, struct ArrowArray* a) {
  schema_init(s, "d:9,2,32", "amount", ARROW_FLAG_NULLABLE, 0);
  array_init(a, 3, 1, 0, 2, 0);
  uint8_t* valid = own(a, 0, 1);
  valid[0] = 0x03;
  int32_t* v = own(a, 1, 12);
  v[0] = 123, v[1] = -45, v[2] = 0;
  mark_root(s, a);
}

void cb_make_device_int32(struct ArrowSchema* s, struct ArrowDeviceArray* a, int32_t device_type, int64_t device_id,
                          void* sync_event) {
  memset(a, 0, sizeof(*a));
  cb_make_int32(s, &a->array, 4, 0, 0);
  a->device_type = device_type;
  a->device_id = device_id;
  a->sync_event = sync_event;
}

// ---------------------------------------------------------------- malformed

int cb_malformed_count(void) { return 13; }

void cb_make_malformed(int kind, struct ArrowSchema* s, struct ArrowArray* a) {
  cb_make_int32(s, a, 6, 0, 1);
  switch (kind) {
    case 0:  // wrong n_buffers
      a->n_buffers = 3;
      a->buffers = realloc(a->buffers, 3 * sizeof(void*));
      a->buffers[2] = NULL;
      break;
    case 1:  // NULL data buffer with length > 0
      a->buffers[1] = NULL;
      break;
    case 2:  // negative length
      a->length = -1;
      break;
    case 3:  // negative offset
      a->offset = -2;
      break;
    case 4:  // null_count > length
      a->null_count = 7;
      break;
    case 5:  // null_count < -1
      a->null_count = -5;
      break;
    case 6:  // offset + length overflows
      a->offset = INT64_MAX - 2;
      break;
    case 7:  // NULL format string
      free((void*)s->format);
      s->format = NULL;
      break;
    case 8:  // unknown format string
      free((void*)s->format);
      s->format = strdup("?!");
      break;
    case 9: {  // metadata that lies: a negative key length
      int32_t* md = malloc(12);
      md[0] = 1, md[1] = -4, md[2] = 0;
      s->metadata = (const char*)md;
      break;
    }
    case 10:  // children that the format does not have
      free((void*)s->format);
      s->format = strdup("+l");
      break;
    case 11:  // null_count > 0 but no validity bitmap
      free(((node_private*)a->private_data)->buffers[0]);
      ((node_private*)a->private_data)->buffers[0] = NULL;
      a->buffers[0] = NULL;
      break;
    case 12:  // flags with unknown bits
      s->flags |= 1024;
      break;
  }
}

// ------------------------------------------------------------------ streams

typedef struct {
  int n, next, fail_at, schema_fails;
  int32_t declared, actual;
  char error[128];
} stream_private;

static int stream_get_schema(struct ArrowArrayStream* st, struct ArrowSchema* out) {
  stream_private* p = st->private_data;
  if (p->schema_fails) {
    snprintf(p->error, sizeof(p->error), "get_schema is broken on purpose");
    return EINVAL;
  }
  struct ArrowArray tmp;
  cb_make_int32(out, &tmp, 0, 0, 0);
  tmp.release(&tmp);
  atomic_fetch_sub(&releases, 1);  // internal, not a release of something handed out
  return 0;
}

static int stream_get_next(struct ArrowArrayStream* st, struct ArrowArray* out) {
  stream_private* p = st->private_data;
  if (p->next == p->fail_at) {
    snprintf(p->error, sizeof(p->error), "producer failed at batch %d", p->next);
    return EIO;
  }
  if (p->next >= p->n) {
    memset(out, 0, sizeof(*out));
    return 0;
  }
  struct ArrowSchema tmp;
  cb_make_int32(&tmp, out, 2, 0, 0);
  int32_t* v = (int32_t*)out->buffers[1];
  v[0] = p->next, v[1] = p->next + 1;
  tmp.release(&tmp);
  atomic_fetch_sub(&releases, 1);
  p->next++;
  return 0;
}

static const char* stream_get_last_error(struct ArrowArrayStream* st) {
  return ((stream_private*)st->private_data)->error;
}

static void stream_release(struct ArrowArrayStream* st) {
  free(st->private_data);
  st->release = NULL;
  atomic_fetch_add(&releases, 1);
}

void cb_make_stream(struct ArrowArrayStream* s, int n, int fail_at, int schema_fails) {
  stream_private* p = calloc(1, sizeof(stream_private));
  p->n = n, p->fail_at = fail_at, p->schema_fails = schema_fails;
  s->get_schema = stream_get_schema;
  s->get_next = stream_get_next;
  s->get_last_error = stream_get_last_error;
  s->release = stream_release;
  s->private_data = p;
}

static int dstream_get_schema(struct ArrowDeviceArrayStream* st, struct ArrowSchema* out) {
  struct ArrowArray tmp;
  cb_make_int32(out, &tmp, 0, 0, 0);
  tmp.release(&tmp);
  atomic_fetch_sub(&releases, 1);
  (void)st;
  return 0;
}

static int dstream_get_next(struct ArrowDeviceArrayStream* st, struct ArrowDeviceArray* out) {
  stream_private* p = st->private_data;
  struct ArrowSchema tmp;
  cb_make_device_int32(&tmp, out, p->actual, p->actual == 1 ? -1 : 0, NULL);
  tmp.release(&tmp);
  atomic_fetch_sub(&releases, 1);
  return 0;
}

static const char* dstream_get_last_error(struct ArrowDeviceArrayStream* st) {
  return ((stream_private*)st->private_data)->error;
}

static void dstream_release(struct ArrowDeviceArrayStream* st) {
  free(st->private_data);
  st->release = NULL;
  atomic_fetch_add(&releases, 1);
}

void cb_make_device_stream(struct ArrowDeviceArrayStream* s, int32_t declared, int32_t actual) {
  stream_private* p = calloc(1, sizeof(stream_private));
  p->declared = declared, p->actual = actual;
  s->device_type = declared;
  s->get_schema = dstream_get_schema;
  s->get_next = dstream_get_next;
  s->get_last_error = dstream_get_last_error;
  s->release = dstream_release;
  s->private_data = p;
}

// ---------------------------------------------------------------- consumers

static int expected_buffers(const char* f) {
  if (!strcmp(f, "n") || !strcmp(f, "+r")) return 0;
  if (!strcmp(f, "+s") || !strncmp(f, "+w:", 3) || !strncmp(f, "+us:", 4)) return 1;
  if (!strcmp(f, "z") || !strcmp(f, "u") || !strcmp(f, "Z") || !strcmp(f, "U") || !strcmp(f, "+vl") ||
      !strcmp(f, "+vL"))
    return 3;
  if (!strcmp(f, "vz") || !strcmp(f, "vu")) return -1;  // variadic
  return 2;
}

static int64_t walk(const struct ArrowSchema* s, const struct ArrowArray* a, char* why, int why_len) {
  if (!a->release) {
    snprintf(why, (size_t)why_len, "a node of format %s is not releasable", s->format);
    return -1;
  }
  int want = expected_buffers(s->format);
  if (want >= 0 && a->n_buffers != want) {
    snprintf(why, (size_t)why_len, "format %s has %lld buffers, expected %d", s->format, (long long)a->n_buffers, want);
    return -1;
  }
  if (want < 0 && a->n_buffers < 3) {
    snprintf(why, (size_t)why_len, "view format %s has %lld buffers", s->format, (long long)a->n_buffers);
    return -1;
  }
  if (a->n_children != s->n_children) {
    snprintf(why, (size_t)why_len, "format %s: %lld array children, %lld schema children", s->format,
             (long long)a->n_children, (long long)s->n_children);
    return -1;
  }
  if ((a->dictionary == NULL) != (s->dictionary == NULL)) {
    snprintf(why, (size_t)why_len, "dictionary presence differs");
    return -1;
  }
  int64_t nodes = 1;
  for (int64_t i = 0; i < a->n_children; i++) {
    int64_t n = walk(s->children[i], a->children[i], why, why_len);
    if (n < 0) return n;
    nodes += n;
  }
  if (a->dictionary) {
    int64_t n = walk(s->dictionary, a->dictionary, why, why_len);
    if (n < 0) return n;
    nodes += n;
  }
  return nodes;
}

int64_t cb_walk(const struct ArrowSchema* s, const struct ArrowDeviceArray* a, char* why, int why_len) {
  if (!s->release) {
    snprintf(why, (size_t)why_len, "schema is not releasable");
    return -1;
  }
  if (a->device_type != ARROW_DEVICE_CPU || a->device_id != -1 || a->sync_event != NULL) {
    snprintf(why, (size_t)why_len, "CPU device fields wrong: type %d id %lld event %p", a->device_type,
             (long long)a->device_id, a->sync_event);
    return -1;
  }
  for (int i = 0; i < 3; i++) {
    if (a->reserved[i] != 0) {
      snprintf(why, (size_t)why_len, "reserved[%d] is not zero", i);
      return -1;
    }
  }
  return walk(s, &a->array, why, why_len);
}

int64_t cb_sum_int32(const struct ArrowArray* a) {
  const uint8_t* valid = a->buffers[0];
  const int32_t* v = a->buffers[1];
  int64_t sum = 0;
  for (int64_t i = a->offset; i < a->offset + a->length; i++) {
    if (!valid || (valid[i / 8] >> (i % 8)) & 1) sum += v[i];
  }
  return sum;
}

void cb_move_child0_and_release(struct ArrowArray* parent, struct ArrowArray* out) {
  *out = *parent->children[0];
  parent->children[0]->release = NULL;  // moved
  parent->release(parent);
}

int64_t cb_consume_stream(struct ArrowArrayStream* s, char* err, int err_len, int64_t* batches) {
  struct ArrowSchema schema;
  int rc = s->get_schema(s, &schema);
  if (rc != 0) {
    snprintf(err, (size_t)err_len, "%s", s->get_last_error(s));
    s->release(s);
    return -rc;
  }
  schema.release(&schema);
  int64_t rows = 0;
  *batches = 0;
  for (;;) {
    struct ArrowArray a;
    rc = s->get_next(s, &a);
    if (rc != 0) {
      const char* msg = s->get_last_error(s);
      snprintf(err, (size_t)err_len, "%s", msg ? msg : "");
      s->release(s);
      return -rc;
    }
    if (!a.release) break;
    rows += a.length;
    (*batches)++;
    a.release(&a);
  }
  s->release(s);
  return rows;
}

int64_t cb_consume_device_stream(struct ArrowDeviceArrayStream* s, char* err, int err_len, int64_t* batches) {
  struct ArrowSchema schema;
  int rc = s->get_schema(s, &schema);
  if (rc != 0) {
    snprintf(err, (size_t)err_len, "%s", s->get_last_error(s));
    s->release(s);
    return -rc;
  }
  schema.release(&schema);
  int64_t rows = 0;
  *batches = 0;
  for (;;) {
    struct ArrowDeviceArray a;
    rc = s->get_next(s, &a);
    if (rc != 0) {
      const char* msg = s->get_last_error(s);
      snprintf(err, (size_t)err_len, "%s", msg ? msg : "");
      s->release(s);
      return -rc;
    }
    if (!a.array.release) break;
    if (a.device_type != s->device_type) {
      snprintf(err, (size_t)err_len, "chunk on device type %d in a stream of %d", a.device_type, s->device_type);
      a.array.release(&a.array);
      s->release(s);
      return -1000;
    }
    rows += a.array.length;
    (*batches)++;
    a.array.release(&a.array);
  }
  s->release(s);
  return rows;
}

void cb_release_schema(struct ArrowSchema* s) {
  if (s->release) s->release(s);
}
void cb_release_array(struct ArrowArray* a) {
  if (a->release) a->release(a);
}
