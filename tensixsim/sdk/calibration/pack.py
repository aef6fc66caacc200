"""The packer's figures: 1024 values of an FP32 Dst tile packed into L1."""

from __future__ import annotations

from tensixsim.sdk.calibration.case import (
    GPRS,
    PC_BUF_SYNC,
    TENSIX_CFG,
    Case,
    done_check,
    inline,
    mop_config,
    profiler_record,
    rmwcib,
    setc16,
    word,
    write32,
)

# --------------------------------------------------------------------------- the packer
# Packing 1024 values of an FP32 Dst tile into L1 (TRISC2; blackhole-py
# tests/movement/packer/test_l1_accumulation.py, the "overwrite" figures): the packer configured
# for BF16 or FP32 output from FP32 Dst, then per pass the Dst position reset (SETADC), the L1
# destination and Dst offset written, a MOP of 64 PACRs of one 16-value Dst row each, STALLWAIT(SYNC;
# PACK0) and the done check. The figure is the profiler's interval: its store of the first clock
# read, then the passes. On silicon TRISC0 unpacked the values into Dst and TRISC1 handed Dst over
# first; the packer's cycles do not depend on the values, so Dst is left as it is (rows never
# written read as zero) and the hand-over is left out.
PACK_OUT = 0x3F000  # the harness's OUTPUT (L1 bytes)
_BF16, _FP32 = 5, 0  # data format codes


def _pacr(**fields: int) -> int:
    return word("PACR", **fields)


def _pack_prologue(fmt: int) -> str:
    size = 4 if fmt == _FP32 else 2
    nop = word("NOP")
    return "\n".join(
        (
            # configure_packer(fmt)
            inline(rmwcib(71, 2, 0x80, 0)),  # THCON_SEC0_REG1_Pac_LF8_4b_exp
            inline(setc16(0, 0)),
            inline(rmwcib(1, 3, 0x1E, fmt << 1)),  # ALU_FORMAT_SPEC_REG2_Dstacc
            inline(rmwcib(1, 0, 0x07, 0)),  # rounding
            *(inline(rmwcib(2, byte, mask, 0)) for byte, mask in enumerate((0xFC, 0xFF, 0x3F))),  # ReLU
            write32(TENSIX_CFG + 4 * 68, 0x40000),  # THCON_SEC0_REG1 section sizes
            write32(TENSIX_CFG + 4 * 70, 1 | fmt << 4 | fmt << 8),  # uncompressed, out / in format
            write32(TENSIX_CFG + 4 * 18, 1),  # PCK_DEST_RD_CTRL_Read_32b_data
            write32(TENSIX_CFG + 4 * 12, 16 * size << 16),  # PCK0_ADDR_CTRL_XY_REG_0 Ystride
            write32(TENSIX_CFG + 4 * 13, 256 * size | 1024 * size << 16),  # Zstride, Wstride
            write32(TENSIX_CFG + 4 * 28, 0x1000),  # PACK_COUNTERS
            write32(TENSIX_CFG + 4 * 24, 0xFFFF),  # PCK_EDGE_OFFSET_SEC0_mask
            *(write32(TENSIX_CFG + 4 * reg, 0) for reg in (25, 20, 21)),
            write32(GPRS + 4 * 16, 1024 * size >> 4),
            write32(GPRS + 4 * 52, 0x40000),
            *(inline(setc16(37 + i, v)) for i, v in enumerate((0x0104, 0x2820, 0x1120))),
            inline(word("SETADCXY", cnt_set_mask=4, bit_mask=0xB)),
            inline(word("SETADCZW", cnt_set_mask=4, bit_mask=0xF)),
            mop_config((4, 4, nop, nop, nop, _pacr(), nop, _pacr(addr_mode=1, last=1), _pacr(addr_mode=2))),
            done_check(PC_BUF_SYNC),
            # one 16-value Dst row a PACR: address mode 0 moves Dst Y on, 1 resets it
            *(inline(setc16(37 + i, v)) for i, v in enumerate((1, 0x20, 0))),
            write32(TENSIX_CFG + 4 * 28, 0x100),
            mop_config(
                (
                    1,
                    64,
                    nop,
                    nop,
                    nop,
                    _pacr(read_intf_sel=1),
                    nop,
                    _pacr(read_intf_sel=1, addr_mode=1, last=1),
                    nop,
                )
            ),
            inline(word("STALLWAIT", stall_res=0x80, wait_res=0x8)),
            inline(rmwcib(70, 0, 4, 0)),  # Disable_pack_zero_flags
            inline(rmwcib(71, 2, 8, 0)),  # Pack_L1_Acc off
            done_check(PC_BUF_SYNC),
        )
    )


_PACK_PASS = "\n".join(
    (
        *(inline(word("SETADC", cnt_set_mask=4, dimension_index=d)) for d in (1, 2, 3)),
        write32(TENSIX_CFG + 4 * 69, ((PACK_OUT >> 4) - 1) | 0x80000000),  # THCON_SEC0_REG1_L1_Dest_addr
        write32(TENSIX_CFG + 4 * 180, 0),  # DEST_TARGET_REG_CFG_PACK_SEC0
        inline(word("SETADCXX", cnt_set_mask=4, x_end2=15)),
        inline(word("MOP", mop_type=1)),
        inline(word("STALLWAIT", stall_res=0x2, wait_res=0x8)),
        done_check(PC_BUF_SYNC),
    )
)


def _pack_case(fmt: int, passes: int, silicon: float) -> Case:
    name = "bf16" if fmt == _BF16 else "fp32"
    return Case(
        f"pack_1024_{name}_x{passes}",
        f"pack 1024 values, FP32 Dst to {name.upper()}, {passes} pass{'es' if passes > 1 else ''} (TRISC2)",
        "\n".join((profiler_record(stop=False), *([_PACK_PASS] * passes), profiler_record(stop=True))),
        1,
        (silicon, silicon),
        cores=("trisc2",),
        figure_cores=("trisc2",),
        iters=1,
        prologue=_pack_prologue(fmt),
        profiled=True,
    )


PACK_CASES = (
    _pack_case(_BF16, 1, 116.0),
    _pack_case(_FP32, 1, 180.0),
    _pack_case(_BF16, 4, 428.0),
    _pack_case(_FP32, 4, 684.0),
)
