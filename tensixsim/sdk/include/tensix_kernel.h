/* tensix_kernel.h: a small compute-kernel library for the Tensix coprocessor (Blackhole, Wormhole).
 *
 * The data path of one 32x32 tile: L1 -> unpackers -> SrcA / SrcB (TRISC0), the matrix unit writes
 * Dst (TRISC1), the packer writes Dst back to L1 (TRISC2). BRISC (reader) and NCRISC (writer) move
 * tiles between circular buffers and the rest of L1.
 *
 * Tiles are 32x32 datums stored as four 16x16 faces (top-left, top-right, bottom-left,
 * bottom-right), rows of 16 inside a face. Dst is used as 32-bit (ALU_ACC_CTRL_Fp32_enabled) and
 * split in two halves of four tiles (256 Dst32 rows each) for double buffering.
 *
 * Synchronisation:
 * - reader -> TRISC0 and TRISC2 -> writer: circular buffers whose counters live in stream
 *   registers ("tiles received" / "tiles acked", STREAM_TILES_RECEIVED_REG / _ACKED_REG: 10 / 8 on
 *   Blackhole, 4 / 3 on Wormhole, where tt-metal keeps them; compared as 16-bit numbers).
 * - TRISC0 -> TRISC1: the SrcA / SrcB banks themselves (the last UNPACR of a tile hands its bank to
 *   the matrix unit; the last matrix instruction of a tile hands both back).
 * - TRISC1 -> TRISC2: semaphore TK_SEM_MATH_PACK counts full Dst halves (max 2): the matrix unit
 *   waits while both are full, the packer waits while none is, and takes one when it has packed it.
 * - A TRISC and its own pipe: before changing the configuration a tile's instructions read (its L1
 *   addresses) or giving the tile's pages away, the core waits until its pipe has finished them
 *   (tk_wait_pipe_idle: a load from CoprocessorDoneCheck, which holds the core until then).
 *
 * Configuration words are written through MMIO by the core that owns them, before it pushes any
 * instruction that reads them (or, per tile, while the unit is known idle as above): TRISC0 the
 * unpackers' (THCON_SEC0/1 REG0/2/3/7, UNP0/1_*), TRISC1 word 1 (ALU formats, Fp32_enabled),
 * TRISC2 the packer's (THCON_SEC0_REG1/9, PCK*, word 0's Dstacc override, the packer's Dst
 * offset). No two cores read-modify-write the same word.
 *
 * Both architectures: the configuration names are the same (each chip's generated tensix_cfg_<arch>.h
 * places them), and so are most instructions' operands. Where Wormhole differs, the difference is
 * below under SDK_ARCH_WORMHOLE: its STALLWAIT condition bits, ZEROACC's and UNPACR_NOP's encodings,
 * PACR (no read interfaces: a packer reads a contiguous run of Dst datums, here a face per PACR), and
 * the two-bit AddrMod of its matrix and vector-unit instructions, which reach ADDR_MOD slots 4..7
 * only through the RWC's ExtraAddrModBit (matmul) or ThreadConfig's ADDR_MOD_SET_Base (SFPU).
 */
#ifndef TENSIX_KERNEL_H
#define TENSIX_KERNEL_H

#include "tensixsim.h"
#if defined(SDK_ARCH_WORMHOLE)
#include "tensix_cfg_wormhole.h"
#include "tensix_ops_wormhole.h"
#else
#include "tensix_cfg_blackhole.h"
#include "tensix_ops_blackhole.h"
#endif

/* ---- data formats (the configuration registers' format codes) ---- */
#define TK_FMT_FP32 0u
#define TK_FMT_FP16 1u
#define TK_FMT_BF16 5u
#define TK_FMT_BFP8 6u /* bfp8_b: a tile is 64 exponent bytes (one per face row), then 1024 datums */

#define TK_TILE_DATUMS 1024u
#define TK_FACE_DATUMS 256u
#define TK_DST_HALF_ROWS 256u /* one half of Dst32 holds four tiles of 64 rows */

/* ---- semaphores ---- */
#define TK_SEM_MATH_PACK 1u
#define TK_SEM(i) (1u << (i))

/* Wait-gate block masks (STALLWAIT / SEMWAIT stall_res) and STALLWAIT conditions (wait_res). */
#define TK_BLOCK_SYNC (1u << 1)
#define TK_BLOCK_PACK (1u << 2)
#define TK_BLOCK_UNPACK (1u << 3)
#define TK_BLOCK_MATH (1u << 6)
#define TK_WAIT_UNPACK0 (1u << 1)
#define TK_WAIT_UNPACK1 (1u << 2)
#define TK_WAIT_PACK (1u << 3) /* Wormhole: packer 0 */
#if defined(SDK_ARCH_WORMHOLE)
#define TK_WAIT_MATH (1u << 7)
#define TK_WAIT_SFPU (1u << 14)
#else
#define TK_WAIT_MATH (1u << 4)
#define TK_WAIT_SFPU (1u << 11)
#endif
/* SEMWAIT conditions: keep waiting while the value is zero / while it has reached its maximum. */
#define TK_SEMWAIT_ZERO 1u
#define TK_SEMWAIT_FULL 2u

/* SETADC* cnt_set_mask */
#define TK_ADC_UNP0 1u
#define TK_ADC_UNP1 2u
#define TK_ADC_PACK 4u

/* A TRISC's view of the Tensix semaphores (stores: bit 0 clear posts, set takes one). */
static inline uint32_t tk_sem_read(uint32_t sem)
{
    return mmio_read32(TENSIX_SEMAPHORE_BASE + 4u * sem);
}

static inline void tk_sem_post(uint32_t sem)
{
    mmio_write32(TENSIX_SEMAPHORE_BASE + 4u * sem, 0u);
}

/* TRISC: wait until every instruction this core pushed has left the coprocessor (the load from
   CoprocessorDoneCheck is held until then; its value means nothing). */
static inline void tk_wait_pipe_idle(void)
{
    (void)mmio_read32(TENSIX_PCBUF_BASE + 4u);
}

/* ---- circular buffers on stream registers ---- */
#define TK_STREAM_TILES_ACKED STREAM_TILES_ACKED_REG
#define TK_STREAM_TILES_RECEIVED STREAM_TILES_RECEIVED_REG

typedef struct {
    uint32_t stream;     /* the stream whose registers hold the counters */
    uint32_t base;       /* L1 address of page 0 */
    uint32_t page_bytes; /* a multiple of 16 */
    uint32_t pages;
    uint32_t done;    /* pages this side has pushed (producer) or popped (consumer) */
    uint16_t counter; /* this side's counter as last written (the 16-bit counters may start anywhere) */
} tk_cb;

static inline volatile uint32_t *tk_cb_reg(const tk_cb *cb, uint32_t reg)
{
    return (volatile uint32_t *)(uintptr_t)STREAM_REG_ADDR(cb->stream, reg);
}

static inline void tk_cb_init(tk_cb *cb, uint32_t stream, uint32_t base, uint32_t page_bytes, uint32_t pages,
                              int producer)
{
    cb->stream = stream;
    cb->base = base;
    cb->page_bytes = page_bytes;
    cb->pages = pages;
    cb->done = 0;
    cb->counter =
        (uint16_t)*tk_cb_reg(cb, producer ? TK_STREAM_TILES_RECEIVED : TK_STREAM_TILES_ACKED);
}

/* The L1 address of the page the next push (producer) or the next pop (consumer) concerns. */
static inline uint32_t tk_cb_page(const tk_cb *cb, uint32_t ahead)
{
    return cb->base + ((cb->done + ahead) % cb->pages) * cb->page_bytes;
}

/* Producer: wait for a free page. */
static inline void tk_cb_reserve_back(const tk_cb *cb)
{
    while ((uint16_t)(cb->counter - (uint16_t)*tk_cb_reg(cb, TK_STREAM_TILES_ACKED)) >= cb->pages)
        ;
}

/* Producer: the page is written (by this core, or by its unit, finished); hand it on. */
static inline void tk_cb_push_back(tk_cb *cb)
{
    sdk_fence();
    cb->counter++;
    cb->done++;
    *tk_cb_reg(cb, TK_STREAM_TILES_RECEIVED) = cb->counter;
}

/* Consumer: wait until at least n pages are in. */
static inline void tk_cb_wait_front(const tk_cb *cb, uint32_t n)
{
    while ((uint16_t)((uint16_t)*tk_cb_reg(cb, TK_STREAM_TILES_RECEIVED) - cb->counter) < n)
        ;
    sdk_fence(); /* drop anything stale this core may hold of the pages */
}

/* Consumer: the front page has been used up; give it back. */
static inline void tk_cb_pop_front(tk_cb *cb)
{
    cb->counter++;
    cb->done++;
    *tk_cb_reg(cb, TK_STREAM_TILES_ACKED) = cb->counter;
}

/* ---- configuration through MMIO (state 0: every pipe keeps CFG_STATE_ID 0) ---- */
#define TK_CFG_STATE 0u

/* Bytes one datum of an unpacker output format occupies in the output address (BFP8 counts as one). */
static inline uint32_t tk_out_datum_units(uint32_t fmt)
{
    return fmt == TK_FMT_FP32 ? 4u : (fmt == TK_FMT_FP16 || fmt == TK_FMT_BF16) ? 2u : 1u;
}

/* Unpacker `unit` (0: SrcA, 1: SrcB): tiles of four 256-datum faces in `in_fmt`, written to Src as
   `out_fmt`; one UNPACR moves one face and steps the Src row by 16. TRISC0, before any UNPACR. */
static inline void tk_unpack_configure(uint32_t unit, uint32_t in_fmt, uint32_t out_fmt)
{
    uint32_t word = unit ? CFG_THCON_SEC1_REG0_TileDescriptor_WORD : CFG_THCON_SEC0_REG0_TileDescriptor_WORD;
    /* Tile descriptor: format, IsUncompressed, XDim 256 | YDim 1, ZDim 4 faces | WDim 1, digest 0. */
    mmio_write32(TENSIX_CFG_ADDR(TK_CFG_STATE, word + 0u), in_fmt | 1u << 4 | TK_FACE_DATUMS << 16);
    mmio_write32(TENSIX_CFG_ADDR(TK_CFG_STATE, word + 1u), 1u | 4u << 16);
    mmio_write32(TENSIX_CFG_ADDR(TK_CFG_STATE, word + 2u), 1u);
    mmio_write32(TENSIX_CFG_ADDR(TK_CFG_STATE, word + 3u), 0u);
    if (unit) {
        CFG_WRITE(TK_CFG_STATE, THCON_SEC1_REG2_Out_data_format, out_fmt);
        CFG_WRITE(TK_CFG_STATE, THCON_SEC1_REG2_Unpack_limit_address, 0x1FFFFu);
        CFG_WRITE(TK_CFG_STATE, THCON_SEC1_REG2_Unpack_Src_Reg_Set_Upd, 1u);
        CFG_WRITE(TK_CFG_STATE, UNP1_ADDR_BASE_REG_1_Base, 0u);
    } else {
        CFG_WRITE(TK_CFG_STATE, THCON_SEC0_REG2_Out_data_format, out_fmt);
        CFG_WRITE(TK_CFG_STATE, THCON_SEC0_REG2_Unpack_limit_address, 0x1FFFFu);
        CFG_WRITE(TK_CFG_STATE, THCON_SEC0_REG2_Unpack_Src_Reg_Set_Upd, 1u);
        /* SrcA's output addresses start four rows in: the first 64 datums are discarded. */
        CFG_WRITE(TK_CFG_STATE, UNP0_ADDR_BASE_REG_1_Base, 64u * tk_out_datum_units(out_fmt));
    }
#ifdef TK_UNPACK_MULTI_CONTEXT
    /* tt-llk's form: every UNPACR sets OvrdThreadId (MultiContextMode) with context 0, which reads
       the context's own fields: its compression flag, unpacker 0's X dimension and Dst / Src choice,
       and unpacker 0's output address (datums, in place of the ADC's; the same four rows in). */
    if (unit) {
        CFG_WRITE(TK_CFG_STATE, THCON_SEC1_REG2_Disable_zero_compress_cntx0, 1u);
    } else {
        CFG_WRITE(TK_CFG_STATE, THCON_SEC0_REG2_Disable_zero_compress_cntx0, 1u);
        CFG_WRITE(TK_CFG_STATE, THCON_SEC0_REG5_Tile_x_dim_cntx0, TK_FACE_DATUMS);
        CFG_WRITE(TK_CFG_STATE, THCON_SEC0_REG2_Unpack_if_sel_cntx0, 0u);
        CFG_WRITE(TK_CFG_STATE, THCON_SEC0_REG5_Dest_cntx0_address, 64u);
    }
#endif
}

/* Where unpacker `unit` reads its next tile (the register holds address / 16 - 1). Only while no
   UNPACR is in the pipe (tk_wait_pipe_idle). */
static inline void tk_unpack_set_address(uint32_t unit, uint32_t l1_addr)
{
    uint32_t value = l1_addr / 16u - 1u;
    if (unit)
        CFG_WRITE(TK_CFG_STATE, THCON_SEC1_REG3_Base_address, value);
    else
        CFG_WRITE(TK_CFG_STATE, THCON_SEC0_REG3_Base_address, value);
}

/* The unpackers' X range (a face's 256 datums) and counters from zero. TRISC0, once. */
static inline void tk_unpack_init_adcs(void)
{
    TTI_SETADCXY(TK_ADC_UNP0 | TK_ADC_UNP1, 0, 0, 0, 0, 0xF);
    TTI_SETADCZW(TK_ADC_UNP0 | TK_ADC_UNP1, 0, 0, 0, 0, 0xF);
    TTI_SETADCXX(TK_ADC_UNP0 | TK_ADC_UNP1, TK_FACE_DATUMS - 1u, 0);
}

/* OvrdThreadId (MultiContextMode) as the UNPACRs below set it: 1 in tt-llk's form. */
#ifdef TK_UNPACK_MULTI_CONTEXT
#define TK_UNPACR_MULTI 1
#else
#define TK_UNPACR_MULTI 0
#endif

/* One tile by unpacker 0 (face per UNPACR, channel 0 Z += 1); the last hands SrcA over. */
#define TK_UNPACK_TILE_A()                                                  \
    do {                                                                    \
        TTI_UNPACR(0, 0x01, 0, 0, 0, TK_UNPACR_MULTI, 0, 0, 0, 0, 0, 0, 1); \
        TTI_UNPACR(0, 0x01, 0, 0, 0, TK_UNPACR_MULTI, 0, 0, 0, 0, 0, 0, 1); \
        TTI_UNPACR(0, 0x01, 0, 0, 0, TK_UNPACR_MULTI, 0, 0, 0, 0, 0, 0, 1); \
        TTI_UNPACR(0, 0x01, 0, 0, 0, TK_UNPACR_MULTI, 1, 0, 0, 0, 0, 0, 1); \
    } while (0)

#define TK_UNPACK_TILE_B()                                                  \
    do {                                                                    \
        TTI_UNPACR(1, 0x01, 0, 0, 0, TK_UNPACR_MULTI, 0, 0, 0, 0, 0, 0, 1); \
        TTI_UNPACR(1, 0x01, 0, 0, 0, TK_UNPACR_MULTI, 0, 0, 0, 0, 0, 0, 1); \
        TTI_UNPACR(1, 0x01, 0, 0, 0, TK_UNPACR_MULTI, 0, 0, 0, 0, 0, 0, 1); \
        TTI_UNPACR(1, 0x01, 0, 0, 0, TK_UNPACR_MULTI, 1, 0, 0, 0, 0, 0, 1); \
    } while (0)

/* SrcB: zero the bank unpacker 1 writes (once it may write it) and hand it over (ZEROSRC form).
   Wormhole's ZEROSRC has no set-dvalid bit that may be used with it: a SETDVALID follows. */
#if defined(SDK_ARCH_WORMHOLE)
#define TK_NOP_ZEROSRC_WAIT (1u | 1u << 4) /* ZEROSRC, WaitLikeUnpacr */
#define TK_NOP_SETDVALID 7u
#define TK_UNPACK_ZERO_B()                          \
    do {                                            \
        TTI_UNPACR_NOP(1, TK_NOP_ZEROSRC_WAIT);     \
        TTI_UNPACR_NOP(1, TK_NOP_SETDVALID);        \
    } while (0)
#else
#define TK_UNPACK_ZERO_B() TTI_UNPACR_NOP(1, 0, 0, 1, 0, 1, 0, 0, 1)
#endif

/* Rewind both unpackers' Z / W (the face and tile counters) for the next tile. */
#define TK_UNPACK_REWIND() TTI_SETADCZW(TK_ADC_UNP0 | TK_ADC_UNP1, 0, 0, 0, 0, 0xF)

/* ---- matrix unit (TRISC1) ---- */

/* SrcA / SrcB formats as the matrix unit reads them, Dst 32-bit. TRISC1 owns Config word 1. */
static inline void tk_math_configure(uint32_t srca_fmt, uint32_t srcb_fmt)
{
    uint32_t value = CFG_VALUE(ALU_FORMAT_SPEC_REG0_SrcA, srca_fmt) | CFG_VALUE(ALU_FORMAT_SPEC_REG1_SrcB, srcb_fmt) |
                     CFG_VALUE(ALU_ACC_CTRL_Fp32_enabled, 1u);
    mmio_write32(TENSIX_CFG_ADDR(TK_CFG_STATE, CFG_ALU_ACC_CTRL_Fp32_enabled_WORD), value);
}

/* Dst halves: math starts in half 0; SEMINIT gives TK_SEM_MATH_PACK its maximum of two. */
#define TK_MATH_INIT_SYNC()                                              \
    do {                                                                 \
        TTI_SEMINIT(2, 0, TK_SEM(TK_SEM_MATH_PACK));                     \
        TTI_SETC16(THD_DEST_TARGET_REG_CFG_MATH_Offset_REG, 0);          \
    } while (0)

/* Before writing a Dst half: wait while both halves are full, then mark the half undefined (every
   reader sees zero: an accumulating instruction starts from +0). */
#if defined(SDK_ARCH_WORMHOLE)
#define TK_ZEROACC_HALF(half) TTI_ZEROACC(1u << 2 | 2u, 0, half) /* UseDst32b, ZEROACC_MODE_HALF_OF_DST */
#else
#define TK_ZEROACC_HALF(half) TTI_ZEROACC(2, 1, 0, 0, half)
#endif

static inline void tk_math_acquire_dst(uint32_t half)
{
    TTI_SEMWAIT(TK_BLOCK_MATH, TK_SEM(TK_SEM_MATH_PACK), TK_SEMWAIT_FULL);
    if (half)
        TK_ZEROACC_HALF(1);
    else
        TK_ZEROACC_HALF(0);
}

/* The half is complete: let the packer have it, and aim the matrix unit at the other one. */
static inline void tk_math_release_dst(uint32_t half)
{
    TTI_SEMPOST(TK_SEM(TK_SEM_MATH_PACK));
    if (half)
        TTI_SETC16(THD_DEST_TARGET_REG_CFG_MATH_Offset_REG, 0);
    else
        TTI_SETC16(THD_DEST_TARGET_REG_CFG_MATH_Offset_REG, TK_DST_HALF_ROWS);
}

/* ADDR_MOD slots of the element-wise loop: slot 0 steps SrcA, SrcB and Dst by 8 rows; slots 1..3
   rewind them at the end of a pass, 1 keeping the fidelity phase, 2 stepping it (the next pass of a
   multi-phase ELWMUL), 3 clearing it (the last pass). */
static inline void tk_math_eltwise_addr_mods(void)
{
    TTI_SETC16(THD_ADDR_MOD_AB_SEC0_SrcAIncr_REG,
               THD_VALUE(ADDR_MOD_AB_SEC0_SrcAIncr, 8) | THD_VALUE(ADDR_MOD_AB_SEC0_SrcBIncr, 8));
    TTI_SETC16(THD_ADDR_MOD_DST_SEC0_DestIncr_REG, THD_VALUE(ADDR_MOD_DST_SEC0_DestIncr, 8));
    TTI_SETC16(THD_ADDR_MOD_AB_SEC1_SrcAClear_REG,
               THD_VALUE(ADDR_MOD_AB_SEC1_SrcAClear, 1) | THD_VALUE(ADDR_MOD_AB_SEC1_SrcBClear, 1));
    TTI_SETC16(THD_ADDR_MOD_DST_SEC1_DestClear_REG, THD_VALUE(ADDR_MOD_DST_SEC1_DestClear, 1));
    TTI_SETC16(THD_ADDR_MOD_AB_SEC2_SrcAClear_REG,
               THD_VALUE(ADDR_MOD_AB_SEC2_SrcAClear, 1) | THD_VALUE(ADDR_MOD_AB_SEC2_SrcBClear, 1));
    TTI_SETC16(THD_ADDR_MOD_DST_SEC2_DestClear_REG,
               THD_VALUE(ADDR_MOD_DST_SEC2_DestClear, 1) | THD_VALUE(ADDR_MOD_DST_SEC2_FidelityIncr, 1));
    TTI_SETC16(THD_ADDR_MOD_AB_SEC3_SrcAClear_REG,
               THD_VALUE(ADDR_MOD_AB_SEC3_SrcAClear, 1) | THD_VALUE(ADDR_MOD_AB_SEC3_SrcBClear, 1));
    TTI_SETC16(THD_ADDR_MOD_DST_SEC3_DestClear_REG,
               THD_VALUE(ADDR_MOD_DST_SEC3_DestClear, 1) | THD_VALUE(ADDR_MOD_DST_SEC3_FidelityClear, 1));
}

/* One element-wise pass over a tile: eight 8-row instructions, the eighth with ADDR_MOD slot
   `last_slot` and `last_flags` (clear_dvalid: 3 hands both Src banks back). OP is ELWADD, ELWSUB or
   ELWMUL. */
#define TK_ELTWISE_PASS(OP, last_slot, last_flags) TK_ELTWISE_PASS_(OP, last_slot, last_flags)
#define TK_ELTWISE_PASS_(OP, last_slot, last_flags)     \
    do {                                                \
        TTI_##OP(0, 0, 0, 0, 0);                        \
        TTI_##OP(0, 0, 0, 0, 0);                        \
        TTI_##OP(0, 0, 0, 0, 0);                        \
        TTI_##OP(0, 0, 0, 0, 0);                        \
        TTI_##OP(0, 0, 0, 0, 0);                        \
        TTI_##OP(0, 0, 0, 0, 0);                        \
        TTI_##OP(0, 0, 0, 0, 0);                        \
        TTI_##OP(last_flags, 0, 0, last_slot, 0);       \
    } while (0)

/* The 32x32x32 tile matmul, Dst += SrcB @ SrcA (SrcB holds the left operand's tile). Sixteen MVMULs
   per fidelity phase: for each inner half (SrcA faces 2t, 2t+1; SrcB faces t, t+2) and each output
   face, an 8-row half face times one SrcA face. Fifteen are recorded in the replay buffer; a MOP
   (template 1) replays them and issues the sixteenth per phase, whose ADDR_MOD rewinds the RWCs and
   steps the fidelity phase; the very last one also hands both Src banks back.

   The ADDR_MOD steps, by role: A next 8 rows of the SrcB face and of Dst; B next SrcA face, SrcB
   back to its face start; C the lower SrcB faces, back to the first SrcA face; D the second inner
   half; E the next fidelity phase; F the tile is done. Blackhole names slots 0..7 directly: A 0, B 1,
   C 2, D 4, E 5, F 6. Wormhole's two AddrMod bits name slots 0..3, or 4..7 while the RWC's
   ExtraAddrModBit is set: D (slot 3) sets the bit, so the second inner half uses copies of A, B and C
   in slots 4..6, and slot 7 is E, clearing the bit again. F has no slot left: the last MVMUL uses E
   too, and a SETRWC after the MOP puts the fidelity phase back to 0. */
#define TK_MATMUL_REPLAY_LEN 15u
#if defined(SDK_ARCH_WORMHOLE)
#define TK_MM_D 3u     /* the AddrMod operand of step D */
#define TK_MM_PHASE 3u /* of E (slot 7) */
#define TK_MM_LAST 3u  /* of the tile's last MVMUL (E as well) */
#define TK_SETRWC_FIDELITY 8u
#else
#define TK_MM_D 4u
#define TK_MM_PHASE 5u
#define TK_MM_LAST 6u
#endif

static inline void tk_matmul_addr_mods(void)
{
    /* A: slot 0 */
    TTI_SETC16(THD_ADDR_MOD_AB_SEC0_SrcAIncr_REG, THD_VALUE(ADDR_MOD_AB_SEC0_SrcBIncr, 8));
    TTI_SETC16(THD_ADDR_MOD_DST_SEC0_DestIncr_REG, THD_VALUE(ADDR_MOD_DST_SEC0_DestIncr, 8));
    /* B: slot 1 */
    TTI_SETC16(THD_ADDR_MOD_AB_SEC1_SrcAIncr_REG,
               THD_VALUE(ADDR_MOD_AB_SEC1_SrcAIncr, 16) | THD_VALUE(ADDR_MOD_AB_SEC1_SrcBCR, 1));
    TTI_SETC16(THD_ADDR_MOD_DST_SEC1_DestIncr_REG, THD_VALUE(ADDR_MOD_DST_SEC1_DestIncr, 8));
    /* C: slot 2 */
    TTI_SETC16(THD_ADDR_MOD_AB_SEC2_SrcAIncr_REG, THD_VALUE(ADDR_MOD_AB_SEC2_SrcACR, 1) |
                                                       THD_VALUE(ADDR_MOD_AB_SEC2_SrcBIncr, 32) |
                                                       THD_VALUE(ADDR_MOD_AB_SEC2_SrcBCR, 1));
    TTI_SETC16(THD_ADDR_MOD_DST_SEC2_DestIncr_REG, THD_VALUE(ADDR_MOD_DST_SEC2_DestIncr, 8));
#if defined(SDK_ARCH_WORMHOLE)
    /* D: slot 3, and on to slots 4..7 */
    TTI_SETC16(THD_ADDR_MOD_AB_SEC3_SrcAIncr_REG,
               THD_VALUE(ADDR_MOD_AB_SEC3_SrcAIncr, 32) | THD_VALUE(ADDR_MOD_AB_SEC3_SrcACR, 1) |
                   THD_VALUE(ADDR_MOD_AB_SEC3_SrcBIncr, 48) | THD_VALUE(ADDR_MOD_AB_SEC3_SrcBCR, 1));
    TTI_SETC16(THD_ADDR_MOD_DST_SEC3_DestIncr_REG, THD_VALUE(ADDR_MOD_DST_SEC3_DestClear, 1));
    TTI_SETC16(THD_ADDR_MOD_BIAS_SEC3_BiasIncr_REG, THD_VALUE(ADDR_MOD_BIAS_SEC3_BiasIncr, 1));
    /* A, B, C again in slots 4, 5, 6 */
    TTI_SETC16(THD_ADDR_MOD_AB_SEC4_SrcAIncr_REG, THD_VALUE(ADDR_MOD_AB_SEC4_SrcBIncr, 8));
    TTI_SETC16(THD_ADDR_MOD_DST_SEC4_DestIncr_REG, THD_VALUE(ADDR_MOD_DST_SEC4_DestIncr, 8));
    TTI_SETC16(THD_ADDR_MOD_AB_SEC5_SrcAIncr_REG,
               THD_VALUE(ADDR_MOD_AB_SEC5_SrcAIncr, 16) | THD_VALUE(ADDR_MOD_AB_SEC5_SrcBCR, 1));
    TTI_SETC16(THD_ADDR_MOD_DST_SEC5_DestIncr_REG, THD_VALUE(ADDR_MOD_DST_SEC5_DestIncr, 8));
    TTI_SETC16(THD_ADDR_MOD_AB_SEC6_SrcAIncr_REG, THD_VALUE(ADDR_MOD_AB_SEC6_SrcACR, 1) |
                                                       THD_VALUE(ADDR_MOD_AB_SEC6_SrcBIncr, 32) |
                                                       THD_VALUE(ADDR_MOD_AB_SEC6_SrcBCR, 1));
    TTI_SETC16(THD_ADDR_MOD_DST_SEC6_DestIncr_REG, THD_VALUE(ADDR_MOD_DST_SEC6_DestIncr, 8));
    /* E: slot 7, back to slots 0..3 */
    TTI_SETC16(THD_ADDR_MOD_AB_SEC7_SrcAIncr_REG,
               THD_VALUE(ADDR_MOD_AB_SEC7_SrcAClear, 1) | THD_VALUE(ADDR_MOD_AB_SEC7_SrcBClear, 1));
    TTI_SETC16(THD_ADDR_MOD_DST_SEC7_DestIncr_REG,
               THD_VALUE(ADDR_MOD_DST_SEC7_DestClear, 1) | THD_VALUE(ADDR_MOD_DST_SEC7_FidelityIncr, 1));
    TTI_SETC16(THD_ADDR_MOD_BIAS_SEC7_BiasIncr_REG, THD_VALUE(ADDR_MOD_BIAS_SEC7_BiasClear, 1));
#else
    /* D: slot 4 */
    TTI_SETC16(THD_ADDR_MOD_AB_SEC4_SrcAIncr_REG,
               THD_VALUE(ADDR_MOD_AB_SEC4_SrcAIncr, 32) | THD_VALUE(ADDR_MOD_AB_SEC4_SrcACR, 1) |
                   THD_VALUE(ADDR_MOD_AB_SEC4_SrcBIncr, 48) | THD_VALUE(ADDR_MOD_AB_SEC4_SrcBCR, 1));
    TTI_SETC16(THD_ADDR_MOD_DST_SEC4_DestIncr_REG, THD_VALUE(ADDR_MOD_DST_SEC4_DestClear, 1));
    /* E: slot 5 */
    TTI_SETC16(THD_ADDR_MOD_AB_SEC5_SrcAIncr_REG,
               THD_VALUE(ADDR_MOD_AB_SEC5_SrcAClear, 1) | THD_VALUE(ADDR_MOD_AB_SEC5_SrcBClear, 1));
    TTI_SETC16(THD_ADDR_MOD_DST_SEC5_DestIncr_REG,
               THD_VALUE(ADDR_MOD_DST_SEC5_DestClear, 1) | THD_VALUE(ADDR_MOD_DST_SEC5_FidelityIncr, 1));
    /* F: slot 6 */
    TTI_SETC16(THD_ADDR_MOD_AB_SEC6_SrcAIncr_REG,
               THD_VALUE(ADDR_MOD_AB_SEC6_SrcAClear, 1) | THD_VALUE(ADDR_MOD_AB_SEC6_SrcBClear, 1));
    TTI_SETC16(THD_ADDR_MOD_DST_SEC6_DestIncr_REG,
               THD_VALUE(ADDR_MOD_DST_SEC6_DestClear, 1) | THD_VALUE(ADDR_MOD_DST_SEC6_FidelityClear, 1));
#endif
}

/* Record the fifteen MVMULs (steps A B A C A B A D A B A C A B A) and write the MOP configuration for
   `phases` fidelity phases (1 LoFi .. 4 HiFi4). TRISC1, once. */
static inline void tk_matmul_init(uint32_t phases)
{
    volatile uint32_t *mop = (volatile uint32_t *)(uintptr_t)TENSIX_MOP_CFG_BASE;
    tk_matmul_addr_mods();
    TTI_REPLAY(0, TK_MATMUL_REPLAY_LEN, 0, 1);
    TTI_MVMUL(0, 0, 0, 0);
    TTI_MVMUL(0, 0, 1, 0);
    TTI_MVMUL(0, 0, 0, 0);
    TTI_MVMUL(0, 0, 2, 0);
    TTI_MVMUL(0, 0, 0, 0);
    TTI_MVMUL(0, 0, 1, 0);
    TTI_MVMUL(0, 0, 0, 0);
    TTI_MVMUL(0, 0, TK_MM_D, 0);
    TTI_MVMUL(0, 0, 0, 0);
    TTI_MVMUL(0, 0, 1, 0);
    TTI_MVMUL(0, 0, 0, 0);
    TTI_MVMUL(0, 0, 2, 0);
    TTI_MVMUL(0, 0, 0, 0);
    TTI_MVMUL(0, 0, 1, 0);
    TTI_MVMUL(0, 0, 0, 0);
    /* Template 1: OuterCount, InnerCount, StartOp, EndOp0, EndOp1, LoopOp, LoopOp1, Loop0Last,
       Loop1Last. */
    mop[0] = phases;
    mop[1] = 1u;
    mop[2] = TT_OP_REPLAY(0, TK_MATMUL_REPLAY_LEN, 0, 0);
    mop[3] = TT_OP_NOP;
    mop[4] = TT_OP_NOP;
    mop[5] = TT_OP_MVMUL(0, 0, TK_MM_PHASE, 0);
    mop[6] = TT_OP_NOP;
    mop[7] = TT_OP_MVMUL(3, 0, TK_MM_LAST, 0);
    mop[8] = TT_OP_MVMUL(0, 0, TK_MM_PHASE, 0);
}

#if defined(SDK_ARCH_WORMHOLE)
#define TK_MATMUL_TILE()                                      \
    do {                                                      \
        TTI_MOP(1, 0, 0);                                     \
        TTI_SETRWC(0, 0, 0, 0, 0, TK_SETRWC_FIDELITY);        \
    } while (0)
#else
#define TK_MATMUL_TILE() TTI_MOP(1, 0, 0)
#endif

/* ---- vector unit (SFPU, TRISC1) ----
 * SFPLOAD / SFPSTORE move 32 datums between Dst and an LReg: lane l is Dst row (addr & ~3) + l / 8,
 * column 2 * (l & 7) + ((addr >> 1) & 1), so Dst addresses 0, 2, 4, ... 62 (from the matrix unit's Dst
 * offset) cover one tile of a 32-bit Dst half. The loop steps the Dst RWC by two per SFPSTORE (ADDR_MOD
 * slot TK_SFPU_ADDR_STEP; the SFPLOAD uses TK_SFPU_ADDR_STAY) and rewinds it afterwards. The slots are
 * 6 and 7; Wormhole's two AddrMod bits reach them as 2 and 3 while ThreadConfig's ADDR_MOD_SET_Base is
 * set, which TK_SFPU_WAIT_MATH sets and TK_SFPU_DONE clears (the matrix unit's slots are 0..3). */
#define TK_SFPU_FP32 3u /* SFPLOAD / SFPSTORE Mod0: Dst32 datums as FP32 */
#define TK_LREG_ZERO 9u /* LReg[9] reads 0.0 */
#define TK_LREG_ONE 10u /* LReg[10] reads 1.0 */
#if defined(SDK_ARCH_WORMHOLE)
#define TK_SFPU_ADDR_STEP 2u
#define TK_SFPU_ADDR_STAY 3u
#else
#define TK_SFPU_ADDR_STEP 6u
#define TK_SFPU_ADDR_STAY 7u
#endif
#define TK_SFPU_TILE_STEPS 32u
#define TK_BLOCK_SFPU (1u << 8)

/* The SFPU loop's ADDR_MOD slots: TK_SFPU_ADDR_STEP adds 2 to the Dst RWC, TK_SFPU_ADDR_STAY nothing.
   TRISC1, once. */
static inline void tk_sfpu_addr_mods(void)
{
    TTI_SETC16(THD_ADDR_MOD_AB_SEC6_SrcAIncr_REG, 0);
    TTI_SETC16(THD_ADDR_MOD_DST_SEC6_DestIncr_REG, THD_VALUE(ADDR_MOD_DST_SEC6_DestIncr, 2));
    TTI_SETC16(THD_ADDR_MOD_AB_SEC7_SrcAIncr_REG, 0);
    TTI_SETC16(THD_ADDR_MOD_DST_SEC7_DestIncr_REG, 0);
}

/* A 32-bit constant in LReg `lreg` (0..7) on every enabled lane: high half, then low half. */
#define TK_SFPU_LOADI32(lreg, value)                                \
    do {                                                            \
        TTI_SFPLOADI(lreg, 8, ((uint32_t)(value) >> 16) & 0xFFFFu); \
        TTI_SFPLOADI(lreg, 10, (uint32_t)(value) & 0xFFFFu);        \
    } while (0)

/* A 32-bit constant in LReg `lreg` (11..14, written only by SFPCONFIG): through LReg[0], whose first
   eight lanes SFPCONFIG broadcasts to all 32. */
#define TK_SFPU_CONFIG_LREG(lreg, value) \
    do {                                 \
        TK_SFPU_LOADI32(0, value);       \
        TTI_SFPCONFIG(0, lreg, 0);       \
    } while (0)

/* Before the vector unit reads Dst: hold it until the matrix unit has finished the tile. */
#if defined(SDK_ARCH_WORMHOLE)
#define TK_SFPU_WAIT_MATH()                                \
    do {                                                   \
        TTI_STALLWAIT(TK_BLOCK_SFPU, TK_WAIT_MATH);        \
        TTI_SETC16(THD_ADDR_MOD_SET_Base_REG, 1);          \
    } while (0)
#define TK_SFPU_ADDR_BASE_OFF() TTI_SETC16(THD_ADDR_MOD_SET_Base_REG, 0)
#else
#define TK_SFPU_WAIT_MATH() TTI_STALLWAIT(TK_BLOCK_SFPU, TK_WAIT_MATH)
#define TK_SFPU_ADDR_BASE_OFF() ((void)0)
#endif

/* After a tile's SFPU work: Dst RWC back to 0, and the next SEMPOST held until the vector unit is idle
   (the packer must not see the half before the last SFPSTORE). */
#define TK_SFPU_DONE()                              \
    do {                                            \
        TK_SFPU_ADDR_BASE_OFF();                    \
        TTI_SETRWC(0, 0, 0, 0, 0, 4);               \
        TTI_STALLWAIT(TK_BLOCK_SYNC, TK_WAIT_SFPU); \
    } while (0)

/* ---- packer (TRISC2) ---- */

static inline uint32_t tk_format_bytes(uint32_t fmt)
{
    return fmt == TK_FMT_FP32 ? 4u : 2u;
}

/* The packer: Dst32 rows read as `inter` (the early conversion: FP32 as is, BF16 rounded), written
   to L1 as `out_fmt`. On Blackhole one PACR reads four Dst rows (one per read interface), sixteen make
   a tile; on Wormhole packer 0 reads a face (256 datums) per PACR, one Z step on, four make a tile.
   TRISC2, before any PACR. */
static inline void tk_pack_configure(uint32_t inter, uint32_t out_fmt)
{
    /* bfp8 output also needs the exponent section configured, which this does not do: stop loudly
       (an ebreak) rather than pack wrong numbers. */
    if (out_fmt == TK_FMT_BFP8)
        __asm__ volatile("ebreak");
    CFG_WRITE(TK_CFG_STATE, THCON_SEC0_REG1_Disable_zero_compress, 1u);
    CFG_WRITE(TK_CFG_STATE, THCON_SEC0_REG1_In_data_format, inter);
    CFG_WRITE(TK_CFG_STATE, THCON_SEC0_REG1_Out_data_format, out_fmt);
    CFG_WRITE(TK_CFG_STATE, PCK_DEST_RD_CTRL_Read_32b_data, 1u);
    CFG_WRITE(TK_CFG_STATE, ALU_FORMAT_SPEC_REG_Dstacc_val, inter);
    CFG_WRITE(TK_CFG_STATE, ALU_FORMAT_SPEC_REG_Dstacc_override, 1u);
    /* One Y step is one 16-datum Dst row. */
    CFG_WRITE(TK_CFG_STATE, PCK0_ADDR_CTRL_XY_REG_0_Ystride, 16u * tk_format_bytes(inter));
#if defined(SDK_ARCH_WORMHOLE)
    CFG_WRITE(TK_CFG_STATE, PCK0_ADDR_CTRL_ZW_REG_0_Zstride, TK_FACE_DATUMS * tk_format_bytes(inter));
#endif
    CFG_WRITE(TK_CFG_STATE, THCON_SEC0_REG9_Pack_0_2_limit_address, 0x1FFFFu);
    CFG_WRITE(TK_CFG_STATE, PCK_EDGE_OFFSET_SEC0_mask, 0xFFFFu);
}

/* Packer ADCs and ADDR_MOD slots. Blackhole: X 0..15, Y from 0; slot 0 Y += 4 rows, 1 Y back to 0.
   Wormhole: X 0..255 (a face), Z from 0; slot 0 Z += 1, 1 Z back to 0. TRISC2, once. */
static inline void tk_pack_init(void)
{
    TTI_SETADCXY(TK_ADC_PACK, 0, 0, 0, 0, 0xF);
    TTI_SETADCZW(TK_ADC_PACK, 0, 0, 0, 0, 0xF);
#if defined(SDK_ARCH_WORMHOLE)
    TTI_SETADCXX(TK_ADC_PACK, TK_FACE_DATUMS - 1u, 0);
    TTI_SETC16(THD_ADDR_MOD_PACK_SEC0_YsrcIncr_REG, THD_VALUE(ADDR_MOD_PACK_SEC0_ZsrcIncr, 1));
    TTI_SETC16(THD_ADDR_MOD_PACK_SEC1_YsrcIncr_REG, THD_VALUE(ADDR_MOD_PACK_SEC1_ZsrcClear, 1));
#else
    TTI_SETADCXX(TK_ADC_PACK, 15, 0);
    TTI_SETC16(THD_ADDR_MOD_PACK_SEC0_YsrcIncr_REG, THD_VALUE(ADDR_MOD_PACK_SEC0_YsrcIncr, 4));
    TTI_SETC16(THD_ADDR_MOD_PACK_SEC1_YsrcIncr_REG, THD_VALUE(ADDR_MOD_PACK_SEC1_YsrcClear, 1));
#endif
}

/* Where the next tile goes, and which Dst half it comes from. Only while no PACR is in the pipe
   (tk_wait_pipe_idle). */
static inline void tk_pack_set_target(uint32_t l1_addr, uint32_t half)
{
    CFG_WRITE(TK_CFG_STATE, THCON_SEC0_REG1_L1_Dest_addr, l1_addr / 16u - 1u);
    CFG_WRITE(TK_CFG_STATE, DEST_TARGET_REG_CFG_PACK_SEC0_Offset, half ? TK_DST_HALF_ROWS : 0u);
}

/* Pack one tile: wait for a full Dst half, sixteen PACRs on Blackhole or four on Wormhole (the last
   flushes and rewinds Y / Z), then once the packer is idle give the half back to math. */
#if defined(SDK_ARCH_WORMHOLE)
#define TK_PACRS_PER_TILE 4u
/* PACR operands: AddrMod, ZeroWrite, PackerMask (1: packer 0), OvrdThreadId, Concat, Flush, Last. */
#define TK_PACK_TILE()                                                         \
    do {                                                                       \
        TTI_SEMWAIT(TK_BLOCK_PACK, TK_SEM(TK_SEM_MATH_PACK), TK_SEMWAIT_ZERO); \
        TTI_PACR(0, 0, 1, 0, 0, 0, 0);                                         \
        TTI_PACR(0, 0, 1, 0, 0, 0, 0);                                         \
        TTI_PACR(0, 0, 1, 0, 0, 0, 0);                                         \
        TTI_PACR(1, 0, 1, 0, 0, 0, 1);                                         \
        TTI_STALLWAIT(TK_BLOCK_SYNC, TK_WAIT_PACK);                            \
        TTI_SEMGET(TK_SEM(TK_SEM_MATH_PACK));                                  \
    } while (0)
#else
#define TK_PACRS_PER_TILE 16u
#define TK_PACK_TILE()                                                                          \
    do {                                                                                        \
        TTI_SEMWAIT(TK_BLOCK_PACK, TK_SEM(TK_SEM_MATH_PACK), TK_SEMWAIT_ZERO);                  \
        TTI_PACR(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);                                           \
        TTI_PACR(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);                                           \
        TTI_PACR(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);                                           \
        TTI_PACR(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);                                           \
        TTI_PACR(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);                                           \
        TTI_PACR(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);                                           \
        TTI_PACR(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);                                           \
        TTI_PACR(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);                                           \
        TTI_PACR(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);                                           \
        TTI_PACR(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);                                           \
        TTI_PACR(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);                                           \
        TTI_PACR(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);                                           \
        TTI_PACR(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);                                           \
        TTI_PACR(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);                                           \
        TTI_PACR(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);                                           \
        TTI_PACR(0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1);                                           \
        TTI_STALLWAIT(TK_BLOCK_SYNC, TK_WAIT_PACK);                                             \
        TTI_SEMGET(TK_SEM(TK_SEM_MATH_PACK));                                                   \
    } while (0)
#endif

/* ---- fp32 blocks through Dst: tilize / untilize (unpacker 0 writes Dst directly) ----
 *
 * A 32x32 fp32 block takes one UNPACR of 1024 datums into a Dst half (Unpack_If_Sel: 32-bit datums
 * reach Dst unchanged, where SrcA would keep only 19 bits). With Tileize_mode the unpacker reads
 * the rows of a row-major block (32 datums a row, `row_bytes` apart), and the block lands in Dst as
 * it lies in L1: Dst row 2r holds columns 0..15 of row r, Dst row 2r + 1 columns 16..31. Without it
 * the unpacker copies a tiled block (four faces) face row by face row.
 *
 * The packer then either tilizes (Dst rows 0, 2, .. 30 are face 0, rows 1, 3, .. 31 face 1, rows 32
 * on faces 2 and 3: read interfaces 0 and 2, or 1 and 3, two rows apart) or untilizes (the strided
 * Dst access: interfaces 0 and 1 read row r of a face and of the face beside it, one 32-datum row of
 * the block), writing one contiguous 4096-byte block either way.
 *
 * Wormhole's unpacker reads 16 datums of an input row under Tileize_mode before moving a row on, and
 * its packers have no read interfaces, so there the unpacker tilizes and the packer untilizes: a
 * row-major block takes four UNPACRs of one face each (256 datums from the face's top-left datum, 16
 * a row; the descriptor's XDim 16, YDim 32, ZDim 2 put face column c, face row r at ADC Y = c, Z = r;
 * the output ADC's Z steps a face in Dst), and lands in Dst as a tile; a tiled block takes one UNPACR
 * of 1024 datums. The packer writes a tile as four PACRs of a face (ADC Y: face, a 1024-byte Y
 * stride), or a row-major block as 64 PACRs of 16 datums, a face row each (ADC Z: face row, a 64-byte
 * Z stride): row r's left half from face 2 (r / 16), then its right half from the face beside it.
 *
 * Dst halves with the unpacker as their writer: TRISC1 clears a half and posts TK_SEM_DST_FREE;
 * TRISC0 takes it, unpacks, and once its pipe is idle posts TK_SEM_DST_FULL; TRISC1 takes that and
 * hands the half to the packer (TK_SEM_MATH_PACK, as above). The two new semaphores are used from
 * the cores (MMIO), so they need no SEMINIT.
 */
#define TK_SEM_DST_FREE 2u
#define TK_SEM_DST_FULL 3u
#define TK_BLOCK_DATUMS 1024u

/* A TRISC: take one from a semaphore once it is non-zero (only this core takes from it). */
static inline void tk_sem_take(uint32_t sem)
{
    while (tk_sem_read(sem) == 0u)
        ;
    mmio_write32(TENSIX_SEMAPHORE_BASE + 4u * sem, 1u);
}

/* Unpacker 0 reads row-major blocks (Tileize_mode, rows `row_bytes` apart: a multiple of 16, below
   64 KiB) or tiled ones. Only while no UNPACR is in the pipe. */
static inline void tk_unpack_dst_tileize(uint32_t tileize, uint32_t row_bytes)
{
    uint32_t shift = tileize ? row_bytes / 16u : 0u; /* Shift_amount_cntx0..2: the pitch, 4 bits each */
    CFG_WRITE(TK_CFG_STATE, THCON_SEC0_REG2_Tileize_mode, tileize ? 1u : 0u);
    CFG_WRITE(TK_CFG_STATE, THCON_SEC0_REG2_Shift_amount_cntx0, shift & 0xFu);
    CFG_WRITE(TK_CFG_STATE, THCON_SEC0_REG2_Shift_amount_cntx1, shift >> 4 & 0xFu);
    CFG_WRITE(TK_CFG_STATE, THCON_SEC0_REG2_Shift_amount_cntx2, shift >> 8 & 0xFu);
}

/* Unpacker 0: fp32 blocks of 1024 datums into Dst as fp32, read as tk_unpack_dst_tileize says; X
   counts the block's datums from 0. TRISC0, before any UNPACR. */
static inline void tk_unpack_dst_configure(uint32_t tileize, uint32_t row_bytes)
{
    uint32_t word = CFG_THCON_SEC0_REG0_TileDescriptor_WORD;
#if defined(SDK_ARCH_WORMHOLE)
    /* Tile descriptor: FP32, IsUncompressed, XDim 16 | YDim 32, ZDim 2 | WDim 1, digest 0; an output Z
       step is a face of Dst32. */
    mmio_write32(TENSIX_CFG_ADDR(TK_CFG_STATE, word + 0u), TK_FMT_FP32 | 1u << 4 | 16u << 16);
    mmio_write32(TENSIX_CFG_ADDR(TK_CFG_STATE, word + 1u), 32u | 2u << 16);
    CFG_WRITE(TK_CFG_STATE, UNP0_ADDR_CTRL_ZW_REG_1_Zstride, TK_FACE_DATUMS * 4u);
#else
    /* Tile descriptor: FP32, IsUncompressed, XDim 1024 | YDim 1, ZDim 1 | WDim 1, digest 0. */
    mmio_write32(TENSIX_CFG_ADDR(TK_CFG_STATE, word + 0u), TK_FMT_FP32 | 1u << 4 | TK_BLOCK_DATUMS << 16);
    mmio_write32(TENSIX_CFG_ADDR(TK_CFG_STATE, word + 1u), 1u | 1u << 16);
#endif
    mmio_write32(TENSIX_CFG_ADDR(TK_CFG_STATE, word + 2u), 1u);
    mmio_write32(TENSIX_CFG_ADDR(TK_CFG_STATE, word + 3u), 0u);
    CFG_WRITE(TK_CFG_STATE, THCON_SEC0_REG2_Out_data_format, TK_FMT_FP32);
    CFG_WRITE(TK_CFG_STATE, THCON_SEC0_REG2_Unpack_limit_address, 0x1FFFFu);
    CFG_WRITE(TK_CFG_STATE, THCON_SEC0_REG2_Unpack_If_Sel, 1u);
    tk_unpack_dst_tileize(tileize, row_bytes);
    TTI_SETADCXY(TK_ADC_UNP0, 0, 0, 0, 0, 0xF);
    TTI_SETADCZW(TK_ADC_UNP0, 0, 0, 0, 0, 0xF);
    TTI_SETADCXX(TK_ADC_UNP0, TK_BLOCK_DATUMS - 1u, 0);
}

/* The Dst half unpacker 0 writes next (its output addresses start four rows in, as for SrcA: the
   byte address of Dst32 row 4 of the half). Only while no UNPACR is in the pipe. */
static inline void tk_unpack_dst_half(uint32_t half)
{
    CFG_WRITE(TK_CFG_STATE, UNP0_ADDR_BASE_REG_1_Base, ((half ? TK_DST_HALF_ROWS : 0u) + 4u) * 16u * 4u);
}

/* One block into Dst: one UNPACR, counters unchanged. */
#define TK_UNPACK_BLOCK_TO_DST() TTI_UNPACR(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1)

/* One block into Dst as tk_unpack_dst_tileize set it up: Blackhole, one UNPACR either way; Wormhole,
   a tiled block in one UNPACR of 1024 datums, a row-major one in four of a face each (AddrMode: input
   ADC Y / Z += 1 for the next face column / row, output ADC Z += 1 for the next face of Dst), ADCs
   back to 0 after. */
static inline void tk_unpack_block_to_dst(uint32_t tileize)
{
#if defined(SDK_ARCH_WORMHOLE)
    if (tileize) {
        TTI_SETADCXX(TK_ADC_UNP0, TK_FACE_DATUMS - 1u, 0);
        TTI_UNPACR(0, 1u << 4 | 1u << 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1); /* face 0 */
        TTI_UNPACR(0, 1u << 4 | 1u, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1);      /* face 1 */
        TTI_SETADCXY(TK_ADC_UNP0, 0, 0, 0, 0, 2);                          /* input Y back to 0 */
        TTI_UNPACR(0, 1u << 4 | 1u << 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1); /* face 2 */
        TTI_UNPACR(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1);                 /* face 3 */
        TTI_SETADCXY(TK_ADC_UNP0, 0, 0, 0, 0, 0xF);
        TTI_SETADCZW(TK_ADC_UNP0, 0, 0, 0, 0, 0xF);
    } else {
        TTI_SETADCXX(TK_ADC_UNP0, TK_BLOCK_DATUMS - 1u, 0);
        TK_UNPACK_BLOCK_TO_DST();
    }
#else
    (void)tileize;
    TK_UNPACK_BLOCK_TO_DST();
#endif
}

/* TRISC1: clear the half the unpacker writes next once the packer has left it, and let TRISC0 have it. */
static inline void tk_math_offer_dst(uint32_t half)
{
    tk_math_acquire_dst(half);
    tk_wait_pipe_idle(); /* the ZEROACC is done before the unpacker may write */
    tk_sem_post(TK_SEM_DST_FREE);
}

/* TRISC1: wait until the unpacker has filled the half, then hand it to the packer. */
static inline void tk_math_pass_dst(void)
{
    tk_sem_take(TK_SEM_DST_FULL);
    TTI_SEMPOST(TK_SEM(TK_SEM_MATH_PACK));
}

/* The packer for fp32 blocks from Dst32: as tk_pack_configure(FP32, FP32), and one Z step is the 32
   Dst rows of two faces (or of 16 block rows). TRISC2, before any PACR. */
static inline void tk_pack_block_configure(void)
{
    tk_pack_configure(TK_FMT_FP32, TK_FMT_FP32);
#if defined(SDK_ARCH_WORMHOLE)
    /* A Y step is a face of Dst32, a Z step one of its rows. */
    CFG_WRITE(TK_CFG_STATE, PCK0_ADDR_CTRL_XY_REG_0_Ystride, TK_FACE_DATUMS * 4u);
    CFG_WRITE(TK_CFG_STATE, PCK0_ADDR_CTRL_ZW_REG_0_Zstride, 16u * 4u);
#else
    CFG_WRITE(TK_CFG_STATE, PCK0_ADDR_CTRL_ZW_REG_0_Zstride, 32u * 16u * 4u);
#endif
}

/* Packer ADCs and ADDR_MOD slots for a block. Tilize (`strided` 0): 0 Y += 4 rows; 1 Y back to 0;
   2 Y back to 0 and Z += 1; 3 Y and Z back to 0. Untilize (`strided` 1): slot 0 steps Y by one row,
   1..3 as for tilize. TRISC2, once; tk_pack_block_step switches slot 0 between the two (a SETC16,
   ordered with the PACRs before and after it in the pipe). */
static inline void tk_pack_block_step(uint32_t strided)
{
#if defined(SDK_ARCH_WORMHOLE)
    /* Wormhole: the X range instead, 16 datums (a face row) or 256 (a face). */
    if (strided)
        TTI_SETADCXX(TK_ADC_PACK, 15, 0);
    else
        TTI_SETADCXX(TK_ADC_PACK, TK_FACE_DATUMS - 1u, 0);
    return;
#endif
    if (strided)
        TTI_SETC16(THD_ADDR_MOD_PACK_SEC0_YsrcIncr_REG, THD_VALUE(ADDR_MOD_PACK_SEC0_YsrcIncr, 1));
    else
        TTI_SETC16(THD_ADDR_MOD_PACK_SEC0_YsrcIncr_REG, THD_VALUE(ADDR_MOD_PACK_SEC0_YsrcIncr, 4));
}

static inline void tk_pack_block_init(uint32_t strided)
{
    TTI_SETADCXY(TK_ADC_PACK, 0, 0, 0, 0, 0xF);
    TTI_SETADCZW(TK_ADC_PACK, 0, 0, 0, 0, 0xF);
#if defined(SDK_ARCH_WORMHOLE)
    /* Slots: 0 the next face (Y += 1); 1 the next face row, back to the pair's left face (Y = Y_Cr,
       Z += 1); 2 faces 2 and 3 from their first row (Y_Cr += 2, Z = 0); 3 Y and Z back to 0. */
    tk_pack_block_step(strided);
    TTI_SETC16(THD_ADDR_MOD_PACK_SEC0_YsrcIncr_REG, THD_VALUE(ADDR_MOD_PACK_SEC0_YsrcIncr, 1));
    TTI_SETC16(THD_ADDR_MOD_PACK_SEC1_YsrcIncr_REG,
               THD_VALUE(ADDR_MOD_PACK_SEC1_YsrcCR, 1) | THD_VALUE(ADDR_MOD_PACK_SEC1_ZsrcIncr, 1));
    TTI_SETC16(THD_ADDR_MOD_PACK_SEC2_YsrcIncr_REG, THD_VALUE(ADDR_MOD_PACK_SEC2_YsrcIncr, 2) |
                                                         THD_VALUE(ADDR_MOD_PACK_SEC2_YsrcCR, 1) |
                                                         THD_VALUE(ADDR_MOD_PACK_SEC2_ZsrcClear, 1));
    TTI_SETC16(THD_ADDR_MOD_PACK_SEC3_YsrcIncr_REG,
               THD_VALUE(ADDR_MOD_PACK_SEC3_YsrcClear, 1) | THD_VALUE(ADDR_MOD_PACK_SEC3_ZsrcClear, 1));
    return;
#endif
    TTI_SETADCXX(TK_ADC_PACK, 15, 0);
    tk_pack_block_step(strided);
    TTI_SETC16(THD_ADDR_MOD_PACK_SEC1_YsrcIncr_REG, THD_VALUE(ADDR_MOD_PACK_SEC1_YsrcClear, 1));
    TTI_SETC16(THD_ADDR_MOD_PACK_SEC2_YsrcIncr_REG,
               THD_VALUE(ADDR_MOD_PACK_SEC2_YsrcClear, 1) | THD_VALUE(ADDR_MOD_PACK_SEC2_ZsrcIncr, 1));
    TTI_SETC16(THD_ADDR_MOD_PACK_SEC3_YsrcIncr_REG,
               THD_VALUE(ADDR_MOD_PACK_SEC3_YsrcClear, 1) | THD_VALUE(ADDR_MOD_PACK_SEC3_ZsrcClear, 1));
}

/* PACR forms: normal Dst access with read interfaces `intf` (5: rows Y and Y + 2; 10: Y + 1 and
   Y + 3), or strided (interfaces 0 and 1: row Y and row Y + 16). Wormhole: packer 0, ADDR_MOD `slot`. */
#if defined(SDK_ARCH_WORMHOLE)
#define TK_PACR0(slot, last) TTI_PACR(slot, 0, 1, 0, 0, 0, last)
#else
#define TK_PACR_ROWS(intf, slot, last) TTI_PACR(0, 0, 0, slot, 0, 0, intf, 0, 0, 0, 0, last)
#define TK_PACR_STRIDED(slot, last) TTI_PACR(0, 0, 1, slot, 0, 0, 3, 0, 0, 0, 0, last)
#endif
#define TK_REPEAT7(x) \
    do {              \
        x;            \
        x;            \
        x;            \
        x;            \
        x;            \
        x;            \
        x;            \
    } while (0)
#define TK_REPEAT15(x)   \
    do {                 \
        TK_REPEAT7(x);   \
        TK_REPEAT7(x);   \
        x;               \
    } while (0)

#if defined(SDK_ARCH_WORMHOLE)
/* Wormhole: the block is a tile in Dst already (the unpacker tilized it): four PACRs of a face. */
#define TK_PACK_BLOCK_TILIZE()                                                 \
    do {                                                                       \
        TTI_SEMWAIT(TK_BLOCK_PACK, TK_SEM(TK_SEM_MATH_PACK), TK_SEMWAIT_ZERO); \
        TK_PACR0(0, 0);                                                        \
        TK_PACR0(0, 0);                                                        \
        TK_PACR0(0, 0);                                                        \
        TK_PACR0(3, 1);                                                        \
        TTI_STALLWAIT(TK_BLOCK_SYNC, TK_WAIT_PACK);                            \
        TTI_SEMGET(TK_SEM(TK_SEM_MATH_PACK));                                  \
    } while (0)

/* Untilize a tiled block: per block row, the left face's row then the right face's (slot 0), then the
   next row (slot 1); after row 15, faces 2 and 3 (slot 2). */
#define TK_PACK_BLOCK_ROW() \
    do {                    \
        TK_PACR0(0, 0);     \
        TK_PACR0(1, 0);     \
    } while (0)
#define TK_PACK_BLOCK_UNTILIZE()                                               \
    do {                                                                       \
        TTI_SEMWAIT(TK_BLOCK_PACK, TK_SEM(TK_SEM_MATH_PACK), TK_SEMWAIT_ZERO); \
        TK_REPEAT15(TK_PACK_BLOCK_ROW());                                      \
        TK_PACR0(0, 0);                                                        \
        TK_PACR0(2, 0);                                                        \
        TK_REPEAT15(TK_PACK_BLOCK_ROW());                                      \
        TK_PACR0(0, 0);                                                        \
        TK_PACR0(3, 1);                                                        \
        TTI_STALLWAIT(TK_BLOCK_SYNC, TK_WAIT_PACK);                            \
        TTI_SEMGET(TK_SEM(TK_SEM_MATH_PACK));                                  \
    } while (0)
#else
/* Tilize a block held row-major in a Dst half: per face pair, eight PACRs of two face rows through
   interfaces 0 and 2 (the left face), then eight through 1 and 3 (the right face). Waits for and
   gives back the half like TK_PACK_TILE. */
#define TK_PACK_BLOCK_TILIZE()                                                 \
    do {                                                                       \
        TTI_SEMWAIT(TK_BLOCK_PACK, TK_SEM(TK_SEM_MATH_PACK), TK_SEMWAIT_ZERO); \
        TK_REPEAT7(TK_PACR_ROWS(5, 0, 0));                                     \
        TK_PACR_ROWS(5, 1, 0);                                                 \
        TK_REPEAT7(TK_PACR_ROWS(10, 0, 0));                                    \
        TK_PACR_ROWS(10, 2, 0);                                                \
        TK_REPEAT7(TK_PACR_ROWS(5, 0, 0));                                     \
        TK_PACR_ROWS(5, 1, 0);                                                 \
        TK_REPEAT7(TK_PACR_ROWS(10, 0, 0));                                    \
        TK_PACR_ROWS(10, 3, 1);                                                \
        TTI_STALLWAIT(TK_BLOCK_SYNC, TK_WAIT_PACK);                            \
        TTI_SEMGET(TK_SEM(TK_SEM_MATH_PACK));                                  \
    } while (0)

/* Untilize a tiled block in a Dst half: 32 strided PACRs, each one row of the block (faces 0 and 1,
   then 2 and 3). */
#define TK_PACK_BLOCK_UNTILIZE()                                               \
    do {                                                                       \
        TTI_SEMWAIT(TK_BLOCK_PACK, TK_SEM(TK_SEM_MATH_PACK), TK_SEMWAIT_ZERO); \
        TK_REPEAT15(TK_PACR_STRIDED(0, 0));                                    \
        TK_PACR_STRIDED(2, 0);                                                 \
        TK_REPEAT15(TK_PACR_STRIDED(0, 0));                                    \
        TK_PACR_STRIDED(3, 1);                                                 \
        TTI_STALLWAIT(TK_BLOCK_SYNC, TK_WAIT_PACK);                            \
        TTI_SEMGET(TK_SEM(TK_SEM_MATH_PACK));                                  \
    } while (0)
#endif

#endif /* TENSIX_KERNEL_H */
