"""The emulator's exceptions.

Every error the emulator raises is a :class:`SimError`. It names the core (or pipe), the program
counter, the cycle and the offending value where those are known, so that a failing kernel can be
located without a debugger. The emulator never kills the host process: even a runaway or deadlocked
program ends in one of these exceptions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


def hex_address(address: int) -> str:
    """An address as 0x%08x; a negative one keeps its sign in front (-0x00000004)."""
    return f"-0x{-address:08x}" if address < 0 else f"0x{address:08x}"


class SimError(Exception):
    """Base of all emulator errors."""

    def __init__(
        self,
        message: str,
        *,
        core: str | None = None,
        pc: int | None = None,
        cycle: int | None = None,
        value: int | None = None,
    ) -> None:
        self.message = message
        self.core = core
        self.pc = pc
        self.cycle = cycle
        self.value = value
        self._find_source: Callable[[str, int], Any] | None = None
        self._source: tuple[tuple[str, int], Any] | None = None  # ((core, pc), what find said)
        super().__init__(self._format())

    def __str__(self) -> str:
        return self._format()

    def with_source(self, find: Callable[[str, int], Any]) -> SimError:
        """Name the program source of the error's pc: ``find(core, pc)`` gives a
        :class:`~tensixsim.loader.source.SourceLocation` or None. It is called once, when the error is
        first formatted or asked for its :attr:`location`, never when it is raised."""
        self._find_source = find
        return self

    @property
    def location(self) -> Any:
        """Where the pc lies in the program's source (SourceLocation: function, offset, file, line),
        or None (no pc, or no symbols for it)."""
        find = getattr(self, "_find_source", None)
        if find is None or self.core is None or self.pc is None:
            return None
        key = (self.core, self.pc)
        if self._source is None or self._source[0] != key:
            self._source = (key, find(*key))
        return self._source[1]

    @property
    def function(self) -> str | None:
        """The function holding the pc (from the ELF's symbols), or None."""
        return getattr(self.location, "function", None)

    @property
    def source(self) -> str | None:
        """``file:line`` of the pc (from the ELF's DWARF), or None."""
        return getattr(self.location, "source", None)

    def located(self, core: str | None, pc: int | None) -> SimError:
        """Fill in the core and pc where the raiser did not know them (e.g. a wait-gate check)."""
        if self.core is None and self.pc is None:
            self.core, self.pc = core, pc
            self.args = (self._format(),)
        return self

    def at(self, core: str, pc: int | None) -> SimError:
        """Name the core and pc the error belongs to (a service that raised it knew only itself)."""
        self.core, self.pc = core, pc
        self.args = (self._format(),)
        return self

    def _format(self) -> str:
        where = []
        if self.core is not None:
            where.append(self.core)
        if self.pc is not None:
            where.append(f"pc=0x{self.pc:08x}")
        if self.cycle is not None:
            where.append(f"cycle={self.cycle}")
        text = f"{' '.join(where)}: {self.message}" if where else self.message
        if self.value is not None:
            text += f" (value=0x{self.value:x})"
        location = self.location
        if location is not None:
            text += f" in {location}"
        return text


class UndefinedBehavior(SimError):
    """The program did something the hardware documentation leaves undefined."""


class Unimplemented(SimError):
    """The program used a feature the emulator knows of but does not model yet."""


class InvalidProgram(SimError):
    """The program or its image is malformed (bad ELF, wrong architecture, bad configuration)."""


class ArchitectureMismatch(InvalidProgram):
    """An image or firmware built for another chip than the tile it is loaded into."""


class InvalidInstruction(InvalidProgram):
    """An instruction word that no table entry decodes."""


class MemoryFault(SimError):
    """An access to an unmapped address, a misaligned access, or a write to read-only memory."""

    def __init__(
        self,
        message: str,
        *,
        address: int,
        size: int,
        write: bool,
        core: str | None = None,
        pc: int | None = None,
        cycle: int | None = None,
    ) -> None:
        self.address = address
        self.size = size
        self.write = write
        kind = "write" if write else "read"
        super().__init__(
            f"{message}: {size}-byte {kind} at {hex_address(address)}", core=core, pc=pc, cycle=cycle
        )


@dataclass(frozen=True)
class CoreWhere:
    """Where one core was when a run stopped: its name, state ("running", "waiting", ...), pc, cycle,
    and what it waits on or polls (empty when nothing)."""

    name: str
    state: str
    pc: int
    cycle: int
    waits_on: str = ""


class RunStopped(SimError):
    """A run that ended before its cores finished; ``cores`` says where each one was."""

    def __init__(self, message: str, *, cycle: int | None = None, cores: tuple[CoreWhere, ...] = ()) -> None:
        self.cores = cores
        self._core_sources: dict[str, Any] = {}
        super().__init__(message, cycle=cycle)

    def source_of(self, core: str) -> Any:
        """Where ``core`` stood in its program's source (a SourceLocation), or None."""
        find = getattr(self, "_find_source", None)
        where = next((c for c in self.cores if c.name == core), None)
        if find is None or where is None:
            return None
        if core not in self._core_sources:
            self._core_sources[core] = find(core, where.pc)
        return self._core_sources[core]

    def _format(self) -> str:
        text = super()._format()
        live = [c.name for c in getattr(self, "cores", ()) if c.state in ("running", "waiting")]
        places = [f"{name} in {found}" for name in live if (found := self.source_of(name)) is not None]
        return text + ("; " + "; ".join(places) if places else "")


class Deadlock(RunStopped):
    """Every live core waits on a value that nothing can change any more."""


class CycleLimitExceeded(RunStopped):
    """The run reached its cycle limit before every core finished (a runaway program)."""


class RunInterrupted(KeyboardInterrupt):
    """A run stopped on request (Ctrl-C, or :meth:`Tile.interrupt`) at a slice boundary.

    ``result`` is the run so far (a :class:`~tensixsim.tile.RunResult`, ``result.interrupted`` set).
    The tile stopped between two slices, as it stands at any slice boundary, so ``tile.run()`` goes
    on from there. It is a KeyboardInterrupt, not a :class:`SimError`: nothing went wrong in the
    program, and code that does not handle it stops as Ctrl-C always stops Python.
    """

    def __init__(self, message: str, *, cycle: int, result: Any) -> None:
        self.message = message
        self.cycle = cycle
        self.result = result
        super().__init__(message)


class TraceError(SimError):
    """A trace was asked for that cannot be written (a path that cannot be opened, the perfetto
    package missing); raised before the run starts."""
