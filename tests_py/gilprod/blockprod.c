// blockprod: a C stream producer whose get_next blocks in C, touching no
// Python, until a value is handed to it with blockprod_give, which the tests
// call from a Python thread through ctypes. So a batch can only arrive if
// that Python thread runs while get_next blocks: a consumer that holds the
// GIL across get_next starves it, and get_next then gives up after its
// timeout and fails with a message saying so (no hang). One producer per
// process; the tests run it in a subprocess.
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "arrow-c-abi.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static int waiting;    // a get_next waits for a value
static int has_value;  // a value was given and not yet taken
static int64_t value;
static int left;  // batches before the end of the stream
static int timeout_ms;
static long long given_while_waiting, stream_releases;
static char last_error[256];

static struct timespec deadline_after(int ms) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  t.tv_sec += ms / 1000;
  t.tv_nsec += (long)(ms % 1000) * 1000000L;
  if (t.tv_nsec >= 1000000000L) {
    t.tv_sec++;
    t.tv_nsec -= 1000000000L;
  }
  return t;
}

static void release_schema(struct ArrowSchema* s) { s->release = NULL; }

static int get_schema(struct ArrowArrayStream* st, struct ArrowSchema* out) {
  (void)st;
  memset(out, 0, sizeof *out);
  out->format = "l";
  out->name = "x";
  out->flags = ARROW_FLAG_NULLABLE;
  out->release = release_schema;
  return 0;
}

typedef struct {
  const void* buffers[2];
  int64_t v;
} one_value;

static void release_array(struct ArrowArray* a) {
  free(a->private_data);
  a->release = NULL;
}

static int get_next(struct ArrowArrayStream* st, struct ArrowArray* out) {
  (void)st;
  memset(out, 0, sizeof *out);
  pthread_mutex_lock(&mu);
  if (left == 0) {  // the end: a released array
    pthread_mutex_unlock(&mu);
    return 0;
  }
  waiting = 1;
  pthread_cond_broadcast(&changed);
  struct timespec deadline = deadline_after(timeout_ms);
  while (!has_value) {
    if (pthread_cond_timedwait(&changed, &mu, &deadline) == ETIMEDOUT && !has_value) {
      waiting = 0;
      snprintf(last_error, sizeof last_error,
               "blockprod: no value was given within %d ms (the Python thread that gives it never ran)", timeout_ms);
      pthread_mutex_unlock(&mu);
      return EIO;
    }
  }
  waiting = 0;
  has_value = 0;
  left--;
  int64_t v = value;
  pthread_mutex_unlock(&mu);

  one_value* p = calloc(1, sizeof *p);
  if (!p) return ENOMEM;
  p->v = v;
  p->buffers[0] = NULL;
  p->buffers[1] = &p->v;
  out->length = 1;
  out->n_buffers = 2;
  out->buffers = p->buffers;
  out->private_data = p;
  out->release = release_array;
  return 0;
}

static const char* get_last_error(struct ArrowArrayStream* st) {
  (void)st;
  return last_error;
}

static void release_stream(struct ArrowArrayStream* st) {
  pthread_mutex_lock(&mu);
  stream_releases++;
  pthread_mutex_unlock(&mu);
  st->release = NULL;
}

static struct ArrowArrayStream the_stream;

// blockprod_new(n, ms): the stream of n one-value int64 arrays, each read
// waiting at most ms for its value. The struct is static: a consumer moves
// it out (or reads it in place), and the counters below stay readable.
struct ArrowArrayStream* blockprod_new(int n, int ms) {
  pthread_mutex_lock(&mu);
  left = n;
  timeout_ms = ms;
  pthread_mutex_unlock(&mu);
  the_stream.get_schema = get_schema;
  the_stream.get_next = get_next;
  the_stream.get_last_error = get_last_error;
  the_stream.release = release_stream;
  the_stream.private_data = NULL;
  return &the_stream;
}

// blockprod_wait_for_reader(ms): 1 once a get_next waits for a value, 0
// if none does within ms.
int blockprod_wait_for_reader(int ms) {
  struct timespec deadline = deadline_after(ms);
  pthread_mutex_lock(&mu);
  int ok = 1;
  while (!(waiting && !has_value)) {
    if (pthread_cond_timedwait(&changed, &mu, &deadline) == ETIMEDOUT && !(waiting && !has_value)) {
      ok = 0;
      break;
    }
  }
  pthread_mutex_unlock(&mu);
  return ok;
}

// blockprod_give(v): hands v to the get_next that waits; 1 if one waited
// (and now returns v), 0 if none did (v is dropped).
int blockprod_give(int64_t v) {
  pthread_mutex_lock(&mu);
  int ok = waiting && !has_value;
  if (ok) {
    value = v;
    has_value = 1;
    given_while_waiting++;
    pthread_cond_broadcast(&changed);
  }
  pthread_mutex_unlock(&mu);
  return ok;
}

long long blockprod_given_while_waiting(void) { return given_while_waiting; }

long long blockprod_stream_releases(void) { return stream_releases; }
