"""Configuration unit: ThreadConfig (SETC16) and the two unit-configuration states (Config).

Functional model: tt-isa-documentation BlackholeA0 BackendConfiguration, ConfigurationUnit, SETC16,
WRCFG, RDCFG, RMWCIB, CFGSHIFTMASK and STREAMWRCFG. Field layouts are data, one module per
architecture (``fields_blackhole.py``, ``fields_wormhole.py``); nothing here spells a field's word or
bits.

- ``Config[state]`` (two states of ``CFG_STATE_SIZE * 4`` 32-bit words) is the thread-agnostic
  configuration. Tensix instructions pick the state with their pipe's ``CFG_STATE_ID_StateID``.
  Words from ``GLOBAL_CFGREG_BASE_ADDR32`` on exist once: a write lands in both states.
- ``ThreadConfig[pipe]`` (``THD_STATE_SIZE`` 16-bit registers per pipe) is written only by SETC16.

An index beyond its array raises UndefinedBehavior, as the pseudocode says. That covers the bits of
an encoding slot wider than the documented operand (WRCFG's 15-bit ``cfg_reg`` holds the u11
CfgIndex, the 8-bit ``gpr_address`` a u6 GPR index, STREAMWRCFG's 3-bit ``stream_id_sel`` a u2):
any of them set puts the index out of range.

Other units read fields by name: ``copro.config.field_for_thread("ALU_FORMAT_SPEC_REG0_SrcA",
thread)`` (a Config field in the thread's current state, or a ThreadConfig field of that thread).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType, ModuleType
from typing import TYPE_CHECKING

import numpy as np

from tensixsim.arch import Arch
from tensixsim.errors import UndefinedBehavior, Unimplemented
from tensixsim.mmio.memory import Access, Register
from tensixsim.tensix.config import fields_blackhole, fields_wormhole
from tensixsim.tensix.semantics import Context, Outcome, Retire, semantics
from tensixsim.tensix.shared_state import SharedArrays
from tensixsim.timing import CONFIG

if TYPE_CHECKING:
    from tensixsim.riscv.core import Core
    from tensixsim.tensix.coprocessor import Coprocessor

MASK32 = 0xFFFF_FFFF
FieldSpec = tuple[int, int, int]  # (word index, lowest bit, width)

# tt-isa-documentation BackendConfiguration: Config and ThreadConfig are mapped into the address
# space of RISCV B / T0 / T1 / T2, not NC (which reaches them only through debug registers).
CORES_WITH_CONFIG = ("brisc", "trisc0", "trisc1", "trisc2")


@dataclass(frozen=True)
class ConfigLayout:
    """One architecture's configuration address map and field table."""

    base: int  # TENSIX_CFG_BASE
    state_words: int  # words per Config state (CFG_STATE_SIZE * 4)
    thread_words: int  # registers per ThreadConfig bank (THD_STATE_SIZE)
    global_base: int  # first word shared by both states (GLOBAL_CFGREG_BASE_ADDR32)
    config_fields: Mapping[str, FieldSpec]
    thread_fields: Mapping[str, FieldSpec]

    @classmethod
    def from_module(cls, data: ModuleType) -> ConfigLayout:
        return cls(
            base=data.TENSIX_CFG_BASE,
            state_words=data.CFG_STATE_SIZE * 4,
            thread_words=data.THD_STATE_SIZE,
            global_base=data.GLOBAL_CFGREG_BASE_ADDR32,
            config_fields=MappingProxyType(dict(data.CONFIG_FIELDS)),
            thread_fields=MappingProxyType(dict(data.THREAD_FIELDS)),
        )

    def config_word(self, name: str) -> int:
        return self.config_fields[name][0]

    # MMIO layout (BackendConfiguration): Config[0], Config[1], ConfigDualWrite, then
    # ThreadConfig[3] as {uint16 Value, uint16 Padding} words, one immediately after the other.
    @property
    def dual_write_offset(self) -> int:
        return 2 * self.state_words * 4

    @property
    def thread_offset(self) -> int:
        return 3 * self.state_words * 4


LAYOUTS: Mapping[str, ConfigLayout] = MappingProxyType(
    {
        "blackhole": ConfigLayout.from_module(fields_blackhole),
        "wormhole": ConfigLayout.from_module(fields_wormhole),
    }
)


def _bits(value: int, spec: FieldSpec) -> int:
    """Field ``spec`` of a lone word ``value``."""
    _, shift, width = spec
    return (value >> shift) & ((1 << width) - 1)


def _extract(words: np.ndarray, spec: FieldSpec) -> int:
    word, shift, width = spec
    if width <= 32:
        return (int(words[word]) >> shift) & ((1 << width) - 1)
    # A wide field starts at bit 0 and spans whole words, lowest word first.
    return sum(int(words[word + i]) << (32 * i) for i in range(width // 32))


def _deposit(old: int, spec: FieldSpec, value: int) -> int:
    _, shift, width = spec
    mask = ((1 << width) - 1) << shift
    return (old & ~mask) | ((value << shift) & mask)


@dataclass
class ConfigState(SharedArrays):
    """Config, ThreadConfig and the unpackers' configuration-context counters."""

    config: np.ndarray  # (2, state_words) uint32: Config[state][word]
    thread: np.ndarray  # (pipes, thread_words) uint16: ThreadConfig[pipe][index].Value
    # Unpackers[u].ContextCounter[pipe] (UNPACR), reset through ThreadConfig by SETC16, so it lives
    # here; the unpack unit reads and increments it.
    unpack_context: np.ndarray  # (2, pipes) uint8
    layout: ConfigLayout = field(compare=False, repr=False)

    @classmethod
    def new(cls, arch: Arch) -> ConfigState:
        layout = LAYOUTS.get(arch.name)
        if layout is None:
            raise Unimplemented(f"no configuration-register layout for {arch.name}")
        return cls(
            config=np.zeros((2, layout.state_words), np.uint32),
            thread=np.zeros((arch.pipe_count, layout.thread_words), np.uint16),
            unpack_context=np.zeros((2, arch.pipe_count), np.uint8),
            layout=layout,
        )

    # ------------------------------------------------------------------ named fields
    def read_field(self, name: str, state: int) -> int:
        """``Config[state].name``."""
        return _extract(self.config[state], self.layout.config_fields[name])

    def write_field(self, name: str, state: int, value: int) -> None:
        """Set ``Config[state].name`` directly (for tests and other units' set-up). Only the field's
        bits change; a global field changes in both states. None of a write's side effects (state
        reset, PRNG seed) happen."""
        word, _, width = spec = self.layout.config_fields[name]
        if not 0 <= value < (1 << width):
            raise ValueError(f"{name} is {width} bits wide; {value:#x} does not fit")
        if width > 32:
            for i in range(width // 32):
                self._set_word(state, word + i, (value >> (32 * i)) & MASK32)
        else:
            self._set_word(state, word, _deposit(int(self.config[state, word]), spec, value))

    def thread_field(self, name: str, thread: int) -> int:
        """``ThreadConfig[thread].name``."""
        return _extract(self.thread[thread], self.layout.thread_fields[name])

    def write_thread_field(self, name: str, thread: int, value: int) -> None:
        """Set ``ThreadConfig[thread].name`` directly (no SETC16 side effects)."""
        word, _, width = spec = self.layout.thread_fields[name]
        if not 0 <= value < (1 << width):
            raise ValueError(f"{name} is {width} bits wide; {value:#x} does not fit")
        self.thread[thread, word] = _deposit(int(self.thread[thread, word]), spec, value)

    def state_id(self, thread: int) -> int:
        """The Config state ``thread``'s instructions use: its CFG_STATE_ID_StateID."""
        return self.thread_field("CFG_STATE_ID_StateID", thread)

    def field_for_thread(self, name: str, thread: int) -> int:
        """Field ``name`` as pipe ``thread`` sees it: a ThreadConfig field of that pipe, or a Config
        field in the state its CFG_STATE_ID selects."""
        if name in self.layout.thread_fields:
            return self.thread_field(name, thread)
        return self.read_field(name, self.state_id(thread))

    # ------------------------------------------------------------------ hardware writes
    def store_word(self, state: int, index: int, value: int, *, via_rmwcib: bool = False) -> None:
        """A write of ``Config[state][index]`` by an instruction or a core, with its effects inside
        the configuration (the caller checked ``index``): a global word lands in both states, and
        any write to STATE_RESET_EN other than RMWCIB's clears the state's non-global words."""
        layout = self.layout
        if index == layout.config_word("STATE_RESET_EN") and not via_rmwcib:
            # BackendConfiguration: "equivalent to an instantaneous Config[i][j] = 0 for every
            # j < GLOBAL_CFGREG_BASE_ADDR32" - the written value itself included.
            self.config[state, : layout.global_base] = 0
            return
        self._set_word(state, index, value)

    def _set_word(self, state: int, index: int, value: int) -> None:
        if index >= self.layout.global_base:
            self.config[:, index] = value
        else:
            self.config[state, index] = value


# ---------------------------------------------------------------------- shared by the instructions
def store_config(
    copro: Coprocessor, state: int | None, index: int, value: int, *, via_rmwcib: bool = False
) -> None:
    """Write ``Config[state][index]`` (both states when ``state`` is None: ConfigDualWrite) as
    hardware does, including the effects outside the configuration."""
    config = copro.config
    for s in (0, 1) if state is None else (state,):
        config.store_word(s, index, value & MASK32, via_rmwcib=via_rmwcib)
    if index == config.layout.config_word("PRNG_SEED_Seed_Val"):
        # Writing the seed (re-)seeds every PRNG: the vector unit's is modelled (copro.seed_prng);
        # the packers' and the matrix unit's stochastic-rounding PRNGs are not.
        seed_prng = getattr(copro, "seed_prng", None)
        if seed_prng is not None:
            seed_prng(value & MASK32)
    # RISCV_IC_INVALIDATE_InvalidateAll needs nothing more than the store: the emulator's cores keep
    # their translated code coherent with L1 at all times (docs/architecture.md, "Code coherence"),
    # so no instruction cache ever holds anything stale to invalidate.


def _check_config_index(ctx: Context, index: int, what: str = "CfgIndex") -> None:
    words = ctx.copro.config.layout.state_words
    if index >= words:
        raise ctx.error(UndefinedBehavior, f"{what} {index} is beyond Config ({words} words)", index)


def _gprs(ctx: Context, index: int, what: str) -> np.ndarray:
    """This pipe's ThCon GPRs (a view), after checking ``index`` names one of them: the operand is
    documented as 6 bits in an 8-bit slot, and the extra bits must be zero."""
    gprs = ctx.copro.thcon.gprs[ctx.thread]
    if index >= len(gprs):
        raise ctx.error(UndefinedBehavior, f"{what} {index} is beyond the {len(gprs)} GPRs", index)
    return gprs


def _rotr(value: int, amount: int) -> int:
    return ((value >> amount) | (value << (32 - amount))) & MASK32


# ---------------------------------------------------------------------- instructions
# SETC16, WRCFG, RDCFG and RMWCIB: Wormhole's pages give the same encoding and functional model, over
# its own field table (BackendConfiguration.md lists the same side effects).
BOTH = ("blackhole", "wormhole")


@semantics("SETC16", arches=BOTH)
def setc16(ctx: Context, setc16_reg: int, setc16_value: int) -> Outcome:
    config = ctx.copro.config
    layout = config.layout
    if setc16_reg >= layout.thread_words:
        raise ctx.error(
            UndefinedBehavior,
            f"CfgIndex {setc16_reg} is beyond ThreadConfig ({layout.thread_words})",
            setc16_reg,
        )
    reset_spec = {u: layout.thread_fields[f"UNPACK_MISC_CFG_CfgContextCntReset_{u}"] for u in (0, 1)}
    resets_context = setc16_reg == reset_spec[0][0]
    if resets_context:
        for name in ("CfgContextCntReset_metadata", "CfgContextCntReset_metadata_zstart"):
            spec = layout.thread_fields.get(f"UNPACK_MISC_CFG_{name}")  # (Blackhole only)
            if spec is not None and _bits(setc16_value, spec):
                raise ctx.error(
                    Unimplemented, f"UNPACK_MISC_CFG_{name}: metadata context counters are not modelled"
                )
    config.thread[ctx.thread, setc16_reg] = setc16_value
    if resets_context:
        # BackendConfiguration: this write resets the pipe's unpacker configuration-context counters.
        # Which ones is not spelled out; we reset unpacker u's when its CfgContextCntReset_u bit is
        # set in the written value, as LLK uses it (it writes offsets alone without resetting).
        for unpacker, spec in reset_spec.items():
            if _bits(setc16_value, spec):
                config.unpack_context[unpacker, ctx.thread] = 0
    return Retire(CONFIG.setc16)


@semantics("WRCFG", arches=BOTH)
def wrcfg(ctx: Context, gpr_address: int, wr128b: int, cfg_reg: int) -> Outcome:
    _check_config_index(ctx, cfg_reg)
    gpr = _gprs(ctx, gpr_address, "InputReg")
    state = ctx.copro.config.state_id(ctx.thread)
    if wr128b:
        # Four words, both indices rounded down to a multiple of four (neither can cross the end:
        # both sizes are multiples of four). Written in order, so a STATE_RESET_EN among them
        # clears what was written before it (the documentation leaves the order open).
        values = [int(v) for v in gpr[gpr_address & ~3 : (gpr_address & ~3) + 4]]
        for i, value in enumerate(values):
            store_config(ctx.copro, state, (cfg_reg & ~3) + i, value)
    else:
        store_config(ctx.copro, state, cfg_reg, int(gpr[gpr_address]))
    return Retire(CONFIG.wrcfg)


@semantics("RDCFG", arches=BOTH)
def rdcfg(ctx: Context, gpr_address: int, cfg_reg: int) -> Outcome:
    _check_config_index(ctx, cfg_reg)
    gpr = _gprs(ctx, gpr_address, "ResultReg")
    config = ctx.copro.config
    gpr[gpr_address] = config.config[config.state_id(ctx.thread), cfg_reg]
    return Retire(CONFIG.rdcfg)


def _rmwcib(ctx: Context, byte: int, mask: int, data: int, index: int) -> Outcome:
    _check_config_index(ctx, index, "Index4")
    config = ctx.copro.config
    state = config.state_id(ctx.thread)
    old = int(config.config[state, index])
    shift = 8 * byte
    old_byte = (old >> shift) & 0xFF
    new_byte = (data & mask) | (old_byte & ~mask & 0xFF)
    store_config(ctx.copro, state, index, (old & ~(0xFF << shift)) | (new_byte << shift), via_rmwcib=True)
    return Retire(CONFIG.rmwcib)


@semantics("RMWCIB0", arches=BOTH)
def rmwcib0(ctx: Context, mask: int, data: int, cfg_reg_addr: int) -> Outcome:
    return _rmwcib(ctx, 0, mask, data, cfg_reg_addr)


@semantics("RMWCIB1", arches=BOTH)
def rmwcib1(ctx: Context, mask: int, data: int, cfg_reg_addr: int) -> Outcome:
    return _rmwcib(ctx, 1, mask, data, cfg_reg_addr)


@semantics("RMWCIB2", arches=BOTH)
def rmwcib2(ctx: Context, mask: int, data: int, cfg_reg_addr: int) -> Outcome:
    return _rmwcib(ctx, 2, mask, data, cfg_reg_addr)


@semantics("RMWCIB3", arches=BOTH)
def rmwcib3(ctx: Context, mask: int, data: int, cfg_reg_addr: int) -> Outcome:
    return _rmwcib(ctx, 3, mask, data, cfg_reg_addr)


@semantics("CFGSHIFTMASK")
def cfgshiftmask(
    ctx: Context,
    disable_mask_on_old_val: int,
    operation: int,
    mask_width: int,
    right_cshift_amt: int,
    scratch_sel: int,
    cfg_reg: int,
) -> Outcome:
    _check_config_index(ctx, cfg_reg)
    config = ctx.copro.config
    state = config.state_id(ctx.thread)
    scratch_index = scratch_sel if scratch_sel < 3 else ctx.thread
    scratch = config.read_field(f"SCRATCH_SEC{scratch_index}_val", state)
    mask = ((2 << mask_width) - 1) & MASK32
    scratch = _rotr(scratch & mask, right_cshift_amt)
    value = int(config.config[state, cfg_reg])
    if not disable_mask_on_old_val:
        value &= ~_rotr(mask, right_cshift_amt)
    match operation:
        case 0:
            value |= scratch
        case 1:
            value &= scratch
        case 2:
            value ^= scratch
        case 3:
            value += scratch
        case 4:
            value |= ~scratch
        case 5:
            value &= ~scratch
        case 6:
            value ^= ~scratch
        case _:
            value -= scratch
    store_config(ctx.copro, state, cfg_reg, value & MASK32)
    return Retire(CONFIG.cfgshiftmask)


@semantics("STREAMWRCFG")
def streamwrcfg(ctx: Context, stream_id_sel: int, stream_reg_addr: int, cfg_reg: int) -> Outcome:
    _check_config_index(ctx, cfg_reg)
    config = ctx.copro.config
    name = f"STREAM_ID_SYNC_SEC{stream_id_sel}_BankSel"
    if name not in config.layout.thread_fields:
        # StreamSelect is two bits; the encoding slot has a third the documentation does not give.
        raise ctx.error(
            UndefinedBehavior, f"StreamSelect {stream_id_sel} names no STREAM_ID_SYNC_SEC", stream_id_sel
        )
    stream = config.thread_field(name, ctx.thread)
    value = ctx.copro.tile.streams.read(stream, stream_reg_addr)
    store_config(ctx.copro, config.state_id(ctx.thread), cfg_reg, value)
    return Retire(CONFIG.streamwrcfg)


# ---------------------------------------------------------------------- MMIO
def mmio_registers(copro: Coprocessor, core: Core) -> dict[int, Register]:
    """This unit's registers as ``core`` sees them: absolute address -> Register.

    BackendConfiguration: at TENSIX_CFG_BASE, Config[0], Config[1], ConfigDualWrite (a write goes to
    both states, a read returns Config[0]) and ThreadConfig[3] (read-only: RISC-V cannot store to
    it), for BRISC and the TRISCs only. Loads may be 8, 16 or 32 bits wide, stores only 32 (the
    page's table of RISC-V accesses).
    """
    if core.facts.name not in CORES_WITH_CONFIG:
        return {}
    cached = getattr(copro, "_config_registers", None)
    if cached is not None:  # every core with a view sees the same registers: built once per tile
        return cached
    layout = copro.config.layout
    registers: dict[int, Register] = {}
    copro._config_registers = registers
    # Handlers look copro.config up on every access, so replacing the state (a restored snapshot)
    # needs no new registers. Coprocessor instructions change them too: a poll is watched as such
    # (Coprocessor.mmio_regions would otherwise copy every register of every core's view to say so).

    def stored(state: int | None, index: int):
        def write(access: Access, value: int) -> None:
            store_config(copro, state, index, value)
            copro.state_changed(access.cycle)

        return write

    for index in range(layout.state_words):
        for state in (0, 1):
            registers[layout.base + (state * layout.state_words + index) * 4] = Register(
                f"Config[{state}][{index}]",
                read=lambda _, s=state, i=index: int(copro.config.config[s, i]),
                write=stored(state, index),
                watch="coprocessor",
                narrow_loads=True,
            )
        registers[layout.base + layout.dual_write_offset + index * 4] = Register(
            f"ConfigDualWrite[{index}]",
            read=lambda _, i=index: int(copro.config.config[0, i]),
            write=stored(None, index),
            watch="coprocessor",
            narrow_loads=True,
        )
    for pipe in range(copro.threads):
        for index in range(layout.thread_words):
            address = layout.base + layout.thread_offset + (pipe * layout.thread_words + index) * 4
            registers[address] = Register(
                f"ThreadConfig[{pipe}][{index}]",
                read=lambda _, p=pipe, i=index: int(copro.config.thread[p, i]),  # Padding reads 0
                watch="coprocessor",
                narrow_loads=True,
            )
    return registers
