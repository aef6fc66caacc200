"""The support matrix: what the emulator executes, per instruction, generated from the tables.

``python -m tensixsim.support`` rewrites docs/support-matrix.md; a test checks it is current.
Status words: ``executed+tested`` (semantics implemented and checked against an independent
reference in tests/), ``unimplemented`` (captured and queued, raises Unimplemented when it would
execute).
"""

from __future__ import annotations

import sys
from pathlib import Path

from tensixsim.isa import isa_for
from tensixsim.noc.registers import ATOMIC_NAMES
from tensixsim.timing import NOC

# RISC-V side: (group, instructions, Blackhole status, where it is tested); Wormhole's status is
# WORMHOLE_RISCV's where it differs.
RISCV_SUPPORT: tuple[tuple[str, str, str, str], ...] = (
    ("RV32I", "all base integer instructions", "executed+tested", "tests/test_riscv_isa.py"),
    ("M", "mul mulh mulhsu mulhu div divu rem remu", "executed+tested", "tests/test_riscv_isa.py"),
    (
        "Zaamo",
        "amoswap amoadd amoxor amoand amoor amomin amomax amominu amomaxu (.w)",
        "executed+tested",
        "tests/test_riscv_isa.py",
    ),
    (
        "Zba",
        "sh1add sh2add sh3add (emulated: trap + native hook)",
        "executed+tested",
        "tests/test_riscv_isa.py, tests/test_demo_and_parity.py",
    ),
    (
        "Zbb",
        "andn orn xnor clz ctz cpop min minu max maxu sext.b sext.h zext.h rol ror rori rev8 orc.b "
        "(emulated)",
        "executed+tested",
        "tests/test_riscv_isa.py, tests/test_demo_and_parity.py",
    ),
    (
        "Zicsr",
        "counters: mcycle/cycle(h) read the emulator clock, minstret/instret(h) the retired "
        "instructions; a write sets them",
        "executed+tested",
        "tests/test_csrs.py, tests/test_tile.py",
    ),
    (
        "Zicsr",
        "cfg0, pmacfg0/1 (their timing fields change the core's timing, docs/timing.md), cfg1, "
        "hwa_mask, hwa_cfg, vgsrc, mcountinhibit, mhpmevent3/4, fcsr, vxsat, vxrm, vl, vtype, vlenb, "
        "intp_restore_pc, tt_cfg_sstatus0-7 on BRISC/NCRISC: hold what is written; mstatus, misa, "
        "mhartid, vstart: read-only constants (BlackholeA0 CSRs.md)",
        "executed+tested",
        "tests/test_csrs.py, tests/test_riscv_isa.py",
    ),
    (
        "Zicsr",
        "tt_cfg_qstatus/bstatus (0xBC0/0xBC1), mhpmcounter3/4(h), tt_cfg_sstatus0-7 on a TRISC",
        "unimplemented (raises Unimplemented naming the CSR)",
        "tests/test_csrs.py",
    ),
    ("Zicsr", "any other CSR", "raises InvalidProgram", "tests/test_tile.py, tests/test_csrs.py"),
    (
        "C",
        "compressed instructions (the hardware has none)",
        "never executed; ELFs built with C rejected",
        "tests/test_tile.py, tests/test_elf.py",
    ),
    (
        "Tensix words",
        "inline instruction words (TRISC) and stores to the push addresses",
        "captured with core, pc, cycle; executed by the coprocessor",
        "tests/test_tile.py, tests/test_frontend.py",
    ),
)

# Handled by the pipe engine itself rather than by a unit's registered semantics.
FRONTEND_HANDLED = frozenset({"MOP", "MOP_CFG", "REPLAY"})
# Wormhole's cores are RV32IM only (WormholeB0 BabyRISCV/README.md): the extensions beyond it.
_WORMHOLE_REFUSED = "not on Wormhole: raises InvalidInstruction naming it (tests/test_wormhole.py)"
WORMHOLE_RISCV = {"Zaamo": _WORMHOLE_REFUSED, "Zba": _WORMHOLE_REFUSED, "Zbb": _WORMHOLE_REFUSED,
                  "Zicsr": _WORMHOLE_REFUSED}  # fmt: skip

# Modes of executed instructions that still raise Unimplemented (they need later units).
PARTIAL: dict[str, str] = {
    "SETDMAREG": "special mode with InputSource 0-9 (packer state)",
    "STOREIND": "SrcA/SrcB destination (register files)",
    "ZEROACC": "clear_zero_flags (undocumented)",
    "GMPOOL": "instr_mod19 other than 1 (pooling shapes no page describes)",
    "SETC16": "resetting the metadata context counters (undocumented)",
    "STREAMWAIT": "stream phase/message registers read 0 (not modelled)",
    "SHIFTXA": "input rows after MOVB2D / MOVD2B, whose SrcA row address no page gives",
    "UNPACR": "compressed input, RowSearch, upsampling, FP8, srcb_bcast, unpacker 1 context 2+, "
    "sub-byte formats in Tileize_mode",
    "UNPACR_NOP": "OverlayClear / SETREG forms (unpack_pop 0 / 3), clear to one or to a register value",
    "PACR": "FP8 output, the BFP8a intermediate, BFP blocks split across PACRs, L1 accumulation in "
    "formats other than FP32/INT32/FP16/BF16, compression, downsampling, config contexts, row padding, "
    "read-interface masks other than 0/1/3/5/7/10/15 (0/1/3 in strided mode), position-dependent edge "
    "masks, a non-zero YZW output offset, INT8 shift/round, stochastic rounding",
    "PACR_SETREG": "the write itself (SetRegBase / SetRegHiScaler and the NoC overlay registers)",
    "SFPLOADMACRO": "LoadMacroConfig that differs between lanes, two sub-units changing one register "
    "in a cycle, scheduled work that would wait",
    "SFPTRANSP": "the backdoor load when lanes disagree on DISABLE_BACKDOOR_LOAD",
    "SFPSHFT2": "the backdoor load of modes 2 and 3 when lanes disagree on DISABLE_BACKDOOR_LOAD",
}


# Wormhole's own notes where its registration differs from Blackhole's (else PARTIAL's).
PARTIAL_WORMHOLE: dict[str, str] = {
    "UNPACR": "compressed input, RowSearch, Upsample_rate 2 / 3, rareb_en",
    "UNPACR_NOP": "OverlayClear and SETREG forms (NoC overlay register, TDMA-RISC SetRegBase)",
    "PACR": "compression, packer 0 reading L1, the BFP8a and FP8 intermediates, BFP blocks split across "
    "PACRs, L1 accumulation in formats other than FP32/INT32/FP16/BF16, position-dependent edge masks, "
    "INT8 shift/round, stochastic rounding, Add_l1_dest_addr_offset, configuration fields no page describes",
    "PACR_SETREG": "the write itself (SetRegBase / SetRegHiScaler are TDMA-RISC state)",
}


def executed(arch: str) -> frozenset[str]:
    """Instructions the emulator executes: registered semantics plus the expanders' own."""
    import tensixsim.tensix.coprocessor  # noqa: F401 - importing the units registers their semantics
    from tensixsim.tensix.semantics import implemented

    return implemented(arch) | FRONTEND_HANDLED


def tensix_status(arch: str, name: str) -> str:
    return "executed+tested" if name in executed(arch) else "unimplemented (raises Unimplemented)"


def native(arch: str) -> frozenset[str]:
    """Instructions the native engine runs in C on ``arch`` (in the modes it handles)."""
    from tensixsim.tensix.native.gen_fields import native_instructions

    return frozenset(native_instructions(arch))


def register_rows(arch: str = "blackhole") -> list[str]:
    """The tile-control / debug register map: every register, how it is modelled, its source."""
    from tensixsim.arch import ARCHES

    facts = ARCHES[arch]
    rows = []
    for r in facts.tile_registers:
        if r.behaviour != "storage":
            status = f"modelled ({r.behaviour})"
        elif r.access == "ro":
            status = f"plain storage, read-only: reads 0x{r.reset:x}"
        else:
            status = "plain storage: holds what is written"
        note = f" — {r.note}" if r.note else ""
        rows.append(f"| {r.name} | 0x{r.address:08X} | {r.access} | {status} | {r.source}{note} |")
    boxes = facts.mailboxes
    if boxes is not None:
        end = boxes.base + boxes.stride * len(boxes.cores) - 1
        rows.append(
            f"| TENSIX_MAILBOX0..{len(boxes.cores) - 1} | 0x{boxes.base:08X}-0x{end:08X} | rw | modelled "
            f"(FIFOs of {boxes.capacity} between {', '.join(boxes.cores)}; a load at +{boxes.query_bit} "
            f"queries, any other pops and waits; a full mailbox makes the store wait) | tt-metal {arch} "
            "tensix.h; tt-isa-documentation BabyRISCV/Mailboxes.md |"
        )
    return rows


def perf_counter_rows() -> list[str]:
    """The performance counters: per bank and counter select, what each chip's counter counts."""
    from tensixsim.arch.perf_counters import counters, events
    from tensixsim.tensix.frontend.perf import meaning

    names = {arch: counters(arch) for arch in ("blackhole", "wormhole")}
    modelled = {arch: events(arch) for arch in names}
    rows = []
    for bank in names["blackhole"]:
        selects = sorted(set(names["blackhole"][bank]) | set(names["wormhole"][bank]))
        for select in selects:
            cells = []
            for arch in names:
                name = names[arch][bank].get(select)
                event = modelled[arch][bank].get(select)
                cells.append("—" if name is None else f"{name}: " + (meaning(event) if event else "reads 0"))
            rows.append(f"| {bank} | {select} | {cells[0]} | {cells[1]} |")
    return rows


def render() -> str:
    bh, wh = isa_for("blackhole"), isa_for("wormhole")
    names = sorted({spec.name for spec in bh} | {spec.name for spec in wh})
    lines = [
        "# Support matrix",
        "",
        "Generated by `python -m tensixsim.support` from the instruction tables; do not edit by hand.",
        "",
        "## Baby RISC-V cores",
        "",
        "| extension | instructions | Blackhole | Wormhole B0 | tested in |",
        "|---|---|---|---|---|",
    ]
    lines += [
        f"| {g} | {what} | {status} | {WORMHOLE_RISCV.get(g, status)} | {where} |"
        for g, what, status, where in RISCV_SUPPORT
    ]
    counts = {"blackhole": 0, "wormhole": 0}
    in_c = {arch: native(arch) for arch in counts}
    rows = []
    for name in names:
        cells = []
        for arch, table in (("blackhole", bh), ("wormhole", wh)):
            spec = table.by_name.get(name)
            if spec is None:
                cells.append("—")
                continue
            status = tensix_status(arch, name)
            runs = status == "executed+tested"
            counts[arch] += runs
            if name in in_c[arch]:
                status += " (native)"
            notes = PARTIAL_WORMHOLE if arch == "wormhole" else {}
            note = notes.get(name, PARTIAL.get(name))
            if runs and note:
                status += f"; unimplemented: {note}"
            cells.append(f"0x{spec.opcode:02X} {spec.unit}: {status}")
        rows.append(f"| {name} | {cells[0]} | {cells[1]} |")
    lines += [
        "",
        "## Tensix coprocessor instructions",
        "",
        f"Blackhole: {len(bh)} instructions, {counts['blackhole']} executed, "
        f"{len(in_c['blackhole'])} of them by the native engine. "
        f"Wormhole B0: {len(wh)} instructions, {counts['wormhole']} executed, "
        f"{len(in_c['wormhole'])} of them by the native engine.",
        "",
        "`executed+tested`: its semantics run when it reaches its unit and are tested against an "
        "independent reference (tests/test_<unit>.py; on Wormhole tests/test_wormhole_coprocessor.py, "
        "which runs the same references on a Wormhole tile). `unimplemented`: it is captured, queued and "
        "disassembled, and raises `Unimplemented` (naming it, the pushing core and pc) when it would "
        'execute. The capture-only backend (`Tile(backend="recorder")`) records any stream. '
        "`(native)`: the native engine runs it in C; the modes it leaves to the Python semantics (slower, "
        "same results and cycles) are named by a run's summary (docs/observability.md).",
        "",
        "| instruction | Blackhole | Wormhole B0 |",
        "|---|---|---|",
        *rows,
        "",
        "## Blackhole tile-control / debug registers",
        "",
        "Every register the sources name in the tile-control page (0xFFB12000), the PIC and pc-snapshot "
        "page (0xFFB13000) and the mailboxes. `plain storage`: its effect on the hardware is not "
        "modelled; it holds what is written (a read-only one reads its reset value). An offset no "
        "source names is a `MemoryFault`. These pages and the stream registers take 8- and 16-bit "
        "loads and stores (the addressed bytes of the 32-bit register); the backend configuration "
        "and the Tensix GPRs take narrow loads but only 32-bit stores; the Tensix push ports, the "
        "mailboxes, the semaphores / PCBufs, the MOP configuration, the TDMA page and the NoC "
        "registers take only 32-bit accesses (anything else is a `MemoryFault`).",
        "",
        "| register | address | access | status | source |",
        "|---|---|---|---|---|",
        *register_rows(),
        "",
        "## Wormhole B0 tile-control / debug registers",
        "",
        "The registers of Wormhole's tensix.h in the tile-control page (0xFFB12000) and the mailboxes; "
        "the same rules as above. Wormhole's reset PCs are backend-configuration fields (SoftReset.md), "
        "not registers of this page. Its PIC page is not modelled; its NoC interface registers are in "
        "the next section.",
        "",
        "| register | address | access | status | source |",
        "|---|---|---|---|---|",
        *register_rows("wormhole"),
        "",
        "## Performance counters",
        "",
        "The counters each bank's mode register selects (tt-metal's hw_counters.h), and what each "
        "counts here (tensixsim/tensix/frontend/perf.py; the registers and their use: "
        "docs/observability.md). `reads 0`: not modelled. The L1 bank's counters are none of them "
        "modelled and read 0 whatever PERF_CNT_MUX_CTRL selects.",
        "",
        "| bank | select | Blackhole | Wormhole B0 |",
        "|---|---|---|---|",
        *perf_counter_rows(),
        "",
        "## NoC requests",
        "",
        "What a core's NIU request initiators do (tensixsim/noc/; each chip's register layout and "
        "packet facts in tensixsim/arch). Requests reach the tile itself, the DRAM tiles and, in a "
        "`Chip`, the other Tensix tiles and (Blackhole) the ARC and Ethernet tiles (docs/chip.md); "
        "the PCIe, security and L2CPU tiles raise `Unimplemented`.",
        "",
        "| request | Blackhole | Wormhole B0 | tested in |",
        "|---|---|---|---|",
        *noc_rows(),
        "",
    ]
    return "\n".join(lines)


def noc_rows() -> list[str]:
    """One row per kind of NoC request, each chip's column from its architecture facts."""
    from tensixsim.arch import get_arch

    def column(name: str, what) -> str:
        facts = get_arch(name).noc
        return what(facts) if facts is not None and facts.registers is not None else "not modelled"

    def packets(f) -> str:
        return f"executed+tested: up to {f.max_packet_bytes or NOC.max_packet_bytes} bytes a packet"

    rows = [
        ("read, write from L1", packets, "tests/test_noc.py, tests/test_wormhole_noc.py"),
        (
            "byte-enabled write",
            lambda f: f"executed+tested: {f.write_be_bytes} bytes",
            "tests/test_noc.py, tests/test_wormhole_noc.py",
        ),
        (
            "inline write",
            lambda f: (
                "executed+tested: MMIO"
                + (", L1 (byte-enabled)" if f.inline_l1_writes else "; to L1 raises UndefinedBehavior")
            ),
            "tests/test_noc.py, tests/test_wormhole_noc.py",
        ),
        (
            "atomic",
            lambda f: (
                "executed+tested: "
                + ", ".join(dict.fromkeys(ATOMIC_NAMES[o] for o in f.atomic_opcodes))
                + "; other opcodes (parallel addition) raise Unimplemented"
            ),
            "tests/test_noc.py, tests/test_noc_atomics.py, tests/test_wormhole_noc.py",
        ),
        (
            "coordinate translation",
            lambda f: (
                "executed+tested: "
                + (
                    "X/Y tables, written back into *_ADDR_MID"
                    if f.registers.translation == "tables"
                    else "X/Y tables, row/column masks, DRAM tables"
                )
            ),
            "tests/test_noc.py, tests/test_wormhole_noc.py",
        ),
        (
            "broadcast (write, inline write, posted atomic)",
            lambda f: (
                "executed+tested"
                if f.registers.coordinates == "hi"
                else "executed+tested: multicast write (inline write, posted atomic: same path, untested)"
            ),
            "tests/test_chip.py, tests/test_wormhole_noc.py",
        ),
    ]
    return [
        f"| {kind} | {column('blackhole', what)} | {column('wormhole', what)} | {tests} |"
        for kind, what, tests in rows
    ]


DOC = Path(__file__).resolve().parent.parent / "docs" / "support-matrix.md"


def main() -> int:
    DOC.write_text(render())
    print(f"wrote {DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
