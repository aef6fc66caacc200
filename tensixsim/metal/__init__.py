"""Running what tt-metal builds: its pre-compiled firmware, the host's side of booting and launching.

- :mod:`tensixsim.metal.wheel`: fetch the firmware from the ``ttnn`` wheel on PyPI into a cache.
- :mod:`tensixsim.metal.dwarf`: layouts and constants read from a firmware ELF's debug information.
- :mod:`tensixsim.metal.firmware`: find a firmware set, load it, boot it, launch kernels.
- :mod:`tensixsim.metal.launch`: slow-dispatch launches with runtime arguments and circular buffers.
- :mod:`tensixsim.metal.kernels`: build kernels for the firmware's kernel ABI.
- :mod:`tensixsim.metal.examples`: add-one on five cores (reader, unpack, math, pack, writer).
- :mod:`tensixsim.metal.host`: one launch from files (``tensixsim metal``).
"""
