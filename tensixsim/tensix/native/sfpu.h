/* What the native vector-unit handlers (sfpu_*.c) share: tensixsim/tensix/sfpu/unit.py's helpers.
 *
 * A lane set is a uint32_t bit mask (bit i = lane i; SFPU_LANES is 32). The helpers mirror sfpu/unit.py:
 * sfpu_lane_enabled is SfpuState.lane_enabled (VectorUnit.md IsLaneEnabled), sfpu_backdoor_lanes and
 * sfpu_load_template the backdoor load (an issued instruction's only), sfpu_write_lanes / sfpu_write_with_flags write_lanes /
 * write_with_flags. The functions live in sfpu_common.c. Every LReg index is masked to the array
 * (a 4-bit VD / VC never exceeds 15; LReg[16] is SFPLOADMACRO's only).
 *
 * A handler runs its checks first and returns NATIVE_DEFER before its first store (ops.h). The same
 * handlers run the instructions SFPLOADMACRO schedules (sfpu_macro.c): then v->sched holds the
 * operands SFPLOADMACRO gave them, read through sfpu_vd / sfpu_vb / sfpu_vc (the VD / VB / VC fields,
 * spliced as sfpu.macro._splice does) and sfpu_implicit_vb / _vc (where a model assigns VB = VD or
 * VC = VD: Context.implicit_vb / implicit_vc); LaneConfig.DISABLE_BACKDOOR_LOAD reads as set, and
 * VD 16 names LReg[16] (written where the models say VD < 8 || VD == 16: sfpu_writes_vd).
 */
#ifndef TENSIXSIM_NATIVE_SFPU_H
#define TENSIXSIM_NATIVE_SFPU_H
#include "ops.h"

/* copro_view.sched (SCHED_VB / _VC: SFPU_MACRO_NONE when not overridden). SCHED_IDLE is a hint for
 * sfpu_macro_pending: 1 when no macro_pending row is valid. Only the native scheduler makes a row
 * valid while C runs, and Python clears the hint whenever its code may have run (it never sets it). */
enum { SCHED_ON, SCHED_VB, SCHED_VC, SCHED_VD, SCHED_IDLE, SCHED_FIELDS };

static inline int sfpu_scheduled(const struct copro_view *v) { return v->sched[SCHED_ON] != 0; }

/* sfpu.macro._splice: `field` with its low four bits replaced by an LReg index (16 passes as is). */
static inline uint32_t sfpu_splice(uint32_t field, int64_t operand)
{
    return operand > 15 ? (uint32_t)operand : (field & ~0xFu) | (uint32_t)operand;
}

/* The VD field as the instruction sees it. */
static inline uint32_t sfpu_vd(const struct copro_view *v, uint32_t field)
{
    return sfpu_scheduled(v) ? sfpu_splice(field, v->sched[SCHED_VD]) : field;
}

/* A VB / VC field (lreg_src_b, SFPAND / SFPOR's Imm12; lreg_c, lreg_src_c) as the instruction sees it. */
static inline uint32_t sfpu_vb(const struct copro_view *v, uint32_t field)
{
    return sfpu_scheduled(v) && v->sched[SCHED_VB] != SFPU_MACRO_NONE ? sfpu_splice(field, v->sched[SCHED_VB])
                                                                       : field;
}

static inline uint32_t sfpu_vc(const struct copro_view *v, uint32_t field)
{
    return sfpu_scheduled(v) && v->sched[SCHED_VC] != SFPU_MACRO_NONE ? sfpu_splice(field, v->sched[SCHED_VC])
                                                                       : field;
}

/* VB / VC of a model that assigns VB = VD / VC = VD. */
static inline uint32_t sfpu_implicit_vb(const struct copro_view *v, uint32_t vd)
{
    return sfpu_scheduled(v) && v->sched[SCHED_VB] != SFPU_MACRO_NONE ? (uint32_t)v->sched[SCHED_VB] : vd;
}

static inline uint32_t sfpu_implicit_vc(const struct copro_view *v, uint32_t vd)
{
    return sfpu_scheduled(v) && v->sched[SCHED_VC] != SFPU_MACRO_NONE ? (uint32_t)v->sched[SCHED_VC] : vd;
}

/* Whether the models write LReg[VD] (VD < 8, or LReg[16], which only SFPLOADMACRO names). */
static inline int sfpu_writes_vd(uint32_t vd) { return vd < 8 || vd == 16; }

/* The lane count is the width of a lane mask. */
_Static_assert(SFPU_LANES == 32, "sfpu.h lane masks are 32 bits: sfpu.unit.LANES changed");
enum { LANES = SFPU_LANES, LREGS = SFPU_LREGS, STACK_DEPTH = SFPU_STACK_DEPTH };
#define ALL_LANES 0xFFFFFFFFu

/* LReg[r]'s 32 lanes (r < LREGS). */
static inline uint32_t *sfpu_lreg(const struct copro_view *v, uint32_t r)
{
    return v->lreg + (uint64_t)(r % LREGS) * LANES;
}

/* sfpu.unit.signed12: a 12-bit field as a two's-complement value. */
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

/* sfpu.unit.backdoor_lanes: the lanes where VD >= 12 is a backdoor load (LaneConfig.DISABLE_BACKDOOR_LOAD
 * clear); 0 for VD < 12 and for a scheduled instruction. */
uint32_t sfpu_backdoor_lanes(const struct copro_view *v, uint32_t vd);

/* sfpu.unit.load_template: `word` to LoadMacroConfig.InstructionTemplate[VD - 12] of `lanes` (VD >= 12;
 * nothing for an empty mask). */
void sfpu_load_template(struct copro_view *v, uint32_t vd, uint32_t lanes, uint32_t word);

/* sfpu.unit.write_lanes: LReg[vd] = values on `lanes`. */
void sfpu_write_lanes(struct copro_view *v, uint32_t vd, const uint32_t values[LANES], uint32_t lanes);

/* sfpu.unit.write_with_flags: write_lanes, then (VD < 8) LaneFlags = flags (complemented if `invert`) on
 * `lanes`; `flags` is a lane mask. */
void sfpu_write_with_flags(struct copro_view *v, uint32_t vd, const uint32_t values[LANES], uint32_t lanes,
                           uint32_t flags, int invert);

/* sfpu.unit.simple_operands: 1 if VD < 8 or 16 (the caller does the lane work on sfpu_lane_enabled's
 * lanes), else 0 having done the backdoor load of VD 12..15 (`word`; none when scheduled). */
int sfpu_simple_dest(struct copro_view *v, uint32_t vd, uint32_t word);

/* sfpu.convert.advance_prng: each lane's PRNG state before the step to `out` (every lane), the state
 * of `lanes` advanced one AdvancePRNG step. */
void sfpu_advance_prng(struct copro_view *v, uint32_t lanes, uint32_t out[LANES]);

/* sfpu.integers.clz32: leading zeros of a 32-bit value (32 for zero). */
static inline uint32_t clz32(uint32_t x)
{
    return x ? (uint32_t)__builtin_clz(x) : 32u;
}

/* sfpu_macro.c: SFPLOADMACRO and the work it schedules (tensixsim/tensix/sfpu/macro.py). */
int sfpu_macro_pending(struct copro_view *v);
/* settle(cycle) (cycle < 0: settle(None)): 1 done; 0 Python must go on from where it stopped (a
 * scheduled instruction this engine does not run, or an error: the state is as before that step). */
int sfpu_macro_settle(struct copro_view *v, int64_t cycle);
/* sfpu.macro.issue around `handler` for an issued vector-unit instruction (settled already). */
typedef int64_t (*sfpu_handler)(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t sfpu_macro_issue(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle, sfpu_handler handler);
int64_t sfpu_sfploadmacro(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);

/* sfpu_hazard.c: tensixsim/tensix/sfpu/hazards.py (Wormhole's rules for the next cycle). ok: 1 when
 * the instruction `word` issued at `cycle` breaks no rule (0: Python raises UndefinedBehavior); record:
 * leave a rule of `kind` (SFPU_HAZARD_*) for the instruction issued at cycle + 1. */
int tsim_sfpu_hazard_ok(const struct copro_view *v, uint32_t word, int64_t cycle);
void sfpu_hazard_record(struct copro_view *v, int64_t cycle, uint32_t kind, uint32_t no_read, uint32_t no_write);

/* sfpu_move.c: tensixsim/tensix/sfpu/dst.py, sfpu/unit.py */
int64_t sfpu_sfpload(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t sfpu_sfpstore(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t sfpu_sfploadi(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t sfpu_sfpmov(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t sfpu_sfpnop(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t sfpu_sfpconfig(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
/* sfpu.dst.load_plan (SFPLOAD's functional model, SFPLOADMACRO's load too): sfpu_load_plan returns 1 with
 * the plan (Addr in `addr`) or NATIVE_DEFER having changed nothing; sfpu_load_commit makes the changes. */
struct load_plan {
    uint32_t vd, word, backdoor, addr, sp, lanes, capture;
    uint32_t datum[LANES], index[LANES], rwcs[RWC_FIELDS];
};
int64_t sfpu_load_plan(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle, uint32_t vd,
                       uint32_t mod0_field, uint32_t am, uint32_t imm10, struct load_plan *p);
void sfpu_load_commit(struct copro_view *v, uint32_t thread, const struct load_plan *p);
/* The scheduled SFPSTORE (sfpu.macro._execute): LReg[vd] to Dst at `addr`, Mod0 `mod0` (SrcB
 * resolved), every lane allowed; TIMING_SFPU_ISSUE, or NATIVE_DEFER having changed nothing. */
int64_t sfpu_scheduled_store(struct copro_view *v, uint32_t thread, uint32_t vd, uint32_t mod0, uint32_t addr,
                             int64_t cycle);

/* sfpu_flags.c: tensixsim/tensix/sfpu/flags.py */
int64_t sfpu_sfpsetcc(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t sfpu_sfpencc(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t sfpu_sfpcompc(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t sfpu_sfppushc(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t sfpu_sfppopc(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);

/* sfpu_integer.c: tensixsim/tensix/sfpu/integers.py */
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
