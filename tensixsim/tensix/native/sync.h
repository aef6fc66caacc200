/* The wait gate of the sync unit (sync.c), for the engine. */
#ifndef TENSIXSIM_NATIVE_SYNC_H
#define TENSIXSIM_NATIVE_SYNC_H
#include <stdint.h>

#include "copro.h"

/* sync.gate_blocks for `word` on thread `t` at `cycle` (forgetting a met latch, recording the mutex
 * of an ATGETM that passes, as it does): 0 it passes, a WAIT_* reason (with *detail) while held, -1
 * Python decides (a stream only Python reads, an odd bank) having changed nothing. */
int tsim_sync_gate(struct copro_view *v, uint32_t t, uint32_t word, int64_t cycle, int64_t *detail);

/* sync.gate_release_cycle: the first cycle from `cycle` at which the latch of `t` is met with no other
 * state change, or -1 when only a state change can meet it. */
int64_t tsim_sync_release(const struct copro_view *v, uint32_t t, int64_t cycle);

#endif
