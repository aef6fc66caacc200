/* The matrix unit's lane shifts and transposes within its Src banks, SHIFTXA, SHIFTXB and TRNSPSRCB, and
 * its two housekeeping instructions without emulator state, GATESRCRST and CLREXPHIST, bit for bit and
 * cycle for cycle as tensixsim/tensix/matrix/src_shifts.py executes them (its docstring gives the
 * readings: SHIFTXA's input rows from the SrcA row address last latched, SHIFTXB's row with the SrcB
 * RWC, raw datums, no blocked lane), on both chips (Wormhole's SHIFTXB encoding: matrix/wormhole.py).
 *
 * Deferred to Python, before anything is written: set bits beyond a documented operand, SHIFTXA's
 * reserved directions and its input rows when no latched SrcA row address says which block they are
 * and the blocks' shifts differ (Unimplemented), an ADDR_MOD slot or RWC state whose Blackhole meaning
 * is undocumented, a bank index beyond the arrays. A bank not handed to the matrix unit is a wait.
 */
#include "matrix_frame.h"

enum { ROWS = MATRIX_SHIFT_ROWS, LAST_COL = COLS - 1 };
enum { SHIFTXB_ROW_BITS = 6, SHIFTXB_ZERO_BITS = 1, GATE_RESET_BITS = 1 };
_Static_assert(MATRIX_SHIFT_ROWS == MATRIX_SRC_COLS, "TRNSPSRCB transposes a square block");

/* The matrix unit's bank of `file`, writable: NULL with *go set to NATIVE_WAIT until it is the matrix
 * unit's (src_shifts._owned), NATIVE_DEFER for a bank index beyond the arrays. */
static uint32_t *owned_bank(struct copro_view *v, uint32_t file, int64_t *go)
{
    uint32_t bank = v->matrix_bank[file];
    if (bank >= MATRIX_SRC_BANKS) {
        *go = NATIVE_DEFER;
        return NULL;
    }
    if (v->src_client[file * MATRIX_SRC_BANKS + bank] != MATRIX_CLIENT_MATRIX_UNIT) {
        *go = native_wait(v, WAIT_MATRIX_BANK, -1, file);
        return NULL;
    }
    return (file == MATRIX_SRCA ? v->srca : v->srcb) + (uint64_t)bank * MATRIX_SRC_ROWS * COLS;
}

/* ------------------------------------------------------------------------------ SHIFTXA */

/* src_shifts.shift_block: sixteen rows from `in` shifted one lane right or left, the vacated lane 0. */
static void shift_block(const uint32_t *in, uint32_t direction, uint32_t out[ROWS][COLS])
{
    for (uint32_t r = 0; r < ROWS; r++, in += COLS) {
        if (direction == MATRIX_SHIFT_RIGHT) {
            out[r][0] = 0;
            memcpy(&out[r][1], in, LAST_COL * sizeof *in);
        } else {
            memcpy(&out[r][0], in + 1, LAST_COL * sizeof *in);
            out[r][LAST_COL] = 0;
        }
    }
}

/* src_shifts.shiftxa: SrcA rows 0..15 of the matrix unit's bank become the sixteen rows of the aligned
 * block holding the latched SrcA row address, shifted; with no address latched, the block's shift must
 * not depend on which block it is. */
static int64_t shiftxa(struct copro_view *v, uint32_t word)
{
    uint32_t direction = F_SHIFTXA_SHIFT_MODE(word);
    if (F_SHIFTXA_LOG2_AMOUNT2(word) || (direction != MATRIX_SHIFT_RIGHT && direction != MATRIX_SHIFT_LEFT))
        return NATIVE_DEFER; /* UndefinedBehavior */
    int64_t go;
    uint32_t *bank = owned_bank(v, MATRIX_SRCA, &go);
    if (!bank)
        return go;
    uint32_t result[ROWS][COLS], other[ROWS][COLS];
    int64_t latch = v->srca_row_latch[0];
    if (latch >= 0) {
        shift_block(bank + ((uint64_t)latch & MATRIX_SRC_ROW_MASK & ~(ROWS - 1)) * COLS, direction, result);
    } else {
        shift_block(bank, direction, result);
        for (uint32_t start = ROWS; start < MATRIX_SRC_ROWS; start += ROWS) {
            shift_block(bank + (uint64_t)start * COLS, direction, other);
            if (memcmp(result, other, sizeof result))
                return NATIVE_DEFER; /* Unimplemented: the input rows are unknown */
        }
    }
    memcpy(bank, result, sizeof result);
    return MATRIX_ISSUE_CYCLES;
}

/* ------------------------------------------------------------------------------ SHIFTXB */

/* src_shifts._shiftxb: SrcB row SrcRow + the SrcB RWC (mod 64) of the matrix unit's bank rotated one lane
 * towards lane 0 (with ShiftInZero lane 15 cleared instead), then ApplyAddrMod. */
static int64_t shiftxb(struct copro_view *v, uint32_t t, uint32_t word)
{
    uint32_t addr_mode = F_SHIFTXB_ADDR_MODE(word), zero = F_SHIFTXB_ROT_SHIFT(word);
    uint32_t row = F_SHIFTXB_SHIFT_ROW(word), rwcs[RWC_FIELDS];
    if (addr_mode >> ADDR_MODE_BITS || zero >> SHIFTXB_ZERO_BITS || row >> SHIFTXB_ROW_BITS)
        return NATIVE_DEFER; /* UndefinedBehavior */
    int64_t go;
    uint32_t *bank = owned_bank(v, MATRIX_SRCB, &go);
    if (!bank)
        return go;
    if (!adc_plan_addr_mod(v, t, addr_mode, 1, rwcs))
        return NATIVE_DEFER;
    uint32_t *datum = bank + (uint64_t)((row + v->rwc[RWC_SRCB][t]) & MATRIX_SRC_ROW_MASK) * COLS;
    uint32_t first = datum[0];
    memmove(datum, datum + 1, LAST_COL * sizeof *datum);
    datum[LAST_COL] = zero ? 0 : first;
    for (uint32_t i = 0; i < RWC_FIELDS; i++)
        v->rwc[i][t] = rwcs[i];
    return TIMING_MATRIX_SHIFTXB;
}

/* ------------------------------------------------------------------------------ TRNSPSRCB */

/* src_shifts.trnspsrcb: the 16x16 block in rows 16..31 of the matrix unit's SrcB bank transposed. */
static int64_t trnspsrcb(struct copro_view *v)
{
    int64_t go;
    uint32_t *bank = owned_bank(v, MATRIX_SRCB, &go);
    if (!bank)
        return go;
    uint32_t *block = bank + (uint64_t)MATRIX_TRANSPOSE_BASE * COLS;
    for (uint32_t r = 0; r < ROWS; r++)
        for (uint32_t c = r + 1; c < COLS; c++) {
            uint32_t x = block[r * COLS + c];
            block[r * COLS + c] = block[c * COLS + r];
            block[c * COLS + r] = x;
        }
    return MATRIX_ISSUE_CYCLES;
}

/* ------------------------------------------------------------------------------ dispatch */

int64_t matrix_shiftxa(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    (void)thread, (void)cycle;
    return shiftxa(v, word);
}

int64_t matrix_shiftxb(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    (void)cycle;
    return shiftxb(v, thread, word);
}

int64_t matrix_trnspsrcb(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    (void)thread, (void)word, (void)cycle;
    return trnspsrcb(v);
}

/* src_shifts.gatesrcrst: no operand cache or gating is modelled; InvalidateSrcBCache is one bit. */
int64_t matrix_gatesrcrst(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    (void)v, (void)thread, (void)cycle;
    return F_GATESRCRST_RESET_SRCB_GATE_CONTROL(word) >> GATE_RESET_BITS ? NATIVE_DEFER : MATRIX_ISSUE_CYCLES;
}

/* src_shifts.clrexphist: the packers' exponent histograms are not kept. */
int64_t matrix_clrexphist(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    (void)v, (void)thread, (void)word, (void)cycle;
    return MATRIX_ISSUE_CYCLES;
}
