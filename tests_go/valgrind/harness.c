// Under valgrind: godevarrow exports a batch, C reads it and releases it;
// C hands a batch of its own to godevarrow, which imports, validates and
// releases it; 200 rounds, then nothing may be live or lost.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../gosrc/include/arrow-c-abi.h"

extern int vgExport(struct ArrowSchema*, struct ArrowArray*);
extern int vgImport(struct ArrowSchema*, struct ArrowArray*);
extern long long vgLive(void);

static int released;
static void release_schema(struct ArrowSchema* s) { s->release = NULL; }
static void release_array(struct ArrowArray* a) {
  free((void*)a->buffers[1]);
  free(a->buffers);
  a->release = NULL;
  released++;
}

static long long walk(const struct ArrowArray* a) {
  // read the int32 column and the string offsets: a consumer's real reads
  const struct ArrowArray* i = a->children[0];
  const int32_t* v = i->buffers[1];
  long long sum = 0;
  for (int64_t k = 0; k < i->length; k++) sum += v[i->offset + k];
  const struct ArrowArray* s = a->children[1];
  const int32_t* off = s->buffers[1];
  sum += off[s->offset + s->length] - off[s->offset];
  return sum;
}

int main(void) {
  long long total = 0;
  for (int round = 0; round < 200; round++) {
    struct ArrowSchema s;
    struct ArrowArray a;
    memset(&s, 0, sizeof(s));
    memset(&a, 0, sizeof(a));
    if (vgExport(&s, &a)) return 2;
    total += walk(&a);
    a.release(&a);
    s.release(&s);

    struct ArrowSchema cs = {.format = "i", .name = "x", .flags = 2, .release = release_schema};
    struct ArrowArray ca = {.length = 64, .n_buffers = 2, .release = release_array};
    ca.buffers = calloc(2, sizeof(void*));
    int32_t* values = malloc(64 * sizeof(int32_t));
    for (int k = 0; k < 64; k++) values[k] = k;
    ca.buffers[1] = values;
    if (vgImport(&cs, &ca)) return 3;
  }
  if (released != 200) {
    fprintf(stderr, "C arrays released %d times, want 200\n", released);
    return 4;
  }
  if (vgLive() != 0) {
    fprintf(stderr, "godevarrow still holds objects: %lld\n", vgLive());
    return 5;
  }
  printf("ok: 200 rounds, checksum %lld\n", total);
  return 0;
}
