// A C producer and consumer of the Arrow C (Device) Data and Stream
// interfaces, so that the Go tests cross a real C boundary.
#pragma once
#include <stdint.h>

#include "arrow-c-abi.h"

// Release callbacks of everything produced here increment this counter.
int64_t cb_releases(void);
void cb_reset_releases(void);

// Producers (out structs are caller-allocated).
void cb_make_int32(struct ArrowSchema* s, struct ArrowArray* a, int64_t n, int64_t offset, int with_nulls);
void cb_make_utf8(struct ArrowSchema* s, struct ArrowArray* a);          // ["alpha", NULL, "", "delta"]
void cb_make_struct(struct ArrowSchema* s, struct ArrowArray* a);        // {i: int32 [0,1,2], s: utf8 ["alpha", NULL, ""]}
void cb_make_list(struct ArrowSchema* s, struct ArrowArray* a);          // list<int64> [[1,2], [], NULL, [3]]
void cb_make_dictionary(struct ArrowSchema* s, struct ArrowArray* a);    // dictionary<int8, utf8> [1, 0, NULL, 1] of ["x","y"]
void cb_make_decimal32(struct ArrowSchema* s, struct ArrowArray* a);     // d:9,2,32 [123, -45, NULL]
void cb_make_device_int32(struct ArrowSchema* s, struct ArrowDeviceArray* a, int32_t device_type, int64_t device_id,
                          void* sync_event);

// Malformed producers: kind selects the defect (see cboundary.c).
void cb_make_malformed(int kind, struct ArrowSchema* s, struct ArrowArray* a);
int cb_malformed_count(void);

// A stream of n int32 batches (batch i holds [i, i+1]); get_next fails with
// EIO and "producer failed at batch K" at batch fail_at (-1: never); get_schema
// fails when schema_fails.
void cb_make_stream(struct ArrowArrayStream* s, int n, int fail_at, int schema_fails);
static inline int cb_get_schema(struct ArrowArrayStream* s, struct ArrowSchema* out) {
  return s->get_schema(s, out);
}
// A device stream declaring device_type declared whose arrays say actual.
void cb_make_device_stream(struct ArrowDeviceArrayStream* s, int32_t declared, int32_t actual);

// Consumers.
// Walks a whole exported tree: every node must be releasable; CPU device
// fields must be right. Returns the number of nodes, or -1 with a reason.
int64_t cb_walk(const struct ArrowSchema* s, const struct ArrowDeviceArray* a, char* why, int why_len);
// Sum of the valid values of an int32 array (honouring offset and validity).
int64_t cb_sum_int32(const struct ArrowArray* a);
// Moves child 0 out into out, then releases the parent.
void cb_move_child0_and_release(struct ArrowArray* parent, struct ArrowArray* out);
// Reads a stream to its end: returns rows read, or -errno with the message.
int64_t cb_consume_stream(struct ArrowArrayStream* s, char* err, int err_len, int64_t* batches);
int64_t cb_consume_device_stream(struct ArrowDeviceArrayStream* s, char* err, int err_len, int64_t* batches);
void cb_release_schema(struct ArrowSchema* s);
void cb_release_array(struct ArrowArray* a);
void cb_make_dangling_empty(struct ArrowSchema* s, struct ArrowArray* a);
