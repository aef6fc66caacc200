"""SFPLOADMACRO, LoadMacroConfig and the vector sub-units' scheduled work; SFPLOAD's gap after a
matrix-unit write of Dst.

``MacroRef`` extends the vector unit's reference with SFPLOADMACRO.md's model run cycle by cycle: each
cycle the work whose countdown ended runs (all sub-units reading the state of the start of the
cycle), then the countdown steps (every cycle, or only on a vector-unit issue while any work waits for
instructions), then the instruction issued that cycle (discarded if its sub-unit had scheduled work).
The scheduled simple-unit instructions and the store are written again here from their pages with VB,
VC and VD as SFPLOADMACRO sets them. Programs run through the pipe engine (tensixsim.raw.run_words),
one instruction per cycle.
"""

# The reference keeps the documentation's names so it reads like the pseudocode.
# ruff: noqa: N802, N803, N806

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from matrix_harness import COPRO, ISA, SEEDS, THREADS, TILE, assert_matches, load, plain_config
from outcomes import RefUB, RefUnimplemented, reference_outcome
from sfpu_reference import M32, SfpuRef, StoreDatum, i32, sext
from test_sfpu import EXTRA_FIELDS, assert_sfpu, random_sfpu

from tensixsim.errors import UndefinedBehavior, Unimplemented
from tensixsim.raw import run_words
from tensixsim.tensix import formats
from tensixsim.tensix.sfpu import macro as sfpu_macro
from tensixsim.tensix.sfpu import unit as sfpu
from tensixsim.timing import FRONTEND, MATRIX, SFPU

SIMPLE_NAMES = ("SFPIADD", "SFPSHFT", "SFPAND", "SFPOR", "SFPXOR", "SFPNOT", "SFPMOV", "SFPSETSGN")
WIDE = (3, 4, 10, 12, 9, 7)  # Mod0 with a Dst32b datum (FP32, INT32, INT32_ALL, INT32_SM, LO16, HI16 store)
EXTRA = {
    "SFPU_Fp32_enabled": 0,
    "SrcB_override": 0,
    "SrcB_val": 0,
    "REG1_SrcB": 5,
    "DEST_SP_BASE": 0,
    "SFPU_STACK_Incr": 0,
}
PROFILE = {"use": "none", "depth": 0, "backdoor_off": 1.0, "row_mask": 0.0, "block": 0.0, "exchange": 0.0}


# ------------------------------------------------------------------------------ the reference


class MacroRef(SfpuRef):
    """SFPLOADMACRO.md over the vector unit's reference, cycle by cycle."""

    def __init__(self, sfpu_state, thread, regs, config, extra):
        super().__init__(sfpu_state, thread, regs, config, extra)
        self.Outstanding = []  # dicts: Unit, Insn, Delay, Kind, RunAt
        self.Executed = []  # (cycle, unit)

    # -------------------------------------------------------------- scheduled instructions
    def Execute(self, Insn: dict, Old: list[list[int]], Flags: list[bool], Enabled: list[bool]) -> None:
        """One scheduled instruction reading ``Old`` (LReg at the start of the cycle)."""
        Name = Insn["Name"]
        if Name == "SFPNOP":
            return
        if Name == "SFPSTORE":
            return self.ScheduledStore(Insn, Old, Enabled)
        VB, VC, VD, Imm12, Mod1 = (Insn[k] for k in ("VB", "VC", "VD", "Imm12", "Mod1"))
        if Name in ("SFPAND", "SFPOR") and Imm12 >> 4:
            raise RefUB
        if Name in ("SFPXOR", "SFPNOT") and (Imm12 or Mod1):
            raise RefUB
        if Name == "SFPMOV" and Imm12:
            raise RefUB
        if Name == "SFPSETSGN" and Imm12 >> 1:
            raise RefUB
        if Name == "SFPMOV" and Mod1 & 8:
            raise RefUnimplemented  # not drawn
        if not (VD < 8 or VD == 16):
            return
        for Lane in range(32):
            if not (Enabled[Lane] or (Name == "SFPMOV" and Mod1 == 2)):
                continue
            c, b = Old[VC][Lane], Old[VB][Lane]
            if Name == "SFPIADD":
                r = (c + sext(Imm12, 12) if Mod1 & 1 else c - b if Mod1 & 2 else c + b) & M32
                if VD < 8:
                    f = Flags[Lane] if Mod1 & 4 else i32(r) < 0
                    self.LaneFlags[Lane] = (not f) if Mod1 & 8 else f
            elif Name == "SFPSHFT":
                x, Shift = b, i32(c)
                if Mod1 & 1:
                    if Mod1 & 4:
                        x = Shift & M32
                    Shift = sext(Imm12, 12)
                if Shift >= 0:
                    r = (x << (Shift & 31)) & M32
                elif Mod1 & 2:
                    r = (i32(x) >> (-Shift & 31)) & M32
                else:
                    r = x >> (-Shift & 31)
            elif Name in ("SFPAND", "SFPOR"):
                vb = Old[VB][Lane] if Mod1 & 1 else Old[VD][Lane]
                r = vb & c if Name == "SFPAND" else vb | c
            elif Name == "SFPXOR":
                r = b ^ c
            elif Name == "SFPNOT":
                r = ~c & M32
            elif Name == "SFPMOV":
                r = c ^ (0x80000000 if Mod1 & 1 else 0)
            else:  # SFPSETSGN
                r = ((Imm12 if Mod1 & 1 else b >> 31) << 31) | (c & 0x7FFFFFFF)
            self.LReg[VD][Lane] = r

    def ScheduledStore(self, Insn: dict, Old: list[list[int]], Enabled: list[bool]) -> None:
        # SFPSTORE.md with SFPLOADMACRO's Addr, no RWC / Sp change, DISABLE_BACKDOOR_LOAD true
        Mod0, Addr, VD = self.ResolveMod0(Insn["Mod0"]), Insn["Addr"], Insn["VD"]
        writes = []
        for Lane in range(32):
            if (self.LaneConfig[Lane] >> 4) & 1:
                continue
            if not (Enabled[Lane] or Mod0 == 10):
                continue
            Row = ((Addr & ~3) + Lane // 8) % 1024
            Column = (Lane & 7) * 2 + (1 if (Addr & 2) or (self.LaneConfig[Lane & 7] >> 7) & 1 else 0)
            wide = Mod0 in WIDE
            if not (self.Dst32Valid(Row) if wide else self.Dst16Valid(Row)):
                raise RefUB
            writes.append((wide, Row, Column, StoreDatum(Mod0, Old[VD][Lane])))
        for wide, Row, Column, value in writes:
            (self.Dst32Write if wide else self.Dst16Write)(Row, Column, value)

    # -------------------------------------------------------------- SFPLOADMACRO
    def LoadAddr(self, Imm10: int, Mod0: int) -> int:
        # SFPLOAD.md's Addr (before Sp moves)
        Addr = (Imm10 + self.c["MATH_Offset"]) % 1024
        DstOffset = (self.RWC["Dst"] + self.c["DEST_REGW_BASE"]) % 1024
        Sp = self.Sp
        if Mod0 == 10:
            if Sp != 0:
                Sp = (Sp - self.x["SFPU_STACK_Incr"]) % 1024
            return (Addr + (Sp + self.x["DEST_SP_BASE"]) + (DstOffset & 3)) % 1024
        return (Addr + DstOffset + ((Sp + self.x["DEST_SP_BASE"]) & 3)) % 1024

    def SFPLOADMACRO(self, word: int, Cycle: int) -> None:
        LregInd, Mod0, AddrMod, Imm = (word >> 20) & 15, (word >> 16) & 15, (word >> 13) & 7, word & 0x1FFF
        if Imm >> 10:
            raise RefUB
        MacroIndex, VD, Imm10 = LregInd >> 2, ((Imm & 1) << 2) | (LregInd & 3), Imm
        Addr = self.LoadAddr(Imm10, self.ResolveMod0(Mod0))
        Seq = {self.Sequence[Lane][MacroIndex] for Lane in range(32)}
        Misc = {self.Misc[Lane] for Lane in range(32)}
        if len(Seq) > 1 or len(Misc) > 1:
            raise RefUnimplemented
        (Seq,), (Misc,) = Seq, Misc
        New = []
        for i in range(4):
            SequenceBits = (Seq >> (i * 8)) & 0xFF
            Delay = (SequenceBits >> 3) & 7
            Select = SequenceBits & 7
            if Select == 0:
                New.append((i, Delay, None))
                continue
            if Select == 1:
                raise RefUB
            if Select == 2:
                Insn = {"Name": "SFPNOP"}
            elif Select == 3:
                Insn = {"Name": "SFPSTORE", "VD": 0}
            else:
                Words = {self.InstructionTemplate[Lane][Select - 4] for Lane in range(32)}
                if len(Words) > 1:
                    raise RefUnimplemented
                Insn = self.ParseInsn(Words.pop())
            Column = (SIMPLE_NAMES, (), (), ("SFPSTORE",))[i]
            if Insn["Name"] not in Column:
                if i == 3:
                    raise RefUB
                Insn = {"Name": "SFPNOP"}
            if i != 3:
                if SequenceBits & 0x80:
                    Insn["VB"] = VD
                    if Insn.get("VC") is None:
                        Insn["VC"] = Insn.get("VD")
                else:
                    Insn["VC"] = VD
                    if Insn.get("VB") is None:
                        Insn["VB"] = Insn.get("VD")
                Insn["VD"] = 16 if SequenceBits & 0x40 else VD
            else:
                if SequenceBits & 0x40:
                    Insn["VD"] = 16
                elif not SequenceBits & 0x80:
                    Insn["VD"] = VD
                Insn["Mod0"] = Mod0 if (Misc >> (4 + MacroIndex)) & 1 else Misc & 15
                Insn["Addr"] = Addr
            Kind = "instructions" if (Misc >> (8 + i)) & 1 else "cycles"
            New.append((i, Delay, {"Unit": i, "Insn": Insn, "Delay": Delay, "Kind": Kind}))
        # The load part, then the scheduling (nothing above changed anything)
        self.SFPLOAD(
            ISA.encode("SFPLOAD", lreg_ind=VD, instr_mod0=Mod0, sfpu_addr_mode=AddrMod, dest_reg_addr=Imm)
        )
        for i, Delay, Entry in New:
            if Delay != 7:
                self.Outstanding = [
                    e for e in self.Outstanding if not (e["Unit"] == i and e["Delay"] == Delay)
                ]
            if Entry is not None:
                Entry["RunAt"] = Cycle + 1 if Delay == 0 else None
                self.Outstanding.append(Entry)

    def ParseInsn(self, word: int) -> dict:
        opcode = word >> 24
        spec = ISA.by_opcode.get(opcode)
        if spec is None or spec.name not in (*SIMPLE_NAMES, "SFPSTORE"):
            return {"Name": "other"}
        if spec.name == "SFPSTORE":
            return {"Name": "SFPSTORE", "VD": (word >> 20) & 15}
        Imm12, VC, VD, Mod1 = (word >> 12) & 0xFFF, (word >> 8) & 15, (word >> 4) & 15, word & 15
        Insn = {"Name": spec.name, "Imm12": Imm12, "VC": VC, "VD": VD, "Mod1": Mod1, "VB": None}
        if spec.name in ("SFPAND", "SFPOR"):
            Insn["VB"] = Imm12 & 15  # (the VB override replaces these bits)
        return Insn

    # -------------------------------------------------------------- the clock
    def Cycle(self, t: int, word: int | None) -> None:
        """Cycle ``t``: due work, the countdown, then ``word`` (a vector-unit instruction issued at t)."""
        Due = [e for e in self.Outstanding if e["RunAt"] == t]
        self.Outstanding = [e for e in self.Outstanding if e["RunAt"] != t]
        Old = [row[:] for row in self.LReg]
        Flags = self.LaneFlags[:]
        Enabled = [self.LaneEnabled(Lane) for Lane in range(32)]
        for e in sorted(Due, key=lambda e: e["Unit"]):
            self.Execute(e["Insn"], Old, Flags, Enabled)
            self.Executed.append((t, e["Unit"]))
        ByInstructions = any(e["Kind"] == "instructions" for e in self.Outstanding)
        if word is not None or not ByInstructions:
            for e in self.Outstanding:
                if e["RunAt"] is None:
                    e["Delay"] -= 1
                    if e["Delay"] == 0:
                        e["RunAt"] = t + 1
        if word is None:
            return
        name = ISA.decode(word).name
        unit = {"SFPIADD": 0, "SFPSTORE": 3}.get(name)
        if unit is not None and unit in [e["Unit"] for e in Due]:
            return  # discarded
        if name == "SFPLOADMACRO":
            self.SFPLOADMACRO(word, t)
        else:
            getattr(self, name)(word)


# ------------------------------------------------------------------------------ running programs


def fill_valid(rng: np.random.Generator, regs) -> None:
    regs.dst[:] = rng.integers(0, 1 << 16, regs.dst.shape)
    regs.dst_row_valid[:] = True


def set_up(seed: int, thread: int, profile: dict | None = None) -> sfpu.SfpuState:
    """Random Dst (all rows defined), a plain configuration, a random vector unit with nothing scheduled."""
    config = plain_config()
    load(seed, config, thread, lambda *args: None, fill_valid)
    cfg = COPRO.config
    for field, key in EXTRA_FIELDS.items():
        cfg.write_field(field, 0, EXTRA[key])
    s = random_sfpu(np.random.default_rng(seed), {**PROFILE, **(profile or {}), "sp": 0})
    COPRO.sfpu = s
    return s


def run_program(thread: int, program: list[int]) -> tuple[str, int]:
    """Run ``program`` (words) through the engine; the outcome kind and the first issue cycle."""
    engine = TILE.backend
    start = max([engine.cycle, *(p.next_issue for p in engine.pipes), *COPRO.busy_until.values()])
    first = start + FRONTEND.push_to_issue  # (after every earlier program's pipes and units)
    try:
        run_words(TILE, thread, program, cycle=start)
    except UndefinedBehavior:
        outcome = "undefined"
    except Unimplemented:
        outcome = "unimplemented"
    else:
        pipe = engine.pipes[thread]
        assert pipe.last_cycle == first + len(program) - 1  # one instruction per cycle, no stall
        return "retire", first
    for pipe in engine.pipes:  # leave the engine idle for the next program
        pipe.words.clear()
        pipe.queue.entries.clear()
        pipe.blocked, pipe.retry_at = None, None
    return outcome, first


def reference_run(ref: MacroRef, program: list[int], first: int) -> None:
    is_sfpu = [ISA.decode(w).unit == "sfpu" for w in program]
    for i, word in enumerate(program):
        ref.Cycle(first + i, word if is_sfpu[i] else None)
    t = first + len(program)
    while ref.Outstanding and t < first + 64:
        waiting = any(e["Kind"] == "instructions" for e in ref.Outstanding)
        if waiting and all(e["RunAt"] is None for e in ref.Outstanding):
            break  # nothing runs until a vector-unit instruction issues
        ref.Cycle(t, None)
        t += 1


def assert_state(ref: MacroRef) -> None:
    assert_sfpu(ref, np.delete(COPRO.sfpu.sp, ref.thread))
    assert_matches(ref)
    waiting = sorted(e["Unit"] for e in ref.Outstanding)
    p = COPRO.sfpu.macro_pending
    assert sorted(p[p[:, sfpu_macro.VALID] == 1, sfpu_macro.UNIT].tolist()) == waiting


# ------------------------------------------------------------------------------ strategies

ENC = ISA.encode


@st.composite
def templates(draw) -> int:
    name = draw(st.sampled_from((*SIMPLE_NAMES, "SFPSTORE", "SFPSTORE", "SFPNOP", "SFPLOADI")))
    if name == "SFPSTORE":
        return ENC(name, lreg_ind=draw(st.integers(0, 7)), instr_mod0=0, sfpu_addr_mode=0, dest_reg_addr=0)
    if name == "SFPNOP":
        return ENC(name)
    if name == "SFPLOADI":
        return ENC(name, lreg_ind=0, instr_mod0=0, imm16=draw(st.integers(0, 0xFFFF)))
    imm = draw(
        st.sampled_from([0, 1, 5, 0xFFF, 31, 0xFE1])
        if name in ("SFPIADD", "SFPSHFT")
        else st.integers(0, 15)
        if name in ("SFPAND", "SFPOR")
        else st.integers(0, 1)
        if name == "SFPSETSGN"
        else st.just(0)
    )
    mod1 = draw(st.integers(0, 7) if name != "SFPMOV" else st.sampled_from([0, 1, 2]))
    if name in ("SFPXOR", "SFPNOT"):
        mod1 = 0
    vd = draw(st.integers(0, 11))  # (12..15 would be a backdoor load when written this way)
    return ENC(name, imm12_math=imm, lreg_c=draw(st.integers(0, 15)), lreg_dest=vd, instr_mod1=mod1)


def sequence_byte(unit: int) -> st.SearchStrategy[int]:
    select = {
        0: st.sampled_from([0, 2, 4, 5, 6, 7, 4, 5]),
        1: st.sampled_from([0, 2]),
        2: st.sampled_from([0, 2]),
        3: st.sampled_from([0, 3, 3, 3, 3, 3, 7]),  # (7 mostly selects no SFPSTORE: undefined)
    }[unit]
    delay = st.one_of(st.sampled_from([0, 1, 2]), st.integers(0, 7))
    return st.tuples(st.integers(0, 3), delay, select).map(lambda t: (t[0] << 6) | (t[1] << 3) | t[2])


@st.composite
def macro_configs(draw) -> dict:
    return {
        "templates": draw(st.lists(templates(), min_size=4, max_size=4)),
        "sequences": [sum(draw(sequence_byte(u)) << (8 * u) for u in range(4)) for _ in range(4)],
        "misc": draw(st.sampled_from([6, 9, 3, 2, 4, 8]))
        | (draw(st.integers(0, 15)) << 4)
        | (draw(st.sampled_from([0, 0, 0x1, 0x8, 0xF, 0x5])) << 8),
    }


@st.composite
def programs(draw) -> list[int]:
    items = []
    for _ in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["macro"] * 5 + ["sfpnop", "nop", "iadd", "loadi"]))
        if kind == "macro":
            vd, macro = draw(st.sampled_from([0, 1, 1, 6])), draw(st.integers(0, 3))
            imm = (draw(st.integers(0, 63)) << 1) | (vd >> 2)
            mod0 = draw(st.sampled_from([1, 2, 3, 4, 6, 7, 8, 9, 14, 15]))
            items.append(
                ENC(
                    "SFPLOADMACRO",
                    lreg_ind=(macro << 2) | (vd & 3),
                    instr_mod0=mod0,
                    sfpu_addr_mode=0,
                    dest_reg_addr=imm,
                )
            )
        elif kind == "sfpnop":
            items.append(ENC("SFPNOP"))
        elif kind == "nop":
            items.append(ENC("NOP"))
        elif kind == "iadd":
            items.append(
                ENC(
                    "SFPIADD",
                    imm12_math=draw(st.integers(0, 0xFFF)),
                    lreg_c=draw(st.integers(0, 7)),
                    lreg_dest=draw(st.integers(0, 7)),
                    instr_mod1=draw(st.integers(0, 15)),
                )
            )
        else:
            items.append(
                ENC(
                    "SFPLOADI",
                    lreg_ind=draw(st.integers(0, 7)),
                    instr_mod0=2,
                    imm16=draw(st.integers(0, 0xFFFF)),
                )
            )
    return items


def install(s: sfpu.SfpuState, config: dict) -> None:
    s.macro_template[:] = config["templates"]
    s.macro_sequence[:] = config["sequences"]
    s.macro_misc[:] = config["misc"]


# ------------------------------------------------------------------------------ property tests


@settings(max_examples=250, deadline=None)
@given(
    config=macro_configs(),
    program=programs(),
    seed=SEEDS,
    thread=THREADS,
    use=st.sampled_from(["none", "random"]),
)
def test_sfploadmacro_programs_match_reference(
    config: dict, program: list[int], seed: int, thread: int, use: str
) -> None:
    s = set_up(seed, thread, {"use": use})
    install(s, config)
    ref = MacroRef(s.copy(), thread, COPRO.regs, plain_config(), EXTRA)
    got, first = run_program(thread, program)
    expected = reference_outcome(lambda: reference_run(ref, program, first))
    assert got == expected, (got, expected)
    if got == "retire":
        assert_state(ref)


# ------------------------------------------------------------------------------ hand-worked programs


def fresh(thread: int = 0) -> sfpu.SfpuState:
    """A reset vector unit, zeroed Dst (all rows defined), plain configuration, RWCs at zero."""
    load(0, plain_config(), thread, lambda *args: None, lambda rng, regs: None)
    COPRO.sfpu = sfpu.SfpuState.new(COPRO.arch)
    return COPRO.sfpu


def go(words: list[int], thread: int = 0) -> tuple[int, int]:
    """Run ``words`` from the first free cycle: (the first issue cycle, run_words' end cycle)."""
    engine = TILE.backend
    start = max([engine.cycle, *(p.next_issue for p in engine.pipes), *COPRO.busy_until.values()])
    try:
        return start + FRONTEND.push_to_issue, run_words(TILE, thread, words, cycle=start)
    except Exception:
        for pipe in engine.pipes:
            pipe.words.clear()
            pipe.queue.entries.clear()
            pipe.blocked, pipe.retry_at = None, None
        raise


def config_words(sequence: int, macro: int = 0, misc: int | None = None) -> list[int]:
    """SFPLOADI + SFPCONFIG words writing ``Sequence[macro]`` (through LReg[0]) and ``Misc``."""
    words = [
        ENC("SFPLOADI", lreg_ind=0, instr_mod0=2, imm16=sequence & 0xFFFF),
        ENC("SFPLOADI", lreg_ind=0, instr_mod0=8, imm16=sequence >> 16),
        ENC("SFPCONFIG", imm16_math=0, config_dest=4 + macro, instr_mod1=0),
    ]
    if misc is not None:
        words.append(ENC("SFPCONFIG", imm16_math=misc, config_dest=8, instr_mod1=1))
    return words


def macro_word(macro: int, vd: int, mod0: int, imm9: int) -> int:
    return ENC(
        "SFPLOADMACRO",
        lreg_ind=(macro << 2) | (vd & 3),
        instr_mod0=mod0,
        sfpu_addr_mode=0,
        dest_reg_addr=(imm9 << 1) | (vd >> 2),
    )


def seq_byte(select: int, delay: int, vb_from_load: bool = False, vd16: bool = False) -> int:
    return (vb_from_load << 7) | (vd16 << 6) | (delay << 3) | select


def test_hand_worked_doubling_pipeline() -> None:
    """Four SFPLOADMACROs back to back: load a row group (UINT16), SFPSHFT it left by one into LReg[16]
    two cycles later, store LReg[16] back a cycle after that. The store of macro i and the shift of
    macro i + 1 meet on LReg[16] in one cycle: the store sees the older value."""
    s = fresh()
    values = (np.arange(16 * 16, dtype=np.uint32) * 0x0123 + 7).reshape(16, 16) & 0xFFFF
    COPRO.regs.dst[:16] = values
    shift = ENC("SFPSHFT", imm12_math=1, lreg_c=0, lreg_dest=12, instr_mod1=1)  # backdoor: template 0
    sequence = seq_byte(4, 1, vb_from_load=True, vd16=True) | (seq_byte(3, 2, vd16=True) << 24)
    go([shift, *config_words(sequence, misc=sfpu.FMT_UINT16)])
    assert set(s.macro_template[:, 0].tolist()) == {shift}
    first, end = go([macro_word(0, vd, sfpu.FMT_UINT16, 2 * vd) for vd in range(4)])
    assert end == first + 3 + 3 + 1  # the last store runs three cycles after the last SFPLOADMACRO
    expected = values.copy()
    expected[:, 0::2] = (values[:, 0::2] << 1) & 0xFFFF
    assert COPRO.regs.dst[:16].tolist() == expected.tolist()
    lanes = np.arange(32)
    assert s.lreg[16].tolist() == ((values[12 + lanes // 8, (lanes & 7) * 2] << 1) & 0xFFFFFFFF).tolist()
    assert [s.lreg[vd].tolist() for vd in range(4)] == [
        values[4 * vd + lanes // 8, (lanes & 7) * 2].tolist() for vd in range(4)
    ]
    assert not sfpu_macro.pending(COPRO)


def test_scheduled_sfpmad_adds_one() -> None:
    """The MAD sub-unit with SFPMAD (VA = LReg[10] = 1.0, VB = the loaded value, VC = LReg[10]):
    2.0, 3.5 ... become 3.0, 4.5 ..., stored back as FP32 by the store sub-unit."""
    s = fresh()
    lanes = np.arange(32)
    floats = (2.0 + 1.5 * lanes).astype(np.float32)
    bits32 = floats.view(np.uint32)
    rows = lanes // 8
    cols = (lanes & 7) * 2
    # Dst32b rows 0..3 as SFPSTORE FP32 would leave them
    stored = formats.dst32_from_fp32(bits32)
    high = COPRO.regs.dst32_rows(rows)
    COPRO.regs.dst[high, cols] = (stored >> 16).astype(np.uint16)
    COPRO.regs.dst[high + 8, cols] = (stored & 0xFFFF).astype(np.uint16)
    mad = ENC("SFPMAD", lreg_src_a=10, lreg_src_b=0, lreg_src_c=10, lreg_dest=0, instr_mod1=0)
    s.macro_template[:, 1] = mad
    sequence = (seq_byte(5, 0, vb_from_load=True) << 8) | (seq_byte(3, 2) << 24)
    go(config_words(sequence, misc=sfpu.FMT_FP32))
    first, end = go([macro_word(0, 3, sfpu.FMT_FP32, 0)])
    assert end == first + 3 + 1
    assert s.lreg[3].view(np.float32).tolist() == (floats + 1).tolist()
    got = (COPRO.regs.dst[high, cols].astype(np.uint32) << 16) | COPRO.regs.dst[high + 8, cols]
    assert formats.dst32_to_fp32(got).view(np.float32).tolist() == (floats + 1).tolist()


def test_delays_counted_in_instructions_wait_for_vector_unit_issues() -> None:
    """UnitDelayKind set for the store: its delay 2 counts vector-unit instructions, not cycles; other
    instructions (NOP) do not count, and the work stays scheduled at the end of a run."""
    s = fresh()
    s.lreg[5] = 0x1234
    sequence = seq_byte(3, 2, vb_from_load=True) << 24  # store LReg[VD of the template] = LReg[0]...
    go(config_words(sequence, misc=sfpu.FMT_UINT16 | (0x8 << 8)))
    s.lreg[0] = 0xABCD
    nop, sfpnop = ENC("NOP"), ENC("SFPNOP")
    go([macro_word(0, 5, sfpu.FMT_ZERO, 40), nop, nop, nop, nop])
    assert sfpu_macro.pending(COPRO)  # no vector-unit instruction issued since
    assert COPRO.regs.dst[80].tolist() == [0] * 16
    first, end = go([sfpnop, nop, sfpnop])  # the second SFPNOP counts it to 0: it runs the cycle after
    assert end == first + 2 + 1 + 1
    assert not sfpu_macro.pending(COPRO)
    assert COPRO.regs.dst[80:84, 0::2].tolist() == [[0xABCD] * 8] * 4  # bit 7: the store keeps its VD 0


def test_a_later_sfploadmacro_forgets_work_due_at_the_same_time() -> None:
    """Macro 0 schedules a store with delay 2; macro 1, a cycle later, schedules one with delay 1 on the
    same sub-unit: the first is forgotten, only the second store happens. (The loads read zeros, the
    stores write them back over 0x1111.)"""
    s = fresh()
    go(config_words(seq_byte(3, 2) << 24, 0) + config_words(seq_byte(3, 1) << 24, 1, misc=sfpu.FMT_UINT16))
    COPRO.regs.dst[0:8] = 0x1111
    first, end = go([macro_word(0, 0, sfpu.FMT_ZERO, 0), macro_word(1, 1, sfpu.FMT_ZERO, 2)])
    assert end == first + 1 + 1 + 1 + 1
    assert COPRO.regs.dst[0:4].tolist() == [[0x1111] * 16] * 4  # macro 0's store was forgotten
    assert COPRO.regs.dst[4:8].tolist() == [[0, 0x1111] * 8] * 4
    s.macro_sequence[:, 1] = seq_byte(3, 3) << 24  # due a cycle later: both stores happen
    COPRO.regs.dst[0:8] = 0x1111
    go([macro_word(0, 0, sfpu.FMT_ZERO, 0), macro_word(1, 1, sfpu.FMT_ZERO, 2)])
    assert COPRO.regs.dst[0:8].tolist() == [[0, 0x1111] * 8] * 8
    s.macro_sequence[:, 1] = 0  # Select 0 with delay 0 still forgets (the model's order)
    s.macro_sequence[:, 0] = seq_byte(3, 1) << 24
    COPRO.regs.dst[0:8] = 0x1111
    go([macro_word(0, 0, sfpu.FMT_ZERO, 0), macro_word(1, 1, sfpu.FMT_ZERO, 2)])
    assert COPRO.regs.dst[0:8].tolist() == [[0x1111] * 16] * 8


def test_scheduled_work_discards_a_regular_instruction_on_its_sub_unit() -> None:
    """A scheduled SFPIADD and an issued SFPIADD reach the Simple sub-unit in the same cycle: the
    issued one is silently discarded; an issued SFPLOADI (Load sub-unit) is not."""
    s = fresh()
    add = ENC("SFPIADD", imm12_math=1, lreg_c=0, lreg_dest=0, instr_mod1=5)  # VD = VC + 1, flags kept
    s.macro_template[:, 0] = add
    go(config_words(seq_byte(4, 0)))
    regular = ENC("SFPIADD", imm12_math=100, lreg_c=6, lreg_dest=6, instr_mod1=5)
    loadi = ENC("SFPLOADI", lreg_ind=7, instr_mod0=2, imm16=77)
    go([macro_word(0, 2, sfpu.FMT_ZERO, 0), regular, loadi])
    assert s.lreg[2].tolist() == [1] * 32  # 0 + 1 (scheduled, at the cycle of the regular SFPIADD)
    assert s.lreg[6].tolist() == [0] * 32  # discarded
    assert s.lreg[7].tolist() == [77] * 32
    go([macro_word(0, 2, sfpu.FMT_ZERO, 0), ENC("SFPNOP"), regular])
    assert s.lreg[6].tolist() == [100] * 32  # a cycle later it executes


# ------------------------------------------------------------------------------ hazards


def test_sequence_selector_1_is_undefined() -> None:
    fresh()
    go(config_words(seq_byte(1, 0) << 8))
    with pytest.raises(UndefinedBehavior):
        go([macro_word(0, 0, sfpu.FMT_ZERO, 0)])


def test_sfpnop_on_the_store_sub_unit_is_undefined() -> None:
    s = fresh()
    s.macro_template[:, 2] = ENC("SFPNOT", imm12_math=0, lreg_c=0, lreg_dest=0, instr_mod1=0)
    go(config_words(seq_byte(6, 0) << 24))
    with pytest.raises(UndefinedBehavior):
        go([macro_word(0, 0, sfpu.FMT_ZERO, 0)])
    assert not sfpu_macro.pending(COPRO)


def test_templates_outside_a_column_become_sfpnop() -> None:
    s = fresh()
    s.macro_template[:, 0] = ENC("SFPSTORE", lreg_ind=0, instr_mod0=0, sfpu_addr_mode=0, dest_reg_addr=0)
    go(config_words(seq_byte(4, 0) | (seq_byte(4, 1) << 8) | (seq_byte(4, 2) << 16)))
    go([macro_word(0, 0, sfpu.FMT_ZERO, 0)])
    assert s.macro_pending[:, sfpu_macro.VALID].sum() == 0  # all ran as SFPNOP
    assert COPRO.regs.dst.tolist() == np.zeros_like(COPRO.regs.dst).tolist()


def test_lane_varying_config_is_unimplemented() -> None:
    s = fresh()
    go(config_words(seq_byte(2, 0)))
    s.macro_sequence[5, 0] = 0
    with pytest.raises(Unimplemented):
        go([macro_word(0, 0, sfpu.FMT_ZERO, 0)])


def test_simple_and_round_in_one_cycle_need_exactly_one_vd_16() -> None:
    s = fresh()
    s.macro_template[:, 0] = ENC("SFPNOT", imm12_math=0, lreg_c=0, lreg_dest=0, instr_mod1=0)
    rnd = ENC("SFP_STOCH_RND", rnd_mode=0, imm8_math=0, lreg_src_b=0, lreg_src_c=0, lreg_dest=0, instr_mod1=0)
    s.macro_template[:, 1] = rnd
    go(config_words(seq_byte(4, 0) | (seq_byte(5, 0) << 16)))
    with pytest.raises(UndefinedBehavior):
        go([macro_word(0, 0, sfpu.FMT_ZERO, 0)])
    s = fresh()
    s.macro_template[:, 0] = ENC("SFPNOT", imm12_math=0, lreg_c=0, lreg_dest=0, instr_mod1=0)
    s.macro_template[:, 1] = rnd
    s.lreg[1] = 0x0F0F0F0F
    go(config_words(seq_byte(4, 0, vd16=True) | (seq_byte(5, 0) << 16)))
    go([macro_word(0, 1, sfpu.FMT_LO16_ONLY, 0)])  # (loads zero into the low half)
    assert s.lreg[16].tolist() == [0xF0F0FFFF] * 32


def test_scheduled_sfpswap_keeps_mad_quiet_and_the_next_cycle_free() -> None:
    swap = ENC("SFPSWAP", imm12_math=0, lreg_src_c=0, lreg_dest=14, instr_mod1=1)
    mad = ENC("SFPMAD", lreg_src_a=10, lreg_src_b=0, lreg_src_c=10, lreg_dest=0, instr_mod1=0)
    notw = ENC("SFPNOT", imm12_math=0, lreg_c=0, lreg_dest=1, instr_mod1=0)
    for mad_select, then, fails in (
        (5, [], True),  # SFPMAD on MAD in the same cycle
        (2, [], False),  # SFPNOP there (the page)
        (0, [], False),  # MAD idle (tt-llk's exp kernel)
        (2, [ENC("SFPNOP"), notw], True),  # Simple busy the cycle after
        (2, [ENC("SFPNOP"), ENC("SFPNOP")], False),
        (0, [mad], True),  # an issued MAD instruction in the same cycle
    ):
        s = fresh()
        s.lane_config[:] = sfpu.DISABLE_BACKDOOR_LOAD
        s.macro_template[:, 0], s.macro_template[:, 1] = swap, mad
        go(config_words(seq_byte(4, 0) | (seq_byte(mad_select, 0) << 8) if mad_select else seq_byte(4, 0)))
        program = [macro_word(0, 0, sfpu.FMT_ZERO, 0), *then]
        if fails:
            with pytest.raises(UndefinedBehavior):
                go(program)
        else:
            go(program)


def test_sfploadmacro_operands_beyond_imm10_are_undefined() -> None:
    fresh()
    word = ENC("SFPLOADMACRO", lreg_ind=0, instr_mod0=0, sfpu_addr_mode=0, dest_reg_addr=1 << 10)
    with pytest.raises(UndefinedBehavior):
        go([word])


# ------------------------------------------------------------------------------ LoadMacroConfig


def test_sfpconfig_writes_loadmacroconfig_and_sfpmov_reads_it() -> None:
    s = fresh()
    words = [
        ENC("SFPLOADI", lreg_ind=0, instr_mod0=2, imm16=0x1234),
        ENC("SFPLOADI", lreg_ind=0, instr_mod0=8, imm16=0xDEAD),
        ENC("SFPCONFIG", imm16_math=0, config_dest=2, instr_mod1=1),  # templates ignore IMM16_IS_VALUE
        ENC("SFPCONFIG", imm16_math=0xBEEF, config_dest=7, instr_mod1=1),  # Sequence[3] = Imm16
        ENC("SFPCONFIG", imm16_math=0, config_dest=5, instr_mod1=0),  # Sequence[1] = LReg[0]
        ENC("SFPCONFIG", imm16_math=0xF0F3, config_dest=8, instr_mod1=1),  # Misc = 0x0F3 (12 bits)
        ENC("SFPCONFIG", imm16_math=0x00C, config_dest=8, instr_mod1=1 | 2),  # |= 0x00C
        ENC("SFPCONFIG", imm16_math=0x0F0, config_dest=8, instr_mod1=1 | 6),  # ^= 0x0F0
        ENC("SFPCONFIG", imm16_math=0x5, config_dest=3, instr_mod1=8),  # lane mask: columns 0, 1
    ]
    go(words)
    assert set(s.macro_template[:, 2].tolist()) == {0xDEAD1234}
    assert set(s.macro_sequence[:, 3].tolist()) == {0xBEEF}
    assert set(s.macro_sequence[:, 1].tolist()) == {0xDEAD1234}
    assert set(s.macro_misc.tolist()) == {0x00F}
    col = np.arange(32) & 7
    assert s.macro_template[:, 3].tolist() == np.where(col < 2, 0xDEAD1234, 0).tolist()
    for vc, expected in ((2, 0xDEAD1234), (7, 0xBEEF), (5, 0xDEAD1234), (8, 0x00F)):
        go([ENC("SFPMOV", imm12_math=0, lreg_c=vc, lreg_dest=1, instr_mod1=8)])
        assert set(s.lreg[1].tolist()) == {expected}


def test_backdoor_load_on_the_lanes_that_allow_it() -> None:
    """VD 13 writes the instruction's bits to InstructionTemplate[1] on the columns whose
    DISABLE_BACKDOOR_LOAD is clear; on the others an SFPSTORE with VD 13 stores LReg[13]."""
    s = fresh()
    col = np.arange(32) & 7
    s.lane_config[:] = np.where(col >= 4, sfpu.DISABLE_BACKDOOR_LOAD, 0)
    s.lreg[13] = 0x5555
    store = ENC("SFPSTORE", lreg_ind=13, instr_mod0=sfpu.FMT_UINT16, sfpu_addr_mode=0, dest_reg_addr=0)
    go([store])
    assert s.macro_template[:, 1].tolist() == np.where(col < 4, store, 0).tolist()
    assert COPRO.regs.dst[0:4, 0::2].tolist() == [[0] * 4 + [0x5555] * 4] * 4
    iadd = ENC("SFPIADD", imm12_math=3, lreg_c=0, lreg_dest=15, instr_mod1=1)
    go([iadd])
    assert s.macro_template[:, 3].tolist() == np.where(col < 4, iadd, 0).tolist()
    assert s.lreg[15].tolist() == (2 * np.arange(32)).tolist()  # unchanged (VD 15 is not written)


# ------------------------------------------------------------------------------ the gap after a matrix write


@pytest.mark.parametrize("name", ["SFPLOAD", "SFPLOADMACRO"])
def test_vector_load_waits_three_cycles_after_a_matrix_write(name: str) -> None:
    fresh()
    engine = TILE.backend
    start = max([engine.cycle, *(p.next_issue for p in engine.pipes), *COPRO.busy_until.values()])
    write = start - 1  # the matrix unit wrote rows 8..15 (DstBits) at this cycle
    COPRO.regs.written(np.arange(8, 16), write, MATRIX.dst_write_hidden)
    load_word = (
        ENC("SFPLOAD", lreg_ind=0, instr_mod0=sfpu.FMT_UINT16, sfpu_addr_mode=0, dest_reg_addr=8)
        if name == "SFPLOAD"
        else macro_word(0, 0, sfpu.FMT_UINT16, 4)
    )
    end = run_words(TILE, 0, [load_word], cycle=start)
    assert end == write + SFPU.matrix_write_gap + 1 + 1  # issued SFPU.matrix_write_gap + 1 after
    # rows the matrix unit did not write do not wait; neither do rows the vector unit wrote
    COPRO.regs.written(np.arange(8, 16), end, MATRIX.dst_write_hidden)
    other = ENC("SFPLOAD", lreg_ind=0, instr_mod0=sfpu.FMT_UINT16, sfpu_addr_mode=0, dest_reg_addr=16)
    assert run_words(TILE, 0, [other], cycle=end) == end + FRONTEND.push_to_issue + 1
    store = ENC("SFPSTORE", lreg_ind=0, instr_mod0=sfpu.FMT_UINT16, sfpu_addr_mode=0, dest_reg_addr=24)
    reread = ENC("SFPLOAD", lreg_ind=1, instr_mod0=sfpu.FMT_UINT16, sfpu_addr_mode=0, dest_reg_addr=24)
    start = end + 10
    assert run_words(TILE, 0, [store, reread], cycle=start) == start + FRONTEND.push_to_issue + 2


def test_sfpload_retires_as_the_reference_once_readable() -> None:
    """After the stall the load reads what the matrix unit wrote (the values are not stale)."""
    s = fresh()
    engine = TILE.backend
    start = max([engine.cycle, *(p.next_issue for p in engine.pipes), *COPRO.busy_until.values()])
    COPRO.regs.dst[8:12] = 0x4321
    COPRO.regs.written(np.arange(8, 16), start, MATRIX.dst_write_hidden)
    run_words(
        TILE,
        0,
        [ENC("SFPLOAD", lreg_ind=2, instr_mod0=sfpu.FMT_UINT16, sfpu_addr_mode=0, dest_reg_addr=8)],
        cycle=start,
    )
    assert s.lreg[2].tolist() == [0x4321] * 32


def test_a_vector_instruction_at_cycle_zero_is_not_taken_for_one_after_a_scheduled_swap():
    """At reset no SFPSWAP was scheduled: a simple-unit instruction issued at cycle 0 just runs."""
    from tensixsim import Tile
    from tensixsim.tensix.semantics import Context, lookup

    copro = Tile("blackhole").coprocessor
    word = copro.isa.encode("SFPMOV", imm12_math=0, lreg_c=10, lreg_dest=1, instr_mod1=0)
    ctx = Context(copro, 0, 0, copro.isa.decode(word), "trisc0", 0)
    sfpu_macro.issue(ctx, lookup("blackhole", "SFPMOV"))
    assert int(copro.sfpu.lreg[1, 0]) == 0x3F80_0000  # LReg[10] holds 1.0
