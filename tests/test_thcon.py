"""Scalar unit (ThCon): GPR arithmetic, L1 and MMIO loads/stores, atomics, the RISC-V GPR view.

The reference model below is written from the functional-model pseudocode of tt-isa-documentation
(WormholeB0/TensixTile/TensixCoprocessor/<INSTRUCTION>.md) as literally as Python allows: GPRs are
the bytes of ``uint32_t GPRs[3][64]`` and half-registers are 16-bit slots of those bytes. Operands
carry the documentation's names; the tests map them to the table's fields when encoding.
"""

# The reference keeps the documentation's CamelCase operand names so it reads like the pseudocode.
# ruff: noqa: N803

from __future__ import annotations

import struct

import numpy as np
import pytest
from asm import assemble
from hypothesis import given, settings
from hypothesis import strategies as st

from tensixsim import MemoryFault, Tile, UndefinedBehavior, Unimplemented
from tensixsim.tensix.semantics import Context, Retire, Wait, lookup

M32 = 0xFFFFFFFF
CYCLE = 100
L1_SIZE = 1536 * 1024  # Blackhole L1 (BabyRISCV memory map)
DATA = 0x20000

# ---------------------------------------------------------------------------- reference model


class RefUB(Exception):
    """The pseudocode reaches UndefinedBehaviour()."""


class RefWait(Exception):
    """The pseudocode loops back to retry (the instruction cannot complete yet)."""


class Ref:
    """``uint32_t GPRs[3][64]``, L1 and an MMIO bus, updated by the documented pseudocode."""

    def __init__(self, gprs: np.ndarray, l1: np.ndarray) -> None:
        self.g = [bytearray(struct.pack("<64I", *(int(v) for v in gprs[t]))) for t in range(3)]
        self.l1 = bytearray(l1.tobytes())
        self.mmio_writes: list[tuple[int, int]] = []
        self.mmio_values: dict[int, int] = {}

    # raw memory of GPRs[t] and L1
    def gpr(self, t: int, i: int) -> int:
        return struct.unpack_from("<I", self.g[t], 4 * i)[0]

    def set_gpr(self, t: int, i: int, v: int) -> None:
        struct.pack_into("<I", self.g[t], 4 * i, v & M32)

    def half(self, t: int, h: int) -> int:
        return struct.unpack_from("<H", self.g[t], 2 * h)[0]

    def set_half(self, t: int, h: int, v: int) -> None:
        struct.pack_into("<H", self.g[t], 2 * h, v & 0xFFFF)

    def l1_u32(self, a: int) -> int:
        return struct.unpack_from("<I", self.l1, a)[0]

    def gprs_array(self) -> np.ndarray:
        return np.array([struct.unpack("<64I", bytes(g)) for g in self.g], np.uint32)

    # SETDMAREG (Set 16 bits of one GPR)
    def setdmareg_immediate(self, t, NewValue, ResultHalfReg):
        self.set_half(t, ResultHalfReg, NewValue)

    # SETDMAREG (special) with an InputSource that selects no data: Values stays {0}.
    def setdmareg_special_zero(self, t, ResultSize, InputHalfReg, ResultHalfReg):
        values = bytearray(16)
        if ResultSize == 0:
            self.set_half(t, ResultHalfReg, struct.unpack_from("<H", values, 2 * InputHalfReg)[0])
        elif ResultSize == 1:
            self.set_gpr(t, ResultHalfReg >> 1, struct.unpack_from("<I", values, 4 * (InputHalfReg >> 1))[0])
        elif ResultSize == 2:
            first = (ResultHalfReg >> 1) & 0x3C
            self.g[t][4 * first : 4 * first + 16] = values
        else:  # TileHeader fields only: TileSize, DataFormat/DisableZeroCompression/SpareBits, AllZeroFlags
            first = 4 * ((ResultHalfReg >> 1) & 0x3C)
            self.g[t][first : first + 2] = values[0:2]
            self.g[t][first + 6] = values[6]  # bits 16..23 of the second word
            self.g[t][first + 8 : first + 12] = values[8:12]

    # ADDDMAREG, SUBDMAREG, MULDMAREG, BITWOPDMAREG, SHIFTDMAREG, CMPDMAREG; returns the cycles
    def _right(self, t, const, Right):
        return Right if const else self.gpr(t, Right)

    @staticmethod
    def _cycles(const, LeftReg, Right):
        return 3 if const or LeftReg // 4 == Right // 4 else 4

    def adddmareg(self, t, const, ResultReg, Right, LeftReg):
        self.set_gpr(t, ResultReg, (self.gpr(t, LeftReg) + self._right(t, const, Right)) % 2**32)
        return self._cycles(const, LeftReg, Right)

    def subdmareg(self, t, const, ResultReg, Right, LeftReg):
        self.set_gpr(t, ResultReg, (self.gpr(t, LeftReg) - self._right(t, const, Right)) % 2**32)
        return self._cycles(const, LeftReg, Right)

    def muldmareg(self, t, const, ResultReg, Right, LeftReg):
        left, right = self.gpr(t, LeftReg), self._right(t, const, Right)
        self.set_gpr(t, ResultReg, (left & 0xFFFF) * (right & 0xFFFF))
        return self._cycles(const, LeftReg, Right)

    def bitwopdmareg(self, t, const, Mode, ResultReg, Right, LeftReg):
        left, right = self.gpr(t, LeftReg), self._right(t, const, Right)
        if Mode == 0:
            result = left & right
        elif Mode == 1:
            result = left | right
        elif Mode == 2:
            result = left ^ right
        else:
            raise RefUB
        self.set_gpr(t, ResultReg, result)
        return self._cycles(const, LeftReg, Right)

    def shiftdmareg(self, t, const, Mode, ResultReg, Right, LeftReg):
        left = self.gpr(t, LeftReg)
        right = Right if const else self.gpr(t, Right) & 0x1F
        if Mode == 0:
            result = (left << right) % 2**32
        elif Mode == 1:
            result = left >> right
        else:
            raise RefUB
        self.set_gpr(t, ResultReg, result)
        return self._cycles(const, LeftReg, Right)

    def cmpdmareg(self, t, const, Mode, ResultReg, Right, LeftReg):
        left, right = self.gpr(t, LeftReg), self._right(t, const, Right)
        if Mode == 0:
            result = left > right
        elif Mode == 1:
            result = left < right
        elif Mode == 2:
            result = left == right
        else:
            raise RefUB
        self.set_gpr(t, ResultReg, 1 if result else 0)
        return self._cycles(const, LeftReg, Right)

    # LOADIND / STOREIND (L1 / MMIO)
    INCREMENT = (0, 2, 4, 16)  # by OffsetIncrement

    def loadind(self, t, Size, OffsetHalfReg, OffsetIncrement, ResultReg, AddrReg):
        gpr = ResultReg & (0x3F if Size else 0x3C)
        offset = self.half(t, OffsetHalfReg)
        address = (self.gpr(t, AddrReg) * 16 + offset) % 2**32
        if address >= len(self.l1):  # the size of the L1 it models
            raise RefUB
        self.set_half(t, OffsetHalfReg, offset + self.INCREMENT[OffsetIncrement])
        if Size == 0:
            a = address & ~15
            self.g[t][4 * gpr : 4 * gpr + 16] = self.l1[a : a + 16]
        elif Size == 1:
            a = address & ~3
            self.g[t][4 * gpr : 4 * gpr + 4] = self.l1[a : a + 4]
        elif Size == 2:
            a = address & ~1
            self.g[t][4 * gpr : 4 * gpr + 2] = self.l1[a : a + 2]
        else:
            self.g[t][4 * gpr] = self.l1[address]

    def storeind_l1(self, t, Size, OffsetHalfReg, OffsetIncrement, DataReg, AddrReg):
        gpr = DataReg & (0x3F if Size else 0x3C)
        offset = self.half(t, OffsetHalfReg)
        address = (self.gpr(t, AddrReg) * 16 + offset) % 2**32
        if address >= len(self.l1):  # the size of the L1 it models
            raise RefUB
        self.set_half(t, OffsetHalfReg, offset + self.INCREMENT[OffsetIncrement])
        if Size == 0:
            a = address & ~15
            self.l1[a : a + 16] = self.g[t][4 * gpr : 4 * gpr + 16]
        elif Size == 1:
            a = address & ~3
            self.l1[a : a + 4] = self.g[t][4 * gpr : 4 * gpr + 4]
        elif Size == 2:
            a = address & ~1
            self.l1[a : a + 2] = self.g[t][4 * gpr : 4 * gpr + 2]
        else:
            self.l1[address] = self.g[t][4 * gpr]

    def storeind_mmio(self, t, OffsetHalfReg, OffsetIncrement, DataReg, AddrReg):
        offset = self.half(t, OffsetHalfReg)
        addr = (self.gpr(t, AddrReg) + (offset >> 4)) % 2**32
        addr = 0xFFB00000 + (addr & 0x000FFFFC)
        if addr < 0xFFB11000:
            raise RefUB
        self.mmio_writes.append((addr, self.gpr(t, DataReg)))
        self.set_half(t, OffsetHalfReg, offset + self.INCREMENT[OffsetIncrement])

    def loadreg(self, t, ResultReg, AddrLo):
        addr = 0xFFB00000 + (AddrLo << 2)
        if addr < 0xFFB11000:
            raise RefUB
        self.set_gpr(t, ResultReg, self.mmio_values[addr])

    def storereg(self, t, DataReg, AddrLo):
        addr = 0xFFB00000 + (AddrLo << 2)
        if addr < 0xFFB11000:
            raise RefUB
        self.mmio_writes.append((addr, self.gpr(t, DataReg)))

    # Atomics
    def atincget(self, t, IntWidth, Ofs, InOutReg, AddrReg):
        address = (self.gpr(t, AddrReg) * 16 + Ofs * 4) % 2**32
        if address >= len(self.l1):  # the size of the L1 it models
            raise RefUB
        increment_by = self.gpr(t, InOutReg)
        int_mask = ((2 << IntWidth) - 1) % 2**32
        original = self.l1_u32(address)
        incremented = (original + increment_by) % 2**32
        struct.pack_into("<I", self.l1, address, (incremented & int_mask) | (original & ~int_mask & M32))
        self.set_gpr(t, InOutReg, original)

    def atincgetptr(self, t, NoIncr, IncrLog2, IntWidth, Ofs, ResultReg, AddrReg):
        increment_by = (0 if NoIncr else 1) << IncrLog2
        int_mask = (1 << IntWidth) - 1
        address = (self.gpr(t, AddrReg) * 16) % 2**32
        if address >= len(self.l1):  # the size of the L1 it models
            raise RefUB
        rd, wr = self.l1_u32(address), self.l1_u32(address + 4)
        fifo_size = (wr - rd) % 2**32
        fifo_empty = fifo_size == 0
        if Ofs & 1:
            capacity = (1 << (IntWidth - 1)) if IntWidth else 0x8000
            if fifo_size % capacity == 0 and not fifo_empty:
                raise RefWait
        elif fifo_empty:
            raise RefWait
        original = self.l1_u32(address + 4 * Ofs)
        incremented = (original + increment_by) % 2**32
        struct.pack_into(
            "<I", self.l1, address + 4 * Ofs, (incremented & int_mask) | (original & ~int_mask & M32)
        )
        self.set_gpr(t, ResultReg, original)

    def atswap(self, t, SingleDataReg, Mask, DataReg, AddrReg):
        address = (self.gpr(t, AddrReg) * 16) % 2**32
        if address >= len(self.l1):  # the size of the L1 it models
            raise RefUB
        if SingleDataReg:
            to_write = bytearray(16)
            to_write[(DataReg & 3) * 4 : (DataReg & 3) * 4 + 4] = self.g[t][4 * DataReg : 4 * DataReg + 4]
        else:
            first = DataReg & 0x3C
            to_write = self.g[t][4 * first : 4 * first + 16]
        for i in range(8):
            if Mask & (1 << i):
                self.l1[address + 2 * i : address + 2 * i + 2] = to_write[2 * i : 2 * i + 2]

    def atcas(self, t, SetVal, CmpVal, Ofs, AddrReg):
        address = (self.gpr(t, AddrReg) * 16 + Ofs * 4) % 2**32
        if address >= len(self.l1):  # the size of the L1 it models
            raise RefUB
        if self.l1_u32(address) != CmpVal:
            raise RefWait
        struct.pack_into("<I", self.l1, address, SetVal)


# ---------------------------------------------------------------------------- harness

# One tile for the property tests: every example loads its own GPRs and a fixed L1 pattern.
TILE = Tile("blackhole")
COPRO = TILE.coprocessor
ISA = COPRO.isa
L1_PATTERN = np.random.default_rng(7).integers(0, 256, L1_SIZE, dtype=np.uint8)


class FakeBus:
    """Stands in for the tile's MMIO registers: reads answer from ``values``, writes are logged."""

    def __init__(self) -> None:
        self.values: dict[int, int] = {}
        self.writes: list[tuple[int, int]] = []

    def read(self, address: int, cycle: int) -> int:
        return self.values[address]

    def write(self, address: int, value: int, cycle: int) -> None:
        self.writes.append((address, value))


def execute(name: str, thread: int = 0, copro=COPRO, **fields: int):
    word = copro.isa.encode(name, **fields)
    ctx = Context(copro, thread, CYCLE, copro.isa.decode(word), f"trisc{thread}", 0x6000)
    return lookup(copro.arch.name, name)(ctx, **ctx.instruction.fields)


def load(gprs: list[list[int]], copro=COPRO) -> Ref:
    copro.thcon.gprs[:] = np.array(gprs, np.uint32)
    copro.tile.l1[:] = L1_PATTERN
    return Ref(copro.thcon.gprs, copro.tile.l1)


def outcome_of(call) -> object:
    try:
        return call()
    except (RefUB, UndefinedBehavior):
        return "undefined"
    except RefWait:
        return "wait"


def check(ref: Ref, ref_call, name: str, thread: int, copro=COPRO, **fields: int):
    """Run the reference and the semantics; same outcome, same GPRs and L1 afterwards."""
    before_gprs = copro.thcon.gprs.copy()
    before_l1_digest = hash(copro.tile.l1.tobytes())
    expected = outcome_of(ref_call)
    got = outcome_of(lambda: execute(name, thread, copro, **fields))
    if isinstance(got, Wait):
        assert got.reason
        got = "wait"
    if expected in ("undefined", "wait"):
        assert got == expected
        # Nothing changes: not the GPRs, not L1.
        assert np.array_equal(copro.thcon.gprs, before_gprs)
        assert hash(copro.tile.l1.tobytes()) == before_l1_digest
    else:
        assert isinstance(got, Retire)
    assert np.array_equal(copro.thcon.gprs, ref.gprs_array())
    assert copro.tile.l1.tobytes() == bytes(ref.l1)
    return got, expected


u32 = st.integers(0, M32)
reg = st.integers(0, 63)
half_reg = st.integers(0, 127)
thread_ = st.integers(0, 2)


def _dense(seed: int) -> list[list[int]]:
    return np.random.default_rng(seed).integers(0, 2**32, (3, 64), dtype=np.uint64).tolist()


# Hypothesis' own lists favour small and repeated values; half the files are dense random bits so
# that "the other bits stay" properties see set bits everywhere.
gpr_file = st.one_of(
    st.lists(st.lists(u32, min_size=64, max_size=64), min_size=3, max_size=3), u32.map(_dense)
)
# An AddrReg value: mostly inside L1 (in 16-byte units), sometimes anything (mostly beyond L1,
# sometimes wrapping around 2**32 back into it).
l1_line = st.one_of(st.integers(0, L1_SIZE // 16 - 1), st.integers(L1_SIZE // 16 - 4, L1_SIZE // 16 + 4), u32)

SLOW = settings(max_examples=80, deadline=None)

# ---------------------------------------------------------------------------- SETDMAREG


@SLOW
@given(gpr_file, thread_, st.integers(0, 0xFFFF), half_reg)
def test_setdmareg_immediate_sets_one_half_register(gprs, thread, value, half):
    ref = load(gprs)
    check(
        ref,
        lambda: ref.setdmareg_immediate(thread, value, half),
        "SETDMAREG",
        thread,
        # NewValue occupies bits 23..8: the table's two slots hold its top 2 and low 14 bits.
        payload_sig_sel_size=value >> 14,
        payload_sig_sel=value & 0x3FFF,
        set_signals_mode=0,
        reg_index_16b=half,
    )


@SLOW
@given(
    gpr_file, thread_, st.integers(0, 3), st.integers(10, 15), st.integers(0, 7), half_reg, st.integers(0, 15)
)
def test_setdmareg_special_with_a_dataless_source_writes_zeros(
    gprs, thread, size, source, in_half, half, which
):
    ref = load(gprs)
    check(
        ref,
        lambda: ref.setdmareg_special_zero(thread, size, in_half, half),
        "SETDMAREG",
        thread,
        payload_sig_sel_size=size,
        payload_sig_sel=(which << 7) | (source << 3) | in_half,
        set_signals_mode=1,
        reg_index_16b=half,
    )


@pytest.mark.parametrize("source", range(10))
def test_setdmareg_special_reading_packer_state_is_unimplemented(source):
    load([[0] * 64] * 3)
    with pytest.raises(Unimplemented, match="packer"):
        execute(
            "SETDMAREG",
            payload_sig_sel_size=1,
            payload_sig_sel=source << 3,
            set_signals_mode=1,
            reg_index_16b=0,
        )
    assert not COPRO.thcon.gprs.any()


# ---------------------------------------------------------------------------- arithmetic

ARITHMETIC = {"ADDDMAREG": Ref.adddmareg, "SUBDMAREG": Ref.subdmareg, "MULDMAREG": Ref.muldmareg}
MODED = {"BITWOPDMAREG": Ref.bitwopdmareg, "SHIFTDMAREG": Ref.shiftdmareg, "CMPDMAREG": Ref.cmpdmareg}


@SLOW
@pytest.mark.parametrize("name", sorted(ARITHMETIC))
@given(gprs=gpr_file, thread=thread_, const=st.integers(0, 1), result=reg, right=reg, left=reg)
def test_add_sub_mul_match_the_reference_with_gpr_or_immediate(
    name, gprs, thread, const, result, right, left
):
    ref = load(gprs)
    got, cycles = check(
        ref,
        lambda: ARITHMETIC[name](ref, thread, const, result, right, left),
        name,
        thread,
        op_b_is_const=const,
        result_reg_index=result,
        op_b_reg_index=right,
        op_a_reg_index=left,
    )
    assert got.cycles == cycles


@SLOW
@pytest.mark.parametrize("name", sorted(MODED))
@given(
    gprs=gpr_file,
    thread=thread_,
    const=st.integers(0, 1),
    mode=st.integers(0, 7),
    result=reg,
    right=reg,
    left=reg,
)
def test_bitwise_shift_compare_match_the_reference_in_every_mode(
    name, gprs, thread, const, mode, result, right, left
):
    if name == "SHIFTDMAREG" and const:
        right &= 0x1F  # the immediate form has a 5-bit operand
    ref = load(gprs)
    got, cycles = check(
        ref,
        lambda: MODED[name](ref, thread, const, mode, result, right, left),
        name,
        thread,
        op_b_is_const=const,
        op_sel=mode,
        result_reg_index=result,
        op_b_reg_index=right,
        op_a_reg_index=left,
    )
    if cycles != "undefined":
        assert got.cycles == cycles


def test_shift_amount_from_a_gpr_uses_its_low_five_bits():
    load([[0] * 64] * 3)
    COPRO.thcon.gprs[0, 1] = 0x80000001
    COPRO.thcon.gprs[0, 2] = 33  # shifts by 1
    execute("SHIFTDMAREG", op_b_is_const=0, op_sel=0, result_reg_index=3, op_b_reg_index=2, op_a_reg_index=1)
    assert COPRO.thcon.gprs[0, 3] == 2


def test_compare_is_unsigned():
    load([[0] * 64] * 3)
    COPRO.thcon.gprs[0, 1] = 0xFFFFFFFF
    execute("CMPDMAREG", op_b_is_const=1, op_sel=0, result_reg_index=2, op_b_reg_index=5, op_a_reg_index=1)
    assert COPRO.thcon.gprs[0, 2] == 1


@pytest.mark.parametrize("name", sorted(ARITHMETIC))
def test_result_register_beyond_63_is_undefined_and_changes_nothing(name):
    load([[7] * 64] * 3)
    with pytest.raises(UndefinedBehavior):
        execute(name, op_b_is_const=1, result_reg_index=64, op_b_reg_index=1, op_a_reg_index=0)
    assert (COPRO.thcon.gprs == 7).all()


def test_shift_immediate_beyond_five_bits_is_undefined():
    load([[7] * 64] * 3)
    with pytest.raises(UndefinedBehavior):
        execute(
            "SHIFTDMAREG", op_b_is_const=1, op_sel=0, result_reg_index=0, op_b_reg_index=32, op_a_reg_index=0
        )
    assert (COPRO.thcon.gprs == 7).all()


def test_dmanop_changes_nothing_and_takes_one_cycle():
    ref = load([[5] * 64] * 3)
    assert check(ref, lambda: None, "DMANOP", 1)[0] == Retire(1)


# ---------------------------------------------------------------------------- L1 loads and stores


@SLOW
@given(
    gprs=gpr_file,
    thread=thread_,
    size=st.integers(0, 3),
    offset_half=half_reg,
    inc=st.integers(0, 3),
    data=reg,
    addr=reg,
    line=l1_line,
    offset=st.integers(0, 0xFFFF),
)
def test_loadind_matches_the_reference(gprs, thread, size, offset_half, inc, data, addr, line, offset):
    gprs[thread][addr] = line
    gprs[thread][offset_half >> 1] = offset << (16 * (offset_half & 1))  # may replace the line
    ref = load(gprs)
    check(
        ref,
        lambda: ref.loadind(thread, size, offset_half, inc, data, addr),
        "LOADIND",
        thread,
        size_sel=size,
        offset_index=offset_half,
        auto_inc_spec=inc,
        data_reg_index=data,
        addr_reg_index=addr,
    )


@SLOW
@given(
    gprs=gpr_file,
    thread=thread_,
    size=st.integers(0, 3),
    offset_half=half_reg,
    inc=st.integers(0, 3),
    data=reg,
    addr=reg,
    line=l1_line,
    offset=st.integers(0, 0xFFFF),
)
def test_storeind_to_l1_matches_the_reference(gprs, thread, size, offset_half, inc, data, addr, line, offset):
    gprs[thread][addr] = line
    gprs[thread][offset_half >> 1] = offset << (16 * (offset_half & 1))
    ref = load(gprs)
    check(
        ref,
        lambda: ref.storeind_l1(thread, size, offset_half, inc, data, addr),
        "STOREIND",
        thread,
        mem_hier_sel=1,
        size_sel=size >> 1,  # the 2-bit Size spans the two slots, size_sel the high bit
        reg_size_sel=size & 1,
        offset_index=offset_half,
        auto_inc_spec=inc,
        data_reg_index=data,
        addr_reg_index=addr,
    )


@pytest.mark.parametrize(("offset", "defined"), [(15, True), (16, False)])
def test_the_last_byte_of_l1_is_the_last_address_loadind_reaches(offset, defined):
    load([[0] * 64] * 3)
    COPRO.thcon.gprs[0, 1] = L1_SIZE // 16 - 1
    COPRO.thcon.gprs[0, 2] = offset
    fields = {"size_sel": 3, "offset_index": 4, "auto_inc_spec": 0, "data_reg_index": 3, "addr_reg_index": 1}
    if defined:
        execute("LOADIND", **fields)
        assert COPRO.thcon.gprs[0, 3] == L1_PATTERN[-1]
    else:
        with pytest.raises(UndefinedBehavior):
            execute("LOADIND", **fields)


def test_loadind_offset_register_beyond_127_half_registers_is_undefined():
    load([[0] * 64] * 3)
    with pytest.raises(UndefinedBehavior):
        execute("LOADIND", size_sel=1, offset_index=128, auto_inc_spec=1, data_reg_index=0, addr_reg_index=0)
    assert not COPRO.thcon.gprs.any()


def test_storeind_increments_the_offset_before_reading_the_data():
    # DataReg 0 holds the offset half-register itself: the stored value is the incremented one.
    load([[0] * 64] * 3)
    COPRO.thcon.gprs[0, 1] = DATA // 16
    execute(
        "STOREIND",
        mem_hier_sel=1,
        size_sel=0,
        reg_size_sel=1,
        offset_index=0,
        auto_inc_spec=3,
        data_reg_index=0,
        addr_reg_index=1,
    )
    assert TILE.read(DATA, 4) == (16).to_bytes(4, "little")
    assert COPRO.thcon.gprs[0, 0] == 16


@pytest.mark.parametrize("store_to_srcb", [0, 1])
def test_storeind_to_src_is_unimplemented(store_to_srcb):
    load([[0] * 64] * 3)
    with pytest.raises(Unimplemented, match="SrcB" if store_to_srcb else "SrcA"):
        execute(
            "STOREIND",
            mem_hier_sel=0,
            size_sel=0,
            reg_size_sel=store_to_srcb,
            offset_index=0,
            auto_inc_spec=1,
            data_reg_index=0,
            addr_reg_index=0,
        )
    assert not COPRO.thcon.gprs.any()


# ---------------------------------------------------------------------------- MMIO loads and stores

BUS_TILE = Tile("blackhole")
BUS = FakeBus()
BUS_TILE.coprocessor.register_read = BUS.read
BUS_TILE.coprocessor.register_write = BUS.write


@SLOW
@given(gprs=gpr_file, thread=thread_, offset_half=half_reg, inc=st.integers(0, 3), data=reg, addr=reg)
def test_storeind_to_mmio_matches_the_reference(gprs, thread, offset_half, inc, data, addr):
    copro = BUS_TILE.coprocessor
    ref = load(gprs, copro)
    BUS.writes.clear()
    check(
        ref,
        lambda: ref.storeind_mmio(thread, offset_half, inc, data, addr),
        "STOREIND",
        thread,
        copro,
        mem_hier_sel=0,
        size_sel=1,
        reg_size_sel=0,
        offset_index=offset_half,
        auto_inc_spec=inc,
        data_reg_index=data,
        addr_reg_index=addr,
    )
    assert BUS.writes == ref.mmio_writes


@SLOW
@given(gprs=gpr_file, thread=thread_, data=reg, addr_lo=st.integers(0, 2**18 - 1), value=u32)
def test_loadreg_and_storereg_match_the_reference(gprs, thread, data, addr_lo, value):
    copro = BUS_TILE.coprocessor
    ref = load(gprs, copro)
    address = 0xFFB00000 + (addr_lo << 2)
    BUS.values = {address: value}
    ref.mmio_values = {address: value}
    BUS.writes.clear()
    fields = {"tdma_data_reg_index": data, "reg_addr": addr_lo}
    check(ref, lambda: ref.storereg(thread, data, addr_lo), "STOREREG", thread, copro, **fields)
    assert BUS.writes == ref.mmio_writes
    check(ref, lambda: ref.loadreg(thread, data, addr_lo), "LOADREG", thread, copro, **fields)


def test_storereg_then_loadreg_reach_a_real_tile_register():
    ncrisc_reset_pc = TILE.arch.core("ncrisc").reset_pc_register
    addr_lo = (ncrisc_reset_pc - 0xFFB00000) >> 2
    load([[0] * 64] * 3)
    COPRO.thcon.gprs[2, 9] = 0x12340
    execute("STOREREG", 2, tdma_data_reg_index=9, reg_addr=addr_lo)
    assert TILE.control.reset_pc["ncrisc"] == 0x12340
    execute("LOADREG", 1, tdma_data_reg_index=3, reg_addr=addr_lo)
    assert COPRO.thcon.gprs[1, 3] == 0x12340


def test_loadreg_from_an_unmapped_address_faults_and_changes_nothing():
    load([[0] * 64] * 3)
    with pytest.raises(MemoryFault):
        execute("LOADREG", tdma_data_reg_index=3, reg_addr=(0xFFB11FF0 - 0xFFB00000) >> 2)
    assert not COPRO.thcon.gprs.any()


# ---------------------------------------------------------------------------- atomics


def _place(ref: Ref, address: int, words: list[int]) -> None:
    """Put ``words`` at ``address`` in both L1s (when it is inside L1)."""
    if address + 4 * len(words) <= L1_SIZE:
        raw = struct.pack(f"<{len(words)}I", *words)
        ref.l1[address : address + len(raw)] = raw
        TILE.l1[address : address + len(raw)] = np.frombuffer(raw, np.uint8)


@SLOW
@given(
    gprs=gpr_file,
    thread=thread_,
    width=st.integers(0, 31),
    ofs=st.integers(0, 3),
    data=reg,
    addr=reg,
    line=l1_line,
)
def test_atincget_matches_the_reference(gprs, thread, width, ofs, data, addr, line):
    gprs[thread][addr] = line
    ref = load(gprs)
    check(
        ref,
        lambda: ref.atincget(thread, width, ofs, data, addr),
        "ATINCGET",
        thread,
        mem_hier_sel=0,
        wrap_val=width,
        sel32b=ofs,
        data_reg_index=data,
        addr_reg_index=addr,
    )


counter = st.one_of(st.integers(0, 64), u32)


@SLOW
@given(
    gprs=gpr_file,
    thread=thread_,
    no_incr=st.integers(0, 1),
    incr_log2=st.integers(0, 15),
    width=st.integers(0, 15),
    ofs=st.integers(0, 3),
    data=reg,
    addr=reg,
    line=l1_line,
    rd=counter,
    delta=st.one_of(st.just(0), st.sampled_from([1 << k for k in range(16)]), counter),
)
def test_atincgetptr_matches_the_reference_including_full_and_empty(
    gprs, thread, no_incr, incr_log2, width, ofs, data, addr, line, rd, delta
):
    gprs[thread][addr] = line
    ref = load(gprs)
    _place(ref, (line * 16) % 2**32, [rd, (rd + delta) % 2**32])
    check(
        ref,
        lambda: ref.atincgetptr(thread, no_incr, incr_log2, width, ofs, data, addr),
        "ATINCGETPTR",
        thread,
        mem_hier_sel=0,
        no_incr=no_incr,
        incr_val=incr_log2,
        wrap_val=width,
        sel32b=ofs,
        data_reg_index=data,
        addr_reg_index=addr,
    )


@SLOW
@given(
    gprs=gpr_file,
    thread=thread_,
    single=st.integers(0, 1),
    mask=st.integers(0, 255),
    data=reg,
    addr=reg,
    line=l1_line,
)
def test_atswap_matches_the_reference(gprs, thread, single, mask, data, addr, line):
    gprs[thread][addr] = line
    ref = load(gprs)
    check(
        ref,
        lambda: ref.atswap(thread, single, mask, data, addr),
        "ATSWAP",
        thread,
        mem_hier_sel=0,
        swap_mask=(single << 8) | mask,  # SingleDataReg is bit 22, just above the 8-bit Mask
        data_reg_index=data,
        addr_reg_index=addr,
    )


@SLOW
@given(
    gprs=gpr_file,
    thread=thread_,
    set_val=st.integers(0, 15),
    cmp_val=st.integers(0, 15),
    ofs=st.integers(0, 3),
    addr=reg,
    line=l1_line,
    current=st.one_of(st.integers(0, 15), st.integers(0, 15).map(lambda v: v | 0x10), u32),
)
def test_atcas_matches_the_reference_and_waits_on_mismatch(
    gprs, thread, set_val, cmp_val, ofs, addr, line, current
):
    gprs[thread][addr] = line
    ref = load(gprs)
    _place(ref, (line * 16 + 4 * ofs) % 2**32, [current])
    check(
        ref,
        lambda: ref.atcas(thread, set_val, cmp_val, ofs, addr),
        "ATCAS",
        thread,
        mem_hier_sel=0,
        swap_val=set_val,
        cmp_val=cmp_val,
        sel32b=ofs,
        data_reg_index=0,
        addr_reg_index=addr,
    )


def test_atcas_waits_until_the_value_matches_then_sets_it():
    load([[0] * 64] * 3)
    COPRO.thcon.gprs[1, 4] = DATA // 16
    TILE.write(DATA + 8, (3).to_bytes(4, "little"))
    fields = {
        "mem_hier_sel": 0,
        "swap_val": 9,
        "cmp_val": 5,
        "sel32b": 2,
        "data_reg_index": 0,
        "addr_reg_index": 4,
    }
    outcome = execute("ATCAS", 1, **fields)
    assert isinstance(outcome, Wait) and f"0x{DATA + 8:x}" in outcome.reason
    TILE.write(DATA + 8, (5).to_bytes(4, "little"))
    assert execute("ATCAS", 1, **fields) == Retire(15)
    assert TILE.read(DATA + 8, 4) == (9).to_bytes(4, "little")


def test_atcas_compares_the_whole_word():
    load([[0] * 64] * 3)
    COPRO.thcon.gprs[0, 4] = DATA // 16
    TILE.write(DATA, (0x15).to_bytes(4, "little"))
    fields = {
        "mem_hier_sel": 0,
        "swap_val": 9,
        "cmp_val": 5,
        "sel32b": 0,
        "data_reg_index": 0,
        "addr_reg_index": 4,
    }
    assert isinstance(execute("ATCAS", **fields), Wait)


def test_atincgetptr_push_waits_while_full_and_pop_while_empty():
    load([[0] * 64] * 3)
    COPRO.thcon.gprs[0, 1] = DATA // 16
    push = {
        "mem_hier_sel": 0,
        "no_incr": 0,
        "incr_val": 0,
        "wrap_val": 3,
        "sel32b": 1,
        "data_reg_index": 2,
        "addr_reg_index": 1,
    }
    pop = push | {"sel32b": 0}
    # Capacity 4 (3-bit counters): rd = 1, wr = 5 is full.
    TILE.write(DATA, struct.pack("<4I", 1, 5, 0, 0))
    assert "full" in execute("ATINCGETPTR", **push).reason
    assert execute("ATINCGETPTR", **pop) == Retire(15)  # rd 1 -> 2, returned in GPR 2
    assert COPRO.thcon.gprs[0, 2] == 1
    assert execute("ATINCGETPTR", **push) == Retire(15)  # wr 5 -> 6
    assert struct.unpack("<2I", TILE.read(DATA, 8)) == (2, 6)
    TILE.write(DATA, struct.pack("<2I", 7, 7))
    assert "empty" in execute("ATINCGETPTR", **pop).reason


@pytest.mark.parametrize("name", ["ATINCGET", "ATINCGETPTR", "ATSWAP", "ATCAS"])
def test_atomics_with_mem_hier_sel_set_are_undefined(name):
    load([[0] * 64] * 3)
    fields = {f.name: 0 for f in ISA.by_name[name].fields} | {"mem_hier_sel": 1}
    with pytest.raises(UndefinedBehavior):
        execute(name, **fields)
    assert not COPRO.thcon.gprs.any()
    assert np.array_equal(TILE.l1, L1_PATTERN)


# ---------------------------------------------------------------------------- FLUSHDMA, REG2FLOP


@pytest.mark.parametrize(
    ("mask", "cycles"),
    [(0b0001, 2), (0b0010, 10), (0b0100, 20), (0b0110, 20), (0b1000, 30), (0b1001, 30), (0, 30)],
)
def test_flushdma_occupies_the_unit_until_the_selected_units_are_idle(mask, cycles):
    # Unpacker 0 fetches until CYCLE + 10, unpacker 1 until CYCLE + 20; the packer is busy until + 30.
    # The shared unpack issue slot (an UNPACR's address cycles) is not what C1 / C2 wait for.
    COPRO.busy_until.update({"unpack": CYCLE + 40, "pack": CYCLE + 30})
    ends = COPRO.unpackers.end.copy()
    COPRO.unpackers.end[:] = (CYCLE + 10, CYCLE + 20)
    try:
        assert execute("FLUSHDMA", flush_spec=mask) == Retire(cycles)
    finally:
        COPRO.busy_until.clear()
        COPRO.unpackers.end[:] = ends


# Blackhole's THCON_CFGREG_BASE_ADDR32 and GLOBAL_CFGREG_BASE_ADDR32 (cfg_defines.h; the first THCON_
# field, THCON_SEC0_REG0_TileDescriptor, is word 64).
THCON_CFGREG_BASE, GLOBAL_CFGREG_BASE = 64, 180
ADC_WIDTHS = {"X": 18, "Y": 13, "Z": 8, "W": 8}  # ADCs.md: uint18_t X, uint13_t Y, uint8_t Z, W


def reg2flop_config_reference(
    ref: Ref, config: list[list[int]], t, SizeSel, ThConCfgIndex, InputReg, StateID
):
    """REG2FLOP (Move from GPRs to THCON configuration), on ``config[state][word]``."""
    if ThConCfgIndex >= GLOBAL_CFGREG_BASE - THCON_CFGREG_BASE:
        raise RefUB
    base = THCON_CFGREG_BASE
    if SizeSel == 0:
        for i in range(4):
            config[StateID][base + (ThConCfgIndex & ~3) + i] = ref.gpr(t, (InputReg & ~3) + i)
    else:
        config[StateID][base + ThConCfgIndex] = ref.gpr(t, InputReg)


def reg2flop_adc_reference(
    ref: Ref, adcs: dict, t, SizeSel, OverrideThread, Shift8, ThreadSel, Channel, ADCSel, Cr, XYZW, InputReg
):
    """REG2FLOP (Move from GPRs to ADCs), on ``adcs[(thread, ADC, channel, "X" | "X_Cr" | ...)]``."""
    value = ref.gpr(t, InputReg)
    if SizeSel == 0:
        value = 0
    elif SizeSel == 1:
        if Shift8 != 0:
            value = 0
    elif SizeSel == 2:
        if Shift8 == 0:
            value &= 0xFFFF
        elif Shift8 == 2:
            value >>= 16
        else:
            value = 0
    else:
        value = (value >> (Shift8 * 8)) & 0xFF
    which_thread = t
    if OverrideThread:
        which_thread = ThreadSel
        if which_thread >= 3:
            return
    if ADCSel == 3:
        return
    name = "XYZW"[XYZW]
    adcs[(which_thread, ADCSel, Channel, name + ("_Cr" if Cr else ""))] = value % 2 ** ADC_WIDTHS[name]


def adc_dict(copro) -> dict:
    adc = copro.adc
    return {
        (t, u, ch, "XYZW"[d] + suffix): int(array[t, u, ch, d])
        for t in range(3)
        for u in range(3)
        for ch in range(2)
        for d in range(4)
        for suffix, array in (("", adc.value), ("_Cr", adc.cr))
    }


@SLOW
@given(
    gprs=gpr_file,
    thread=thread_,
    size=st.integers(0, 3),
    index=st.integers(0, 127),
    reg=reg,
    state=st.integers(0, 1),
    seed=u32,
)
def test_reg2flop_to_thcon_configuration_matches_the_reference(gprs, thread, size, index, reg, state, seed):
    ref = load(gprs)
    config = COPRO.config
    config.config[:] = np.random.default_rng(seed).integers(0, 2**32, config.config.shape, dtype=np.uint64)
    config.write_thread_field("CFG_STATE_ID_StateID", thread, state)
    expected = config.config.astype(np.int64).tolist()
    before = config.config.copy()
    outcome = outcome_of(lambda: reg2flop_config_reference(ref, expected, thread, size, index, reg, state))
    got = outcome_of(
        lambda: execute(
            "REG2FLOP",
            thread,
            size_sel=size,
            target_sel=0,
            byte_offset=0,
            context_id_2=0,
            flop_index=index,
            reg_index=reg,
        )
    )
    if outcome == "undefined":
        assert got == "undefined" and np.array_equal(config.config, before)
    else:
        assert got == Retire(2)
    assert config.config.tolist() == expected
    assert np.array_equal(COPRO.thcon.gprs, ref.gprs_array())


@SLOW
@given(
    gprs=gpr_file,
    thread=thread_,
    size=st.integers(0, 3),
    override=st.integers(0, 1),
    shift8=st.integers(0, 3),
    thread_sel=st.integers(0, 3),
    channel=st.integers(0, 1),
    adc_sel=st.integers(0, 3),
    cr=st.integers(0, 1),
    xyzw=st.integers(0, 3),
    reg=reg,
    seed=u32,
)
def test_reg2flop_to_an_adc_matches_the_reference(
    gprs, thread, size, override, shift8, thread_sel, channel, adc_sel, cr, xyzw, reg, seed
):
    ref = load(gprs)
    adc = COPRO.adc
    rng = np.random.default_rng(seed)
    masks = np.array([(1 << ADC_WIDTHS[d]) - 1 for d in "XYZW"], np.uint32)
    adc.value[:] = rng.integers(0, 2**32, adc.value.shape, dtype=np.uint64).astype(np.uint32) & masks
    adc.cr[:] = rng.integers(0, 2**32, adc.cr.shape, dtype=np.uint64).astype(np.uint32) & masks
    expected = adc_dict(COPRO)
    reg2flop_adc_reference(
        ref, expected, thread, size, override, shift8, thread_sel, channel, adc_sel, cr, xyzw, reg
    )
    flop_index = (channel << 5) | (adc_sel << 3) | (cr << 2) | xyzw
    outcome = execute(
        "REG2FLOP",
        thread,
        size_sel=size,
        target_sel=2 + override,
        byte_offset=shift8,
        context_id_2=thread_sel,
        flop_index=flop_index,
        reg_index=reg,
    )
    assert outcome == Retire(2)
    assert adc_dict(COPRO) == expected
    assert np.array_equal(COPRO.thcon.gprs, ref.gprs_array())


@pytest.mark.parametrize(
    "fields",
    [
        {"target_sel": 1},  # neither form
        {"target_sel": 2, "flop_index": 1 << 6},  # ADC form: instruction bits 15..12 are unassigned
        {"target_sel": 0, "byte_offset": 1},  # configuration form: passes 0 there
        {"target_sel": 0, "context_id_2": 2},
    ],
)
def test_reg2flop_outside_its_two_documented_forms_is_undefined(fields):
    load([[1] * 64] * 3)
    before = COPRO.adc.value.copy(), COPRO.config.config.copy()
    with pytest.raises(UndefinedBehavior):
        execute(
            "REG2FLOP",
            **(
                {
                    "size_sel": 1,
                    "target_sel": 0,
                    "byte_offset": 0,
                    "context_id_2": 0,
                    "flop_index": 0,
                    "reg_index": 1,
                }
                | fields
            ),
        )
    assert np.array_equal(COPRO.adc.value, before[0]) and np.array_equal(COPRO.config.config, before[1])


# ---------------------------------------------------------------------------- the RISC-V view

REGFILE = 0xFFE00000


def run_core(core: str, base: int, source: str) -> Tile:
    tile = Tile("blackhole")
    tile.write(base, assemble(source, base=base))
    tile.run(release=[core])
    return tile


def test_a_trisc_reads_and_writes_its_own_gprs():
    tile = run_core(
        "trisc1",
        0xA000,
        f"""
        li t0, {REGFILE}
        li t1, 0x12345678
        sw t1, 0(t0)
        li t1, 0xCAFEF00D
        sw t1, 252(t0)
        lw t2, 0(t0)
        lw t3, 252(t0)
        li t4, {DATA}
        sw t2, 0(t4)
        sw t3, 4(t4)
        ecall
        """,
    )
    gprs = tile.coprocessor.thcon.gprs
    assert gprs[1, 0] == 0x12345678 and gprs[1, 63] == 0xCAFEF00D
    assert np.count_nonzero(gprs) == 2  # nothing in the other threads
    assert struct.unpack("<2I", tile.read(DATA, 8)) == (0x12345678, 0xCAFEF00D)


def test_brisc_sees_every_thread_at_0x100_apart():
    lines = [f"li t0, {REGFILE}"]
    for thread in range(3):
        for index in (0, 17, 63):
            lines += [f"li t1, {0x1000 * thread + index}", f"sw t1, {0x100 * thread + 4 * index}(t0)"]
    lines += ["lw t2, 0x244(t0)", f"li t4, {DATA}", "sw t2, 0(t4)", "ecall"]
    tile = run_core("brisc", 0, "\n".join(lines))
    gprs = tile.coprocessor.thcon.gprs
    for thread in range(3):
        assert [int(gprs[thread, i]) for i in (0, 17, 63)] == [0x1000 * thread + i for i in (0, 17, 63)]
    assert np.count_nonzero(gprs) == 8  # thread 0's GPR 0 holds 0
    assert tile.read(DATA, 4) == (0x2000 + 17).to_bytes(4, "little")


def test_ncrisc_has_no_gpr_view():
    with pytest.raises(MemoryFault) as info:
        run_core("ncrisc", 0x12000, f"li t0, {REGFILE}\n lw t1, 0(t0)\n ecall")
    assert info.value.address == REGFILE


def test_a_trisc_sees_only_its_64_gprs_aliases_are_not_mapped():
    with pytest.raises(MemoryFault) as info:
        run_core("trisc0", 0x6000, f"li t0, {REGFILE}\n lw t1, 256(t0)\n ecall")
    assert info.value.address == REGFILE + 256


def test_a_core_write_to_a_gpr_tells_the_coprocessor():
    tile = Tile("blackhole")
    changes: list[int] = []
    tile.coprocessor.state_changed = changes.append
    tile.write(
        0x6000,
        assemble(f"li t0, {REGFILE}\n sw t0, 8(t0)\n lw t1, 8(t0)\n sw t1, 12(t0)\n ecall", base=0x6000),
    )
    tile.run(release=["trisc0"])
    assert len(changes) == 2 and changes == sorted(changes)


def test_gprs_written_by_a_trisc_feed_a_pushed_adddmareg_and_setdmareg_results_are_polled_back():
    add = ISA.encode("ADDDMAREG", op_b_is_const=0, result_reg_index=6, op_b_reg_index=5, op_a_reg_index=4)
    set_lo = ISA.encode(
        "SETDMAREG",
        payload_sig_sel_size=0xBEEF >> 14,
        payload_sig_sel=0xBEEF & 0x3FFF,
        set_signals_mode=0,
        reg_index_16b=2 * 7,
    )
    set_hi = ISA.encode(
        "SETDMAREG",
        payload_sig_sel_size=0xDEAD >> 14,
        payload_sig_sel=0xDEAD & 0x3FFF,
        set_signals_mode=0,
        reg_index_16b=2 * 7 + 1,
    )

    def inline(word: int) -> str:
        return f".word 0x{((word << 2) | (word >> 30)) & M32:08x}"

    tile = run_core(
        "trisc0",
        0x6000,
        f"""
        li t0, {REGFILE}
        li t1, 0xFFFFFFF0
        sw t1, 16(t0)
        li t1, 0x20
        sw t1, 20(t0)
        {inline(add)}
        {inline(set_lo)}
        {inline(set_hi)}
        li t2, 0xDEADBEEF
    poll:
        lw t3, 28(t0)
        bne t3, t2, poll
        lw t4, 24(t0)
        li t5, {DATA}
        sw t4, 0(t5)
        ecall
        """,
    )
    assert tile.read(DATA, 4) == (0x10).to_bytes(4, "little")  # 0xFFFFFFF0 + 0x20 wraps
    assert tile.coprocessor.thcon.gprs[0, 7] == 0xDEADBEEF
