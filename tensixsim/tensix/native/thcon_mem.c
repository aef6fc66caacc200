/* Scalar unit (ThCon): the L1 loads, stores and atomics, REG2FLOP and FLUSHDMA, exactly as
 * tensixsim/tensix/thcon.py executes them.
 *
 * L1 is read and written through v->l1; every store's range goes to v->l1_written so that Python tells
 * the tile (Tile.coprocessor_wrote_l1), as Coprocessor.l1_write would have.
 *
 * Deferred to Python: every operand thcon.py rejects (UndefinedBehavior: a slot beyond its documented
 * width, mem_hier_sel=1 on an atomic, REG2FLOP target_sel 1, an address beyond L1), STOREIND's MMIO
 * and SrcA/SrcB forms (a register access through the tile; unmodelled source registers), the Waits
 * (ATCAS comparing unequal, ATINCGETPTR on a full or empty FIFO: Python's pipe must watch those L1
 * bytes, which only Python's Engine sets up), an ATSWAP whose granules are not contiguous (Python
 * notifies each granule; one merged range would also cover bytes it did not write), and a REG2FLOP
 * configuration store config.c would defer (its Config state or an effect beyond the word).
 *
 * L1 words are assembled byte by byte, as int.from_bytes(..., "little") reads them, so the host's
 * byte order does not matter.
 */
#include "ops.h"

#define HALF_MASK 0xFFFFu /* a half-register */
enum {
    GROUP_MASK = 0x3C,       /* the first GPR of an aligned group of four */
    GROUP_BYTES = 16,        /* four GPRs as they sit in memory */
    L1_UNIT = 16,            /* GPR[AddrReg] counts 16-byte units of L1 */
    OFFSET_INDEX_BITS = 7,   /* LOADIND: OffsetHalfReg in an 8-bit slot */
    ATINCGET_WIDTH_BITS = 5, /* ATINCGET: IntWidth in wrap_val's 9-bit slot */
    ATSWAP_DATA_BITS = 6,    /* ATSWAP: DataRegIndex in an 8-bit slot */
    ATCAS_SETVAL_BITS = 4,   /* ATCAS: SetVal in swap_val's 5-bit slot */
    GRANULES = 8,            /* ATSWAP: 16-bit granules of the 16 bytes */
    FLUSH_SPEC_BITS = 4,     /* FLUSHDMA: four conditions in a 24-bit slot */
    REG2FLOP_ADC_INDEX_BITS = 6,
    REG2FLOP_TARGET_CONFIG = 0,
    REG2FLOP_TARGET_UNDEFINED = 1,
    ADC_NONE = 3, /* REG2FLOP ADCSel 3: documented to write nothing */
};
#define ATINCGETPTR_DEFAULT_CAPACITY 0x8000u /* thcon.py: wrap_val 0 */
#define FLUSH_ALL 0xFu                       /* FLUSHDMA flush_spec 0: every condition */

/* LOADIND / STOREIND (L1) Size encodings: bytes moved; the address is aligned down to it. */
static const uint32_t access_sizes[4] = {16, 4, 2, 1};
static const uint32_t offset_increments[4] = THCON_OFFSET_INCREMENTS_INIT;

static uint32_t get_half(const uint32_t *gprs, uint32_t half)
{
    return (gprs[half >> 1] >> (16 * (half & 1))) & HALF_MASK;
}

static void set_half(uint32_t *gprs, uint32_t half, uint32_t value)
{
    uint32_t shift = 16 * (half & 1);
    gprs[half >> 1] = (gprs[half >> 1] & ~(HALF_MASK << shift)) | ((value & HALF_MASK) << shift);
}

/* Whether [address, address + size) lies in L1: thcon.py checks the first byte, Coprocessor.l1_read and
 * l1_write the whole access; executing only when both pass keeps every raising case in Python. */
static int in_l1(const struct copro_view *v, uint64_t address, uint64_t size)
{
    return address + size <= v->l1_size;
}

static uint32_t load_le(const struct copro_view *v, uint64_t address, uint32_t size)
{
    uint32_t value = 0;
    for (uint32_t i = 0; i < size; i++)
        value |= (uint32_t)v->l1[address + i] << (8 * i);
    return value;
}

static void store_le(struct copro_view *v, uint64_t address, uint32_t size, uint32_t value)
{
    for (uint32_t i = 0; i < size; i++)
        v->l1[address + i] = (uint8_t)(value >> (8 * i));
}

/* thcon.py _masked_add: the low bits `mask` advance by `increment`, wrapping there; the rest stay. */
static uint32_t masked_add(uint32_t original, uint32_t increment, uint32_t mask)
{
    return ((original + increment) & mask) | (original & ~mask);
}

/* ------------------------------------------------------------------------------ LOADIND, STOREIND */

/* GPR[AddrReg] * 16 + half-register `offset` (32-bit wrap, as thcon.py masks). */
static uint32_t indexed_address(const uint32_t *gprs, uint32_t offset, uint32_t addr_reg)
{
    return gprs[addr_reg] * L1_UNIT + get_half(gprs, offset);
}

int64_t thcon_loadind(struct copro_view *v, uint32_t thread, uint32_t word)
{
    uint32_t offset = F_LOADIND_OFFSET_INDEX(word), data_reg = F_LOADIND_DATA_REG_INDEX(word);
    if (offset >> OFFSET_INDEX_BITS)
        return NATIVE_DEFER;
    uint32_t *gprs = pipe_gprs(v, thread);
    uint32_t address = indexed_address(gprs, offset, F_LOADIND_ADDR_REG_INDEX(word));
    uint32_t size = access_sizes[F_LOADIND_SIZE_SEL(word)];
    uint64_t at = address & ~(size - 1);
    if (!in_l1(v, address, 1) || !in_l1(v, at, size))
        return NATIVE_DEFER;
    set_half(gprs, offset, get_half(gprs, offset) + offset_increments[F_LOADIND_AUTO_INC_SPEC(word)]);
    /* The load lands after the increment: a destination holding the offset ends with the data. */
    if (size == GROUP_BYTES) {
        uint32_t first = data_reg & GROUP_MASK;
        for (uint32_t i = 0; i < 4; i++)
            gprs[first + i] = load_le(v, at + 4 * i, 4);
    } else {
        uint32_t keep = size == 4 ? 0 : ~((1u << (8 * size)) - 1); /* the GPR's bits above the data */
        gprs[data_reg] = (gprs[data_reg] & keep) | load_le(v, at, size);
    }
    return TIMING_THCON_LOAD_STORE;
}

int64_t thcon_storeind(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    /* mem_hier_sel 0 is the MMIO form or a SrcA/SrcB store: Python's. */
    if (!F_STOREIND_MEM_HIER_SEL(word))
        return NATIVE_DEFER;
    uint32_t offset = F_STOREIND_OFFSET_INDEX(word), data_reg = F_STOREIND_DATA_REG_INDEX(word);
    uint32_t *gprs = pipe_gprs(v, thread);
    uint32_t address = indexed_address(gprs, offset, F_STOREIND_ADDR_REG_INDEX(word));
    /* The two slots form the 2-bit Size. */
    uint32_t size = access_sizes[(F_STOREIND_SIZE_SEL(word) << 1) | F_STOREIND_REG_SIZE_SEL(word)];
    uint64_t at = address & ~(size - 1);
    if (!in_l1(v, address, 1) || !in_l1(v, at, size))
        return NATIVE_DEFER;
    set_half(gprs, offset, get_half(gprs, offset) + offset_increments[F_STOREIND_AUTO_INC_SPEC(word)]);
    /* The data is read after the increment (as documented): a data register holding the offset
     * stores the incremented value. */
    if (size == GROUP_BYTES) {
        uint32_t first = data_reg & GROUP_MASK;
        for (uint32_t i = 0; i < 4; i++)
            store_le(v, at + 4 * i, 4, gprs[first + i]);
    } else {
        store_le(v, at, size, gprs[data_reg]);
    }
    note_l1_written(v, (int64_t)at, (int64_t)(at + size), cycle);
    return TIMING_THCON_LOAD_STORE;
}

/* ------------------------------------------------------------------------------ atomics */

/* GPR[AddrReg] * 16 + 4 * word (32-bit wrap). */
static uint32_t atomic_address(const uint32_t *gprs, uint32_t addr_reg, uint32_t word_index)
{
    return gprs[addr_reg] * L1_UNIT + 4 * word_index;
}

int64_t thcon_atincget(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    uint32_t width = F_ATINCGET_WRAP_VAL(word), data_reg = F_ATINCGET_DATA_REG_INDEX(word);
    if (F_ATINCGET_MEM_HIER_SEL(word) || width >> ATINCGET_WIDTH_BITS)
        return NATIVE_DEFER;
    uint32_t *gprs = pipe_gprs(v, thread);
    uint32_t address = atomic_address(gprs, F_ATINCGET_ADDR_REG_INDEX(word), F_ATINCGET_SEL32B(word));
    if (!in_l1(v, address, 4))
        return NATIVE_DEFER;
    uint32_t mask = (uint32_t)((2ull << width) - 1); /* IntWidth + 1 bits: all 32 at IntWidth 31 */
    uint32_t original = load_le(v, address, 4);
    store_le(v, address, 4, masked_add(original, gprs[data_reg], mask));
    gprs[data_reg] = original;
    note_l1_written(v, address, (int64_t)address + 4, cycle);
    return TIMING_THCON_ATOMIC;
}

int64_t thcon_atincgetptr(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    if (F_ATINCGETPTR_MEM_HIER_SEL(word))
        return NATIVE_DEFER;
    uint32_t *gprs = pipe_gprs(v, thread);
    uint32_t base = atomic_address(gprs, F_ATINCGETPTR_ADDR_REG_INDEX(word), 0);
    /* The FIFO's words (rd, wr and the two that sel32b 2 and 3 name) are one aligned 16 bytes. */
    if (!in_l1(v, base, GROUP_BYTES))
        return NATIVE_DEFER;
    uint32_t wrap = F_ATINCGETPTR_WRAP_VAL(word), sel = F_ATINCGETPTR_SEL32B(word);
    uint32_t rd = load_le(v, base, 4), wr = load_le(v, (uint64_t)base + 4, 4);
    uint32_t occupancy = wr - rd;
    if (sel & 1) { /* odd word: a push, which needs room */
        uint32_t capacity = wrap ? 1u << (wrap - 1) : ATINCGETPTR_DEFAULT_CAPACITY;
        if (occupancy % capacity == 0 && occupancy)
            return NATIVE_DEFER; /* full: Python waits watching the FIFO's words */
    } else if (!occupancy) {
        return NATIVE_DEFER; /* a pop from an empty FIFO: likewise */
    }
    uint64_t address = (uint64_t)base + 4 * sel;
    uint32_t original = load_le(v, address, 4);
    uint32_t increment = F_ATINCGETPTR_NO_INCR(word) ? 0 : 1u << F_ATINCGETPTR_INCR_VAL(word);
    store_le(v, address, 4, masked_add(original, increment, (1u << wrap) - 1));
    gprs[F_ATINCGETPTR_DATA_REG_INDEX(word)] = original;
    note_l1_written(v, (int64_t)address, (int64_t)address + 4, cycle);
    return TIMING_THCON_ATOMIC_BLOCKING;
}

int64_t thcon_atswap(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    uint32_t data_reg = F_ATSWAP_DATA_REG_INDEX(word), swap_mask = F_ATSWAP_SWAP_MASK(word);
    if (F_ATSWAP_MEM_HIER_SEL(word) || data_reg >> ATSWAP_DATA_BITS)
        return NATIVE_DEFER;
    /* swap_mask's top bit is SingleDataReg; the low eight select 16-bit granules. */
    uint32_t single = swap_mask >> GRANULES, mask = swap_mask & ((1u << GRANULES) - 1);
    uint32_t *gprs = pipe_gprs(v, thread);
    uint32_t base = atomic_address(gprs, F_ATSWAP_ADDR_REG_INDEX(word), 0);
    if (!in_l1(v, base, GROUP_BYTES))
        return NATIVE_DEFER;
    uint32_t lo = 0;
    while (mask && !(mask >> lo & 1))
        lo++;
    uint32_t run = mask >> lo; /* the selected granules from the lowest: contiguous iff 2^k - 1 */
    if (run & (run + 1))
        return NATIVE_DEFER;
    if (!mask)
        return TIMING_THCON_ATOMIC; /* checked, and nothing to write */
    /* The 16 bytes as four words: one GPR at its place in its group (the rest zero), or the group. */
    uint32_t words[4];
    for (uint32_t i = 0; i < 4; i++)
        words[i] = single ? (i == (data_reg & 3) ? gprs[data_reg] : 0) : gprs[(data_reg & GROUP_MASK) + i];
    uint32_t hi = lo; /* one past the last selected granule */
    while (run >> (hi - lo) & 1)
        hi++;
    for (uint32_t g = lo; g < hi; g++)
        store_le(v, (uint64_t)base + 2 * g, 2, words[g >> 1] >> (16 * (g & 1)));
    note_l1_written(v, (int64_t)base + 2 * lo, (int64_t)base + 2 * hi, cycle);
    return TIMING_THCON_ATOMIC;
}

int64_t thcon_atcas(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    uint32_t set_val = F_ATCAS_SWAP_VAL(word);
    if (F_ATCAS_MEM_HIER_SEL(word) || set_val >> ATCAS_SETVAL_BITS || F_ATCAS_DATA_REG_INDEX(word))
        return NATIVE_DEFER;
    const uint32_t *gprs = pipe_gprs(v, thread);
    uint32_t address = atomic_address(gprs, F_ATCAS_ADDR_REG_INDEX(word), F_ATCAS_SEL32B(word));
    if (!in_l1(v, address, 4))
        return NATIVE_DEFER;
    /* The whole word is compared with the 4-bit value; unequal, Python waits watching it. */
    if (load_le(v, address, 4) != F_ATCAS_CMP_VAL(word))
        return NATIVE_DEFER;
    store_le(v, address, 4, set_val);
    note_l1_written(v, address, (int64_t)address + 4, cycle);
    return TIMING_THCON_ATOMIC_BLOCKING;
}

/* ------------------------------------------------------------------------------ REG2FLOP */

/* Config[StateID][THCON base + ThConCfgIndex] = GPR, or four words from an aligned group (size_sel 0);
 * any other size_sel writes 32 bits, as thcon.py _reg2flop_config. */
static int64_t reg2flop_config(struct copro_view *v, uint32_t thread, uint32_t word)
{
    uint32_t index = F_REG2FLOP_FLOP_INDEX(word), reg = F_REG2FLOP_REG_INDEX(word);
    if (F_REG2FLOP_BYTE_OFFSET(word) || F_REG2FLOP_CONTEXT_ID_2(word)
        || index >= CFG_GLOBAL_BASE_WORD - THCON_CONFIG_BASE_WORD)
        return NATIVE_DEFER;
    const uint32_t *gprs = pipe_gprs(v, thread);
    int stored = F_REG2FLOP_SIZE_SEL(word)
                     ? config_store_plain(v, thread, THCON_CONFIG_BASE_WORD + index, gprs + reg, 1)
                     : config_store_plain(v, thread, THCON_CONFIG_BASE_WORD + (index & ~3u), gprs + (reg & ~3u), 4);
    return stored ? TIMING_THCON_REG2FLOP : NATIVE_DEFER;
}

/* An ADC (target_sel 2, or 3 with OverrideThread): byte_offset is Shift8, context_id_2 ThreadSel, and
 * flop_index packs Channel (bit 5), ADCSel (4..3), Cr (2) and XYZW (1..0). */
int64_t thcon_reg2flop(struct copro_view *v, uint32_t thread, uint32_t word)
{
    static const uint32_t coord_masks[ADC_COORDS] = {ADC_MASK_X, ADC_MASK_Y, ADC_MASK_Z, ADC_MASK_W};
    uint32_t target = F_REG2FLOP_TARGET_SEL(word), index = F_REG2FLOP_FLOP_INDEX(word);
    if (target == REG2FLOP_TARGET_CONFIG)
        return reg2flop_config(v, thread, word);
    if (target == REG2FLOP_TARGET_UNDEFINED || index >> REG2FLOP_ADC_INDEX_BITS)
        return NATIVE_DEFER;
    uint32_t value = pipe_gprs(v, thread)[F_REG2FLOP_REG_INDEX(word)];
    uint32_t shift8 = F_REG2FLOP_BYTE_OFFSET(word);
    switch (F_REG2FLOP_SIZE_SEL(word)) {
    case 0: value = 0; break; /* 128 bits: not valid for an ADC, writes zero */
    case 1: value = shift8 ? 0 : value; break;
    case 2: value = shift8 == 0 ? value & HALF_MASK : shift8 == 2 ? value >> 16 : 0; break;
    default: value = (value >> (8 * shift8)) & 0xFFu; break;
    }
    uint32_t target_thread = target & 1 ? F_REG2FLOP_CONTEXT_ID_2(word) : thread;
    uint32_t unit = (index >> 3) & 3;
    if (target_thread >= v->threads || unit == ADC_NONE)
        return TIMING_THCON_REG2FLOP; /* documented to write nothing */
    uint32_t channel = (index >> 5) & 1, coord = index & 3;
    uint32_t *counters = (index >> 2) & 1 ? v->adc_cr : v->adc_value; /* only the one named */
    uint64_t at = (((uint64_t)target_thread * ADC_UNITS + unit) * ADC_CHANNELS + channel) * ADC_COORDS + coord;
    counters[at] = value & coord_masks[coord];
    return TIMING_THCON_REG2FLOP;
}

/* ------------------------------------------------------------------------------ FLUSHDMA */

/* Occupies the unit until every selected condition (C1 unpacker 0, C2 unpacker 1, C3 the packers) is
 * met; C0, this unit's outstanding requests, never holds (every access completes at once). */
int64_t thcon_flushdma(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    static const struct {
        uint32_t bit, kind, index;
    } units[THCON_FLUSH_UNIT_COUNT] = THCON_FLUSH_UNITS_INIT;
    (void)thread;
    uint32_t spec = F_FLUSHDMA_FLUSH_SPEC(word);
    if (spec >> FLUSH_SPEC_BITS)
        return NATIVE_DEFER;
    uint32_t mask = spec ? spec : FLUSH_ALL;
    int64_t end = cycle + TIMING_THCON_FLUSHDMA;
    for (uint32_t i = 0; i < THCON_FLUSH_UNIT_COUNT; i++) {
        if (!(mask >> units[i].bit & 1))
            continue;
        int64_t busy = condition_busy_end(v, units[i].kind, units[i].index);
        end = busy > end ? busy : end;
    }
    return end - cycle;
}
