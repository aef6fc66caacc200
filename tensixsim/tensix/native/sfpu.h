/* What the native vector-unit handlers (sfpu_*.c) share: tensixsim/tensix/sfpu.py's helpers.
 *
 * A lane set is a uint32_t bit mask (bit i = lane i; SFPU_LANES is 32). The helpers mirror sfpu.py:
 * sfpu_lane_enabled is SfpuState.lane_enabled (VectorUnit.md IsLaneEnabled), sfpu_backdoor_lanes and
 * sfpu_load_template the backdoor load (an issued instruction, never a scheduled one: the native
 * engine runs no SFPLOADMACRO work), sfpu_write_lanes / sfpu_write_with_flags write_lanes /
 * write_with_flags. The functions live in sfpu_common.c. Every LReg index is masked to the array
 * (a 4-bit VD / VC never exceeds 15; LReg[16] is SFPLOADMACRO's only).
 *
 * A handler runs its checks first and returns NATIVE_DEFER before its first store (ops.h); it
 * defers too while SFPLOADMACRO work is outstanding or was scheduled for this cycle or later
 * (sfpu_macro_busy), as sfpu_macro.issue would run, discard or count it.
 */
#ifndef TENSIXSIM_NATIVE_SFPU_H
#define TENSIXSIM_NATIVE_SFPU_H
#include "ops.h"

/* The lane count is the width of a lane mask. */
_Static_assert(SFPU_LANES == 32, "sfpu.h lane masks are 32 bits: sfpu.LANES changed");
enum { LANES = SFPU_LANES, LREGS = SFPU_LREGS, STACK_DEPTH = SFPU_STACK_DEPTH };
#define ALL_LANES 0xFFFFFFFFu

/* LReg[r]'s 32 lanes (r < LREGS). */
static inline uint32_t *sfpu_lreg(const struct copro_view *v, uint32_t r)
{
    return v->lreg + (uint64_t)(r % LREGS) * LANES;
}

/* sfpu.signed12: a 12-bit field as a two's-complement value. */
static inline int32_t signed12(uint32_t value)
{
    value &= 0xFFFu;
    return (value & 0x800u) ? (int32_t)value - 0x1000 : (int32_t)value;
}

/* A uint8 bool array of LANES entries as a lane mask, and back (only the lanes in `lanes`). */
uint32_t sfpu_mask_of(const uint8_t *bools);
void sfpu_store_mask(uint8_t *bools, uint32_t values, uint32_t lanes);

/* SfpuState.lane_enabled(): LaneConfig's row mask, then the lane flags where they are in use. */
uint32_t sfpu_lane_enabled(const struct copro_view *v);

/* sfpu.backdoor_lanes for an issued instruction: the lanes where VD >= 12 is a backdoor load
 * (LaneConfig.DISABLE_BACKDOOR_LOAD clear); 0 for VD < 12. */
uint32_t sfpu_backdoor_lanes(const struct copro_view *v, uint32_t vd);

/* sfpu.load_template: `word` to LoadMacroConfig.InstructionTemplate[VD - 12] of `lanes` (VD >= 12;
 * nothing for an empty mask). */
void sfpu_load_template(struct copro_view *v, uint32_t vd, uint32_t lanes, uint32_t word);

/* sfpu.write_lanes: LReg[vd] = values on `lanes`. */
void sfpu_write_lanes(struct copro_view *v, uint32_t vd, const uint32_t values[LANES], uint32_t lanes);

/* sfpu.write_with_flags: write_lanes, then (VD < 8) LaneFlags = flags (complemented if `invert`) on
 * `lanes`; `flags` is a lane mask. */
void sfpu_write_with_flags(struct copro_view *v, uint32_t vd, const uint32_t values[LANES], uint32_t lanes,
                           uint32_t flags, int invert);

/* sfpu.simple_operands for an issued instruction: 1 if VD < 8 (the caller does the lane work on
 * sfpu_lane_enabled's lanes), else 0 having done the backdoor load of VD 12..15 (`word`). */
int sfpu_simple_dest(struct copro_view *v, uint32_t vd, uint32_t word);

/* sfpu_convert.advance_prng: each lane's PRNG state before the step to `out` (every lane), the state
 * of `lanes` advanced one AdvancePRNG step. */
void sfpu_advance_prng(struct copro_view *v, uint32_t lanes, uint32_t out[LANES]);

/* sfpu_integer.clz32: leading zeros of a 32-bit value (32 for zero). */
static inline uint32_t clz32(uint32_t x)
{
    return x ? (uint32_t)__builtin_clz(x) : 32u;
}

/* Nonzero while SFPLOADMACRO work is outstanding (a valid macro_pending row) or its clock marks this
 * cycle or a later one (SWAP_NEXT, UNITS_AT): sfpu_macro.issue's business, so the handler defers. */
int sfpu_macro_busy(const struct copro_view *v, int64_t cycle);

/* sfpu_move.c: tensixsim/tensix/sfpu.py */
int64_t sfpu_sfpload(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t sfpu_sfpstore(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t sfpu_sfploadi(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t sfpu_sfpmov(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t sfpu_sfpnop(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t sfpu_sfpconfig(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);

/* sfpu_flags.c: tensixsim/tensix/sfpu_flags.py */
int64_t sfpu_sfpsetcc(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t sfpu_sfpencc(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t sfpu_sfpcompc(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t sfpu_sfppushc(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t sfpu_sfppopc(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);

/* sfpu_integer.c: tensixsim/tensix/sfpu_integer.py */
int64_t sfpu_sfpand(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t sfpu_sfpor(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t sfpu_sfpxor(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t sfpu_sfpnot(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t sfpu_sfpiadd(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t sfpu_sfpshft(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t sfpu_sfplz(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t sfpu_sfpabs(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t sfpu_sfpexexp(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t sfpu_sfpexman(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t sfpu_sfpsetexp(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t sfpu_sfpsetman(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t sfpu_sfpsetsgn(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);

#endif
