/* Unpack -> matmul -> pack on one thread (TRISC0), configured with whole-word writes only: unpackers
 * 0 and 1 move a BF16 tile each (1024 datums in face order, one UNPACR with OvrdThreadId) into SrcA
 * (B, the right operand) and SrcB (A, the left operand); Dst is zeroed (ZEROACC) and the SDK's tile
 * matmul (sixteen MVMULs per fidelity phase through the replay buffer and a MOP, PHASES phases:
 * 1 LoFi .. 4 HiFi4) accumulates C = A @ B in FP32 Dst; sixteen PACRs write C as BF16. */
#include "tensixsim.h"
#include "tensix_ops_blackhole.h"
#include "tensix_cfg_blackhole.h"
#include "tensix_kernel.h"

#define SRC_A 0x30000u
#define SRC_B 0x31000u
#define DST 0x40000u
#define DATUMS 1024u
#ifndef PHASES
#define PHASES 4u
#endif

static inline void cfg(uint32_t word, uint32_t value)
{
    mmio_write32(TENSIX_CFG_ADDR(0, word), value);
}

int main(void)
{
    cfg(1, CFG_VALUE(ALU_ACC_CTRL_Fp32_enabled, 1u) | CFG_VALUE(ALU_FORMAT_SPEC_REG0_SrcA, TK_FMT_BF16) |
               CFG_VALUE(ALU_FORMAT_SPEC_REG1_SrcB, TK_FMT_BF16) | CFG_VALUE(ALU_FORMAT_SPEC_REG2_Dstacc, TK_FMT_BF16));
    /* Unpackers 0 and 1: BF16 in and out, uncompressed, context 0. */
    cfg(64, TK_FMT_BF16 | 1u << 4 | DATUMS << 16);
    cfg(65, 1u | 1u << 16);
    cfg(112, TK_FMT_BF16 | 1u << 4 | DATUMS << 16);
    cfg(113, 1u | 1u << 16);
    cfg(CFG_THCON_SEC0_REG2_Out_data_format_WORD, CFG_VALUE(THCON_SEC0_REG2_Out_data_format, TK_FMT_BF16));
    cfg(CFG_THCON_SEC1_REG2_Out_data_format_WORD, CFG_VALUE(THCON_SEC1_REG2_Out_data_format, TK_FMT_BF16));
    cfg(CFG_THCON_SEC0_REG2_Disable_zero_compress_cntx0_WORD, CFG_VALUE(THCON_SEC0_REG2_Disable_zero_compress_cntx0, 1u));
    cfg(CFG_THCON_SEC1_REG2_Disable_zero_compress_cntx0_WORD, CFG_VALUE(THCON_SEC1_REG2_Disable_zero_compress_cntx0, 1u));
    cfg(CFG_THCON_SEC0_REG3_Base_address_WORD, SRC_A / 16u - 1u);
    cfg(CFG_THCON_SEC1_REG3_Base_address_WORD, SRC_B / 16u - 1u);
    cfg(CFG_THCON_SEC0_REG5_Dest_cntx0_address_WORD, CFG_VALUE(THCON_SEC0_REG5_Dest_cntx0_address, 64u));
    cfg(CFG_THCON_SEC0_REG5_Tile_x_dim_cntx0_WORD, CFG_VALUE(THCON_SEC0_REG5_Tile_x_dim_cntx0, DATUMS));
    /* Packer: Dst read as 32-bit, BF16 as the intermediate and output format, every column. */
    cfg(CFG_PCK0_ADDR_CTRL_XY_REG_0_Ystride_WORD, CFG_VALUE(PCK0_ADDR_CTRL_XY_REG_0_Ystride, 16u * 2u)); /* in units of the intermediate format */
    cfg(CFG_PCK_DEST_RD_CTRL_Read_32b_data_WORD, CFG_VALUE(PCK_DEST_RD_CTRL_Read_32b_data, 1u));
    cfg(CFG_PCK_EDGE_OFFSET_SEC0_mask_WORD, CFG_VALUE(PCK_EDGE_OFFSET_SEC0_mask, 0xFFFFu));
    cfg(CFG_PACK_COUNTERS_SEC0_pack_reads_per_xy_plane_WORD, CFG_VALUE(PACK_COUNTERS_SEC0_pack_reads_per_xy_plane, 16u));
    cfg(CFG_THCON_SEC0_REG1_L1_Dest_addr_WORD, DST / 16u - 1u);
    cfg(CFG_THCON_SEC0_REG1_Disable_zero_compress_WORD,
        CFG_VALUE(THCON_SEC0_REG1_Disable_zero_compress, 1u) | CFG_VALUE(THCON_SEC0_REG1_In_data_format, TK_FMT_BF16) |
            CFG_VALUE(THCON_SEC0_REG1_Out_data_format, TK_FMT_BF16));
    tk_wait_pipe_idle();
    TTI_SETC16(THD_SRCA_SET_SetOvrdWithAddr_REG, THD_VALUE(SRCA_SET_SetOvrdWithAddr, 1));
    TTI_SETC16(THD_ADDR_MOD_PACK_SEC0_YsrcIncr_REG, THD_VALUE(ADDR_MOD_PACK_SEC0_YsrcIncr, 4));
    TTI_SETC16(THD_ADDR_MOD_PACK_SEC1_YsrcIncr_REG, THD_VALUE(ADDR_MOD_PACK_SEC1_YsrcClear, 1));
    tk_matmul_init(PHASES);
    TTI_SETADCXY(TK_ADC_UNP0 | TK_ADC_UNP1 | TK_ADC_PACK, 0, 0, 0, 0, 0xF);
    TTI_SETADCZW(TK_ADC_UNP0 | TK_ADC_UNP1 | TK_ADC_PACK, 0, 0, 0, 0, 0xF);
    TTI_SETADCXX(TK_ADC_UNP0 | TK_ADC_UNP1, DATUMS - 1u, 0);
    TTI_SETADCXX(TK_ADC_PACK, 15, 0);
    TTI_UNPACR(0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 1);
    TTI_UNPACR(1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 1);
    TTI_ZEROACC(2, 1, 0, 0, 0); /* Dst half 0 reads as zero: the MVMULs accumulate from +0 */
    TK_MATMUL_TILE();
    tk_wait_pipe_idle();
    for (uint32_t i = 0; i < 15u; i++)
        TTI_PACR(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    TTI_PACR(0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1);
    tk_wait_pipe_idle();
    return 0;
}
