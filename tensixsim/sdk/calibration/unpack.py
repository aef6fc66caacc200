"""The unpackers' figures: the rows of a matmul's unpack, alone and in 2x2 output subblocks."""

from __future__ import annotations

from tensixsim.sdk.calibration.case import (
    DONE,
    GPRS,
    NOP,
    PC_BUF_SYNC,
    TENSIX_CFG,
    Case,
    done_check,
    inline,
    la,
    li,
    mop_config,
    setc16,
    word,
    write32,
)

# --------------------------------------------------------------------------- the unpackers
# The matmul unpack bench (TRISC0; blackhole-py examples/microbench_unpack_backend.py): each row
# waits until it is at most two rows ahead (semaphore 5, UNPACK_SYNC, read on the PC-buffer page),
# writes its in1 (SrcA) and in0 (SrcB) tiles' L1 addresses into the unpackers' base-address
# registers of the current configuration context (0 or 1, alternating), posts the semaphore, then
# pushes STALLWAIT (unpack instructions wait for those stores), UNPACR of in0 into SrcB, a MOP that
# plays the context's replay twice (UNPACR of in1 into SrcA, then RDCFG / ADDDMAREG / STALLWAIT /
# WRCFG moving the base address one tile on, NOP), SEMGET of the semaphore and SETC16 flipping the
# context. Every UNPACR hands its bank to the matrix unit (SetDatValid): TRISC1 hands them back,
# pushing SETRWC(FlipSrcA | FlipSrcB) again and again until the figure core is done (DONE).
# Registers (the harness's in brackets): s3 semaphore 5 [s7], s0 / s1 the in0 / in1 tiles' first
# 16-byte unit [s0 / s1], a4 = a5 one tile in 16-byte units [a4 / a5], s2 / a6 unpacker 0's / 1's
# base-address register of context 0 [s4 / s5], a7 the context word in local RAM [s11], a2 / a3 the
# in0 / in1 tile index [s9 / s10].
UNPACK_IN0 = 0x57000  # the harness's SCRATCH0 and SCRATCH1 (L1 bytes)
UNPACK_IN1 = 0x97000
UNPACK_TILE = 2048  # one 32x32 BF16 tile
UNPACK_SYNC_SEM = 0xFFE80034  # semaphore 5 on the PC-buffer page
INSTRN_BUF = 0xFFE40000


def _push(instruction: int) -> str:
    """A Tensix instruction pushed by a store to the instruction buffer (not inline)."""
    return write32(INSTRN_BUF, instruction)


def _unpacr(srcb: int, addr_mode: int = 0) -> int:
    # MultiContextMode (the context from UNPACK_MISC_CFG_CfgContextOffset), FlipSrc, Last
    return word(
        "UNPACR", unpack_block_selection=srcb, addr_mode=addr_mode, ovrd_thread_id=1, set_dat_valid=1, last=1
    )


def _replay_words(cfg_reg: int) -> tuple[int, ...]:
    """The replay of one context: UNPACR of in1, then its base address (``cfg_reg``) one tile on
    (GPR 36 holds a tile in 16-byte units)."""
    return (
        _unpacr(0),
        word("RDCFG", gpr_address=12, cfg_reg=cfg_reg),
        word("ADDDMAREG", op_b_is_const=0, result_reg_index=12, op_b_reg_index=12, op_a_reg_index=36),
        word("STALLWAIT", stall_res=0x80, wait_res=0x1),
        word("WRCFG", gpr_address=12, wr128b=0, cfg_reg=cfg_reg),
        word("NOP"),
    )


_BASE0 = 76  # THCON_SEC0_REG3_Base_address; THCON_SEC1_REG3_Base_address is 124, cntx1 the next word
_CFG_CONTEXT = 41  # ThreadConfig UNPACK_MISC_CFG (CfgContextOffset_0 / _1)
_UNPACK_MOP = (
    0,
    0,
    0,
    word("REPLAY", start_idx=0, len=6, execute_while_loading=0, load_mode=0),
    0,
    0,
    0,
    word("REPLAY", start_idx=6, len=6, execute_while_loading=0, load_mode=0),
    0,
)


# Unpack.init(Float16_b, 2048-byte tiles, the matmul MOP) and the harness's set-up, once, as
# measured: register writes by RISC-V stores (configuration state 0), instruction pushes, inline words.
_UNPACK_PROLOGUE = "\n".join(
    (
        inline(setc16(0, 0)),  # CFG_STATE_ID 0
        f"{la('t0', 'unpack_ctx')}\nsw zero, 0(t0)",
        inline(setc16(_CFG_CONTEXT, 0)),
        inline(word("ZEROSRC", zero_val=0, write_mode=0, bank_mask=1, src_mask=3)),
        inline(setc16(0, 0)),
        # semaphore 5 reads 0
        f"{li('t0', UNPACK_SYNC_SEM)}\n1:\nlw t1, 0(t0)\nandi t1, t1, 0xFF\nbeq t1, zero, 2f\nfence\nj 1b",
        "2:",
        inline(word("SETADCXY", cnt_set_mask=3, ch1_y=0, ch1_x=0, ch0_y=0, ch0_x=0, bit_mask=0xB)),
        inline(word("SETADCZW", cnt_set_mask=3, ch1_w=0, ch1_z=0, ch0_w=0, ch0_z=0, bit_mask=0xF)),
        write32(TENSIX_CFG + 4 * 57, 0x200),  # UNP0_ADDR_CTRL_ZW_REG_1 Zstride
        write32(TENSIX_CFG + 4 * 59, 0x200),  # UNP1_ADDR_CTRL_ZW_REG_1 Zstride
        inline(word("ATGETM", mutex_index=0)),
        # ALU_FORMAT_SPEC_REG, ALU_FORMAT_SPEC_REG0/1/2 and ALU_ACC_CTRL, ALU_ACC_CTRL_Zero_Flag
        *(
            _push(word(f"RMWCIB{byte}", mask=mask, data=data, cfg_reg_addr=reg))
            for byte, mask, data, reg in (
                (0, 0xFF, 0, 0),
                (1, 0x7F, 0, 0),
                (0, 0x07, 0, 1),
                (1, 0x80, 0, 1),
                (2, 0x01, 0, 1),
                (3, 0x60, 0, 1),
                (0, 0x01, 1, 2),
            )
        ),
        inline(word("ATRELM", mutex_index=0)),
        # Tile descriptors: BF16, uncompressed, Y 1, Z 4 (unpacker 1: X 256)
        write32(TENSIX_CFG + 4 * 64, 0x15),
        write32(TENSIX_CFG + 4 * 65, 0x00040001),
        write32(TENSIX_CFG + 4 * 112, 0x01000015),
        write32(TENSIX_CFG + 4 * 113, 0x00040001),
        # THCON_SEC0/1_REG2: out BF16, Throttle_mode 2 (x4); contexts 0..7 uncompressed
        write32(TENSIX_CFG + 4 * 72, 0x25),
        write32(TENSIX_CFG + 4 * 73, 0x000F000F),
        write32(TENSIX_CFG + 4 * 120, 0x25),
        write32(TENSIX_CFG + 4 * 121, 0x000F000F),
        _push(word("SETADCXX", cnt_set_mask=1, x_end2=255, x_start=0)),
        _push(word("SETADCXX", cnt_set_mask=2, x_end2=255, x_start=0)),
        write32(TENSIX_CFG + 4 * 84, 0x00400040),  # THCON_SEC0_REG5_Dest_cntx0/1_address
        write32(TENSIX_CFG + 4 * 86, 0x01000100),  # THCON_SEC0_REG5_Tile_x_dim_cntx0/1
        write32(TENSIX_CFG + 4 * 50, 0x100),  # UNP0_ADD_DEST_ADDR_CNTR
        *(write32(GPRS + 4 * (40 + i), (0x100 >> i) * 0x10001) for i in range(5)),  # face dimensions
        inline(setc16(5, 4)),  # SRCA_SET_SetOvrdWithAddr
        f"{la('t0', 'unpack_ctx')}\nsw zero, 0(t0)",
        inline(setc16(_CFG_CONTEXT, 0)),
        # GPR 36 / 37 low halves: a tile in 16-byte units
        _push(
            word(
                "SETDMAREG",
                payload_sig_sel_size=0,
                payload_sig_sel=UNPACK_TILE >> 4,
                set_signals_mode=0,
                reg_index_16b=72,
            )
        ),
        _push(
            word(
                "SETDMAREG",
                payload_sig_sel_size=0,
                payload_sig_sel=UNPACK_TILE >> 4,
                set_signals_mode=0,
                reg_index_16b=74,
            )
        ),
        _push(word("RMWCIB1", mask=1, data=0, cfg_reg_addr=72)),
        inline(word("SETADCXX", cnt_set_mask=1, x_end2=255, x_start=0)),
        _push(word("RMWCIB1", mask=1, data=0, cfg_reg_addr=72)),
        inline(word("SETADCXX", cnt_set_mask=1, x_end2=255, x_start=0)),
        mop_config(_UNPACK_MOP),
        done_check(PC_BUF_SYNC),
        # The harness: whole tiles (X 0..1023), the two replays, semaphore 5 with maximum 2.
        inline(word("SETADCXX", cnt_set_mask=1, x_end2=1023, x_start=0)),
        inline(word("SETADCXX", cnt_set_mask=2, x_end2=1023, x_start=0)),
        inline(word("REPLAY", start_idx=0, len=6, execute_while_loading=0, load_mode=1)),
        *(inline(w) for w in _replay_words(_BASE0)),
        inline(word("REPLAY", start_idx=6, len=6, execute_while_loading=0, load_mode=1)),
        *(inline(w) for w in _replay_words(_BASE0 + 1)),
        inline(word("SEMINIT", max_value=2, init_value=0, sem_sel=1 << 5)),
        done_check(PC_BUF_SYNC),
        f"{la('t0', 'unpack_ctx')}\nsw zero, 0(t0)",
        inline(setc16(_CFG_CONTEXT, 0)),
    )
)
# The harness's registers, loaded before the clock read. The base addresses are in 16-byte units
# minus one, as the registers take them: the harness wrote byte addresses (tile * 2048 + 0x57000 - 1),
# which as 16-byte units lie far beyond L1.
_UNPACK_SETUP = "\n".join(
    (
        li("s0", UNPACK_IN0 >> 4),
        li("s1", UNPACK_IN1 >> 4),
        f"li a4, {UNPACK_TILE >> 4}\nli a5, {UNPACK_TILE >> 4}",
        li("s3", UNPACK_SYNC_SEM),
        la("a7", "unpack_ctx"),
        li("s2", TENSIX_CFG + 4 * _BASE0),
        li("a6", TENSIX_CFG + 4 * 124),
    )
)
_UNPACK_ROW = "\n".join(
    (
        "1:\nlw t1, 0(s3)\nandi t1, t1, 0xFE\nbeq t1, zero, 2f\nfence\nj 1b",
        "2:\nmul a0, a2, a4\nadd a0, a0, s0\naddi a0, a0, -1",
        "mul a1, a3, a5\nadd a1, a1, s1\naddi a1, a1, -1",
        "lw t2, 0(a7)\naddi t3, s2, 0\nbeq t2, zero, 3f\naddi t3, t3, 4\n3:\nsw a1, 0(t3)",
        "addi t3, a6, 0\nbeq t2, zero, 3f\naddi t3, t3, 4\n3:\nsw a0, 0(t3)",
        "sw zero, 0(s3)",
        inline(word("STALLWAIT", stall_res=0x8, wait_res=0x400)),
        inline(_unpacr(1)),
        # template 0, one pass, mask 0 / 0xFF: the context's replay twice
        f"bne t2, zero, 4f\n{inline(word('MOP', loop_count=1))}\nj 5f",
        f"4:\n{inline(word('MOP', loop_count=1, zmask_lo16_or_loop_count=0xFF))}",
        f"5:\n{inline(word('SEMGET', sem_sel=1 << 5))}",
        "addi t3, zero, 1\nsub t3, t3, t2\nsw t3, 0(a7)",
        f"beq t2, zero, 6f\n{inline(setc16(_CFG_CONTEXT, 0))}\nj 7f",
        f"6:\n{inline(setc16(_CFG_CONTEXT, 0x101))}\n7:",
    )
)


def unpack_subblock(bw: int) -> str:
    """One 2x2 output subblock of a matmul with inner dimension ``bw``: 2 * bw rows."""
    rows = [inline(word("SETADCZW", cnt_set_mask=3, ch1_w=0, ch1_z=0, ch0_w=0, ch0_z=0, bit_mask=0xF))]
    for inner in range(bw):
        rows.append(f"addi a2, zero, {inner}\naddi a3, zero, {2 * inner}\n{_UNPACK_ROW}")
        rows.append(f"addi a2, zero, {bw + inner}\n{_UNPACK_ROW}")
    return "\n".join(rows)


# TRISC1 hands the Src banks back: SETRWC(FlipSrcA | FlipSrcB, SrcA and SrcB counters 0) until DONE.
_CLEAR_VALID = (
    f"{li('a0', DONE)}\n1:\nlw t0, 0(a0)\nbne t0, zero, 2f\n"
    f"{inline(word('SETRWC', clear_ab_vld=3, rwc_cr=0, rwc_d=0, rwc_b=0, rwc_a=0, bit_mask=3))}\nj 1b\n2:"
)


def unpack_case(name: str, what: str, body: str, ops: int, silicon: float, **kw) -> Case:
    return Case(
        name,
        what,
        body,
        ops,
        (silicon, silicon),
        cores=("trisc0",),
        figure_cores=("trisc0",),
        iters=10,
        prologue=_UNPACK_PROLOGUE,
        setup=_UNPACK_SETUP,
        empty=NOP,
        companions=(("trisc1", _CLEAR_VALID),),
        **kw,
    )


UNPACK_CASES = (
    unpack_case(
        "unpack_subblock_bw1",
        "matmul unpack, 2x2 subblock, inner 1 (per subblock, TRISC0)",
        unpack_subblock(1),
        1,
        74.6,
    ),
    unpack_case(
        "unpack_subblock_bw4",
        "matmul unpack, 2x2 subblock, inner 4 (per subblock, TRISC0)",
        unpack_subblock(4),
        1,
        300.0,
    ),
    unpack_case(
        "unpack_row",
        "matmul unpack, one row alone (TRISC0)",
        f"addi a2, zero, 0\naddi a3, zero, 0\n{_UNPACK_ROW}",
        1,
        51.3,
    ),
)
