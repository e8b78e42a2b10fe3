#include "casync.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define ENTER(c)                                                   \
  do {                                                             \
    if ((c)->release) (c)->calls_after_release++;                  \
    if (__atomic_exchange_n(&(c)->busy, 1, __ATOMIC_SEQ_CST)) (c)->overlap++; \
  } while (0)
#define LEAVE(c) __atomic_store_n(&(c)->busy, 0, __ATOMIC_SEQ_CST)

static ca_consumer* of(struct ArrowAsyncDeviceStreamHandler* h) { return h->private_data; }

static int on_schema(struct ArrowAsyncDeviceStreamHandler* h, struct ArrowSchema* s) {
  ca_consumer* c = of(h);
  ENTER(c);
  c->on_schema++;
  c->producer_set_before_schema = h->producer != NULL && h->producer->request != NULL;
  if (h->producer && h->producer->additional_metadata) c->additional_metadata_seen = 1;
  s->release(s);  // a consumer must release (or move) the schema
  int rc = 0;
  if (c->fail_schema) {
    rc = 22;
  } else {
    c->outstanding += c->initial_request > 0 ? c->initial_request : 0;
    h->producer->request(h->producer, c->initial_request);  // from inside on_schema
  }
  LEAVE(c);
  return rc;
}

static int on_next_task(struct ArrowAsyncDeviceStreamHandler* h, struct ArrowAsyncTask* t, const char* md) {
  ca_consumer* c = of(h);
  ENTER(c);
  int rc = 0;
  if (!t) {
    c->end_marker++;
    LEAVE(c);
    return 0;
  }
  int k = c->on_next_task++;
  if (c->outstanding <= 0) c->tasks_beyond_request++;
  c->outstanding--;
  if (md) c->task_metadata_seen = 1;
  struct ArrowDeviceArray out;
  memset(&out, 0, sizeof(out));
  if (t->extract_data(t, &out) == 0) {
    const int64_t* v = out.array.buffers[1];
    for (int64_t i = 0; i < out.array.length; i++) c->rows += v[out.array.offset + i];
    out.array.release(&out.array);
  }
  if (k == c->cancel_at_task) {
    h->producer->cancel(h->producer);
    h->producer->cancel(h->producer);  // idempotent
  }
  if (k == c->fail_at_task) {
    rc = 5;
  } else if (c->request_in_task) {
    c->outstanding++;
    h->producer->request(h->producer, 1);  // from inside on_next_task
  }
  LEAVE(c);
  return rc;
}

static void on_error(struct ArrowAsyncDeviceStreamHandler* h, int code, const char* msg, const char* md) {
  ca_consumer* c = of(h);
  ENTER(c);
  c->on_error++;
  c->error_code = code;
  if (msg) strncpy(c->error_message, msg, sizeof(c->error_message) - 1);
  LEAVE(c);
}

static void release(struct ArrowAsyncDeviceStreamHandler* h) {
  ca_consumer* c = of(h);
  ENTER(c);
  c->release++;
  LEAVE(c);
}

void ca_consumer_init(ca_consumer* c) {
  memset(c, 0, sizeof(*c));
  c->fail_at_task = -1;
  c->cancel_at_task = -1;
  c->handler.on_schema = on_schema;
  c->handler.on_next_task = on_next_task;
  c->handler.on_error = on_error;
  c->handler.release = release;
  c->handler.private_data = c;
}

// ---------------------------------------------------------------- producer

typedef struct {
  pthread_mutex_t mu;
  pthread_cond_t cond;
  int64_t demand;
  int cancelled, bad;
  ca_producer* p;
} prod_state;

static void p_request(struct ArrowAsyncProducer* self, int64_t n) {
  prod_state* st = self->private_data;
  pthread_mutex_lock(&st->mu);
  st->p->requests_seen++;
  if (n <= 0) st->bad = 1; else st->demand += n;
  pthread_cond_signal(&st->cond);
  pthread_mutex_unlock(&st->mu);
}
static void p_cancel(struct ArrowAsyncProducer* self) {
  prod_state* st = self->private_data;
  pthread_mutex_lock(&st->mu);
  st->p->cancels_seen++;
  st->cancelled = 1;
  pthread_cond_signal(&st->cond);
  pthread_mutex_unlock(&st->mu);
}

static void release_schema(struct ArrowSchema* s) { s->release = NULL; }
static void release_array(struct ArrowArray* a) {
  free((void*)a->buffers[1]);
  free(a->buffers);
  a->release = NULL;
}

typedef struct {
  int64_t value;
} task_data;

static int extract(struct ArrowAsyncTask* t, struct ArrowDeviceArray* out) {
  task_data* d = t->private_data;
  if (out) {
    memset(out, 0, sizeof(*out));
    int64_t* v = malloc(sizeof(int64_t));
    *v = d->value;
    out->array.length = 1;
    out->array.n_buffers = 2;
    out->array.buffers = calloc(2, sizeof(void*));
    out->array.buffers[1] = v;
    out->array.release = release_array;
    out->device_type = ARROW_DEVICE_CPU;
    out->device_id = -1;
  }
  free(d);
  return 0;
}

void ca_producer_run(ca_producer* p, struct ArrowAsyncDeviceStreamHandler* h) {
  prod_state st;
  memset(&st, 0, sizeof(st));
  pthread_mutex_init(&st.mu, NULL);
  pthread_cond_init(&st.cond, NULL);
  st.p = p;
  p->producer.device_type = ARROW_DEVICE_CPU;
  p->producer.request = p_request;
  p->producer.cancel = p_cancel;
  p->producer.private_data = &st;
  h->producer = &p->producer;
  struct ArrowSchema s = {.format = "l", .name = "x", .flags = 2, .release = release_schema};
  if (h->on_schema(h, &s) != 0) goto done;
  for (int k = 0; k < p->n; k++) {
    pthread_mutex_lock(&st.mu);
    while (st.demand == 0 && !st.cancelled && !st.bad) pthread_cond_wait(&st.cond, &st.mu);
    int cancelled = st.cancelled, bad = st.bad;
    st.demand--;
    pthread_mutex_unlock(&st.mu);
    if (cancelled) goto done;
    if (bad) {
      h->on_error(h, 22, "request(n <= 0)", NULL);
      goto done;
    }
    if (k == p->fail_at) {
      h->on_error(h, 5, "C producer failed on purpose", NULL);
      goto done;
    }
    struct ArrowAsyncTask t;
    task_data* d = malloc(sizeof(task_data));
    d->value = k;
    t.extract_data = extract;
    t.private_data = d;
    if (h->on_next_task(h, &t, NULL) != 0) goto done;
  }
  h->on_next_task(h, NULL, NULL);
done:
  h->release(h);
  pthread_mutex_destroy(&st.mu);
  pthread_cond_destroy(&st.cond);
}

void ca_consumer_late_calls(ca_consumer* c) {
  struct ArrowAsyncProducer* p = c->handler.producer;
  p->request(p, 1);
  p->cancel(p);
}
