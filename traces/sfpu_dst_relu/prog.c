/* The vector unit on a Dst block, on one thread (TRISC0), configured with whole-word writes only:
 * unpacker 0 moves a 32x32 FP32 block straight into Dst, an SFPU operation runs over it in place, 32
 * datums per step (SFPLOAD / SFPSTORE as FP32, the Dst RWC stepping by two), and the packer writes
 * it back as FP32. SFPU_OP 1: relu by lane predication (SFPSETCC on the sign, SFPLOADI +0 on those
 * lanes); 2: x * SCALE + BIAS by SFPMAD; 3: -|x| (SFPABS, SFPSETSGN from the immediate), then SFPMUL
 * by SCALE. */
#include "tensix_kernel.h"

#ifndef SFPU_OP
#define SFPU_OP 1
#endif
#define SCALE 0x3EAAAAABu /* FP32 1/3 */
#define BIAS 0xBF000000u  /* FP32 -0.5 */
#define LOADI_BF16 0u
#define SETCC_LT0 0u
#define ENCC_EI_RI 10u /* SFPENCC: lane enables from Imm12 bit 0, lane flags from bit 1 */

#define SRC 0x30000u
#define DST 0x40000u
#define DATUMS 1024u

static inline void cfg(uint32_t word, uint32_t value)
{
    mmio_write32(TENSIX_CFG_ADDR(0, word), value);
}

int main(void)
{
    cfg(CFG_ALU_ACC_CTRL_Fp32_enabled_WORD, CFG_VALUE(ALU_ACC_CTRL_Fp32_enabled, 1u));
    cfg(64, TK_FMT_FP32 | 1u << 4 | DATUMS << 16);
    cfg(65, 1u | 1u << 16);
    cfg(CFG_THCON_SEC0_REG2_Out_data_format_WORD, CFG_VALUE(THCON_SEC0_REG2_Out_data_format, TK_FMT_FP32));
    cfg(CFG_THCON_SEC0_REG2_Disable_zero_compress_cntx0_WORD,
        CFG_VALUE(THCON_SEC0_REG2_Disable_zero_compress_cntx0, 1u) | CFG_VALUE(THCON_SEC0_REG2_Unpack_if_sel_cntx0, 1u));
    cfg(CFG_THCON_SEC0_REG3_Base_address_WORD, SRC / 16u - 1u);
    cfg(CFG_THCON_SEC0_REG5_Dest_cntx0_address_WORD, CFG_VALUE(THCON_SEC0_REG5_Dest_cntx0_address, 64u));
    cfg(CFG_THCON_SEC0_REG5_Tile_x_dim_cntx0_WORD, CFG_VALUE(THCON_SEC0_REG5_Tile_x_dim_cntx0, DATUMS));
    cfg(CFG_PCK0_ADDR_CTRL_XY_REG_0_Ystride_WORD, CFG_VALUE(PCK0_ADDR_CTRL_XY_REG_0_Ystride, 16u * 4u));
    cfg(CFG_PCK_DEST_RD_CTRL_Read_32b_data_WORD, CFG_VALUE(PCK_DEST_RD_CTRL_Read_32b_data, 1u));
    cfg(CFG_PCK_EDGE_OFFSET_SEC0_mask_WORD, CFG_VALUE(PCK_EDGE_OFFSET_SEC0_mask, 0xFFFFu));
    cfg(CFG_PACK_COUNTERS_SEC0_pack_reads_per_xy_plane_WORD, CFG_VALUE(PACK_COUNTERS_SEC0_pack_reads_per_xy_plane, 16u));
    cfg(CFG_THCON_SEC0_REG1_L1_Dest_addr_WORD, DST / 16u - 1u);
    cfg(CFG_THCON_SEC0_REG1_Disable_zero_compress_WORD,
        CFG_VALUE(THCON_SEC0_REG1_Disable_zero_compress, 1u) | CFG_VALUE(THCON_SEC0_REG1_In_data_format, TK_FMT_FP32) |
            CFG_VALUE(THCON_SEC0_REG1_Out_data_format, TK_FMT_FP32));
    tk_wait_pipe_idle();
    TTI_SETC16(THD_ADDR_MOD_PACK_SEC0_YsrcIncr_REG, THD_VALUE(ADDR_MOD_PACK_SEC0_YsrcIncr, 4));
    TTI_SETC16(THD_ADDR_MOD_PACK_SEC1_YsrcIncr_REG, THD_VALUE(ADDR_MOD_PACK_SEC1_YsrcClear, 1));
    tk_sfpu_addr_mods();
    TTI_SETADCXY(TK_ADC_UNP0 | TK_ADC_PACK, 0, 0, 0, 0, 0xF);
    TTI_SETADCZW(TK_ADC_UNP0 | TK_ADC_PACK, 0, 0, 0, 0, 0xF);
    TTI_SETADCXX(TK_ADC_UNP0, DATUMS - 1u, 0);
    TTI_SETADCXX(TK_ADC_PACK, 15, 0);
    TTI_UNPACR(0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1);
    tk_wait_pipe_idle();
    TK_SFPU_LOADI32(4, SCALE);
    TK_SFPU_LOADI32(5, BIAS);
#if SFPU_OP == 1
    TTI_SFPENCC(3, 0, 0, ENCC_EI_RI); /* predicate on the lane flags, all true */
#endif
    for (uint32_t s = 0; s < TK_SFPU_TILE_STEPS; s++) {
        TTI_SFPLOAD(0, TK_SFPU_FP32, TK_SFPU_ADDR_STAY, 0);
#if SFPU_OP == 1
        TTI_SFPSETCC(0, 0, 0, SETCC_LT0);   /* lanes whose sign bit is set */
        TTI_SFPLOADI(0, LOADI_BF16, 0);     /* ... become +0 */
        TTI_SFPENCC(3, 0, 0, ENCC_EI_RI);   /* every lane again */
#elif SFPU_OP == 2
        TTI_SFPMAD(0, 4, 5, 0, 0);          /* L0 = x * SCALE + BIAS */
#else
        TTI_SFPABS(0, 0, 0, 1);             /* L0 = |x| (FP32) */
        TTI_SFPSETSGN(1, 0, 0, 1);          /* sign bit from the immediate: -|x| */
        TTI_SFPMUL(0, 4, 9, 0, 0);          /* L0 = L0 * SCALE (+ 0) */
#endif
        TTI_SFPNOP;
        TTI_SFPSTORE(0, TK_SFPU_FP32, TK_SFPU_ADDR_STEP, 0);
    }
#if SFPU_OP == 1
    TTI_SFPENCC(2, 0, 0, ENCC_EI_RI);   /* lane enables off: every lane */
#endif
    tk_wait_pipe_idle();
    for (uint32_t i = 0; i < 15u; i++)
        TTI_PACR(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    TTI_PACR(0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1);
    tk_wait_pipe_idle();
    return 0;
}
