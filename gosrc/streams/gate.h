// The read gate of a stream that is read once (OneShotStream): who may read
// now, and what the other callers are told. It is the one implementation of
// "take a ready array, else mark the stream busy": Go's OneShotStream calls
// it through cgo, a binding's C calls it directly, so that a foreign
// stream's plain reads need no Go at all (docs/design.md, "A stream's
// life").
//
// No lock is held while the producer works: a producer may need a lock its
// caller holds elsewhere (a Python producer needs the GIL, which a thread
// closing the stream holds). Instead a read marks the gate busy, and:
//   - a second reader waits for it, in slices when asked to (so that its
//     caller can attend to signals between them);
//   - a reader on the thread that is inside this stream's producer (the
//     producer reads the stream it feeds) is refused at once;
//   - closing or moving the stream out during a read is refused (the caller
//     waits for the gate to be idle, without its own locks, and tries again).
// An array read but not delivered (its reader was interrupted) waits in the
// unread slot for the next read, so that nothing is lost.
//
// Every function is safe to call from any thread and none calls a producer.
#pragma once

#include <stdint.h>

typedef struct gda_read_gate gda_read_gate;

// An array in the unread slot: a held record (held.h), or a Go array (a
// runtime/cgo handle that Go made and resolves); at most one is set.
typedef struct {
  void* held;
  uintptr_t array;
} gda_gate_slot;

// What a gate operation answers.
enum {
  GDA_GATE_GO = 0,         // go ahead: read (then gda_gate_end), close, or move out
  GDA_GATE_UNREAD = 1,     // an interrupted read's array: in *slot for a read (the caller owns it)
  GDA_GATE_BUSY = 2,       // a read is in progress (a wait for it ran out)
  GDA_GATE_CLOSED = 3,     // closed or moved out: every later use is refused
  GDA_GATE_REENTRANT = 4,  // the caller's thread is inside this stream's producer
};

// n new open gates into out[0..n), made together (a slab): 0, or ENOMEM
// with none made. The slab holds one reference, which gda_gate_unref of any
// of its gates drops.
int gda_gates_new(gda_read_gate** out, int n);
// A reference to g, which keeps its slab (all of its gates) alive.
void gda_gate_ref(gda_read_gate* g);
// Drops a reference to g's slab; the last frees the slab (what a slot held
// was given back by gda_gate_close or gda_gate_take, or nothing was there).
void gda_gate_unref(gda_read_gate* g);

// Begins a read. A read in progress is waited for, for at most wait_ms
// (<= 0: as long as it takes), then BUSY; a caller that names its thread
// (thread != 0, see gda_current_thread) gets REENTRANT instead of waiting
// when that read is its own, or when its thread is the one in the watched
// producer cell (see gda_gate_watch_producer). Then CLOSED, or UNREAD with
// the unread array moved into *slot, or GO: the gate is marked busy with
// the caller's thread until gda_gate_end.
int gda_gate_begin(gda_read_gate* g, int64_t wait_ms, uint64_t thread, gda_gate_slot* slot);
// gda_gate_begin for a caller that must not wait (an event loop): CLOSED;
// BUSY during a read or when may_read is 0 (a stream whose reads call the
// producer); UNREAD; or GO (busy, thread unnamed).
int gda_gate_try_begin(gda_read_gate* g, int may_read, gda_gate_slot* slot);
// Ends the read begun by GO, and wakes those waiting for it.
void gda_gate_end(gda_read_gate* g);

// Puts an array that a read returned but could not deliver in the unread
// slot: 1 when kept, 0 when the caller must release it (the gate is closed,
// or an array is already waiting).
int gda_gate_unread(gda_read_gate* g, gda_gate_slot slot);

// Closes the gate: BUSY during a read (nothing changes: wait with
// gda_gate_wait_idle, then close again), CLOSED when it was closed already,
// or GO: now closed, with the unread array (if any) moved into *slot for
// the caller to release along with the stream.
int gda_gate_close(gda_read_gate* g, gda_gate_slot* slot);
// Closes the gate for a stream being moved out whole: BUSY during a read,
// CLOSED, UNREAD when an interrupted read's array waits (nothing changes:
// it must be read first), or GO (now closed; the slot was empty).
int gda_gate_take(gda_read_gate* g);
// Waits up to wait_ms (<= 0: no wait) for the read in progress to end: 1
// when the gate is idle.
int gda_gate_wait_idle(gda_read_gate* g, int64_t wait_ms);
// Watches a read-ahead's producer cell: the thread its goroutine is on while
// it is inside the producer (0: none), which it stores atomically. The cell
// must stay valid while the gate is open (the read-ahead lives as long as
// the stream that reads it).
void gda_gate_watch_producer(gda_read_gate* g, const uint64_t* cell);
// Whether the gate is closed (1) or open (0).
int gda_gate_closed(gda_read_gate* g);
// The callers now waiting in gda_gate_begin (for tests that order a race).
int gda_gate_waiters(gda_read_gate* g);

// Whether a read blocked (where a stream is read: docs/design.md, "Where a
// prefetched stream reads"). A timed read is timed on the wall clock (two
// vDSO readings, about 50 ns: 5% of a fast read, so after the stream's first
// GDA_TIMED_FIRST_READS, while reads stay fast, one in GDA_TIMED_READ_STRIDE
// is timed, the stride doubling after each fast timed read up to
// GDA_TIMED_READ_STRIDE_MAX: one in 16 still cost 0.7-1.1% of a fast read,
// more than its instructions, since the clock's reading waits for the
// instructions before it; every read after a slow one is timed, and the
// stride starts over after it); only a read after
// one that took over GDA_WAIT_READ_NS is also measured: the thread's CPU
// time (CLOCK_THREAD_CPUTIME_ID) and voluntary context switches (getrusage),
// two system calls a fast stream never pays for. Not getrusage's CPU time:
// the kernel adds a running thread's time to it only at its next tick or
// switch, so a read that began after the consumer's own work was charged
// that work too (a read that slept 200 µs after 200 µs of the consumer's
// work measured 250-300 µs of CPU, and a slow producer stayed in the
// consumer's thread for 10 to 114 reads instead of 2). A measured read
// blocked when it took over GDA_WAIT_READ_NS, under half of it on the
// thread's CPU, and the thread gave up the CPU itself (it waited for I/O, a
// lock or a device; a preempted thread did not), or when it worked over
// GDA_SLOW_READ_NS.
enum { GDA_WAIT_READ_NS = 50 * 1000, GDA_SLOW_READ_NS = 2 * 1000 * 1000 };
enum { GDA_TIMED_FIRST_READS = 8, GDA_TIMED_READ_STRIDE = 16, GDA_TIMED_READ_STRIDE_MAX = 64 };
typedef struct {
  int64_t wall, cpu;  // ns (cpu: the calling thread's, when measured)
  long waits;         // the calling thread's voluntary context switches, when measured
} gda_read_clock;
// The clock now, with the thread's CPU time and switches when measured.
gda_read_clock gda_read_clock_now(int measured);
// Whether a read from t0 to t1 (both taken with the same measured) blocked.
int gda_read_blocked(gda_read_clock t0, gda_read_clock t1, int measured);

// The timing of one stream's reads in its reader's thread, by the rule above
// (a binding's prefetched stream: capsule/stream_read.c). Zero is a stream not
// read yet; one reader at a time uses it (inside the stream's read gate).
//
// A stream moves after GDA_BLOCKED_READS_TO_MOVE measured reads in a row that
// blocked, not one: a read of a producer that needs the GIL waits for it
// while another thread holds it, which the measure cannot tell from a wait
// for I/O (a thread's first reads, while the thread that started it takes
// the GIL back, waited so: 125 µs, 42 of them on the CPU). Such waits pass;
// a producer's waits for I/O go on.
enum { GDA_BLOCKED_READS_TO_MOVE = 2 };
typedef struct {
  int suspect;         // the last timed read was slow (or a caller said so): the next is timed and measured
  int timed_reads;     // timed so far, counted up to GDA_TIMED_FIRST_READS
  int untimed_left;    // fast reads to leave untimed before the next timed one
  int stride;          // the stride of the timed reads (0: none yet)
  int blocked_in_row;  // measured reads in a row that blocked
} gda_read_timer;
// Whether this read is timed. paced: the caller times its reads its own way
// (an event loop's pacing), so the read is timed only when suspect. Inline:
// it runs on every read of a prefetched stream in its reader's thread, and as
// a function of gate.c it was a call the compiler could not inline into its
// caller (about 1% of a fast read, which was prefetch's whole gap to the
// plain loop). The call itself was direct: the library exports none of
// gosrc's C functions, so no call between its C files goes through a PLT.
static inline int gda_read_timer_due(gda_read_timer* t, int paced) {
  if (t->suspect) return 1;
  if (paced) return 0;
  if (t->untimed_left > 0) {
    t->untimed_left--;
    return 0;
  }
  return 1;
}
// The clock at the start of a timed read.
gda_read_clock gda_read_timer_start(const gda_read_timer* t);
// After a timed read that began at t0: whether the stream should move to its
// read-ahead (GDA_BLOCKED_READS_TO_MOVE reads in a row blocked); sets how the
// next reads are timed.
int gda_read_timer_end(gda_read_timer* t, gda_read_clock t0);
