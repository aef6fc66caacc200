"""Shared harness for the matrix-unit tests: reference state, random set-up and the state comparison.

``RefState`` holds the pages' state as Python lists (SrcA / SrcB banks and clients, DstBits with its
undefined rows, the RWCs) with BlackholeA0 Dst.md's Adj16 / Adj32 views and RWCs.md's ApplyAddrMod.
``load`` puts random register contents and a configuration into a shared Tile's coprocessor and
returns a reference built from the same state; ``check`` runs one instruction word on both and
compares the outcome kind ('retire', 'wait', 'undefined', 'unimplemented') and, after a retire, the
whole state (after anything else, that nothing changed); the configuration never changes.
``property_test`` makes the Hypothesis test of one instruction from a word strategy and a check.
They run on the shared Blackhole tile unless given another chip's coprocessor (``copro=``): a
configuration then may only set the fields that chip has (Wormhole: no ``remap`` / ``swizzle`` /
AB2 slots; ``ADDR_MOD_SET_Base`` is Wormhole's only).
"""

# The reference keeps the documentation's names so it reads like the pseudocode.
# ruff: noqa: N802, N803, N806

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from dst_reference import Adj16, Adj32
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from outcomes import RefUnimplemented, emulator_outcome, reference_outcome

from tensixsim import Tile
from tensixsim.isa.spec import IsaTable
from tensixsim.tensix.coprocessor import Coprocessor
from tensixsim.tensix.matrix import moves
from tensixsim.tensix.regs import RegFiles
from tensixsim.tensix.semantics import Context, Retire, Wait, lookup

TILE = Tile("blackhole")
COPRO = TILE.coprocessor
ISA = COPRO.isa
SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
MATRIX, UNPACKERS = 0, 1  # SrcClient values as regs.py stores them

FP32, FP16, BFP8a, BFP4a, TF32, BF16, BFP8, BFP4 = range(8)
INT32, INT16, FP8, BFP2a, INT8, BFP2 = 8, 9, 10, 11, 14, 15


def execute(word: int, thread: int, cycle: int = 0, copro: Coprocessor = COPRO):
    """One instruction's semantics on ``copro`` (the shared tile's by default), outside the pipeline."""
    ctx = Context(copro, thread, cycle, copro.isa.decode(word), f"trisc{thread}", 0)
    return lookup(copro.arch.name, ctx.instruction.name)(ctx, **ctx.instruction.fields)


class RefState:
    """The pages' state as lists; Dst's Undefined as a set of DstBits rows."""

    def __init__(self, regs: RegFiles, config: dict, thread: int):
        self.SrcA = [[[int(v) for v in row] for row in regs.srca[b]] for b in range(2)]
        self.SrcB = [[[int(v) for v in row] for row in regs.srcb[b]] for b in range(2)]
        self.SrcAClient = [int(regs.src_client[0, b]) for b in range(2)]
        self.SrcBClient = [int(regs.src_client[1, b]) for b in range(2)]
        self.SrcABank, self.SrcBBank = int(regs.matrix_bank[0]), int(regs.matrix_bank[1])
        self.UnpackerBank = [int(regs.unpacker_bank[u]) for u in range(2)]
        self.DstBits = [[int(v) for v in row] for row in regs.dst]
        self.Undefined = {r for r in range(1024) if not regs.dst_row_valid[r]}
        self.c = config
        self.RWC = dict(config["rwc"])
        self.Blocked = config["blocked"]
        self.waited = False
        self.acceptable: set[str] = set()  # other outcomes the pages leave equally possible
        self.thread = thread

    # Dst views (BlackholeA0 Dst.md), undefined rows reading as zero.
    def Dst16Read(self, Row: int, Col: int) -> int:
        a = Adj16(Row, self.c["remap"])
        return 0 if a in self.Undefined else self.DstBits[a][Col]

    def Dst32Read(self, Row: int, Col: int) -> int:
        a = Adj32(Row, self.c["remap"], self.c["swizzle"])
        if a in self.Undefined or a + 8 in self.Undefined:
            return 0
        return (self.DstBits[a][Col] << 16) | self.DstBits[a + 8][Col]

    def Dst16Define(self, Row: int) -> None:
        """A written row becomes defined; its other columns keep what a reader saw."""
        seen = [self.Dst16Read(Row, col) for col in range(16)]
        a = Adj16(Row, self.c["remap"])
        self.DstBits[a] = seen
        self.Undefined.discard(a)

    def Dst32Define(self, Row: int) -> None:
        seen = [self.Dst32Read(Row, col) for col in range(16)]
        a = Adj32(Row, self.c["remap"], self.c["swizzle"])
        self.DstBits[a] = [v >> 16 for v in seen]
        self.DstBits[a + 8] = [v & 0xFFFF for v in seen]
        self.Undefined -= {a, a + 8}

    def Dst16Write(self, Row: int, Col: int, Val: int) -> None:
        self.DstBits[Adj16(Row, self.c["remap"])][Col] = Val & 0xFFFF

    def Dst32Write(self, Row: int, Col: int, Val: int) -> None:
        a = Adj32(Row, self.c["remap"], self.c["swizzle"])
        self.DstBits[a][Col] = (Val >> 16) & 0xFFFF
        self.DstBits[a + 8][Col] = Val & 0xFFFF

    def SrcAFmt(self) -> int:
        c = self.c
        return c["SrcA_val"] if c["SrcA_override"] else c["REG0_SrcA"]

    def ApplyAddrMod(self, Index: int) -> None:
        """Blackhole: the three AddrMod bits name the slot; ExtraAddrModBit and AB2 undocumented."""
        RWC, m = self.RWC, self.c["addr_mods"][Index]
        if RWC["ExtraAddrModBit"] or m["AB2_SrcAIncr"] or m["AB2_SrcBIncr"]:
            raise RefUnimplemented
        self.AdvanceRWCs(m)

    def AdvanceRWCs(self, m: dict) -> None:
        """RWCs.md ApplyAddrMod from the point where the slot ``m`` is chosen."""
        RWC = self.RWC
        if m["SrcAClear"]:
            RWC["SrcA"] = RWC["SrcA_Cr"] = 0
        elif m["SrcACR"]:
            RWC["SrcA_Cr"] = (RWC["SrcA_Cr"] + m["SrcAIncr"]) % 64
            RWC["SrcA"] = RWC["SrcA_Cr"]
        else:
            RWC["SrcA"] = (RWC["SrcA"] + m["SrcAIncr"]) % 64
        if m["SrcBClear"]:
            RWC["SrcB"] = RWC["SrcB_Cr"] = 0
        elif m["SrcBCR"]:
            RWC["SrcB_Cr"] = (RWC["SrcB_Cr"] + m["SrcBIncr"]) % 64
            RWC["SrcB"] = RWC["SrcB_Cr"]
        else:
            RWC["SrcB"] = (RWC["SrcB"] + m["SrcBIncr"]) % 64
        if m["DestClear"]:
            RWC["Dst"] = RWC["Dst_Cr"] = 0
        elif m["DestCToCR"]:
            RWC["Dst"] = (RWC["Dst"] + m["DestIncr"]) % 1024
            RWC["Dst_Cr"] = RWC["Dst"]
        elif m["DestCR"]:
            RWC["Dst_Cr"] = (RWC["Dst_Cr"] + m["DestIncr"]) % 1024
            RWC["Dst"] = RWC["Dst_Cr"]
        else:
            RWC["Dst"] = (RWC["Dst"] + m["DestIncr"]) % 1024
        if m["FidelityClear"]:
            RWC["FidelityPhase"] = 0
        else:
            RWC["FidelityPhase"] = (RWC["FidelityPhase"] + m["FidelityIncr"]) % 4
        if m["BiasClear"]:
            RWC["ExtraAddrModBit"] = 0
        elif m["BiasIncr"] & 3:
            RWC["ExtraAddrModBit"] = (RWC["ExtraAddrModBit"] + 1) % 2


# ---------------------------------------------------------------------------- set-up

RWC_NAMES = {
    "SrcA": "srca",
    "SrcA_Cr": "srca_cr",
    "SrcB": "srcb",
    "SrcB_Cr": "srcb_cr",
    "Dst": "dst",
    "Dst_Cr": "dst_cr",
    "FidelityPhase": "fidelity_phase",
    "ExtraAddrModBit": "extra_addr_mod_bit",
}
AB_FIELDS = {"SrcAIncr": 6, "SrcACR": 1, "SrcAClear": 1, "SrcBIncr": 6, "SrcBCR": 1, "SrcBClear": 1}
DST_FIELDS = {
    "DestIncr": 10,
    "DestCR": 1,
    "DestClear": 1,
    "DestCToCR": 1,
    "FidelityIncr": 2,
    "FidelityClear": 1,
}
BIAS_FIELDS = {"BiasIncr": 4, "BiasClear": 1}
# ThreadConfig fields some tests set; absent from a configuration means zero.
THREAD_FIELDS = {
    "FIDELITY_BASE_Phase": "FIDELITY_BASE",
    "CLR_DVALID_SrcA_Disable": "CLR_DVALID_SrcA_Disable",
    "CLR_DVALID_SrcB_Disable": "CLR_DVALID_SrcB_Disable",
    "ADDR_MOD_SET_Base": "ADDR_MOD_SET_Base",  # Wormhole only
}


def rare(value: int = 1) -> st.SearchStrategy[int]:
    return st.sampled_from([0] * 15 + [value])


@st.composite
def addr_mods(draw) -> dict:
    m = {name: draw(st.integers(0, (1 << w) - 1)) for name, w in (AB_FIELDS | DST_FIELDS).items()}
    m |= {"BiasIncr": draw(rare(1)), "BiasClear": draw(st.integers(0, 1))}
    m |= {"AB2_SrcAIncr": draw(rare()), "AB2_SrcBIncr": draw(rare())}
    return m


# The configuration that places and sizes Dst rows (Dst.md's views, DEST_TARGET_REG_CFG_MATH_Offset,
# DEST_REGW_BASE): strategies by configuration key.
DST_ADDRESSING = {
    "remap": st.booleans(),
    "swizzle": st.booleans(),
    "Fp32_enabled": st.integers(0, 1),
    "INT8_math_enabled": st.integers(0, 1),
    "MATH_Offset": st.integers(0, 4095),
    "DEST_REGW_BASE": st.integers(0, 0xFFFF),
}


@st.composite
def configurations(draw) -> dict:
    return {key: draw(strategy) for key, strategy in DST_ADDRESSING.items()} | {
        "SrcA_override": draw(st.integers(0, 1)),
        "SrcA_val": draw(st.integers(0, 15)),
        "REG0_SrcA": draw(st.integers(0, 15)),
        "FP16A_FORCE_Enable": draw(st.sampled_from([0, 0, 0, 1])),
        "Zero_Flag_disabled_src": draw(st.integers(0, 1)),
        "state": draw(st.integers(0, 1)),
        "addr_mods": draw(st.lists(addr_mods(), min_size=8, max_size=8)),
        "rwc": {
            "SrcA": draw(st.integers(0, 63)),
            "SrcA_Cr": draw(st.integers(0, 63)),
            "SrcB": draw(st.integers(0, 63)),
            "SrcB_Cr": draw(st.integers(0, 63)),
            "Dst": draw(st.integers(0, 1023)),
            "Dst_Cr": draw(st.integers(0, 1023)),
            "FidelityPhase": draw(st.integers(0, 3)),
            "ExtraAddrModBit": draw(rare()),
        },
        "blocked": draw(st.one_of(st.just([False] * 16), st.lists(st.booleans(), min_size=16, max_size=16))),
    }


def plain_config(**changes) -> dict:
    config = {
        "remap": False,
        "swizzle": False,
        "Fp32_enabled": 0,
        "INT8_math_enabled": 0,
        "MATH_Offset": 0,
        "DEST_REGW_BASE": 0,
        "SrcA_override": 0,
        "SrcA_val": 0,
        "REG0_SrcA": BF16,
        "FP16A_FORCE_Enable": 0,
        "Zero_Flag_disabled_src": 1,
        "state": 0,
        "addr_mods": [
            dict.fromkeys(
                list(AB_FIELDS) + list(DST_FIELDS) + list(BIAS_FIELDS) + ["AB2_SrcAIncr", "AB2_SrcBIncr"], 0
            )
            for _ in range(8)
        ],
        "rwc": dict.fromkeys(RWC_NAMES, 0),
        "blocked": [False] * 16,
    }
    return config | changes


def random_fill(rng: np.random.Generator, regs: RegFiles) -> None:
    """Uniformly random Src and Dst bits, a fifth of the Src data with zero exponents."""
    for src in (regs.srca, regs.srcb):
        src[:] = rng.integers(0, 1 << 19, src.shape)
        src[rng.random(src.shape) < 0.2] &= np.uint32(0x7FF00)  # zero exponents: the flush path
    regs.src_client[:] = rng.choice([MATRIX, MATRIX, MATRIX, UNPACKERS], (2, 2))
    regs.matrix_bank[:] = rng.integers(0, 2, 2)
    regs.unpacker_bank[:] = rng.integers(0, 2, 2)
    regs.dst[:] = rng.integers(0, 1 << 16, regs.dst.shape)
    regs.dst_row_valid[:] = rng.random(1024) < 0.8


Fill = Callable[[np.random.Generator, RegFiles], None]
MakeRef = Callable[[RegFiles, dict, int], RefState]


def load(
    seed: int,
    config: dict,
    thread: int,
    ref_class: MakeRef = RefState,
    fill: Fill = random_fill,
    *,
    copro: Coprocessor = COPRO,
) -> RefState:
    """Random register contents (``fill``) and the configuration given, in ``copro``; a reference
    (``ref_class(regs, config, thread)``) over the same state."""
    rng = np.random.default_rng(seed)
    regs = RegFiles.new(copro.arch)
    fill(rng, regs)
    copro.regs = regs
    cfg = copro.config
    cfg.config[:] = 0
    cfg.thread[:] = 0
    layout = cfg.layout

    def write_field(name: str, state: int, value: int) -> None:
        if name in layout.config_fields:
            cfg.write_field(name, state, value)
        elif value:  # a field this chip does not have can only be zero
            raise ValueError(f"{copro.arch.name} has no {name} to set to {value}")

    def write_thread_field(name: str, value: int) -> None:
        if name in layout.thread_fields:
            cfg.write_thread_field(name, thread, value)
        elif value:
            raise ValueError(f"{copro.arch.name} has no {name} to set to {value}")

    state = config["state"]
    for name, key in (
        ("DEST_ACCESS_CFG_remap_addrs", "remap"),
        ("DEST_ACCESS_CFG_swizzle_32b", "swizzle"),
        ("ALU_ACC_CTRL_Fp32_enabled", "Fp32_enabled"),
        ("ALU_ACC_CTRL_INT8_math_enabled", "INT8_math_enabled"),
        ("ALU_ACC_CTRL_Zero_Flag_disabled_src", "Zero_Flag_disabled_src"),
        ("DEST_REGW_BASE_Base", "DEST_REGW_BASE"),
        ("ALU_FORMAT_SPEC_REG_SrcA_override", "SrcA_override"),
        ("ALU_FORMAT_SPEC_REG_SrcA_val", "SrcA_val"),
        ("ALU_FORMAT_SPEC_REG0_SrcA", "REG0_SrcA"),
    ):
        write_field(name, state, int(config[key]))
    write_thread_field("CFG_STATE_ID_StateID", state)
    write_thread_field("DEST_TARGET_REG_CFG_MATH_Offset", config["MATH_Offset"])
    write_thread_field("FP16A_FORCE_Enable", config["FP16A_FORCE_Enable"])
    for name, key in THREAD_FIELDS.items():
        write_thread_field(name, int(config.get(key, 0)))
    for slot, m in enumerate(config["addr_mods"]):
        for kind, names in (("AB", AB_FIELDS), ("DST", DST_FIELDS), ("BIAS", BIAS_FIELDS)):
            for name in names:
                write_thread_field(f"ADDR_MOD_{kind}_SEC{slot}_{name}", m[name])
        for name in ("SrcAIncr", "SrcBIncr"):
            write_thread_field(f"ADDR_MOD_AB2_SEC{slot}_{name}", m[f"AB2_{name}"])
    adc = copro.adc
    for attr in RWC_NAMES.values():
        getattr(adc, attr)[:] = 0
    for key, attr in RWC_NAMES.items():
        getattr(adc, attr)[thread] = config["rwc"][key]
    return ref_class(regs, config, thread)


def assert_matches(ref: RefState, copro: Coprocessor = COPRO) -> None:
    regs = copro.regs
    assert regs.srca.tolist() == ref.SrcA
    assert regs.srcb.tolist() == ref.SrcB
    assert regs.src_client.tolist() == [ref.SrcAClient, ref.SrcBClient]
    assert regs.matrix_bank.tolist() == [ref.SrcABank, ref.SrcBBank]
    assert regs.unpacker_bank.tolist() == ref.UnpackerBank
    assert {r for r in range(1024) if not regs.dst_row_valid[r]} == ref.Undefined
    got = regs.dst.tolist()
    accept = getattr(ref, "accept_dst", None)  # a reference may declare some differences equivalent
    if accept is not None:
        accept(got)
    if got != ref.DstBits:
        wrong = [(r, c, got[r][c], ref.DstBits[r][c]) for r in range(1024) for c in range(16)]
        wrong = [w for w in wrong if w[2] != w[3]]
        raise AssertionError(
            f"{len(wrong)} Dst bits differ (DstBits row, column, got, expected): "
            + ", ".join(f"({r}, {c}, {g:#06x}, {e:#06x})" for r, c, g, e in wrong[:8])
        )
    for key, attr in RWC_NAMES.items():
        values = getattr(copro.adc, attr).tolist()
        assert values[ref.thread] == ref.RWC[key], key
        assert values[: ref.thread] + values[ref.thread + 1 :] == [0, 0]


def check(
    name: str,
    word: int,
    seed: int,
    config: dict,
    thread: int,
    ref_class: MakeRef,
    fill: Fill = random_fill,
    *,
    cycles: int | None = None,
    copro: Coprocessor = COPRO,
) -> str:
    """Run ``word`` on the emulator (``copro``) and on ``ref_class``'s method ``name``; compare
    everything. With ``cycles``, a retire must also be ``Retire(cycles)``."""
    ref = load(seed, config, thread, ref_class, fill, copro=copro)
    before = copro.regs.copy()
    rwcs_before = {attr: getattr(copro.adc, attr).copy() for attr in RWC_NAMES.values()}
    config_before = (copro.config.config.copy(), copro.config.thread.copy())
    expected = reference_outcome(lambda: getattr(ref, name)(word))
    if expected == "retire" and ref.waited:
        expected = "wait"
    waited = []
    retired = []

    def run():
        outcome = execute(word, thread, copro=copro)
        if isinstance(outcome, Wait):
            waited.append(outcome)
            return Retire()
        retired.append(outcome)
        return outcome

    saved = moves.blocked_columns
    moves.blocked_columns = lambda copro: np.array(config["blocked"], bool)
    try:
        got = emulator_outcome(run)
    finally:
        moves.blocked_columns = saved
    if waited:
        got = "wait"
    assert got == expected or (expected in ref.acceptable and got in ref.acceptable), (got, expected)
    if got == "retire":
        if cycles is not None:
            assert retired == [Retire(cycles)]
        assert_matches(ref, copro)
    else:  # nothing changed
        assert copro.regs.equals(before)
        for attr, values in rwcs_before.items():
            assert np.array_equal(getattr(copro.adc, attr), values)
    assert np.array_equal(copro.config.config, config_before[0])
    assert np.array_equal(copro.config.thread, config_before[1])
    return got


def words(
    name: str, fields: dict[str, st.SearchStrategy[int]], isa: IsaTable = ISA
) -> st.SearchStrategy[int]:
    """Words of ``name`` (in ``isa``) with each table field drawn from ``fields``, the others from any
    value."""
    spec = isa.by_name[name]
    return st.fixed_dictionaries(
        {f.name: fields.get(f.name, st.integers(0, (1 << f.width) - 1)) for f in spec.fields}
    ).map(lambda values: isa.encode(name, **values))


def mostly(documented: st.SearchStrategy[int], width: int, weight: int = 7) -> st.SearchStrategy[int]:
    """``documented`` ``weight`` times in ``weight + 1``, otherwise any value of a ``width``-bit slot."""
    return st.one_of(*[documented] * weight, st.integers(0, (1 << width) - 1))


SEEDS = st.integers(0, 2**32 - 1)
THREADS = st.integers(0, 2)


def property_test(
    name: str,
    word_strategy: st.SearchStrategy[int],
    config_strategy: st.SearchStrategy[dict],
    run: Callable[[str, int, int, dict, int], object],
    test_settings: settings = SETTINGS,
) -> Callable[..., None]:
    """``test_<name>_matches_reference``: ``run(name, word, seed, config, thread)`` over drawn words,
    seeds, configurations and threads."""

    @test_settings
    @given(word=word_strategy, seed=SEEDS, config=config_strategy, thread=THREADS)
    def test(word: int, seed: int, config: dict, thread: int) -> None:
        run(name, word, seed, config, thread)

    test.__name__ = test.__qualname__ = f"test_{name.lower()}_matches_reference"
    return test
