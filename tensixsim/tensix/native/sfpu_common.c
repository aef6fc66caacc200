/* The vector unit's shared helpers (sfpu.h): lane enables, the backdoor load, LReg writes and the PRNG
 * step, as tensixsim/tensix/sfpu/unit.py and sfpu/convert.py define them. */
#include "sfpu.h"

enum { ROWS_PER_COLUMN = 8 }; /* LaneConfig[lane & 7] row-mask bit ROW_MASK_SHIFT + lane / 8 */

uint32_t sfpu_mask_of(const uint8_t *bools)
{
    uint32_t mask = 0;
    for (uint32_t lane = 0; lane < LANES; lane++)
        mask |= (uint32_t)(bools[lane] != 0) << lane;
    return mask;
}

void sfpu_store_mask(uint8_t *bools, uint32_t values, uint32_t lanes)
{
    for (uint32_t lane = 0; lane < LANES; lane++)
        if (lanes >> lane & 1)
            bools[lane] = (uint8_t)(values >> lane & 1);
}

uint32_t sfpu_lane_enabled(const struct copro_view *v)
{
    /* LaneConfig[c]'s four row-mask bits mask lanes c, c + 8, c + 16 and c + 24 */
    uint32_t row_masked = 0;
    for (uint32_t column = 0; column < ROWS_PER_COLUMN; column++) {
        uint32_t rows = v->lane_config[column] >> SFPU_ROW_MASK_SHIFT;
        for (uint32_t r = 0; r < LANES / ROWS_PER_COLUMN; r++)
            row_masked |= (rows >> r & 1) << (r * ROWS_PER_COLUMN + column);
    }
    uint32_t flagged_off = 0;
    for (uint32_t lane = 0; lane < LANES; lane++)
        flagged_off |= (uint32_t)((v->use_lane_flags[lane] != 0) & (v->lane_flags[lane] == 0)) << lane;
    return ~(row_masked | flagged_off);
}

uint32_t sfpu_backdoor_lanes(const struct copro_view *v, uint32_t vd)
{
    if (vd < 12 || sfpu_scheduled(v))
        return 0;
    uint32_t lanes = 0;
    for (uint32_t lane = 0; lane < LANES; lane++)
        lanes |= (uint32_t)((v->lane_config[lane] & SFPU_DISABLE_BACKDOOR_LOAD) == 0) << lane;
    return lanes;
}

void sfpu_load_template(struct copro_view *v, uint32_t vd, uint32_t lanes, uint32_t word)
{
    if (vd < 12 || !lanes)
        return;
    uint32_t slot = (vd - 12) & 3; /* InstructionTemplate[4] */
    for (uint32_t lane = 0; lane < LANES; lane++)
        if (lanes >> lane & 1)
            v->macro_template[lane * 4 + slot] = word;
}

void sfpu_write_lanes(struct copro_view *v, uint32_t vd, const uint32_t values[LANES], uint32_t lanes)
{
    uint32_t *reg = sfpu_lreg(v, vd);
    for (uint32_t lane = 0; lane < LANES; lane++)
        if (lanes >> lane & 1)
            reg[lane] = values[lane];
}

void sfpu_write_with_flags(struct copro_view *v, uint32_t vd, const uint32_t values[LANES], uint32_t lanes,
                           uint32_t flags, int invert)
{
    sfpu_write_lanes(v, vd, values, lanes);
    if (vd < 8)
        sfpu_store_mask(v->lane_flags, invert ? ~flags : flags, lanes);
}

int sfpu_simple_dest(struct copro_view *v, uint32_t vd, uint32_t word)
{
    if (sfpu_writes_vd(vd))
        return 1;
    sfpu_load_template(v, vd, sfpu_backdoor_lanes(v, vd), word);
    return 0;
}

/* sfpu.convert._prng_step */
static uint32_t prng_step(uint32_t x)
{
    uint32_t parity = (uint32_t)__builtin_parity(x & SFPU_PRNG_TAPS);
    return (parity ^ 1u) << 31 | x >> 1;
}

void sfpu_advance_prng(struct copro_view *v, uint32_t lanes, uint32_t out[LANES])
{
    for (uint32_t lane = 0; lane < LANES; lane++) {
        out[lane] = v->prng[lane];
        if (lanes >> lane & 1)
            v->prng[lane] = prng_step(out[lane]);
    }
}
