"""Running what tt-metal builds: its pre-compiled firmware, the host's side of booting and launching.

- :mod:`tensixsim.metal.wheel`: fetch the firmware from the ``ttnn`` wheel on PyPI into a cache.
- :mod:`tensixsim.metal.dwarf`: layouts and constants read from a firmware ELF's debug information.
- :mod:`tensixsim.metal.firmware`: find a firmware set, load it, boot it, launch kernels.
"""
