"""The Tensix coprocessor of a Wormhole tile: the instructions registered for it, and those refused.

The scalar-unit and address-counter instructions run against the reference models of
tests/test_thcon.py and tests/test_adc.py, which are written from Wormhole's pages; the wait-gate
tables against Wormhole's STALLWAIT.md, ATGETM.md and SEMWAIT.md (typed here from the pages); the
configuration instructions against Wormhole's cfg_defines.h layout.
"""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
import test_adc
import test_thcon
from asm import assemble
from hypothesis import given
from hypothesis import strategies as st

from tensixsim import InvalidInstruction, InvalidProgram, Tile, UndefinedBehavior, Unimplemented
from tensixsim.isa import isa_for
from tensixsim.raw import run_words
from tensixsim.tensix import sync
from tensixsim.tensix.semantics import Context, Retire, implemented, lookup

WH = isa_for("wormhole")
BH = isa_for("blackhole")
TILE = Tile("wormhole")
COPRO = TILE.coprocessor

# ---------------------------------------------------------------- the wait gate's tables

# Wormhole's STALLWAIT.md "exact set of instructions blocked by each bit", row by row (bits named).
_DOC_BLOCKS = {
    "05": "ADDDMAREG ATCAS ATINCGET ATINCGETPTR ATSWAP BITWOPDMAREG CMPDMAREG DMANOP FLUSHDMA LOADIND "
    "LOADREG MULDMAREG REG2FLOP SETDMAREG SHIFTDMAREG STOREIND STOREREG SUBDMAREG",
    "0": "ADDRCRXY ADDRCRZW INCADCXY INCADCZW RSTDMA SETADC SETADCXX SETADCXY SETADCZW SETDVALID",
    "6": "APOOL3S1 APOOL3S2 CLEARDVALID CLREXPHIST CONV3S1 CONV3S2 DOTPV ELWADD ELWMUL ELWSUB GAPOOL "
    "GATESRCRST GMPOOL INCRWC MFCONV3S1 MOVA2D MOVB2A MOVB2D MOVD2A MOVD2B MOVDBGA2D MPOOL3S1 MPOOL3S2 "
    "MVMUL SETRWC SHIFTXA SHIFTXB TRNSPSRCB ZEROACC ZEROSRC",
    "1": "ATGETM ATRELM SEMGET SEMINIT SEMPOST",
    "02": "PACR PACR_SETREG",
    "7": "RDCFG RMWCIB0 RMWCIB1 RMWCIB2 RMWCIB3 SETC16 WRCFG",
    "8": "SFPABS SFPADD SFPADDI SFPAND SFPCAST SFPCOMPC SFPCONFIG SFPDIVP2 SFPENCC SFPEXEXP SFPEXMAN "
    "SFPIADD SFPLOAD SFPLOADI SFPLOADMACRO SFPLUT SFPLUTFP32 SFPLZ SFPMAD SFPMOV SFPMUL SFPMULI SFPNOP "
    "SFPNOT SFPOR SFPPOPC SFPPUSHC SFPSETCC SFPSETEXP SFPSETMAN SFPSETSGN SFPSHFT SFPSHFT2 SFP_STOCH_RND "
    "SFPSTORE SFPSWAP SFPTRANSP SFPXOR",
    "012345678": "STALLWAIT",
    "03": "UNPACR UNPACR_NOP",
    "04": "XMOV",
}


def test_block_bits_are_wormholes_stallwait_table():
    table = sync._BLOCK_BITS["wormhole"]
    for bits, names in _DOC_BLOCKS.items():
        mask = sum(1 << int(b) for b in bits)
        for name in names.split():
            assert table[name] == mask, name
    # SEMWAIT's row says B1; like Blackhole's, the model lets a wait instruction wait for the one
    # latched before it whatever its mask (sync.BLOCK_EXCEPTIONS).
    assert table["SEMWAIT"] == sync.ALL_BLOCKS


def test_stallwait_conditions_are_wormholes():
    conditions = sync.STALLWAIT_CONDITIONS_BY_ARCH["wormhole"]
    units = [c.unit for c in conditions]
    assert len(conditions) == 15  # C0..C14
    assert units[:8] == ["thcon", "unpacker0", "unpacker1", "packer", "packer", "packer", "packer", "matrix"]
    assert [c.src_bank for c in conditions[8:12]] == [
        "srca_unpacker",
        "srcb_unpacker",
        "srca_matrix",
        "srcb_matrix",
    ]
    assert units[12:] == ["xmov", None, "sfpu"]


def _latched(tile: Tile, words: list[int], thread: int = 0) -> tuple[int, int]:
    run_words(tile, thread, words)
    state = tile.coprocessor.sync
    return int(state.gate_conditions[thread]), int(state.gate_block[thread])


@pytest.mark.parametrize(("arch", "default"), [("wormhole", 0x7F), ("blackhole", 0x0F)])
def test_a_zero_condition_mask_means_each_chips_default(arch, default):
    isa = isa_for(arch)
    stall = isa.encode("STALLWAIT", stall_res=0, wait_res=0)
    assert _latched(Tile(arch), [stall]) == (default, 1 << 6)
    sem = isa.encode("SEMWAIT", stall_res=2, sem_sel=1, wait_sem_cond=0)
    assert _latched(Tile(arch), [sem]) == (default, 2)


def test_condition_bits_13_and_14_exist_on_wormhole_only():
    word = WH.encode("STALLWAIT", stall_res=1, wait_res=1 << 14)
    assert _latched(Tile("wormhole"), [word])[0] == 1 << 14
    with pytest.raises(UndefinedBehavior, match="13-bit operand"):
        run_words(Tile("blackhole"), 0, [BH.encode("STALLWAIT", stall_res=1, wait_res=1 << 14)])


def test_wormhole_has_mutexes_0_and_2_to_7():
    for index in (0, 2, 5, 7):
        tile = Tile("wormhole")
        run_words(tile, 1, [WH.encode("ATGETM", mutex_index=index)])
        assert tile.coprocessor.sync.mutex_owner[index] == 1
        run_words(tile, 1, [WH.encode("ATRELM", mutex_index=index)])
        assert tile.coprocessor.sync.mutex_owner[index] == sync.NOBODY
    for index in (1, 8):
        with pytest.raises(InvalidProgram, match=f"mutex {index} does not exist"):
            run_words(Tile("wormhole"), 0, [WH.encode("ATGETM", mutex_index=index)])
    with pytest.raises(InvalidProgram, match="mutex 5 does not exist"):
        run_words(Tile("blackhole"), 0, [BH.encode("ATGETM", mutex_index=5)])


def test_semaphores_post_get_and_wait_across_pipes():
    tile = Tile("wormhole")
    run_words(tile, 0, [WH.encode("SEMINIT", max_value=2, init_value=0, sem_sel=1 << 3)])
    run_words(tile, 0, [WH.encode("SEMWAIT", stall_res=1 << 7, sem_sel=1 << 3, wait_sem_cond=1)])
    run_words(tile, 0, [WH.encode("SETC16", setc16_reg=1, setc16_value=5)])  # B7: held
    assert tile.coprocessor.config.thread[0, 1] == 0
    run_words(tile, 1, [WH.encode("SEMPOST", sem_sel=1 << 3)])
    assert tile.coprocessor.config.thread[0, 1] == 5  # released by the other pipe's post
    run_words(tile, 2, [WH.encode("SEMGET", sem_sel=1 << 3)] * 2)
    assert tile.coprocessor.sync.sem_value[3] == 0  # never below zero


# ---------------------------------------------------------------- scalar unit and address counters


def _execute_on(copro, name: str, thread: int = 0, **fields: int):
    word = copro.isa.encode(name, **fields)
    ctx = Context(copro, thread, 100, copro.isa.decode(word), f"trisc{thread}", 0x6000)
    return lookup(copro.arch.name, name)(ctx, **ctx.instruction.fields)


def _load_gprs(gprs: list[list[int]]) -> test_thcon.Ref:
    COPRO.thcon.gprs[:] = np.array(gprs, np.uint32)
    COPRO.tile.l1[:] = test_thcon.L1_PATTERN[: COPRO.tile.l1.size]
    return test_thcon.Ref(COPRO.thcon.gprs, COPRO.tile.l1)


SCALAR = {**test_thcon.ARITHMETIC, **test_thcon.MODED}


@test_thcon.SLOW
@pytest.mark.parametrize("name", sorted(SCALAR))
@given(
    gprs=test_thcon.gpr_file,
    thread=test_thcon.thread_,
    const=st.integers(0, 1),
    mode=st.integers(0, 7),
    result=test_thcon.reg,
    right=test_thcon.reg,
    left=test_thcon.reg,
)
def test_scalar_arithmetic_matches_the_reference_on_wormhole(
    name, gprs, thread, const, mode, result, right, left
):
    if name == "SHIFTDMAREG" and const:
        right &= 0x1F
    ref = _load_gprs(gprs)
    moded = name in test_thcon.MODED
    fields = dict(op_b_is_const=const, result_reg_index=result, op_b_reg_index=right, op_a_reg_index=left)
    if moded:
        fields["op_sel"] = mode
        call = lambda: SCALAR[name](ref, thread, const, mode, result, right, left)
    else:
        call = lambda: SCALAR[name](ref, thread, const, result, right, left)
    test_thcon.check(ref, call, name, thread, copro=COPRO, **fields)


@test_thcon.SLOW
@given(
    gprs=test_thcon.gpr_file,
    thread=test_thcon.thread_,
    size=st.integers(0, 3),
    offset_half=test_thcon.half_reg,
    inc=st.integers(0, 3),
    data=test_thcon.reg,
    addr=test_thcon.reg,
    line=st.one_of(
        st.integers(0, COPRO.arch.l1_size // 16 - 1), st.integers(COPRO.arch.l1_size // 16 - 4, 2**28)
    ),
    offset=st.integers(0, 0xFFFF),
)
def test_loadind_matches_the_reference_up_to_wormholes_l1_end(
    gprs, thread, size, offset_half, inc, data, addr, line, offset
):
    gprs[thread][addr] = line
    gprs[thread][offset_half >> 1] = offset << (16 * (offset_half & 1))  # may replace the line
    ref = _load_gprs(gprs)  # (the reference bounds L1 by its buffer: here Wormhole's 1464 KiB)
    test_thcon.check(
        ref,
        lambda: ref.loadind(thread, size, offset_half, inc, data, addr),
        "LOADIND",
        thread,
        copro=COPRO,
        size_sel=size,
        offset_index=offset_half,
        auto_inc_spec=inc,
        data_reg_index=data,
        addr_reg_index=addr,
    )


@contextlib.contextmanager
def _adc_harness_on_wormhole():
    saved = test_adc.COPRO, test_adc.ISA
    test_adc.COPRO, test_adc.ISA = COPRO, COPRO.isa
    try:
        yield
    finally:
        test_adc.COPRO, test_adc.ISA = saved


@pytest.mark.parametrize("name", [*test_adc.ADC_INSTRUCTIONS, "INCRWC"])
@test_adc.SLOW
@given(seed=test_adc.seeds, thread=test_adc.threads, data=st.data())
def test_address_counter_instructions_match_the_reference_on_wormhole(name, seed, thread, data):
    with _adc_harness_on_wormhole():
        ref = test_adc.load(seed)
        test_adc.check(ref, data.draw(test_adc.instruction_words(name)), thread)


def test_the_harness_really_runs_wormholes_semantics():
    # The ADC harness above executes through lookup(copro.arch.name): the Wormhole registration.
    assert lookup("wormhole", "INCADCXY") is lookup("blackhole", "INCADCXY")
    assert test_adc.execute.__code__.co_names.count("lookup") == 1
    with _adc_harness_on_wormhole():
        assert test_adc.COPRO.arch.name == "wormhole"


# ---------------------------------------------------------------- configuration


def test_wrcfg_and_rdcfg_use_wormholes_layout():
    tile = Tile("wormhole")
    copro = tile.coprocessor
    layout = copro.config.layout
    word = layout.config_word("ALU_FORMAT_SPEC_REG0_SrcA")  # (cfg_defines.h: word 1, bits 17..20)
    copro.thcon.gprs[0, 5] = 0xA << 17
    run_words(tile, 0, [WH.encode("WRCFG", gpr_address=5, wr128b=0, cfg_reg=word)])
    assert copro.config.read_field("ALU_FORMAT_SPEC_REG0_SrcA", 0) == 0xA
    run_words(tile, 0, [WH.encode("RDCFG", gpr_address=9, cfg_reg=word)])
    assert copro.thcon.gprs[0, 9] == 0xA << 17
    with pytest.raises(UndefinedBehavior, match=r"beyond Config \(188 words\)"):
        run_words(tile, 0, [WH.encode("RDCFG", gpr_address=9, cfg_reg=188)])


def test_state_reset_clears_the_per_state_words_below_152_only():
    tile = Tile("wormhole")
    copro = tile.coprocessor
    copro.config.config[:, :] = 7
    copro.thcon.gprs[0, 1] = 1
    reset = copro.config.layout.config_word("STATE_RESET_EN")  # word 4 on Wormhole
    run_words(tile, 0, [WH.encode("WRCFG", gpr_address=1, wr128b=0, cfg_reg=reset)])
    assert not copro.config.config[0, :152].any() and (copro.config.config[0, 152:] == 7).all()
    assert (copro.config.config[1] == 7).all()


def test_a_trisc_moves_another_triscs_reset_pc_with_wrcfg():
    tile = Tile("wormhole")
    copro = tile.coprocessor
    copro.thcon.gprs[2, 0:2] = [0x40000, 0b010]
    pc_word = copro.config.layout.config_word("TRISC_RESET_PC_SEC1_PC")
    enable_word = copro.config.layout.config_word("TRISC_RESET_PC_OVERRIDE_Reset_PC_Override_en")
    run_words(
        tile,
        2,
        [
            WH.encode("WRCFG", gpr_address=0, wr128b=0, cfg_reg=pc_word),
            WH.encode("WRCFG", gpr_address=1, wr128b=0, cfg_reg=enable_word),
        ],
    )
    assert tile.reset_pc_of("trisc1") == 0x40000 and tile.reset_pc_of("trisc0") == 0x6000


def test_setc16_selects_the_config_state_and_rmwcib_changes_one_byte():
    tile = Tile("wormhole")
    copro = tile.coprocessor
    run_words(tile, 1, [WH.encode("SETC16", setc16_reg=0, setc16_value=1)])  # CFG_STATE_ID_StateID
    assert copro.config.state_id(1) == 1
    run_words(tile, 1, [WH.encode("RMWCIB2", mask=0xF0, data=0xAB, cfg_reg_addr=10)])
    assert copro.config.config[1, 10] == 0xA0 << 16 and copro.config.config[0, 10] == 0


# ---------------------------------------------------------------- refused


def test_an_instruction_only_blackhole_has_is_invalid_on_wormhole_naming_it():
    word = BH.encode("SFPGT", **{f.name: 0 for f in BH.by_name["SFPGT"].fields})
    with pytest.raises(
        InvalidInstruction,
        match=r"opcode 0x97 \(wormhole: no Tensix instruction has opcode 0x97 \(blackhole's SFPGT\)\)",
    ):
        run_words(Tile("wormhole"), 0, [word])


@pytest.mark.parametrize("name", ["TBUFCMD", "RSTDMA"])
def test_instructions_not_yet_modelled_on_wormhole_raise_unimplemented_naming_it(name):
    assert name not in implemented("wormhole")
    word = WH.encode(name, **{f.name: 0 for f in WH.by_name[name].fields})
    with pytest.raises(Unimplemented, match=f"{name} is not executed by the emulator on wormhole yet"):
        run_words(Tile("wormhole"), 0, [word])


def test_every_shared_registration_has_blackholes_encoding():
    # One function serves both chips only where the two tables agree on opcode, fields and unit;
    # ZEROACC, MVMUL, MOVA2D ... are registered for Wormhole separately, with its encodings.
    assert lookup("wormhole", "ZEROACC") is not lookup("blackhole", "ZEROACC")
    assert lookup("wormhole", "MVMUL") is not lookup("blackhole", "MVMUL")
    shared = {n for n in implemented("wormhole") if lookup("wormhole", n) is lookup("blackhole", n)}
    assert {"ZEROSRC", "SHIFTXA", "TRNSPSRCB", "GATESRCRST", "XMOV"} <= shared
    for name in shared:
        wh, bh = WH.by_name[name], BH.by_name[name]
        assert (wh.opcode, wh.fields, wh.unit) == (bh.opcode, bh.fields, bh.unit), name


# ---------------------------------------------------------------- from a core


def test_a_trisc_computes_with_inline_tensix_words_and_reads_its_gprs():
    def inline(name: str, **fields: int) -> str:
        word = WH.encode(name, **fields)
        return f".word 0x{((word << 2) | (word >> 30)) & 0xFFFFFFFF:08x}"

    program = "\n".join(
        [
            inline(
                "SETDMAREG",
                payload_sig_sel_size=0,
                payload_sig_sel=1234,
                set_signals_mode=0,
                reg_index_16b=2 * 3,
            ),
            inline(
                "SETDMAREG",
                payload_sig_sel_size=0,
                payload_sig_sel=99,
                set_signals_mode=0,
                reg_index_16b=2 * 4,
            ),
            inline("MULDMAREG", op_b_is_const=0, result_reg_index=5, op_b_reg_index=4, op_a_reg_index=3),
            inline("STALLWAIT", stall_res=0, wait_res=0),  # default: C0..C6, blocks the matrix unit only
            "li t0, 0xFFE00000",
            "1: lw a0, 20(t0)",  # GPR 5
            "beqz a0, 1b",
            "ecall",
        ]
    )
    tile = Tile("wormhole")
    tile.write(0x6000, assemble(program, base=0x6000, march="rv32im"))
    result = tile.run(release=["trisc0"])
    assert result.cores["trisc0"].exit_code == 1234 * 99
    assert tile.coprocessor.thcon.gprs[0, 5] == 1234 * 99
    assert isinstance(_execute_on(tile.coprocessor, "DMANOP"), Retire)


# ---------------------------------------------------------------- ZEROACC (Wormhole's encoding)


def _zeroacc(mode: int, use_dst32: int = 0, addr_mod: int = 0, revert: int = 0, imm10: int = 0) -> int:
    # ZEROACC.md: Mode bits 19..20, UseDst32b 21, AddrMod 15..16, Revert 18, Imm10 0..9.
    return (0x10 << 24) | (use_dst32 << 21) | (mode << 19) | (revert << 18) | (addr_mod << 15) | imm10


def test_zeroacc_all_and_half_of_dst_mark_rows_undefined():
    tile = Tile("wormhole")
    run_words(tile, 1, [_zeroacc(3)])
    assert not tile.coprocessor.regs.dst_row_valid.any()
    tile = Tile("wormhole")
    run_words(tile, 1, [_zeroacc(2, imm10=1)])  # the high half: Dst16b rows 512..1023
    valid = tile.coprocessor.regs.dst_row_valid
    assert valid[:512].all() and not valid[512:].any()


def test_zeroacc_16_rows_of_dst32_marks_both_storage_rows_of_each():
    tile = Tile("wormhole")
    run_words(tile, 1, [_zeroacc(1, use_dst32=1, imm10=2)])  # Dst32b rows 32..47
    valid = tile.coprocessor.regs.dst_row_valid
    # Dst.md: Dst32b row r's halves are DstBits rows ((r & 0x1f8) << 1) | (r & 0x207) and that + 8.
    expected = {((r & 0x1F8) << 1 | (r & 0x207)) + h for r in range(32, 48) for h in (0, 8)}
    assert set(np.flatnonzero(~valid).tolist()) == expected


def test_zeroacc_one_row_applies_addr_mod_slot_plus_four_under_addr_mod_set_base():
    tile = Tile("wormhole")
    copro = tile.coprocessor
    config = copro.config
    config.write_thread_field("ADDR_MOD_DST_SEC5_DestIncr", 1, 7)  # slot 1 + 4
    config.write_thread_field("ADDR_MOD_SET_Base", 1, 1)
    copro.adc.dst[1] = 3
    run_words(tile, 1, [_zeroacc(0, addr_mod=1, imm10=10)])
    # ZEROACC.md: Row = Imm10 + DEST_TARGET_REG_CFG_MATH_Offset + RWC.Dst + DEST_REGW_BASE_Base (Dst16b).
    assert np.flatnonzero(~copro.regs.dst_row_valid).tolist() == [13]
    assert copro.adc.dst[1] == 10  # then ApplyAddrMod(1): slot 5's DestIncr


def test_zeroacc_revert_outside_one_row_mode_is_undefined():
    tile = Tile("wormhole")
    with pytest.raises(UndefinedBehavior, match="Revert"):
        run_words(tile, 1, [_zeroacc(3, revert=1)])
    assert tile.coprocessor.regs.dst_row_valid.all()


# ---------------------------------------------------------------- the vector-unit set-up the firmware uses


@test_thcon.SLOW
@given(
    words=st.lists(
        st.one_of(
            st.builds(
                lambda vd, mod0, imm: WH.encode("SFPLOADI", lreg_ind=vd, instr_mod0=mod0, imm16=imm),
                st.integers(0, 7),
                st.sampled_from([0, 1, 2, 4, 8, 10]),
                st.integers(0, 0xFFFF),
            ),
            st.builds(
                lambda imm, mod1: WH.encode(
                    "SFPENCC", imm12_math=imm, lreg_c=0, lreg_dest=0, instr_mod1=mod1
                ),
                st.integers(0, 3),
                st.integers(0, 15),
            ),
            st.builds(
                lambda imm, vd, mod1: WH.encode("SFPCONFIG", imm16_math=imm, config_dest=vd, instr_mod1=mod1),
                st.integers(0, 0xFFFF),
                st.integers(0, 15),
                st.integers(0, 15),
            ),
        ),
        max_size=12,
    )
)
def test_sfploadi_sfpencc_sfpconfig_act_as_on_blackhole(words):
    # Wormhole's pages give these three the functional model Blackhole's tests check against their
    # references; the same stream must leave both chips' vector units in the same state.
    states = []
    for arch in ("wormhole", "blackhole"):
        tile = Tile(arch)
        run_words(tile, 1, words)
        s = tile.coprocessor.sfpu
        states.append([s.lreg.copy(), s.lane_flags.copy(), s.use_lane_flags.copy(), s.lane_config.copy()])
        states[-1] += [s.macro_template.copy(), s.macro_sequence.copy(), s.macro_misc.copy()]
    for wh, bh in zip(*states, strict=True):
        assert np.array_equal(wh, bh)
