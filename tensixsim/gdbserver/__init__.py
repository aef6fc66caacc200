"""A GDB remote-serial-protocol server for a tile (docs/running-kernels.md, "Debugging with gdb")."""

from tensixsim.gdbserver.server import GdbServer, KilledByDebugger

__all__ = ["GdbServer", "KilledByDebugger"]
