// Counters and fault injection of the fake CUDA driver (see README.md).
#pragma once

enum { FAKECUDA_HTOD = 1, FAKECUDA_DTOH = 2, FAKECUDA_DTOD = 3, FAKECUDA_HTOH = 4 };

long long fakecuda_live_allocations(void);       // live device allocations
long long fakecuda_live_host_allocations(void);  // live pinned-host and managed allocations
long long fakecuda_live_bytes(void);             // live device bytes
long long fakecuda_live_events(void);
long long fakecuda_live_streams(void);
long long fakecuda_bytes_copied(int direction);  // cumulative, per FAKECUDA_* direction
long long fakecuda_copy_calls(int direction);    // cumulative copy calls per direction
long long fakecuda_sync_count(void);             // cumulative synchronizations
long long fakecuda_call_count(const char* fn);   // cumulative calls of a driver function
void fakecuda_reset_counters(void);              // zero the cumulative counters (not the live ones)
// The n-th call (1-based, from now) of fn returns error without side effects.
void fakecuda_fail_nth(const char* fn, int n, int error);
void fakecuda_clear_faults(void);
int fakecuda_device_count(void);
int fakecuda_device_of(unsigned long long ptr);  // -1 when no live allocation holds ptr
long long fakecuda_primary_ctx_retains(int device);  // cuDevicePrimaryCtxRetain calls for device
int fakecuda_context_depth(void);                    // the calling thread's context stack depth
int fakecuda_sticky_error(int device);               // the sticky error poisoning device's context, or 0
long long fakecuda_host_flags(void* p);              // cuMemHostAlloc flags of pinned memory, -1 if not pinned
// FAKECUDA_COSTS=h200: 1 when the fake charges the H200 table (docs/cuda.md).
int fakecuda_costs_enabled(void);
// Cumulative modelled transfer time of copies (bytes over the modelled
// bandwidth, without latencies), in ns; zeroed by fakecuda_reset_counters.
long long fakecuda_modelled_copy_ns(void);
// Cumulative time (ns) by which calls that moved bytes, or gave a freed
// device allocation's pages back, ran past the end the cost model gives them
// (this host's memmove slower than the modelled link, the kernel's release
// of the fake's shadow pages); a wall clock less this is the model's time.
// Zeroed by fakecuda_reset_counters.
long long fakecuda_overrun_ns(void);
// Cumulative model time (ns) of the costed calls: each call from its start to
// the end the cost model gives it (its busy-wait's goal), however long this
// host took. Zeroed by fakecuda_reset_counters; 0 while costs are off.
long long fakecuda_charged_ns(void);
