"""SrcA / SrcB / Dst register files: ZEROACC, ZEROSRC, CLEARDVALID, SETDVALID, the Dst views and the
bank hand-over seen by STALLWAIT and SETRWC.

The reference below is written from tt-isa-documentation WormholeB0 SrcASrcB.md, Dst.md, ZEROACC.md,
ZEROSRC.md, CLEARDVALID.md, SETDVALID.md, SETRWC.md, STALLWAIT.md and the BlackholeA0 Dst.md
(Adj16 / Adj32). It decodes instruction words by the pages' bit positions, not through the table;
ZEROACC uses the Blackhole split regs.py documents (UseDst32b in bit 18, AddrMod in bits 14..16).
"""

# The reference keeps the documentation's names so it reads like the pseudocode.
# ruff: noqa: N802, N803, N806

from __future__ import annotations

import numpy as np
import pytest
from dst_reference import Adj16, Adj32, bits
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from matrix_harness import DST_ADDRESSING, words
from matrix_harness import mostly as harness_mostly
from outcomes import RefUB, RefUnimplemented, emulator_outcome, reference_outcome

from tensixsim import Tile
from tensixsim.errors import Unimplemented
from tensixsim.tensix import sync
from tensixsim.tensix.regs import RegFiles
from tensixsim.tensix.semantics import Context, lookup

TILE = Tile("blackhole")
COPRO = TILE.coprocessor
ISA = COPRO.isa
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
UNPACKERS, MATRIX = "Unpackers", "MatrixUnit"


def execute(word: int, thread: int = 1):
    ctx = Context(COPRO, thread, 0, ISA.decode(word), f"trisc{thread}", 0)
    return lookup("blackhole", ctx.instruction.name)(ctx, **ctx.instruction.fields)


def encode(name: str, **fields: int) -> int:
    spec = ISA.by_name[name]
    return ISA.encode(name, **({f: 0 for f in spec.field_names} | fields))


# ---------------------------------------------------------------------------- reference


class Ref:
    """The pages' state, as lists and dicts; Dst's Undefined as a set of DstBits rows."""

    def __init__(self, regs: RegFiles, config: dict[str, int], dst_rwc: int, dest_incr: dict[int, int]):
        self.SrcA = [{"AllowedClient": MATRIX if regs.src_client[0, b] == 0 else UNPACKERS} for b in range(2)]
        self.SrcB = [{"AllowedClient": MATRIX if regs.src_client[1, b] == 0 else UNPACKERS} for b in range(2)]
        self.SrcARows = [[[int(v) for v in row] for row in regs.srca[b]] for b in range(2)]
        self.SrcBRows = [[[int(v) for v in row] for row in regs.srcb[b]] for b in range(2)]
        self.MatrixUnit = {"SrcABank": int(regs.matrix_bank[0]), "SrcBBank": int(regs.matrix_bank[1])}
        self.Unpackers = [
            {"SrcBank": int(regs.unpacker_bank[u]), "SrcRow": [int(x) for x in regs.unpacker_src_row[u]]}
            for u in range(2)
        ]
        self.DstBits = [[int(v) for v in row] for row in regs.dst]
        self.Undefined = {r for r in range(1024) if not regs.dst_row_valid[r]}
        self.config = config
        self.RWCDst = dst_rwc
        self.DestIncr = dest_incr  # ADDR_MOD slot -> DestIncr (the other fields are zero)

    def mark16(self, Row: int) -> None:
        self.Undefined.add(Adj16(Row, self.config["remap"]))

    def mark32(self, Row: int) -> None:
        a = Adj32(Row, self.config["remap"], self.config["swizzle"])
        self.Undefined |= {a, a + 8}

    def ZEROACC(self, word: int, CurrentThread: int) -> None:
        Imm10, AddrMod, ClearZeroFlags = bits(word, 0, 9), bits(word, 14, 16), bits(word, 17, 17)
        UseDst32b, Mode = bits(word, 18, 18), bits(word, 19, 20)
        if bits(word, 10, 13) or bits(word, 21, 23):
            raise RefUB
        if ClearZeroFlags:
            raise RefUnimplemented
        c = self.config
        if Mode == 0:
            Row = (Imm10 + c["MATH_Offset"] + self.RWCDst + c["DEST_REGW_BASE"]) % 1024
            if c["Fp32_enabled"] or c["INT8_math_enabled"]:
                self.mark32(Row)
            else:
                self.mark16(Row)
        elif Mode == 1:
            Imm10 &= 0xFF
            if UseDst32b:
                if Imm10 < 32:
                    for i in range(16):
                        self.mark32(Imm10 * 16 + i)
            elif Imm10 < 64:
                for i in range(16):
                    self.mark16(Imm10 * 16 + i)
        elif Mode == 2:
            if Imm10 & 1:
                for i in range(512, 1024):
                    self.mark16(i)
                for i in range(256, 512):
                    self.mark32(i)
            else:
                for i in range(512):
                    self.mark16(i)
                for i in range(256):
                    self.mark32(i)
        else:
            for i in range(1024):
                self.mark16(i)
            for i in range(512):
                self.mark32(i)
        if Mode in (0, 1):
            self.RWCDst = (self.RWCDst + self.DestIncr[AddrMod]) % 1024

    def ZEROSRC(self, word: int, CurrentThread: int) -> None:
        ClearSrcA, ClearSrcB, BothBanks = bits(word, 0, 0), bits(word, 1, 1), bits(word, 2, 2)
        SingleBankMatrixUnit, NegativeInfSrcA = bits(word, 3, 3), bits(word, 4, 4)
        if bits(word, 5, 23):
            raise RefUB
        ClearSrcABank, ClearSrcBBank = [False, False], [False, False]
        if ClearSrcA:
            if BothBanks:
                ClearSrcABank = [True, True]
            elif SingleBankMatrixUnit:
                ClearSrcABank[self.MatrixUnit["SrcABank"]] = True
            else:
                ClearSrcABank[self.Unpackers[0]["SrcBank"]] = True
        if ClearSrcB:
            if BothBanks:
                ClearSrcBBank = [True, True]
            elif SingleBankMatrixUnit:
                ClearSrcBBank[self.MatrixUnit["SrcBBank"]] = True
            else:
                ClearSrcBBank[self.Unpackers[1]["SrcBank"]] = True
        for Bank in range(2):
            for i in range(64):
                for j in range(16):
                    if ClearSrcABank[Bank]:
                        self.SrcARows[Bank][i][j] = (~0 if NegativeInfSrcA else 0) & 0x7FFFF  # uint19_t
                    if ClearSrcBBank[Bank]:
                        self.SrcBRows[Bank][i][j] = 0

    def CLEARDVALID(self, word: int, CurrentThread: int) -> None:
        Reset, KeepReadingSameSrc = bits(word, 0, 0), bits(word, 1, 1)
        FlipSrcA, FlipSrcB = bits(word, 22, 22), bits(word, 23, 23)
        if bits(word, 2, 21):
            raise RefUB
        if Reset:
            self.MatrixUnit["SrcABank"] = self.MatrixUnit["SrcBBank"] = 0
            self.Unpackers[0]["SrcBank"] = self.Unpackers[1]["SrcBank"] = 0
            for s in self.SrcA + self.SrcB:
                s["AllowedClient"] = UNPACKERS
        else:
            if FlipSrcA:
                self.SrcA[self.MatrixUnit["SrcABank"]]["AllowedClient"] = UNPACKERS
                if not KeepReadingSameSrc:
                    self.MatrixUnit["SrcABank"] ^= 1
            if FlipSrcB:
                self.SrcB[self.MatrixUnit["SrcBBank"]]["AllowedClient"] = UNPACKERS
                if not KeepReadingSameSrc:
                    self.MatrixUnit["SrcBBank"] ^= 1

    def SETDVALID(self, word: int, CurrentThread: int) -> None:
        FlipSrcA, FlipSrcB = bits(word, 0, 0), bits(word, 1, 1)
        if bits(word, 2, 23):
            raise RefUB
        if FlipSrcA:
            self.SrcA[self.Unpackers[0]["SrcBank"]]["AllowedClient"] = MATRIX
            self.Unpackers[0]["SrcBank"] ^= 1
            self.Unpackers[0]["SrcRow"][CurrentThread] = self.config["SRCA_SET_Base"][CurrentThread] << 4
        if FlipSrcB:
            self.SrcB[self.Unpackers[1]["SrcBank"]]["AllowedClient"] = MATRIX
            self.Unpackers[1]["SrcBank"] ^= 1
            self.Unpackers[1]["SrcRow"][CurrentThread] = self.config["SRCB_SET_Base"][CurrentThread] << 4

    def SETRWC_flips(self, word: int, CurrentThread: int) -> None:
        """SETRWC's FlipSrcA / FlipSrcB part (the RWC part is test_adc.py's)."""
        FlipSrcA, FlipSrcB = bits(word, 22, 22), bits(word, 23, 23)
        if FlipSrcA:
            if not self.config["CLR_DVALID_SrcA_Disable"][CurrentThread]:
                self.SrcA[self.MatrixUnit["SrcABank"]]["AllowedClient"] = UNPACKERS
            self.MatrixUnit["SrcABank"] ^= 1
        if FlipSrcB:
            if not self.config["CLR_DVALID_SrcB_Disable"][CurrentThread]:
                self.SrcB[self.MatrixUnit["SrcBBank"]]["AllowedClient"] = UNPACKERS
            self.MatrixUnit["SrcBBank"] ^= 1

    # STALLWAIT.md C8..C11 (sync.py's C5..C8): True means "keep waiting".
    def waits(self, condition: str) -> bool:
        return {
            "C5": self.SrcA[self.Unpackers[0]["SrcBank"]]["AllowedClient"] != UNPACKERS,
            "C6": self.SrcB[self.Unpackers[1]["SrcBank"]]["AllowedClient"] != UNPACKERS,
            "C7": self.SrcA[self.MatrixUnit["SrcABank"]]["AllowedClient"] != MATRIX,
            "C8": self.SrcB[self.MatrixUnit["SrcBBank"]]["AllowedClient"] != MATRIX,
        }[condition]


def assert_matches(ref: Ref) -> None:
    regs = COPRO.regs
    for f, file in enumerate((ref.SrcA, ref.SrcB)):
        for b in range(2):
            assert (regs.src_client[f, b] == 0) == (file[b]["AllowedClient"] == MATRIX)
    assert regs.srca.tolist() == ref.SrcARows
    assert regs.srcb.tolist() == ref.SrcBRows
    assert regs.matrix_bank.tolist() == [ref.MatrixUnit["SrcABank"], ref.MatrixUnit["SrcBBank"]]
    assert regs.unpacker_bank.tolist() == [u["SrcBank"] for u in ref.Unpackers]
    assert regs.unpacker_src_row.tolist() == [u["SrcRow"] for u in ref.Unpackers]
    assert regs.dst.tolist() == ref.DstBits
    assert {r for r in range(1024) if not regs.dst_row_valid[r]} == ref.Undefined
    assert int(COPRO.adc.dst[1]) == ref.RWCDst


# ---------------------------------------------------------------------------- set-up

ARRAY_SEED = st.integers(0, 2**32 - 1)


@st.composite
def configurations(draw) -> dict:
    return {key: draw(strategy) for key, strategy in DST_ADDRESSING.items()} | {
        "SRCA_SET_Base": draw(st.lists(st.integers(0, 3), min_size=3, max_size=3)),
        "SRCB_SET_Base": draw(st.lists(st.integers(0, 3), min_size=3, max_size=3)),
        "CLR_DVALID_SrcA_Disable": draw(st.lists(st.integers(0, 1), min_size=3, max_size=3)),
        "CLR_DVALID_SrcB_Disable": draw(st.lists(st.integers(0, 1), min_size=3, max_size=3)),
        "state": draw(st.integers(0, 1)),
    }


# No remapping, 16-bit Dst, every offset zero, releases enabled.
PLAIN = {
    "remap": False,
    "swizzle": False,
    "Fp32_enabled": 0,
    "INT8_math_enabled": 0,
    "MATH_Offset": 0,
    "DEST_REGW_BASE": 0,
    "SRCA_SET_Base": [0, 0, 0],
    "SRCB_SET_Base": [0, 0, 0],
    "CLR_DVALID_SrcA_Disable": [0, 0, 0],
    "CLR_DVALID_SrcB_Disable": [0, 0, 0],
    "state": 0,
}


def load(seed: int, config: dict, dst_rwc: int = 0, dest_incr: dict[int, int] | None = None) -> Ref:
    """Random register contents and bank state in the coprocessor; the configuration given."""
    rng = np.random.default_rng(seed)
    regs = RegFiles.new(COPRO.arch)
    regs.srca[:] = rng.integers(0, 1 << 19, regs.srca.shape)
    regs.srcb[:] = rng.integers(0, 1 << 19, regs.srcb.shape)
    regs.src_client[:] = rng.integers(0, 2, (2, 2))
    regs.matrix_bank[:] = rng.integers(0, 2, 2)
    regs.unpacker_bank[:] = rng.integers(0, 2, 2)
    regs.unpacker_src_row[:] = rng.integers(0, 64, regs.unpacker_src_row.shape)
    regs.dst[:] = rng.integers(0, 1 << 16, regs.dst.shape)
    regs.dst_row_valid[:] = rng.random(1024) < 0.7
    COPRO.regs = regs
    cfg = COPRO.config
    cfg.config[:] = 0
    cfg.thread[:] = 0
    COPRO.adc.dst[:] = 0
    COPRO.adc.dst[1] = dst_rwc
    dest_incr = dest_incr or dict.fromkeys(range(8), 0)
    state = config["state"]
    cfg.write_field("DEST_ACCESS_CFG_remap_addrs", state, int(config["remap"]))
    cfg.write_field("DEST_ACCESS_CFG_swizzle_32b", state, int(config["swizzle"]))
    cfg.write_field("ALU_ACC_CTRL_Fp32_enabled", state, config["Fp32_enabled"])
    cfg.write_field("ALU_ACC_CTRL_INT8_math_enabled", state, config["INT8_math_enabled"])
    cfg.write_field("DEST_REGW_BASE_Base", state, config["DEST_REGW_BASE"])
    for thread in range(3):
        cfg.write_thread_field("CFG_STATE_ID_StateID", thread, state)
        cfg.write_thread_field("DEST_TARGET_REG_CFG_MATH_Offset", thread, config["MATH_Offset"])
        for name in ("SRCA_SET_Base", "SRCB_SET_Base", "CLR_DVALID_SrcA_Disable", "CLR_DVALID_SrcB_Disable"):
            cfg.write_thread_field(name, thread, config[name][thread])
        for slot, incr in dest_incr.items():
            cfg.write_thread_field(f"ADDR_MOD_DST_SEC{slot}_DestIncr", thread, incr)
    return Ref(regs, config, dst_rwc, dest_incr)


def check(ref: Ref, name: str, word: int, thread: int = 1) -> None:
    before = COPRO.regs.copy()
    expected = reference_outcome(lambda: getattr(ref, name)(word, thread))
    got = emulator_outcome(lambda: execute(word, thread))
    assert got == expected
    if got != "retire":
        assert COPRO.regs.equals(before)
    assert_matches(ref)


def mostly(documented: st.SearchStrategy[int], width: int) -> st.SearchStrategy[int]:
    """The documented values three times in four."""
    return harness_mostly(documented, width, weight=3)


ZEROACC_WORDS = words(
    "ZEROACC",
    {
        "clear_mode": mostly(st.integers(0, 3), 5),
        "clear_zero_flags": st.sampled_from([0, 0, 0, 0, 1]),
        "where": mostly(st.one_of(st.integers(0, 80), st.integers(0, 1023)), 14),
    },
)
ZEROSRC_WORDS = words("ZEROSRC", {"zero_val": mostly(st.integers(0, 1), 20)})
CLEARDVALID_WORDS = words("CLEARDVALID", {"reset": mostly(st.integers(0, 3), 22)})
SETDVALID_WORDS = words("SETDVALID", {"setvalid": mostly(st.integers(0, 3), 24)})


# ---------------------------------------------------------------------------- instruction tests


@SETTINGS
@given(
    ARRAY_SEED,
    configurations(),
    st.integers(0, 1023),
    st.lists(st.integers(0, 1023), min_size=8, max_size=8),
    ZEROACC_WORDS,
)
def test_zeroacc_matches_the_reference(seed, config, dst_rwc, incr, word):
    ref = load(seed, config, dst_rwc, dict(enumerate(incr)))
    check(ref, "ZEROACC", word)


@SETTINGS
@given(ARRAY_SEED, configurations(), ZEROSRC_WORDS)
def test_zerosrc_matches_the_reference(seed, config, word):
    check(load(seed, config), "ZEROSRC", word)


@SETTINGS
@given(ARRAY_SEED, configurations(), CLEARDVALID_WORDS)
def test_cleardvalid_matches_the_reference(seed, config, word):
    check(load(seed, config), "CLEARDVALID", word)


@SETTINGS
@given(ARRAY_SEED, configurations(), st.integers(0, 2), SETDVALID_WORDS)
def test_setdvalid_matches_the_reference(seed, config, thread, word):
    check(load(seed, config), "SETDVALID", word, thread)


@pytest.mark.parametrize(("use32", "imm10"), [(0, 64), (0, 255), (1, 32), (1, 255)])
def test_zeroacc_16_rows_out_of_range_only_advances_the_rwc(use32, imm10):
    config = dict(PLAIN)
    load(7, config, dst_rwc=5, dest_incr=dict.fromkeys(range(8), 3))
    before = COPRO.regs.copy()
    execute(encode("ZEROACC", clear_mode=1, use_32_bit_mode=use32, addr_mode=2, where=imm10))
    assert COPRO.regs.equals(before)
    assert COPRO.adc.dst[1] == 8


def test_zeroacc_16_rows_uses_only_the_low_eight_bits_of_imm10():
    config = dict(PLAIN)
    load(8, config)
    COPRO.regs.dst_row_valid[:] = True
    execute(encode("ZEROACC", clear_mode=1, where=256 + 3))
    assert np.flatnonzero(~COPRO.regs.dst_row_valid).tolist() == list(range(48, 64))


def test_zeroacc_all_of_dst_leaves_bits_but_readers_see_the_identity():
    config = dict(PLAIN)
    load(9, config)
    bits_before = COPRO.regs.dst.copy()
    execute(encode("ZEROACC", clear_mode=3))
    assert (COPRO.regs.dst == bits_before).all() and not COPRO.regs.dst_row_valid.any()
    assert (COPRO.regs.read_face16(5) == 0).all()
    assert (COPRO.regs.read_tile32(2, identity=0xFF800000) == 0xFF800000).all()
    COPRO.regs.write16(17, np.arange(16))
    assert COPRO.regs.read16(17).tolist() == list(range(16)) and COPRO.regs.read16(18).tolist() == [0] * 16


def test_zeroacc_half_of_dst_marks_the_selected_half():
    config = dict(PLAIN)
    load(10, config)
    COPRO.regs.dst_row_valid[:] = True
    execute(encode("ZEROACC", clear_mode=2, where=1, addr_mode=7))
    assert COPRO.regs.dst_row_valid[:512].all() and not COPRO.regs.dst_row_valid[512:].any()


def test_zeroacc_clear_zero_flags_is_unimplemented():
    load(11, dict(PLAIN))
    with pytest.raises(Unimplemented, match="clear_zero_flags"):
        execute(encode("ZEROACC", clear_mode=1, use_32_bit_mode=1, clear_zero_flags=1, where=2))


# ---------------------------------------------------------------------------- Dst views


@SETTINGS
@given(ARRAY_SEED, st.booleans(), st.booleans())
def test_dst32b_reads_the_documented_interleave(seed, remap, swizzle):
    rng = np.random.default_rng(seed)
    regs = RegFiles.new(COPRO.arch)
    regs.dst[:] = rng.integers(0, 1 << 16, regs.dst.shape)
    rows = rng.integers(0, 1024, 40)
    got = regs.read32(rows, remap=remap, swizzle=swizzle)
    for i, row in enumerate(rows):
        a = Adj32(int(row), remap, swizzle)
        expected = [(int(regs.dst[a][c]) << 16) | int(regs.dst[a + 8][c]) for c in range(16)]
        assert got[i].tolist() == expected
    if not remap and not swizzle:
        # Dst.md (Wormhole): AdjRow = ((Row & 0x1f8) << 1) | (Row & 0x207)
        full = regs.dst32()
        for row in rng.integers(0, 512, 20):
            adj = ((int(row) & 0x1F8) << 1) | (int(row) & 0x207)
            assert full[row].tolist() == [
                (int(regs.dst[adj][c]) << 16) | int(regs.dst[adj + 8][c]) for c in range(16)
            ]


@SETTINGS
@given(ARRAY_SEED, st.booleans(), st.booleans())
def test_dst32b_writes_round_trip_through_the_16_bit_storage(seed, remap, swizzle):
    rng = np.random.default_rng(seed)
    regs = RegFiles.new(COPRO.arch)
    regs.dst_row_valid[:] = False
    values = rng.integers(0, 1 << 32, (512, 16), dtype=np.uint64).astype(np.uint32)
    rows = np.arange(512)
    regs.write32(rows, values, remap=remap, swizzle=swizzle)
    # The 512 rows cover every storage row exactly once (as high or low half).
    assert regs.dst_row_valid.all()
    assert (regs.read32(rows, remap=remap, swizzle=swizzle) == values).all()
    for row in rng.integers(0, 512, 20):
        a = Adj32(int(row), remap, swizzle)
        assert (regs.dst[a] == values[row] >> 16).all() and (regs.dst[a + 8] == values[row] & 0xFFFF).all()
    if not remap and not swizzle:
        assert (regs.dst32() == values).all()


def test_dst_face_and_tile_accessors_lay_faces_out_row_major():
    regs = RegFiles.new(COPRO.arch)
    tile = np.arange(32 * 32, dtype=np.uint16).reshape(32, 32)
    regs.write_tile16(3, tile)
    assert (regs.read_tile16(3) == tile).all()
    assert (regs.read_face16(12) == tile[:16, :16]).all() and (regs.read_face16(13) == tile[:16, 16:]).all()
    assert (regs.read_face16(14) == tile[16:, :16]).all() and (regs.read_face16(15) == tile[16:, 16:]).all()
    assert (regs.dst[12 * 16 : 13 * 16] == tile[:16, :16]).all()
    tile32 = (np.arange(32 * 32, dtype=np.uint32) * 0x10001).reshape(32, 32)
    regs.write_tile32(7, tile32)
    assert (regs.read_tile32(7) == tile32).all()
    assert (regs.read_face32(29) == tile32[:16, 16:]).all()
    with pytest.raises(ValueError):
        regs.read_tile32(8)
    with pytest.raises(ValueError):
        regs.write_face16(0, np.full((16, 16), 1 << 16))


# ---------------------------------------------------------------------------- hand-over


HANDSHAKE_STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("SETDVALID"), st.integers(1, 3).map(lambda v: encode("SETDVALID", setvalid=v))),
        st.tuples(
            st.just("CLEARDVALID"),
            st.tuples(st.integers(0, 3), st.integers(0, 3)).map(
                lambda v: encode("CLEARDVALID", cleardvalid=v[0], reset=v[1])
            ),
        ),
        st.tuples(
            st.just("SETRWC_flips"),
            st.integers(1, 3).map(lambda v: encode("SETRWC", clear_ab_vld=v)),
        ),
    ),
    max_size=12,
)


@SETTINGS
@given(ARRAY_SEED, configurations(), st.integers(0, 2), HANDSHAKE_STEPS)
def test_bank_handshake_sequences_and_stallwait_conditions(seed, config, thread, steps):
    ref = load(seed, config)
    for name, word in steps:
        if name == "SETRWC_flips":
            ref.SETRWC_flips(word, thread)
            execute(word, thread)
        else:
            check(ref, name, word, thread)
        assert_matches(ref)
        for bit in range(5, 9):
            COPRO.sync = sync.SyncState.new(COPRO.arch)
            COPRO.busy_until = {}
            execute(encode("STALLWAIT", stall_res=1 << 6, wait_res=1 << bit), thread)
            mvmul = ISA.decode(encode("MVMUL"))
            reason = sync.gate_blocks(COPRO, thread, mvmul, 3)
            assert (reason is not None) == ref.waits(f"C{bit}"), bit
            if reason is not None:
                assert f"(C{bit})" in reason


def test_unpack_then_math_handshake():
    """Unpackers fill bank 0 and hand it over; math waits for it (C7), consumes it and gives it back."""
    load(12, dict(PLAIN))
    COPRO.regs = RegFiles.new(COPRO.arch)
    assert not COPRO.src_valid("srca_unpacker") and not COPRO.src_valid("srca_matrix")
    execute(encode("SETDVALID", setvalid=0b11))
    assert COPRO.src_valid("srca_matrix") and COPRO.src_valid("srcb_matrix")
    assert not COPRO.src_valid("srca_unpacker")  # the unpackers moved on to bank 1
    execute(encode("SETDVALID", setvalid=0b01))
    assert COPRO.src_valid("srca_unpacker")  # both SrcA banks are the matrix unit's: C5 waits
    execute(encode("SETRWC", clear_ab_vld=0b01))
    assert COPRO.regs.src_client[0].tolist() == [1, 0] and COPRO.regs.matrix_bank.tolist() == [1, 0]
    assert not COPRO.src_valid("srca_unpacker") and COPRO.src_valid("srca_matrix")


def test_setrwc_flip_with_clr_dvalid_disabled_keeps_the_bank():
    load(13, dict(PLAIN))
    COPRO.regs = RegFiles.new(COPRO.arch)
    COPRO.config.write_thread_field("CLR_DVALID_SrcB_Disable", 1, 1)
    execute(encode("SETDVALID", setvalid=0b10))
    execute(encode("SETRWC", clear_ab_vld=0b10))
    assert COPRO.regs.src_client[1].tolist() == [0, 1] and COPRO.regs.matrix_bank.tolist() == [0, 1]


def test_src_valid_rejects_unknown_bank_names():
    with pytest.raises(ValueError):
        COPRO.src_valid("srcc_matrix")
