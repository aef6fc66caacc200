"""The CSRs Blackhole's baby cores recognise (tt-isa-documentation BlackholeA0 BabyRISCV/CSRs.md).

Each is listed with what the tile does with it (``CsrFacts.behaviour``):

- ``counter``: the cycle and retired-instruction counters, read from the emulator's clock; a write
  sets the counter (the page: "Read/write alias of mcycle").
- ``storage``: holds what is written, starting at ``reset``.
- ``constant``: reads ``reset`` whatever is written (the page's read-only CSRs).
- ``scratch_bnc``: storage on BRISC and NCRISC; on a TRISC it is a NoC overlay stream register the
  page does not identify ("STREAM_CURR_PHASE_REG_INDEX of some NoC Overlay stream"), so an access
  there raises Unimplemented naming it.
- ``unmodelled``: recognised by the hardware, not modelled here (the Tensix status bits, the
  event counters whose events no page lists): an access raises Unimplemented naming it.

cfg0's fields and pmacfg0/1's low bit change the cores' timing (riscv/native.c, docs/timing.md).
"""

from __future__ import annotations

from tensixsim.arch.common import CsrFacts

# cfg0 at reset: every field clear except StMergeTimer (bits 13..17), which starts at 16.
CFG0_RESET = 16 << 13

CFG0 = 0x7C0
PMACFG0, PMACFG1 = 0x7C1, 0x7C2  # either's low bit set: every load and store strongly ordered

# cfg0 fields (CSRs.md, "cfg0") the timing walk reads.
CFG0_DIS_LD_BUF_BYP = 1 << 0  # loads wait in EX1 until the store queue is empty
CFG0_DIS_BP = 1 << 1  # no branch prediction
CFG0_DIS_LOW_CASH = 1 << 3  # no L0 data cache: every L1 load goes to L1
CFG0_SYNC_ALL_OPS = 1 << 9  # every instruction waits until the previous one has retired
CFG0_DIS_CSR_SYNC = 1 << 10  # CSR accesses and fences no longer wait until they have retired
CFG0_DIS_ST_MERGE = 1 << 12  # no coalescing of L1 stores
CFG0_DIS_TRISC_CACHE = 1 << 18  # a TRISC no longer fuses adjacent inline Tensix words
CFG0_DIS_REG_FORWARDING = 1 << 20  # operands only from the register file (after retirement)
CFG0_DIS_LOW_CACHE_PERIODIC_FLUSH = 1 << 24  # an L0 hit never flushes the L0 data cache

BLACKHOLE_CSRS: tuple[CsrFacts, ...] = (
    CsrFacts(0x003, "fcsr", "storage"),
    CsrFacts(0x008, "vstart", "constant"),
    CsrFacts(0x009, "vxsat", "storage"),
    CsrFacts(0x00A, "vxrm", "storage"),
    CsrFacts(0x300, "mstatus", "constant", 0x80006600),
    CsrFacts(0x301, "misa", "constant", 0x40201123),
    CsrFacts(0x320, "mcountinhibit", "storage"),
    CsrFacts(0x323, "mhpmevent3", "storage"),
    CsrFacts(0x324, "mhpmevent4", "storage"),
    CsrFacts(CFG0, "cfg0", "storage", CFG0_RESET),
    CsrFacts(PMACFG0, "pmacfg0", "storage"),
    CsrFacts(PMACFG1, "pmacfg1", "storage"),
    CsrFacts(0x7C3, "cfg1", "storage"),
    CsrFacts(0x7C4, "hwa_mask", "storage"),
    CsrFacts(0x7C5, "hwa_cfg", "storage"),
    CsrFacts(0x7C6, "vgsrc", "storage"),
    CsrFacts(0xB00, "mcycle", "counter"),
    CsrFacts(0xB02, "minstret", "counter"),
    CsrFacts(0xB03, "mhpmcounter3", "unmodelled"),
    CsrFacts(0xB04, "mhpmcounter4", "unmodelled"),
    CsrFacts(0xB80, "mcycleh", "counter"),
    CsrFacts(0xB82, "minstreth", "counter"),
    CsrFacts(0xB83, "mhpmcounter3h", "unmodelled"),
    CsrFacts(0xB84, "mhpmcounter4h", "unmodelled"),
    CsrFacts(0xBC0, "tt_cfg_qstatus", "unmodelled"),
    CsrFacts(0xBC1, "tt_cfg_bstatus", "unmodelled"),
    *(CsrFacts(0xBC2 + i, f"tt_cfg_sstatus{i}", "scratch_bnc") for i in range(8)),
    # A copy of mret's return pc; no interrupt is ever taken here, so it only holds what is written.
    CsrFacts(0xBCA, "intp_restore_pc", "storage"),
    CsrFacts(0xC00, "cycle", "counter"),
    CsrFacts(0xC02, "instret", "counter"),
    CsrFacts(0xC20, "vl", "storage"),
    CsrFacts(0xC21, "vtype", "storage"),
    CsrFacts(0xC22, "vlenb", "storage", 16),  # "initially 16"; writes only change what reads see
    CsrFacts(0xC80, "cycleh", "counter"),
    CsrFacts(0xC82, "instreth", "counter"),
    CsrFacts(0xF14, "mhartid", "constant"),
)
