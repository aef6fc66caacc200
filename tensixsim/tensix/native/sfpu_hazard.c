/* The rules Wormhole's unstalled vector-unit instructions leave for the next cycle, exactly as
 * tensixsim/tensix/sfpu/hazards.py checks them (its docstring gives the rules and their pages): which
 * LRegs an instruction reads and may write (hazards.reads / writes, as bit masks), and whether the
 * instruction issued on the cycle a rule applies to breaks it (hazards.check). The wait gate asks
 * (engine.c sfpu_gate); an instruction that breaks a rule goes to Python, which raises
 * UndefinedBehavior. Blackhole never records a rule, so its gate never asks.
 *
 * The instructions that leave a rule record it themselves (sfpu_hazard_record), as the Python
 * semantics do: Wormhole's SFPMAD family (sfpu_float.c) and SFPSHFT2 (sfpu_lanes.c), when issued (the
 * work SFPLOADMACRO schedules leaves none, sfpu_macro.c).
 */
#include "sfpu.h"

/* LReg r as a set (none beyond the LRegs: hazards.mask). */
static uint32_t reg(uint32_t r) { return r < LREGS ? 1u << r : 0; }

static uint32_t regs_below(uint32_t n) { return (1u << n) - 1; }

/* hazards._indices: every lane's LReg[7] & 15, as a set. */
static uint32_t indices_of_l7(const struct copro_view *v)
{
    const uint32_t *l7 = sfpu_lreg(v, 7);
    uint32_t set = 0;
    for (uint32_t lane = 0; lane < LANES; lane++)
        set |= 1u << (l7[lane] & 15);
    return set;
}

static int any_lane_config(const struct copro_view *v, uint32_t bits)
{
    for (uint32_t lane = 0; lane < LANES; lane++)
        if ((v->lane_config[lane] & bits) == bits)
            return 1;
    return 0;
}

/* hazards._loadmacro_vd */
static uint32_t loadmacro_vd(uint32_t word)
{
    return (F_SFPLOADMACRO_DEST_REG_ADDR(word) & 1) << 2 | (F_SFPLOADMACRO_LREG_IND(word) & 3);
}

/* The instructions laid out as SFPIADD (imm12_math, lreg_c or lreg_src_c, lreg_dest, instr_mod1): VC,
 * VD and Mod1 of any of them, read through SFPIADD's fields. */
#define VC(w) F_SFPIADD_LREG_C(w)
#define VD(w) F_SFPIADD_LREG_DEST(w)
#define MOD1(w) F_SFPIADD_INSTR_MOD1(w)
_Static_assert(F_SFPSWAP_LREG_SRC_C(0xFFFFFFFFu) == F_SFPIADD_LREG_C(0xFFFFFFFFu)
                   && F_SFPSHFT2_LREG_SRC_C(0x00000F00u) == F_SFPIADD_LREG_C(0x00000F00u)
                   && F_SFP_STOCH_RND_LREG_SRC_C(0x00000F00u) == F_SFPIADD_LREG_C(0x00000F00u)
                   && F_SFPMAD_LREG_DEST(0x000000F0u) == F_SFPIADD_LREG_DEST(0x000000F0u)
                   && F_SFPCAST_LREG_DEST(0x000000F0u) == F_SFPIADD_LREG_DEST(0x000000F0u)
                   && F_SFPMAD_INSTR_MOD1(0x0000000Fu) == F_SFPIADD_INSTR_MOD1(0x0000000Fu)
                   && F_SFPCONFIG_INSTR_MOD1(0x0000000Fu) == F_SFPIADD_INSTR_MOD1(0x0000000Fu),
               "the vector unit's VC / VD / Mod1 slots moved");

/* hazards.reads */
static uint32_t reads(const struct copro_view *v, uint32_t word)
{
    uint32_t vc = VC(word), vd = VD(word), mod1 = MOD1(word);
    switch (OPCODE_OF(word)) {
    case OP_SFPMAD: case OP_SFPADD: case OP_SFPMUL: {
        uint32_t got = reg(F_SFPMAD_LREG_SRC_B(word)) | reg(F_SFPMAD_LREG_SRC_C(word));
        got |= mod1 & 4 ? reg(7) | indices_of_l7(v) : reg(F_SFPMAD_LREG_SRC_A(word) & 15);
        return got | (mod1 & 8 ? reg(7) : 0);
    }
    case OP_SFPADDI: case OP_SFPMULI: return reg(vd) | (mod1 & 8 ? reg(7) : 0);
    case OP_SFPLUT: return regs_below(4) | (F_SFPLUT_INSTR_MOD0(word) & 8 ? reg(7) : 0);
    case OP_SFPLUTFP32: return ((mod1 & 10) == 10 ? regs_below(4) : regs_below(7)) | (mod1 & 8 ? reg(7) : 0);
    case OP_SFPLOADI: { /* the modes that keep half of VD */
        uint32_t target = F_SFPLOADI_LREG_IND(word), mod0 = F_SFPLOADI_INSTR_MOD0(word);
        return (mod0 == 8 || mod0 == 10) && target < 8 ? reg(target) : 0;
    }
    case OP_SFPLOAD: case OP_SFPLOADMACRO: {
        uint32_t target = OPCODE_OF(word) == OP_SFPLOAD ? F_SFPLOAD_LREG_IND(word) : loadmacro_vd(word);
        uint32_t mod0 = F_SFPLOAD_INSTR_MOD0(word);
        return (mod0 == SFPU_FMT_LO16_ONLY || mod0 == SFPU_FMT_HI16_ONLY) && target < 8 ? reg(target) : 0;
    }
    case OP_SFPSTORE: return reg(F_SFPSTORE_LREG_IND(word));
    case OP_SFPMOV: return mod1 & 8 ? 0 : reg(vc);
    case OP_SFPSETCC: return mod1 & 9 ? 0 : reg(vc);
    case OP_SFPLZ: case OP_SFPABS: case OP_SFPEXEXP: case OP_SFPEXMAN: case OP_SFPNOT: case OP_SFPDIVP2:
        return reg(vc);
    case OP_SFPCAST: return reg(F_SFPCAST_LREG_SRC_C(word)); /* (a 16-bit slot) */
    case OP_SFPXOR: case OP_SFPAND: case OP_SFPOR: case OP_SFPSWAP: return reg(vc) | reg(vd);
    case OP_SFPSETEXP: case OP_SFPSETMAN: case OP_SFPSETSGN: case OP_SFPIADD:
        return mod1 & 1 ? reg(vc) : reg(vc) | reg(vd);
    case OP_SFPSHFT: return mod1 & 1 ? reg(vd) : reg(vc) | reg(vd);
    case OP_SFPCONFIG: {
        uint32_t target = F_SFPCONFIG_CONFIG_DEST(word);
        int from_l0 = target <= 3 || (!(mod1 & 1) && target != 9 && target != 10);
        return from_l0 ? reg(0) : 0;
    }
    case OP_SFPSHFT2: {
        uint32_t vb = F_SFPSHFT2_IMM12_MATH(word) & 15;
        switch (mod1) {
        case 0: return reg(1) | reg(2) | reg(3);
        case 1: return regs_below(4);
        case 2: return reg(1) | reg(2) | reg(3) | reg(vc);
        case 3: case 4: return reg(vc);
        case 5: return reg(vb) | reg(vc);
        case 6: return reg(vb);
        default: return 0;
        }
    }
    case OP_SFPTRANSP: return regs_below(8);
    case OP_SFP_STOCH_RND: {
        int int_int = ((mod1 & 7) == 4 || (mod1 & 7) == 5) && !(mod1 & 8);
        return reg(vc) | (int_int ? reg(F_SFP_STOCH_RND_LREG_SRC_B(word)) : 0);
    }
    default: return 0;
    }
}

/* hazards.writes */
static uint32_t writes(const struct copro_view *v, uint32_t word)
{
    uint32_t vc = VC(word), vd = VD(word), mod1 = MOD1(word), op = OPCODE_OF(word);
    switch (op) {
    case OP_SFPCONFIG: return reg(F_SFPCONFIG_CONFIG_DEST(word)) & (reg(11) | reg(12) | reg(13) | reg(14));
    case OP_SFPSETCC: case OP_SFPENCC: case OP_SFPPUSHC: case OP_SFPPOPC: case OP_SFPCOMPC: case OP_SFPNOP:
    case OP_SFPSTORE:
        return 0;
    case OP_SFPLOAD: case OP_SFPLOADMACRO: {
        uint32_t target = op == OP_SFPLOAD ? F_SFPLOAD_LREG_IND(word) : loadmacro_vd(word);
        if (target >= 8)
            return 0;
        int capture = target < 4 && any_lane_config(v, SFPU_ENABLE_DEST_INDEX | SFPU_CAPTURE_DEFAULT_DEST_INDEX);
        return reg(target) | (capture ? reg(target + 4) : 0);
    }
    case OP_SFPLOADI: vd = F_SFPLOADI_LREG_IND(word); break;
    case OP_SFPLUT:
        vd = F_SFPLUT_LREG_IND(word);
        if (F_SFPLUT_INSTR_MOD0(word) & 8)
            return indices_of_l7(v) & regs_below(8);
        break;
    case OP_SFPLUTFP32:
        vd = F_SFPLUTFP32_LREG_DEST(word) & 15;
        /* fall through: INDIRECT_VD is Mod1's bit 3, as for the others */
    case OP_SFPMAD: case OP_SFPADD: case OP_SFPMUL: case OP_SFPADDI: case OP_SFPMULI:
        if (mod1 & 8)
            return indices_of_l7(v) & regs_below(8);
        break;
    case OP_SFPSWAP: {
        uint32_t got = (vc < 8 ? reg(vc) : 0) | (vd < 8 ? reg(vd) : 0);
        if (any_lane_config(v, SFPU_ENABLE_DEST_INDEX))
            got |= reg(4 + (vc & 3)) | reg(4 + (vd & 3));
        return got;
    }
    case OP_SFPTRANSP: return regs_below(8);
    case OP_SFPSHFT2:
        if (mod1 <= 2)
            return regs_below(4);
        break;
    default: break;
    }
    return vd < 8 ? reg(vd) : 0;
}

static const uint32_t after_shuffle[8] = SFPU_HAZARD_AFTER_SHUFFLE_INIT;

int tsim_sfpu_hazard_ok(const struct copro_view *v, uint32_t word, int64_t cycle)
{
    const int64_t *h = v->hazard;
    if (h[SFPU_HAZARD_AT] != cycle)
        return 1;
    if (reads(v, word) & (uint32_t)h[SFPU_HAZARD_NO_READ] || writes(v, word) & (uint32_t)h[SFPU_HAZARD_NO_WRITE])
        return 0;
    if (h[SFPU_HAZARD_KIND] == SFPU_HAZARD_LANE_SHUFFLE) {
        uint32_t op = OPCODE_OF(word);
        if (after_shuffle[op >> 5] >> (op & 31) & 1)
            return 0;
        if (op == OP_SFPSHFT2 && SFPU_HAZARD_AFTER_SHUFFLE_SHFT2_MODES >> MOD1(word) & 1)
            return 0;
    }
    return 1;
}

void sfpu_hazard_record(struct copro_view *v, int64_t cycle, uint32_t kind, uint32_t no_read, uint32_t no_write)
{
    v->hazard[SFPU_HAZARD_AT] = cycle + 1;
    v->hazard[SFPU_HAZARD_NO_READ] = no_read;
    v->hazard[SFPU_HAZARD_NO_WRITE] = no_write;
    v->hazard[SFPU_HAZARD_KIND] = kind;
}
