"""Bare-metal SDK: linker scripts, crt0, MMIO header and a build API for the tile's RISC-V cores.

Build with ``from tensixsim.sdk.build import build``; the example programs' recipes and Python
models are in :mod:`tensixsim.sdk.programs`. (The package does not re-export ``build``: the
function would hide the module of the same name.)
"""
