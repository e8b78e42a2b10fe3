// The read gate (gate.h): a mutex, a condition variable on the monotonic
// clock, and the flags of one stream.
#define _GNU_SOURCE  // RUSAGE_THREAD; pthread_condattr_setclock and clock_gettime under -std=c11
#include "gate.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#if !defined(RUSAGE_THREAD) && !defined(__linux__)  // elsewhere: the process's, a coarser measure
#define RUSAGE_THREAD RUSAGE_SELF
#endif

struct gda_read_gate {
  pthread_mutex_t mu;
  pthread_cond_t idle;  // broadcast when a read ends; made by the first waiter (most gates never wait)
  int has_idle;
  int reading;
  int closed;
  int waiters;
  uint64_t reader_thread;  // of the read in progress (0: unnamed)
  gda_gate_slot unread;
  const uint64_t* producer;  // a read-ahead's producer cell, or NULL
  struct gda_gate_slab* slab;
};

// Gates are made in slabs, one allocation each, with one reference count
// for the slab: a gate costs no allocation of its own, and the slab goes
// when the last reference to any of its gates does.
typedef struct gda_gate_slab {
  atomic_int_fast64_t refs;
  int n;
  gda_read_gate gates[];
} gda_gate_slab;

// The condition variables' attributes (the monotonic clock), made once.
static pthread_condattr_t cond_attr;
static int cond_attr_rc;
static pthread_once_t cond_attr_once = PTHREAD_ONCE_INIT;
static void cond_attr_init(void) {
  cond_attr_rc = pthread_condattr_init(&cond_attr);
  if (cond_attr_rc == 0) cond_attr_rc = pthread_condattr_setclock(&cond_attr, CLOCK_MONOTONIC);
}

int gda_gates_new(gda_read_gate** out, int n) {
  gda_gate_slab* s = calloc(1, sizeof(*s) + (size_t)n * sizeof(gda_read_gate));
  if (!s) return ENOMEM;
  atomic_init(&s->refs, 1);
  s->n = n;
  for (int i = 0; i < n; i++) {
    s->gates[i].mu = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
    s->gates[i].slab = s;
    out[i] = &s->gates[i];
  }
  return 0;
}

void gda_gate_ref(gda_read_gate* g) { atomic_fetch_add(&g->slab->refs, 1); }

void gda_gate_unref(gda_read_gate* g) {
  gda_gate_slab* s = g->slab;
  if (atomic_fetch_sub(&s->refs, 1) != 1) return;
  for (int i = 0; i < s->n; i++) {
    if (s->gates[i].has_idle) pthread_cond_destroy(&s->gates[i].idle);
    pthread_mutex_destroy(&s->gates[i].mu);
  }
  free(s);
}

static struct timespec deadline_after(int64_t ms) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  t.tv_sec += (time_t)(ms / 1000);
  t.tv_nsec += (long)(ms % 1000) * 1000000L;
  if (t.tv_nsec >= 1000000000L) {
    t.tv_sec++;
    t.tv_nsec -= 1000000000L;
  }
  return t;
}

// Waits (g->mu held, released meanwhile) for a read to end: 0 when one did
// or the wait woke, ETIMEDOUT when the deadline (NULL: none) passed. When
// the condition variable cannot be made, it waits in 1 ms sleeps instead.
static int wait_locked(gda_read_gate* g, const struct timespec* deadline) {
  if (!g->has_idle) {
    pthread_once(&cond_attr_once, cond_attr_init);
    g->has_idle = cond_attr_rc == 0 && pthread_cond_init(&g->idle, &cond_attr) == 0;
  }
  if (!g->has_idle) {
    pthread_mutex_unlock(&g->mu);
    nanosleep(&(struct timespec){0, 1000000L}, NULL);
    pthread_mutex_lock(&g->mu);
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    int late = deadline && (now.tv_sec > deadline->tv_sec ||
                            (now.tv_sec == deadline->tv_sec && now.tv_nsec >= deadline->tv_nsec));
    return late ? ETIMEDOUT : 0;
  }
  g->waiters++;
  int rc = deadline ? pthread_cond_timedwait(&g->idle, &g->mu, deadline) : pthread_cond_wait(&g->idle, &g->mu);
  g->waiters--;
  return rc == ETIMEDOUT ? ETIMEDOUT : 0;
}

static int take_unread_locked(gda_read_gate* g, gda_gate_slot* slot) {
  if (!g->unread.held && !g->unread.array) return 0;
  *slot = g->unread;
  g->unread = (gda_gate_slot){0};
  return 1;
}

int gda_gate_begin(gda_read_gate* g, int64_t wait_ms, uint64_t thread, gda_gate_slot* slot) {
  // the deadline is read from the clock only once a read is found in
  // progress: a read of an idle gate (every read of a stream that one
  // thread reads) costs no clock reading
  struct timespec deadline, *until = NULL;  // NULL: no deadline (yet, or at all)
  pthread_mutex_lock(&g->mu);
  int r = GDA_GATE_GO;
  while (g->reading) {
    if (thread != 0 && g->reader_thread == thread) {
      r = GDA_GATE_REENTRANT;
      goto out;
    }
    if (wait_ms > 0 && !until) {
      deadline = deadline_after(wait_ms);
      until = &deadline;
    }
    if (wait_locked(g, until) == ETIMEDOUT && g->reading) {
      r = GDA_GATE_BUSY;
      goto out;
    }
  }
  if (g->closed) {
    r = GDA_GATE_CLOSED;
  } else if (thread != 0 && g->producer && __atomic_load_n(g->producer, __ATOMIC_ACQUIRE) == thread) {
    r = GDA_GATE_REENTRANT;
  } else if (take_unread_locked(g, slot)) {
    r = GDA_GATE_UNREAD;
  } else {
    g->reading = 1;
    g->reader_thread = thread;
  }
out:
  pthread_mutex_unlock(&g->mu);
  return r;
}

int gda_gate_try_begin(gda_read_gate* g, int may_read, gda_gate_slot* slot) {
  pthread_mutex_lock(&g->mu);
  int r = GDA_GATE_GO;
  if (g->closed) {
    r = GDA_GATE_CLOSED;
  } else if (g->reading || !may_read) {
    r = GDA_GATE_BUSY;
  } else if (take_unread_locked(g, slot)) {
    r = GDA_GATE_UNREAD;
  } else {
    g->reading = 1;
    g->reader_thread = 0;
  }
  pthread_mutex_unlock(&g->mu);
  return r;
}

void gda_gate_end(gda_read_gate* g) {
  pthread_mutex_lock(&g->mu);
  g->reading = 0;
  g->reader_thread = 0;
  if (g->waiters) pthread_cond_broadcast(&g->idle);
  pthread_mutex_unlock(&g->mu);
}

int gda_gate_unread(gda_read_gate* g, gda_gate_slot slot) {
  pthread_mutex_lock(&g->mu);
  int keep = !g->closed && !g->unread.held && !g->unread.array;
  if (keep) g->unread = slot;
  pthread_mutex_unlock(&g->mu);
  return keep;
}

// What a close or a move answers about the stream's state: BUSY during a
// read, CLOSED once closed, else GO. g->mu is held.
static int idle_open_locked(const gda_read_gate* g) {
  if (g->reading) return GDA_GATE_BUSY;
  if (g->closed) return GDA_GATE_CLOSED;
  return GDA_GATE_GO;
}

int gda_gate_close(gda_read_gate* g, gda_gate_slot* slot) {
  pthread_mutex_lock(&g->mu);
  int r = idle_open_locked(g);
  if (r == GDA_GATE_GO) {
    g->closed = 1;
    *slot = g->unread;
    g->unread = (gda_gate_slot){0};
  }
  pthread_mutex_unlock(&g->mu);
  return r;
}

int gda_gate_take(gda_read_gate* g) {
  pthread_mutex_lock(&g->mu);
  int r = idle_open_locked(g);
  if (r == GDA_GATE_GO && (g->unread.held || g->unread.array)) {
    r = GDA_GATE_UNREAD;  // read it first
  } else if (r == GDA_GATE_GO) {
    g->closed = 1;
  }
  pthread_mutex_unlock(&g->mu);
  return r;
}

int gda_gate_wait_idle(gda_read_gate* g, int64_t wait_ms) {
  pthread_mutex_lock(&g->mu);
  if (g->reading && wait_ms > 0) {  // the clock only for a wait (an idle gate is every close's)
    struct timespec deadline = deadline_after(wait_ms);
    while (g->reading && wait_locked(g, &deadline) != ETIMEDOUT) {
    }
  }
  int idle = !g->reading;
  pthread_mutex_unlock(&g->mu);
  return idle;
}

void gda_gate_watch_producer(gda_read_gate* g, const uint64_t* cell) {
  pthread_mutex_lock(&g->mu);
  g->producer = cell;
  pthread_mutex_unlock(&g->mu);
}

int gda_gate_closed(gda_read_gate* g) {
  pthread_mutex_lock(&g->mu);
  int closed = g->closed;
  pthread_mutex_unlock(&g->mu);
  return closed;
}

int gda_gate_waiters(gda_read_gate* g) {
  pthread_mutex_lock(&g->mu);
  int n = g->waiters;
  pthread_mutex_unlock(&g->mu);
  return n;
}

gda_read_clock gda_read_clock_now(int measured) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  gda_read_clock r = {(int64_t)t.tv_sec * 1000000000 + t.tv_nsec, 0, 0};
  if (!measured) return r;
  // The CPU time from the scheduler's clock of this thread, not getrusage's:
  // see gda_read_clock in gate.h.
  struct timespec cpu;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu) == 0) r.cpu = (int64_t)cpu.tv_sec * 1000000000 + cpu.tv_nsec;
  struct rusage u;
  if (getrusage(RUSAGE_THREAD, &u) == 0) r.waits = u.ru_nvcsw;
  return r;
}

int gda_read_blocked(gda_read_clock t0, gda_read_clock t1, int measured) {
  int64_t wall = t1.wall - t0.wall, cpu = t1.cpu - t0.cpu;
  return measured &&
         ((wall > GDA_WAIT_READ_NS && 2 * cpu < wall && t1.waits > t0.waits) || cpu > GDA_SLOW_READ_NS);
}

gda_read_clock gda_read_timer_start(const gda_read_timer* t) { return gda_read_clock_now(t->suspect); }

int gda_read_timer_end(gda_read_timer* t, gda_read_clock t0) {
  int measured = t->suspect;
  gda_read_clock t1 = gda_read_clock_now(measured);
  t->suspect = t1.wall - t0.wall > GDA_WAIT_READ_NS;
  if (t->timed_reads < GDA_TIMED_FIRST_READS) {
    t->timed_reads++;
  } else if (t->suspect) {
    t->stride = 0;  // every read is timed now; the stride starts over after them
  } else {
    t->stride = t->stride ? t->stride * 2 : GDA_TIMED_READ_STRIDE;
    if (t->stride > GDA_TIMED_READ_STRIDE_MAX) t->stride = GDA_TIMED_READ_STRIDE_MAX;
    t->untimed_left = t->stride - 1;
  }
  t->blocked_in_row = gda_read_blocked(t0, t1, measured) ? t->blocked_in_row + 1 : 0;
  return t->blocked_in_row >= GDA_BLOCKED_READS_TO_MOVE;
}
