// slowstream: wraps an ArrowArrayStream so that each get_next first waits a
// fixed time without touching Python (a producer that decodes, fetches or
// computes on its own thread). The bench's slow-producer rows read it; it is
// built by benchmarks/bench.py with the C compiler.
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "arrow-c-abi.h"

typedef struct {
  struct ArrowArrayStream inner;
  long delay_ns;
} slow;

static int get_schema(struct ArrowArrayStream* s, struct ArrowSchema* out) {
  slow* p = s->private_data;
  return p->inner.get_schema(&p->inner, out);
}

static int get_next(struct ArrowArrayStream* s, struct ArrowArray* out) {
  slow* p = s->private_data;
  struct timespec d = {p->delay_ns / 1000000000L, p->delay_ns % 1000000000L};
  while (nanosleep(&d, &d) != 0) {
  }
  return p->inner.get_next(&p->inner, out);
}

static const char* get_last_error(struct ArrowArrayStream* s) {
  slow* p = s->private_data;
  return p->inner.get_last_error(&p->inner);
}

static void release(struct ArrowArrayStream* s) {
  slow* p = s->private_data;
  if (p->inner.release) p->inner.release(&p->inner);
  free(p);
  s->release = NULL;
}

// Moves the stream at s into a wrapper and puts the wrapper in its place:
// 0, or -1 (s untouched) when out of memory.
int slowstream_wrap(struct ArrowArrayStream* s, long delay_ns) {
  slow* p = malloc(sizeof(*p));
  if (!p) return -1;
  p->inner = *s;
  p->delay_ns = delay_ns;
  s->get_schema = get_schema;
  s->get_next = get_next;
  s->get_last_error = get_last_error;
  s->release = release;
  s->private_data = p;
  return 0;
}
