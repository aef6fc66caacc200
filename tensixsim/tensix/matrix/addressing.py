"""How a matrix-unit instruction's AddrMod operand advances the RWCs, on each chip.

RWCs.md's ``ApplyAddrMod`` (adc.py) takes Wormhole's two AddrMod bits: they name ADDR_MOD slot
``AddrMod``, or ``AddrMod + 4`` while the RWC's ExtraAddrModBit or ThreadConfig's ADDR_MOD_SET_Base is
set. Blackhole's instructions carry three bits that name the slot directly; how ExtraAddrModBit and the
AB2 bits act there is undocumented, and ``adc.apply_addr_mod`` raises Unimplemented for them. The
matrix unit's instruction bodies are shared by both chips and take one :class:`AddrModRule`, so this
difference of their encodings is data.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING

from tensixsim.errors import Unimplemented
from tensixsim.tensix.adc import (
    AddrMod,
    Rwcs,
    addr_mod,
    addr_mod_problem,
    apply_addr_mod,
    apply_addr_mod_wormhole,
    read_rwcs,
    wormhole_addr_mod_index,
)
from tensixsim.tensix.semantics import Context

if TYPE_CHECKING:
    from tensixsim.tensix.coprocessor import Coprocessor


@dataclass(frozen=True)
class AddrModRule:
    """One chip's AddrMod operand: its documented width, how it names a slot, and ApplyAddrMod."""

    bits: int  # the operand's documented width; other set bits of its slot are undefined
    banked: bool  # ExtraAddrModBit / ADDR_MOD_SET_Base select slots 4..7 (Wormhole)
    apply: Callable[[Context, int], None]  # adc's ApplyAddrMod for this chip

    def operand(self, ctx: Context, name: str, value: int) -> int:
        """The AddrMod held in operand slot ``name``."""
        return ctx.documented(name, value, self.bits)

    def set_base(self, copro: Coprocessor, thread: int) -> int:
        """ThreadConfig's ADDR_MOD_SET_Base where the chip has it, else 0."""
        return copro.config.thread_field("ADDR_MOD_SET_Base", thread) if self.banked else 0

    def index(self, rwcs: Rwcs, addr_mode: int, set_base: int) -> int:
        """The ADDR_MOD slot AddrMod ``addr_mode`` names from ``rwcs``."""
        return wormhole_addr_mod_index(rwcs, addr_mode, set_base) if self.banked else addr_mode

    def problem(self, rwcs: Rwcs, mod: AddrMod, index: int) -> str | None:
        """Why ApplyAddrMod of slot ``index`` (``mod``) is unimplemented from ``rwcs`` (None: it is not)."""
        if self.banked:
            rwcs = rwcs._replace(extra_addr_mod_bit=0)  # documented: it chose the slot
        return addr_mod_problem(rwcs, mod, index)

    def check(self, ctx: Context, addr_mode: int) -> None:
        """Raise now, before anything changes, if ApplyAddrMod would be unimplemented."""
        copro, thread = ctx.copro, ctx.thread
        rwcs = read_rwcs(copro.adc, thread)
        index = self.index(rwcs, addr_mode, self.set_base(copro, thread))
        problem = self.problem(rwcs, addr_mod(copro, thread, index), index)
        if problem is not None:
            raise ctx.error(Unimplemented, problem)


BLACKHOLE = AddrModRule(bits=3, banked=False, apply=apply_addr_mod)
WORMHOLE = AddrModRule(bits=2, banked=True, apply=apply_addr_mod_wormhole)
RULES: Mapping[str, AddrModRule] = MappingProxyType({"blackhole": BLACKHOLE, "wormhole": WORMHOLE})
