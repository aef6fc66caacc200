"""The register windows the baby cores reach outside L1 and the coprocessor.

- ``memory``: MMIO regions and registers, the access and stall types every window uses.
- ``control``: the tile-control / debug registers (soft reset, reset PCs, wall clock, debug pushes).
- ``mailboxes``: the FIFOs between BRISC and the TRISCs.
- ``pcbufs``: the FIFOs from BRISC to each TRISC, and their override bits.
- ``streams``: the stream (NoC overlay) registers circular buffers count in.
- ``tdma``: the TDMA-RISC page (the mover's command FIFO, packer status, clock gating).
"""
