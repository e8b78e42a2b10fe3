// A stream's bookkeeping in C (streams.OneShotStream.CRead), kept as its
// stream capsule's context: every read begins and ends in the stream's read
// gate here, with no call into Go for it. A foreign stream's reads run in C
// entirely (src); other streams' reads call Go once, for the read itself.
// Made and freed by stream.c, read by stream_read.c.
#pragma once

#include "binding.h"
#include "gate.h"

typedef struct {
  gda_read_gate* gate;     // a reference
  gda_stream_source* src;  // a foreign stream's C half, touched only inside the gate; or NULL
  int flags;               // what gdaStreamCRead says (module.h; atomic)
  gda_read_timer timer;    // GDA_AHEAD_WHEN_SLOW: which reads are timed (in the gate; gate.h)
  async_pace pace;         // an async for's (stream_async.c)
} stream_c_read;

static inline int flags_of(stream_c_read* c) { return __atomic_load_n(&c->flags, __ATOMIC_ACQUIRE); }
