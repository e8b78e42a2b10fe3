#pragma once
#include <stdint.h>

#include "../../gosrc/include/arrow-c-abi.h"

// A C consumer handler that checks the producer's side of the rules.
typedef struct {
  int64_t initial_request;   // requested inside on_schema (may be <= 0 to test the producer)
  int request_in_task;       // request(1) from inside each on_next_task
  int fail_at_task;          // return non-zero from on_next_task k (-1: never)
  int fail_schema;           // return non-zero from on_schema
  int cancel_at_task;        // call cancel (twice) inside on_next_task k (-1: never)
  // observations
  int on_schema, on_next_task, end_marker, on_error, release;
  int error_code;
  char error_message[256];
  int producer_set_before_schema;
  int overlap;               // callbacks ran concurrently
  int calls_after_release;   // any callback after release
  int64_t rows;              // sum of int64 values received
  int tasks_beyond_request;  // on_next_task while nothing was requested
  int64_t outstanding;       // requested minus received
  char additional_metadata_seen;
  char task_metadata_seen;
  volatile int busy;
  struct ArrowAsyncDeviceStreamHandler handler;
} ca_consumer;

void ca_consumer_init(ca_consumer* c);
// a C producer driving any handler on its own thread: n int64 arrays [k],
// an error at fail_at (-1: none); returns after release was called.
typedef struct {
  int n, fail_at;
  int requests_seen, cancels_seen;
  struct ArrowAsyncProducer producer;
} ca_producer;
void ca_producer_run(ca_producer* p, struct ArrowAsyncDeviceStreamHandler* h);
// request(1) then cancel through the producer the consumer was given, as a
// consumer that calls them after release (Arrow Go v18's) does.
void ca_consumer_late_calls(ca_consumer* c);
