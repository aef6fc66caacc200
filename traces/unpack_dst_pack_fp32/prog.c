/* Unpacker -> Dst -> packer on one thread (TRISC0), configured with whole-word writes only: unpacker 0
 * moves a 32x32 FP32 block (tiled: four 16x16 faces) from L1 straight into Dst (UNPACR with
 * OvrdThreadId, context 0, Unpack_if_sel), then sixteen PACRs (four Dst rows each, all four read
 * interfaces, the address modifier stepping the row by four) write Dst back to L1 as FP32. */
#include "tensixsim.h"
#include "tensix_ops_blackhole.h"
#include "tensix_cfg_blackhole.h"
#include "tensix_kernel.h"

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
    /* Unpacker 0: FP32 in, uncompressed; X dimension from context 0's register (OvrdThreadId). */
    cfg(64, TK_FMT_FP32 | 1u << 4 | DATUMS << 16);
    cfg(65, 1u | 1u << 16);
    cfg(CFG_THCON_SEC0_REG2_Out_data_format_WORD, CFG_VALUE(THCON_SEC0_REG2_Out_data_format, TK_FMT_FP32));
    cfg(CFG_THCON_SEC0_REG2_Disable_zero_compress_cntx0_WORD,
        CFG_VALUE(THCON_SEC0_REG2_Disable_zero_compress_cntx0, 1u) | CFG_VALUE(THCON_SEC0_REG2_Unpack_if_sel_cntx0, 1u));
    cfg(CFG_THCON_SEC0_REG3_Base_address_WORD, SRC / 16u - 1u);
    cfg(CFG_THCON_SEC0_REG5_Dest_cntx0_address_WORD, CFG_VALUE(THCON_SEC0_REG5_Dest_cntx0_address, 64u));
    cfg(CFG_THCON_SEC0_REG5_Tile_x_dim_cntx0_WORD, CFG_VALUE(THCON_SEC0_REG5_Tile_x_dim_cntx0, DATUMS));
    /* Packer: Dst read as 32-bit FP32, FP32 out, every column, one Dst row per 64 bytes of Y. */
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
    TTI_SETADCXY(TK_ADC_UNP0 | TK_ADC_PACK, 0, 0, 0, 0, 0xF);
    TTI_SETADCZW(TK_ADC_UNP0 | TK_ADC_PACK, 0, 0, 0, 0, 0xF);
    TTI_SETADCXX(TK_ADC_UNP0, DATUMS - 1u, 0);
    TTI_SETADCXX(TK_ADC_PACK, 15, 0);
    TTI_UNPACR(0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1);
    tk_wait_pipe_idle();
    for (uint32_t i = 0; i < 15u; i++)
        TTI_PACR(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    TTI_PACR(0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1);
    tk_wait_pipe_idle();
    return 0;
}
