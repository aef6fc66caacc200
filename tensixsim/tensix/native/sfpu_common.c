/* The vector unit's shared helpers (sfpu.h): lane enables, the backdoor load, LReg writes and the PRNG
 * step, as tensixsim/tensix/sfpu/unit.py and sfpu/convert.py define them. */
#include "sfpu.h"

#include <string.h>

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

/* Bit i set where byte i of the 8 bytes at p is nonzero (bits 0..7). */
static uint32_t nonzero_bytes(const uint8_t *p)
{
    uint64_t x;
    memcpy(&x, p, sizeof x);
    const uint64_t low7 = 0x7F7F7F7F7F7F7F7Full;
    uint64_t high = (((x & low7) + low7) | x) & ~low7; /* each byte's top bit: the byte is nonzero */
    return (uint32_t)(((high >> 7) * 0x0102040810204080ull) >> 56);
}

uint32_t sfpu_lane_enabled(const struct copro_view *v)
{
    /* LaneConfig[c]'s four row-mask bits mask lanes c, c + 8, c + 16 and c + 24: the multiply puts
     * bit r at bit 8r (partial products 7 bits apart never overlap a 4-bit value) */
    _Static_assert(LANES == 4 * ROWS_PER_COLUMN, "four rows of eight lanes");
    uint32_t row_masked = 0;
    for (uint32_t column = 0; column < ROWS_PER_COLUMN; column++) {
        uint32_t rows = v->lane_config[column] >> SFPU_ROW_MASK_SHIFT & 0xFu;
        row_masked |= (rows * 0x00204081u & 0x01010101u) << column;
    }
    uint32_t flagged_off = 0; /* UseLaneFlagsForLaneEnable and not LaneFlags */
    for (uint32_t chunk = 0; chunk < LANES / 8; chunk++) {
        uint32_t use = nonzero_bytes(v->use_lane_flags + 8 * chunk), on = nonzero_bytes(v->lane_flags + 8 * chunk);
        flagged_off |= (use & ~on) << (8 * chunk);
    }
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
