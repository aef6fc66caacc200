/* The vector unit's FMA family (sfpu_float.c). */
#ifndef TENSIXSIM_SFPU_FLOAT_H
#define TENSIXSIM_SFPU_FLOAT_H
#include <stdint.h>

#include "copro.h"

/* sfpu_float.mad_hold for `word` issued at `cycle`: 0 it goes, 1 the hardware holds it a cycle for
 * an SFPMAD-family result, -1 Python decides (mad_hold would raise, or a case not modelled here). */
int tsim_sfpu_mad_hold(struct copro_view *v, uint32_t word, int64_t cycle);

#endif
