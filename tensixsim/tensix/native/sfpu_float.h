/* The native vector-unit instructions of sfpu_float.c (tensixsim/tensix/sfpu/floats.py: the MAD
 * sub-unit's FMA family, SFPDIVP2, SFPARECIP, SFPGT, SFPLE, and the wait gate's hold for an
 * SFPMAD-family result), sfpu_lanes.c (sfpu/lanes.py) and sfpu_convert.c (sfpu/convert.py). */
#ifndef TENSIXSIM_SFPU_FLOAT_H
#define TENSIXSIM_SFPU_FLOAT_H
#include <stdint.h>

#include "copro.h"

/* sfpu.floats.mad_hold for `word` issued at `cycle`: 0 it goes, 1 the hardware holds it a cycle for
 * an SFPMAD-family result, -1 Python decides (mad_hold would raise, or a case not modelled here). */
int tsim_sfpu_mad_hold(struct copro_view *v, uint32_t word, int64_t cycle);

/* sfpu.floats.fma on one lane: x * y + z of FP32 bit patterns as the MAD sub-unit computes it. */
uint32_t tsim_sfpu_fma(uint32_t x, uint32_t y, uint32_t z);

/* sfpu.fma.fma_wormhole on one lane: x * y + z as Wormhole's MAD sub-unit computes it. */
uint32_t tsim_sfpu_fma_wormhole(uint32_t x, uint32_t y, uint32_t z);

/* The handlers (ops.c dispatch): the cycles of the Python semantics' Retire, or NATIVE_DEFER. */
int64_t sfpu_sfpmad(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t sfpu_sfpadd(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t sfpu_sfpmul(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t sfpu_sfpaddi(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t sfpu_sfpmuli(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t sfpu_sfpmul24(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t sfpu_sfplut(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t sfpu_sfplutfp32(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t sfpu_sfpdivp2(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t sfpu_sfparecip(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t sfpu_sfpgt(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t sfpu_sfple(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);

/* sfpu_lanes.c: tensixsim/tensix/sfpu/lanes.py */
int64_t sfpu_sfpswap(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t sfpu_sfptransp(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t sfpu_sfpshft2(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);

/* sfpu_convert.c: tensixsim/tensix/sfpu/convert.py */
int64_t sfpu_sfpcast(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t sfpu_sfp_stoch_rnd(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);

#endif
