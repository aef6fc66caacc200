/* The SrcA / SrcB banks between the unpackers and the matrix unit: ZEROSRC, SETDVALID and CLEARDVALID
 * (regs.py: Wormhole's pages, one encoding on both chips) and UNPACR_NOP (unpack/src_banks.py, and
 * Wormhole's encoding of it, unpack/wormhole.py: Nop, ZEROSRC, SETDVALID), bit for bit and cycle for
 * cycle as the Python semantics execute them: the banks cleared, handed to the matrix unit (the
 * unpacker's SrcRow back to SRCA_SET_Base / SRCB_SET_Base) or given back to the unpackers, the
 * hand-overs still on their way dropped by CLEARDVALID's Reset.
 *
 * Deferred to Python, before anything is written: set bits beyond a documented operand, UNPACR_NOP's
 * forms Python raises on (OverlayClear and SETREG, a clear to one or to a register value, Blackhole's
 * reserved clr_to1_fmt_ctrl, Wormhole's mode 6), and a bank index beyond the arrays. Its waits (the
 * unpacker still fetching, the bank not handed to the unpackers) are the engine's, with Python's reason.
 */
#include "matrix_frame.h"

enum { BANKS = MATRIX_SRC_BANKS, BANK_DATUMS = MATRIX_SRC_ROWS * MATRIX_SRC_COLS };
_Static_assert(MXF_SRCA_SET_BASE_THREAD && MXF_SRCB_SET_BASE_THREAD,
               "SETDVALID reads SRCA_SET_Base / SRCB_SET_Base from ThreadConfig (Config.thread_field)");

/* Every datum of Src file `file`'s bank `bank` becomes `value` (regs.src(file)[bank] = value). */
static void fill_bank(struct copro_view *v, uint32_t file, uint32_t bank, uint32_t value)
{
    uint32_t *datum = (file == MATRIX_SRCA ? v->srca : v->srcb) + (uint64_t)bank * BANK_DATUMS;
    if (!value) {
        memset(datum, 0, BANK_DATUMS * sizeof *datum);
        return;
    }
    for (uint32_t i = 0; i < BANK_DATUMS; i++)
        datum[i] = value;
}

/* The unpacker's SrcRow after a hand-over: its pipe's SRCA_SET_Base / SRCB_SET_Base << 4; 0 when the field
 * lies beyond the arrays. */
static int set_base(const struct copro_view *v, uint32_t t, uint32_t file, uint32_t *row)
{
    uint32_t base;
    int ok = file == MATRIX_SRCA ? FIELD(v, t, 0, SRCA_SET_BASE, &base) : FIELD(v, t, 0, SRCB_SET_BASE, &base);
    *row = base << 4;
    return ok;
}

/* SETDVALID's model for one file (src_banks.flip handing over at once): the unpacker's current bank
 * becomes the matrix unit's, the unpacker goes on with the other one from SrcRow `row`. */
static void hand_to_matrix(struct copro_view *v, uint32_t t, uint32_t file, uint32_t row)
{
    v->src_client[file * BANKS + v->unpacker_bank[file]] = MATRIX_CLIENT_MATRIX_UNIT;
    v->unpacker_bank[file] ^= 1;
    v->unpacker_src_row[(uint64_t)file * v->threads + t] = row;
}

/* ------------------------------------------------------------------------------ ZEROSRC, CLEARDVALID, SETDVALID */

enum { ZEROSRC_NEGATIVE_INF_BITS = 1, CLEARDVALID_RESET_BITS = 2, SETDVALID_FLIP_BITS = 2 };
enum { CLEARDVALID_RESET = 1, CLEARDVALID_KEEP_READING = 2 };

/* regs.zerosrc: ClearSrcA / ClearSrcB, each in both banks, the matrix unit's or the unpacker's; SrcA to
 * negative infinity with NegativeInfSrcA. */
int64_t src_banks_zerosrc(struct copro_view *v, uint32_t t, uint32_t word, int64_t cycle)
{
    uint32_t neg_inf = F_ZEROSRC_ZERO_VAL(word), both = F_ZEROSRC_BANK_MASK(word);
    uint32_t matrix_side = F_ZEROSRC_WRITE_MODE(word), files = F_ZEROSRC_SRC_MASK(word);
    uint32_t bank[2];
    (void)t, (void)cycle;
    if (neg_inf >> ZEROSRC_NEGATIVE_INF_BITS)
        return NATIVE_DEFER; /* UndefinedBehavior */
    for (uint32_t file = MATRIX_SRCA; file <= MATRIX_SRCB; file++) {
        bank[file] = matrix_side ? v->matrix_bank[file] : v->unpacker_bank[file];
        if (files >> file & 1 && !both && bank[file] >= BANKS)
            return NATIVE_DEFER;
    }
    for (uint32_t file = MATRIX_SRCA; file <= MATRIX_SRCB; file++) {
        if (!(files >> file & 1))
            continue;
        uint32_t value = neg_inf && file == MATRIX_SRCA ? MATRIX_SRC_MASK : 0;
        for (uint32_t b = both ? 0 : bank[file]; b <= (both ? BANKS - 1 : bank[file]); b++)
            fill_bank(v, file, b, value);
    }
    return MATRIX_RETIRE_DEFAULT;
}

/* regs.cleardvalid: Reset (everything back to the unpackers, bank 0, no hand-over pending), or FlipSrcA /
 * FlipSrcB giving the matrix unit's bank back, which it then leaves unless KeepReadingSameSrc. */
int64_t src_banks_cleardvalid(struct copro_view *v, uint32_t t, uint32_t word, int64_t cycle)
{
    uint32_t reset = F_CLEARDVALID_RESET(word), flips = F_CLEARDVALID_CLEARDVALID(word);
    (void)t, (void)cycle;
    if (reset >> CLEARDVALID_RESET_BITS)
        return NATIVE_DEFER; /* UndefinedBehavior */
    if (reset & CLEARDVALID_RESET) {
        for (uint32_t i = 0; i < 2 * BANKS; i++) {
            v->src_client[i] = MATRIX_CLIENT_UNPACKERS;
            v->src_handover_at[i] = -1;
        }
        v->matrix_bank[MATRIX_SRCA] = v->matrix_bank[MATRIX_SRCB] = 0;
        v->unpacker_bank[MATRIX_SRCA] = v->unpacker_bank[MATRIX_SRCB] = 0;
        return MATRIX_RETIRE_DEFAULT;
    }
    for (uint32_t file = MATRIX_SRCA; file <= MATRIX_SRCB; file++)
        if (flips >> file & 1 && v->matrix_bank[file] >= BANKS)
            return NATIVE_DEFER;
    for (uint32_t file = MATRIX_SRCA; file <= MATRIX_SRCB; file++) {
        if (!(flips >> file & 1))
            continue;
        v->src_client[file * BANKS + v->matrix_bank[file]] = MATRIX_CLIENT_UNPACKERS;
        if (!(reset & CLEARDVALID_KEEP_READING))
            v->matrix_bank[file] ^= 1;
    }
    return MATRIX_RETIRE_DEFAULT;
}

/* regs.setdvalid: FlipSrcA / FlipSrcB hand the unpackers' current banks to the matrix unit. */
int64_t src_banks_setdvalid(struct copro_view *v, uint32_t t, uint32_t word, int64_t cycle)
{
    uint32_t flips = F_SETDVALID_SETVALID(word), row[2] = {0, 0};
    (void)cycle;
    if (flips >> SETDVALID_FLIP_BITS)
        return NATIVE_DEFER; /* UndefinedBehavior */
    for (uint32_t file = MATRIX_SRCA; file <= MATRIX_SRCB; file++)
        if (flips >> file & 1 && (v->unpacker_bank[file] >= BANKS || !set_base(v, t, file, &row[file])))
            return NATIVE_DEFER;
    for (uint32_t file = MATRIX_SRCA; file <= MATRIX_SRCB; file++)
        if (flips >> file & 1)
            hand_to_matrix(v, t, file, row[file]);
    return MATRIX_RETIRE_DEFAULT;
}

/* ------------------------------------------------------------------------------ UNPACR_NOP */

/* src_banks.nop_zerosrc (UNPACR_NOP_ZEROSRC.md): once the bank WaitLikeUnpacr names (the unpacker's, else
 * the matrix unit's) is the unpackers', clear the unpacker's bank or both, SrcA to negative infinity
 * with NegativeInfSrcA; then SETDVALID's model if `set_dvalid`. */
static int64_t nop_zerosrc(struct copro_view *v, uint32_t t, uint32_t unit, uint32_t neg_inf, uint32_t both,
                           uint32_t wait_like_unpacr, uint32_t set_dvalid)
{
    uint32_t unpack_bank = v->unpacker_bank[unit], row = 0;
    uint32_t wait_bank = wait_like_unpacr ? unpack_bank : v->matrix_bank[unit];
    if (unpack_bank >= BANKS || wait_bank >= BANKS)
        return NATIVE_DEFER;
    if (v->src_client[unit * BANKS + wait_bank] != MATRIX_CLIENT_UNPACKERS)
        return native_wait(v, WAIT_UNPACKER_BANK, -1, unit * BANKS + wait_bank);
    if (set_dvalid && !set_base(v, t, unit, &row))
        return NATIVE_DEFER;
    uint32_t value = neg_inf && unit == MATRIX_SRCA ? MATRIX_SRC_MASK : 0;
    for (uint32_t b = both ? 0 : unpack_bank; b <= (both ? BANKS - 1 : unpack_bank); b++)
        fill_bank(v, unit, b, value);
    if (set_dvalid)
        hand_to_matrix(v, t, unit, row);
    return MATRIX_UNPACR_NOP_CYCLES;
}

/* src_banks.nop_setdvalid (UNPACR_NOP_SETDVALID.md). */
static int64_t nop_setdvalid(struct copro_view *v, uint32_t t, uint32_t unit)
{
    uint32_t row;
    if (v->unpacker_bank[unit] >= BANKS || !set_base(v, t, unit, &row))
        return NATIVE_DEFER;
    hand_to_matrix(v, t, unit, row);
    return MATRIX_UNPACR_NOP_CYCLES;
}

#ifdef TSIM_WORMHOLE
/* unpack/wormhole.py's UNPACR_NOP: one operand whose low bits pick the mode: ZEROSRC when [1:0] is 1
 * (NegativeInfSrcA bit 2, BothBanks 3, WaitLikeUnpacr 4, nothing above), else [2:0] 2 Nop and 7 SETDVALID
 * (nothing above bit 2); OverlayClear (0, 3), SETREG (4) and mode 6 are Python's. */
enum { NOP_ZEROSRC = 1, NOP_NOP = 2, NOP_SETDVALID = 7, NOP_ZEROSRC_BITS = 5, NOP_MODE_BITS = 3 };

static int64_t unpacr_nop(struct copro_view *v, uint32_t t, uint32_t word, int64_t cycle)
{
    uint32_t unit = F_UNPACR_NOP_UNPACK_BLOCK_SELECTION(word), op = F_UNPACR_NOP_NO_OP(word);
    if (v->unpack_end[unit] > cycle) /* fetch.fetch_wait: sequenced after the unpacker's UNPACR */
        return native_wait(v, WAIT_UNPACKER_FETCHING, v->unpack_end[unit], unit);
    if ((op & 3) == NOP_ZEROSRC)
        return op >> NOP_ZEROSRC_BITS ? NATIVE_DEFER : nop_zerosrc(v, t, unit, op >> 2 & 1, op >> 3 & 1, op >> 4 & 1, 0);
    uint32_t mode = op & 7;
    if ((mode != NOP_NOP && mode != NOP_SETDVALID) || op >> NOP_MODE_BITS)
        return NATIVE_DEFER; /* Unimplemented, UndefinedBehavior */
    return mode == NOP_SETDVALID ? nop_setdvalid(v, t, unit) : MATRIX_UNPACR_NOP_CYCLES;
}
#else
/* src_banks.unpacr_nop's readings of Blackhole's table: unpack_pop 2 is Nop, or with clr_to1_fmt_ctrl 3
 * SETDVALID (every other operand 0); unpack_pop 1 is ZEROSRC (src_clr_val_ctrl 0 / 1: zero / negative
 * infinity, bank_clr_ctrl BothBanks, stall_clr_cntrl WaitLikeUnpacr, set_dvalid bit 0 a SETDVALID after);
 * unpack_pop 0 / 3 (NoC overlay writes) are Python's. */
enum { POP_ZEROSRC = 1, POP_NOP = 2, FMT_SETDVALID = 3, SET_DVALID_BITS = 1, CLEAR_VALUE_MODELLED = 2 };

static int64_t unpacr_nop(struct copro_view *v, uint32_t t, uint32_t word, int64_t cycle)
{
    uint32_t unit = F_UNPACR_NOP_UNPACKER_SELECT(word), pop = F_UNPACR_NOP_UNPACK_POP(word);
    uint32_t set_dvalid = F_UNPACR_NOP_SET_DVALID(word), fmt = F_UNPACR_NOP_CLR_TO1_FMT_CTRL(word);
    uint32_t wait_like_unpacr = F_UNPACR_NOP_STALL_CLR_CNTRL(word), both = F_UNPACR_NOP_BANK_CLR_CTRL(word);
    uint32_t clear_value = F_UNPACR_NOP_SRC_CLR_VAL_CTRL(word);
    uint32_t stream = F_UNPACR_NOP_STREAM_ID(word) | F_UNPACR_NOP_MSG_CLR_CNT(word);
    if (v->unpack_end[unit] > cycle) /* fetch.fetch_wait: sequenced after the unpacker's UNPACR */
        return native_wait(v, WAIT_UNPACKER_FETCHING, v->unpack_end[unit], unit);
    if (pop == POP_NOP) {
        if (stream || set_dvalid || wait_like_unpacr || both || clear_value)
            return NATIVE_DEFER; /* UndefinedBehavior */
        if (fmt == FMT_SETDVALID)
            return nop_setdvalid(v, t, unit);
        return fmt ? NATIVE_DEFER : MATRIX_UNPACR_NOP_CYCLES;
    }
    if (pop != POP_ZEROSRC || stream || set_dvalid >> SET_DVALID_BITS || clear_value >= CLEAR_VALUE_MODELLED || fmt)
        return NATIVE_DEFER; /* Unimplemented, UndefinedBehavior */
    return nop_zerosrc(v, t, unit, clear_value, both, wait_like_unpacr, set_dvalid);
}
#endif

int64_t src_banks_unpacr_nop(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    return unpacr_nop(v, thread, word, cycle);
}
