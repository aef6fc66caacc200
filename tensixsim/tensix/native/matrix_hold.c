/* The matrix unit's hold after a data move (matrix.moves.held_until): a rule over instruction names,
 * rendered as opcode sets by gen_fields (MATRIX_HOLD_*) for each architecture, so every library has
 * it whichever of the matrix unit's instructions it runs. */
#include "matrix.h"
#include "ops.h"

static int opcode_in(const uint32_t set[8], uint32_t op)
{
    return (int)(set[(op >> 5) & 7] >> (op & 31) & 1);
}

int64_t tsim_matrix_hold(struct copro_view *v, uint32_t word, int64_t cycle)
{
    static const uint32_t held[MATRIX_HOLD_KINDS][8] = MATRIX_HOLD_HELD;
    static const uint32_t allowed[MATRIX_HOLD_KINDS][8] = MATRIX_HOLD_ALLOWED;
    int64_t kind = v->move_hold[0], until = v->move_hold[1];
    if (!kind || cycle >= until)
        return 0;
    if (kind < 1 || kind > (int64_t)MATRIX_HOLD_KINDS || until <= 0)
        return -1; /* no move left this state: Python's business */
    uint32_t k = (uint32_t)(kind - 1), op = OPCODE_OF(word);
    if (opcode_in(allowed[k], op))
        return 0;
    if (!(MATRIX_HOLD_EVERY >> k & 1) && !opcode_in(held[k], op))
        return 0;
    return until;
}
