"""The tile-control / debug register map, the RISC-V mailboxes, and 8/16-bit MMIO accesses."""

from __future__ import annotations

import pytest
from test_tile import tile_with

from tensixsim import Deadlock, MemoryFault, Tile
from tensixsim.arch import BLACKHOLE
from tensixsim.arch.blackhole_registers import MAILBOXES, TILE_REGISTERS
from tensixsim.isa import isa_for

ISA = isa_for("blackhole")
RESULTS = 0x20000
FEATURE_DISABLE = 0xFFB12068  # RISCV_DEBUG_REG_DBG_FEATURE_DISABLE
INSTRN_BUF_STATUS = 0xFFB120A8
PC_SNAPSHOT = 0xFFB13138  # B, NC, T0, T1, T2
STREAM5_REG10 = 0xFFB40000 + 5 * 0x1000 + 4 * 10  # a stream's tiles-received counter
SEM_BASE = 0xFFE80020  # TRISC view of the Tensix semaphores
BY_NAME = {r.name: r for r in TILE_REGISTERS}


def mailbox(core: str) -> int:
    """The page reaching ``core``'s mailboxes (tt-llk's mailbox_base[thread + 1] for TRISCn)."""
    return MAILBOXES.base + MAILBOXES.stride * MAILBOXES.cores.index(core)


def run(programs: dict[str, str], max_cycles: int = 1_000_000, **kwargs) -> Tile:
    tile = tile_with(programs, **kwargs)
    tile.run(max_cycles=max_cycles, release=list(programs))
    return tile


def words(tile: Tile, address: int, count: int) -> list[int]:
    data = tile.read(address, 4 * count)
    return [int.from_bytes(data[4 * i : 4 * i + 4], "little") for i in range(count)]


# ---------------------------------------------------------------- a kernel prologue of another generation


def test_prologue_of_an_earlier_generation_runs_and_reads_back():
    """TRISC0 (unpack) disables a debug feature, reads a stream counter with lhu, hands TRISC1 (math)
    a value through the mailboxes and waits for its answer, the way tt-llk's handshakes do."""
    trisc0 = f"""
        li t0, {FEATURE_DISABLE}
        li t1, 0x40000
        sw t1, 0(t0)
        lw a0, 0(t0)
        li t0, {STREAM5_REG10}
        li t1, 0x00070003
        sw t1, 0(t0)
        lhu a1, 0(t0)
        lhu a2, 2(t0)
        li t0, {mailbox("trisc1")}
        li t1, 0x1234
        sw t1, 0(t0)           # mailbox_write(MathThreadId, 0x1234)
        lw a3, 0(t0)           # mailbox_read(MathThreadId): blocks for the answer
        li s1, {RESULTS}
        sw a0, 0(s1)
        sw a1, 4(s1)
        sw a2, 8(s1)
        sw a3, 12(s1)
        ecall
    """
    trisc1 = f"""
        li t0, {mailbox("trisc0")}
    1:  lw t1, 4(t0)           # mailbox_not_empty(UnpackThreadId)
        beqz t1, 1b
        lw a0, 0(t0)           # mailbox_read(UnpackThreadId)
        lw a1, 4(t0)           # now empty again
        addi t2, a0, 1
        sw t2, 0(t0)           # mailbox_write(UnpackThreadId, value + 1)
        li s1, {RESULTS + 0x100}
        sw a0, 0(s1)
        sw a1, 4(s1)
        ecall
    """
    tile = run({"trisc0": trisc0, "trisc1": trisc1})
    assert words(tile, RESULTS, 4) == [0x40000, 0x0003, 0x0007, 0x1235]
    assert words(tile, RESULTS + 0x100, 2) == [0x1234, 0]


# ---------------------------------------------------------------- the register table


def test_table_agrees_with_the_arch_facts_it_models():
    by_address = {r.address: r for r in TILE_REGISTERS}
    assert len(by_address) == len(TILE_REGISTERS), "two registers at one address"
    assert by_address[BLACKHOLE.soft_reset_register].behaviour == "soft_reset"
    assert by_address[BLACKHOLE.soft_reset_register].reset == BLACKHOLE.soft_reset_all
    assert by_address[BLACKHOLE.wall_clock_low].behaviour == "wall_clock_low"
    assert by_address[BLACKHOLE.wall_clock_high].behaviour == "wall_clock_high"
    assert by_address[BLACKHOLE.wall_clock_high_latched].behaviour == "wall_clock_high_latched"
    for core in BLACKHOLE.cores:
        if core.reset_pc_register is not None:
            assert by_address[core.reset_pc_register].behaviour == f"reset_pc:{core.name}"
    assert all(r.address % 4 == 0 and r.access in ("rw", "ro", "wo") and r.source for r in TILE_REGISTERS)


@pytest.mark.parametrize(
    "facts", [r for r in TILE_REGISTERS if r.behaviour == "storage"], ids=lambda r: r.name
)
def test_plain_storage_register_reads_back_or_its_reset_value(facts):
    tile = Tile("blackhole")
    assert tile.register_access(facts.address, 0, None) == facts.reset
    if facts.access == "ro":
        with pytest.raises(MemoryFault, match="read-only"):
            tile.register_access(facts.address, 0, 0xA5A5A5A5)
        assert tile.register_access(facts.address, 0, None) == facts.reset
    else:
        tile.register_access(facts.address, 0, 0xA5A5A5A5)
        assert tile.register_access(facts.address, 0, None) == 0xA5A5A5A5
        tile.reset()
        assert tile.register_access(facts.address, 0, None) == facts.reset


def test_feature_disable_store_no_longer_faults():
    tile = run({"brisc": f"li t0, {FEATURE_DISABLE}\n li t1, 5\n sw t1, 0(t0)\n lw a0, 0(t0)\n ecall"})
    assert tile.core("brisc").reg("a0") == 5


def test_gap_in_the_page_is_still_a_fault():
    tile = tile_with({"brisc": "li t0, 0xFFB12098\n li t1, 1\n sw t1, 0(t0)\n ecall"})
    with pytest.raises(MemoryFault, match="no register at offset 0x98") as info:
        tile.run(release=["brisc"])
    assert (info.value.core, info.value.pc, info.value.address, info.value.write) == (
        "brisc",
        12,  # after li (lui, addi) and li
        0xFFB12098,
        True,
    )
    assert info.value.cycle is not None


def test_read_only_debug_register_store_faults():
    status = BY_NAME["ECC_STATUS"].address
    tile = tile_with({"trisc0": f"li t0, {status}\n sw t0, 0(t0)\n ecall"})
    with pytest.raises(MemoryFault, match="ECC_STATUS is read-only") as info:
        tile.run(release=["trisc0"])
    assert (info.value.core, info.value.address) == ("trisc0", status)


def test_pc_snapshot_gives_each_cores_pc():
    """BRISC reads its own snapshot (the load's pc) and TRISC0's, held in reset at its reset pc;
    then TRISC1's while TRISC1 is parked in a loop at a known pc."""
    brisc = f"""
        li t0, {PC_SNAPSHOT}
        lw a0, 0(t0)           # pc 8
        lw a1, 8(t0)           # TRISC0
        lw a2, 4(t0)           # NCRISC
        ecall
    """
    tile = run({"brisc": brisc})
    brisc_core = tile.core("brisc")
    assert (brisc_core.reg("a0"), brisc_core.reg("a1"), brisc_core.reg("a2")) == (8, 0x6000, 0x12000)
    with pytest.raises(MemoryFault, match="read-only"):
        run({"brisc": f"li t0, {PC_SNAPSHOT}\n sw t0, 0(t0)\n ecall"})


def test_pc_snapshot_of_a_running_core_is_where_it_is():
    brisc = f"""
        li t2, 2000
    1:  addi t2, t2, -1
        bnez t2, 1b
        li t0, {PC_SNAPSHOT}
        lw a0, 12(t0)          # TRISC1, spinning at 0xA004..0xA008
        li t1, {RESULTS}
        li t2, 1
        sw t2, 0(t1)
        ecall
    """
    trisc1 = f"li t1, {RESULTS}\n 1: lw t2, 0(t1)\n beqz t2, 1b\n ecall"
    tile = run({"brisc": brisc, "trisc1": trisc1})
    assert tile.core("brisc").reg("a0") in (0xA004, 0xA008)  # the loop: lw, beqz


def test_byte_store_to_soft_reset_releases_one_core():
    # Bits 8..15 of SOFT_RESET_0 are its byte 1: 0x70 once BRISC runs (bits 12-14 hold TRISC0..2).
    # Storing 0x60 there releases TRISC0 and changes no other byte (bit 18 still holds NCRISC).
    brisc = "li t0, 0xFFB121B0\n li t1, 0x60\n sb t1, 1(t0)\n lw a0, 0(t0)\n ecall"
    trisc0 = f"li t0, {RESULTS}\n li t1, 77\n sw t1, 0(t0)\n ecall"
    tile = tile_with({"brisc": brisc, "trisc0": trisc0})
    tile.run(release=["brisc"])
    assert tile.core("brisc").reg("a0") == 0x47800 & ~(1 << 12) & ~(1 << 11)
    assert words(tile, RESULTS, 1) == [77]


# ---------------------------------------------------------------- INSTRN_BUF_STATUS


@pytest.mark.parametrize("engine", ["native", "python"])
def test_instrn_buf_status_follows_the_pipe_fifos(engine):
    """BRISC fills pipe 2's FIFO behind a SEMWAIT nobody has posted yet, watching the status; TRISC2
    posts the semaphore when BRISC says so, and BRISC waits for the FIFO to drain."""
    seminit = ISA.encode("SEMINIT", max_value=15, init_value=0, sem_sel=0b1)
    semwait = ISA.encode("SEMWAIT", stall_res=0x7F, sem_sel=0b1, wait_sem_cond=1)
    nop = ISA.encode("NOP")
    brisc = f"""
        li s0, {INSTRN_BUF_STATUS}
        li s1, {RESULTS}
        lw a0, 0(s0)
        sw a0, 0(s1)           # idle: every FIFO not full and empty
        li t0, 0xFFE60000      # pipe 2
        li t1, 0x{seminit:x}
        sw t1, 0(t0)
        li t1, 0x{semwait:x}
        sw t1, 0(t0)
        li t1, 0x{nop:x}
        li t3, 0
        li t4, 64
    1:  lw a0, 0(s0)
        andi t2, a0, 4
        beqz t2, 2f            # pipe 2 full
        sw t1, 0(t0)
        addi t3, t3, 1
        blt t3, t4, 1b
    2:  sw a0, 4(s1)
        sw t3, 8(s1)
        li t2, 1
        sw t2, 16(s1)          # let TRISC2 post the semaphore
    3:  lw a0, 0(s0)
        andi t2, a0, 0x40
        beqz t2, 3b
        sw a0, 12(s1)
        ecall
    """
    trisc2 = f"""
        li s1, {RESULTS}
    1:  lw t2, 16(s1)
        beqz t2, 1b
        li t0, {SEM_BASE}
        sw x0, 0(t0)           # post semaphore 0
        ecall
    """
    tile = run({"brisc": brisc, "trisc2": trisc2}, engine=engine)
    idle, full, pushed, drained = words(tile, RESULTS, 4)
    assert idle == 0x77
    assert full == 0x33  # pipes 0 and 1 empty and not full; pipe 2 full and not empty
    # One store at a time, the FIFO is full at 29 words (it takes a push at 28 or fewer).
    held = BLACKHOLE.pipe_queue_accept + 1
    assert held <= pushed <= held + 2
    assert drained == 0x77


# ---------------------------------------------------------------- 8- and 16-bit accesses


def _merge(word: int, offset: int, size: int, value: int) -> int:
    """Reference: a store of ``size`` bytes at byte ``offset`` of ``word``."""
    mask = ((1 << (8 * size)) - 1) << (8 * offset)
    return (word & ~mask) | ((value << (8 * offset)) & mask)


@pytest.mark.parametrize("address", [FEATURE_DISABLE, STREAM5_REG10], ids=["tile_control", "stream"])
def test_narrow_loads_read_the_addressed_bytes(address):
    value = 0x89A2C3F4
    loads = [("lbu", 0), ("lbu", 1), ("lbu", 2), ("lbu", 3), ("lb", 3), ("lhu", 0), ("lhu", 2), ("lh", 2)]
    lines = [f"li t0, {address}", f"li t1, 0x{value:x}", "sw t1, 0(t0)", f"li s1, {RESULTS}"]
    for i, (op, offset) in enumerate(loads):
        lines += [f"{op} a0, {offset}(t0)", f"sw a0, {4 * i}(s1)"]
    tile = run({"brisc": "\n".join([*lines, "ecall"])})
    expected = []
    for op, offset in loads:
        size = 1 if op.startswith("lb") else 2
        part = (value >> (8 * offset)) & ((1 << (8 * size)) - 1)
        if not op.endswith("u") and part >> (8 * size - 1):
            part |= 0xFFFFFFFF ^ ((1 << (8 * size)) - 1)
        expected.append(part)
    assert words(tile, RESULTS, len(loads)) == expected


@pytest.mark.parametrize("address", [FEATURE_DISABLE, STREAM5_REG10], ids=["tile_control", "stream"])
@pytest.mark.parametrize(("op", "offset"), [("sb", 0), ("sb", 1), ("sb", 3), ("sh", 0), ("sh", 2)])
def test_narrow_stores_change_only_the_addressed_bytes(address, op, offset):
    before, value = 0x11223344, 0xA5B6C7D8
    source = f"""
        li t0, {address}
        li t1, 0x{before:x}
        sw t1, 0(t0)
        li t1, 0x{value:x}
        {op} t1, {offset}(t0)
        lw a0, 0(t0)
        ecall
    """
    tile = run({"brisc": source})
    assert tile.core("brisc").reg("a0") == _merge(before, offset, 1 if op == "sb" else 2, value)


def test_narrow_load_of_the_wall_clock_reads_its_low_bytes():
    tile = run({"brisc": "li t0, 0xFFB121F0\n lhu a0, 0(t0)\n lw a1, 0(t0)\n ecall"})
    brisc = tile.core("brisc")
    low, later = brisc.reg("a0"), brisc.reg("a1")
    assert 0 < low <= later < 0x10000  # the same counter, read a few cycles apart


def test_a_parked_lhu_poll_wakes_on_a_word_store():
    """TRISC0 polls a stream counter with lhu; BRISC stores the whole word much later."""
    trisc0 = f"""
        li t0, {STREAM5_REG10}
    1:  lhu a0, 0(t0)
        beqz a0, 1b
        csrr a1, mcycle
        ecall
    """
    brisc = f"""
        li t2, 5000
    1:  addi t2, t2, -1
        bnez t2, 1b
        li t0, {STREAM5_REG10}
        li t1, 3
        csrr a1, mcycle
        sw t1, 0(t0)
        ecall
    """
    tile = run({"trisc0": trisc0, "brisc": brisc})
    assert tile.core("trisc0").reg("a0") == 3
    assert tile.core("trisc0").reg("a1") > tile.core("brisc").reg("a1")


@pytest.mark.parametrize(
    ("core", "address", "op", "region"),
    [
        ("brisc", 0xFFB20000 + 0x40, "lhu a0, 0(t0)", "noc0"),  # NoC registers: not described as narrow
        ("brisc", 0xFFE40000, "sb t0, 0(t0)", None),  # a push is an sw (PushTensixInstruction.md)
        ("trisc0", 0xFFEC1000, "lhu a0, 0(t0)", "mailbox"),  # FIFOs of 32-bit values
        ("trisc0", 0xFFEC2000, "sh t0, 0(t0)", "mailbox"),
        ("trisc0", SEM_BASE, "lbu a0, 0(t0)", "tensix"),  # semaphores: not described as narrow
    ],
)
def test_narrow_access_where_hardware_takes_none_still_faults(core, address, op, region):
    tile = tile_with({core: f"li t0, {address}\n {op}\n ecall"})
    with pytest.raises(MemoryFault) as info:
        tile.run(release=[core])
    assert info.value.core == core and info.value.address == address
    assert tile.core(core).fetch(info.value.pc) & 0x5F == 0x03  # the pc of the load or store
    assert info.value.cycle is not None
    if region is not None:
        assert region in str(info.value) and "only 32-bit" in str(info.value)


# ---------------------------------------------------------------- mailboxes


def test_mailbox_is_a_fifo_between_two_triscs():
    trisc1 = f"""
        li t0, {mailbox("trisc2")}
        li t1, 11
        sw t1, 0(t0)
        li t1, 22
        sw t1, 0(t0)
        li t1, 33
        sw t1, 0(t0)
        ecall
    """
    trisc2 = f"""
        li t0, {mailbox("trisc1")}
        li s1, {RESULTS}
        lw a0, 0(t0)
        lw a1, 0x40(t0)        # any address in the page but the query bit pops
        lw a2, 0(t0)
        lw a3, 4(t0)           # query: empty
        sw a0, 0(s1)
        sw a1, 4(s1)
        sw a2, 8(s1)
        sw a3, 12(s1)
        ecall
    """
    tile = run({"trisc1": trisc1, "trisc2": trisc2})
    assert words(tile, RESULTS, 4) == [11, 22, 33, 0]


def test_brisc_mailbox_to_itself_and_the_query():
    brisc = f"""
        li t0, {mailbox("brisc")}
        lw a0, 4(t0)           # empty
        li t1, 7
        sw t1, 0(t0)
        lw a1, 4(t0)           # something to read (and the query pops nothing)
        lw a2, 4(t0)
        lw a3, 0(t0)
        lw a4, 4(t0)
        ecall
    """
    tile = run({"brisc": brisc})
    b = tile.core("brisc")
    assert [b.reg(r) for r in ("a0", "a1", "a2", "a3", "a4")] == [0, 1, 1, 7, 0]


def test_mailbox_read_waits_for_the_write():
    trisc0 = f"""
        li t0, {mailbox("trisc2")}
        lw a0, 0(t0)           # blocks until TRISC2 writes
        csrr a1, mcycle
        ecall
    """
    trisc2 = f"""
        li t2, 3000
    1:  addi t2, t2, -1
        bnez t2, 1b
        csrr a1, mcycle
        li t0, {mailbox("trisc0")}
        li t1, 0x55
        sw t1, 0(t0)
        ecall
    """
    tile = run({"trisc0": trisc0, "trisc2": trisc2})
    assert tile.core("trisc0").reg("a0") == 0x55
    assert tile.core("trisc0").reg("a1") > tile.core("trisc2").reg("a1") > 3000


@pytest.mark.parametrize(
    ("targets", "what"),
    [
        (["trisc1"] * 5, "one mailbox holds four"),
        (["trisc1", "trisc1", "trisc2", "trisc2", "trisc1"], "a writer's four"),
    ],
)
def test_fifth_mailbox_write_waits_for_room(targets, what):
    """TRISC0 writes five values; the fifth waits until TRISC1 pops its first (late)."""
    writes = []
    for target in targets:
        writes += [f"li t0, {mailbox(target)}", "addi t1, t1, 1", "sw t1, 0(t0)"]
    trisc0 = "\n".join(["li t1, 0", *writes, "csrr a1, mcycle", "ecall"])
    trisc1 = f"""
        li t2, 3000
    1:  addi t2, t2, -1
        bnez t2, 1b
        csrr a1, mcycle
        li t0, {mailbox("trisc0")}
        lw a0, 0(t0)
        ecall
    """
    tile = run({"trisc0": trisc0, "trisc1": trisc1, "trisc2": "ecall"})
    assert tile.core("trisc1").reg("a0") == 1, what
    assert tile.core("trisc0").reg("a1") > tile.core("trisc1").reg("a1"), what
    assert int(tile.mailboxes.count.sum()) == 4


def test_reading_an_empty_mailbox_nobody_writes_is_a_deadlock():
    tile = tile_with({"trisc1": f"li t0, {mailbox('brisc')}\n lw a0, 0(t0)\n ecall"})
    with pytest.raises(Deadlock, match="mailbox from brisc empty"):
        tile.run(release=["trisc1"], max_cycles=100_000)


def test_ncrisc_has_no_mailbox():
    tile = tile_with({"ncrisc": f"li t0, {mailbox('trisc0')}\n li t1, 1\n sw t1, 0(t0)\n ecall"})
    with pytest.raises(MemoryFault) as info:
        tile.run(release=["ncrisc"])
    assert (info.value.core, info.value.address, info.value.write) == ("ncrisc", mailbox("trisc0"), True)


def test_reset_empties_the_mailboxes():
    tile = run({"brisc": f"li t0, {mailbox('trisc0')}\n li t1, 9\n sw t1, 0(t0)\n ecall"})
    assert int(tile.mailboxes.count.sum()) == 1
    tile.reset()
    assert int(tile.mailboxes.count.sum()) == 0


def test_support_matrix_lists_every_register_and_how_it_is_modelled():
    from tensixsim.support import register_rows

    rows = register_rows()
    for facts in TILE_REGISTERS:
        (row,) = [r for r in rows if r.startswith(f"| {facts.name} |")]
        assert f"0x{facts.address:08X}" in row
        assert ("plain storage" in row) == (facts.behaviour == "storage")
    assert any("MAILBOX" in r and "0xFFEC0000-0xFFEC3FFF" in r for r in rows)


# ---------------------------------------------------------------- debug read of backend configuration

CFGREG_RD_CNTL, CFGREG_RDDATA = 0xFFB12058, 0xFFB12078
TENSIX_CFG_BASE = 0xFFEF0000


def test_cfgreg_debug_read_shows_the_config_word_it_names():
    """TRISC0 writes Config[0][5] and Config[1][3] (word 224 + 3), then reads both back through the
    debug pair, naming the second with bits above the 11 the page says are used."""
    trisc0 = f"""
        li t0, {TENSIX_CFG_BASE}
        li t1, 0xCAFE0005
        sw t1, 20(t0)
        li t1, 0x0BEEF003
        sw t1, {4 * (224 + 3)}(t0)
        li t0, {CFGREG_RD_CNTL}
        li t1, 5
        sw t1, 0(t0)
        lw a0, 0x20(t0)        # CFGREG_RDDATA
        li t1, 0x1800 | (224 + 3)
        sw t1, 0(t0)
        lw a1, 0x20(t0)
        lw a2, 0(t0)           # CFGREG_RD_CNTL reads back what was written
        ecall
    """
    tile = run({"trisc0": trisc0})
    t0 = tile.core("trisc0")
    assert (t0.reg("a0"), t0.reg("a1"), t0.reg("a2")) == (0xCAFE0005, 0x0BEEF003, 0x1800 | 227)


def test_cfgreg_debug_read_of_a_word_with_no_register_names_the_reader():
    ncrisc = f"li t0, {CFGREG_RD_CNTL}\n li t1, 0x7FF\n sw t1, 0(t0)\n lw a0, 0x20(t0)\n ecall"
    tile = tile_with({"ncrisc": ncrisc})
    with pytest.raises(MemoryFault) as info:
        tile.run(release=["ncrisc"])
    assert info.value.core == "ncrisc" and info.value.address == TENSIX_CFG_BASE + 4 * 0x7FF
    assert tile.core("ncrisc").fetch(info.value.pc) & 0x7F == 0x03


# ---------------------------------------------------------------- narrow loads only: configuration and GPRs


@pytest.mark.parametrize(
    "address", [TENSIX_CFG_BASE + 4 * 5, 0xFFE00000 + 4 * 7], ids=["Config[0][5]", "T0 GPR 7"]
)
def test_narrow_loads_of_configuration_and_gprs_read_their_bytes(address):
    source = f"""
        li t0, {address}
        li t1, 0x80C1E2F3
        sw t1, 0(t0)
        lbu a0, 1(t0)
        lhu a1, 2(t0)
        lh a2, 2(t0)
        lb a3, 0(t0)
        ecall
    """
    tile = run({"trisc0": source})
    t0 = tile.core("trisc0")
    assert [t0.reg(r) for r in ("a0", "a1", "a2", "a3")] == [0xE2, 0x80C1, 0xFFFF80C1, 0xFFFFFFF3]


def test_narrow_store_to_configuration_faults():
    # BackendConfiguration.md: RISC-V writes to Config are "sw only".
    address = TENSIX_CFG_BASE + 4 * 5
    tile = tile_with({"trisc0": f"li t0, {address}\n li t1, 1\n sh t1, 2(t0)\n ecall"})
    with pytest.raises(MemoryFault, match="only 32-bit stores") as info:
        tile.run(release=["trisc0"])
    assert (info.value.core, info.value.address, info.value.write) == ("trisc0", address + 2, True)
    assert int(tile.coprocessor.config.config[0, 5]) == 0


# ---------------------------------------------------------------- INSTRN_BUF_CTRL0/1: debug-bus pushes
INSTRN_BUF_CTRL0 = 0xFFB120A0  # INSTRN_BUF_CTRL1 follows at +4 (tensix.h)


@pytest.mark.parametrize("engine", ["native", "python"])
@pytest.mark.parametrize("pipe", [0, 2])
def test_a_debug_bus_push_enters_the_pipe_on_a_rising_push_bit(engine, pipe):
    """PushTensixInstruction.md: with bit ``pipe`` of CTRL0 set, a 0 -> 1 change of bit 4 + pipe pushes
    CTRL1; no change, or no control of the FIFO, pushes nothing."""
    seminit = ISA.encode("SEMINIT", max_value=15, init_value=3, sem_sel=0b100)  # semaphore 2 := 3
    control, push = 1 << pipe, 1 << (4 + pipe)
    brisc = f"""
        li t0, {INSTRN_BUF_CTRL0}
        li t1, 0x{seminit:x}
        sw t1, 4(t0)
        li t1, {control}
        sw t1, 0(t0)           # the debug bus takes the FIFO
        li t1, {control | push}
        sw t1, 0(t0)           # 0 -> 1: one push
        sw t1, 0(t0)           # 1 -> 1: none
        li t1, {control}
        sw t1, 0(t0)
        li t1, {push}
        sw t1, 0(t0)           # 0 -> 1 without control: none
        lw a0, 0(t0)
        lw a1, 4(t0)
        li t1, 0xFFFFFF00
        sw t1, 0(t0)           # bits 8 and up read zero
        lw a2, 0(t0)
        ecall
    """
    tile = run({"brisc": brisc}, engine=engine, record_pushes=True)
    brisc_core = tile.core("brisc")
    assert (brisc_core.reg("a0"), brisc_core.reg("a1"), brisc_core.reg("a2")) == (push, seminit, 0)
    pushed = tile.pushed(pipe)
    assert [(p.word, p.core, p.inline) for p in pushed] == [(seminit, "brisc", False)]
    assert int(tile.coprocessor.sync.sem_value[2]) == 3  # executed
    assert all(not tile.pushed(other) for other in range(3) if other != pipe)


def test_a_debug_bus_push_into_a_pipe_the_core_cannot_reach_is_unimplemented():
    from tensixsim import Unimplemented

    trisc1 = f"li t0, {INSTRN_BUF_CTRL0}\n li t1, 0x11\n sw t1, 0(t0)\n ecall"  # into pipe 0
    with pytest.raises(Unimplemented, match="debug-bus push into pipe 0 from trisc1") as info:
        run({"trisc1": trisc1})
    assert info.value.core == "trisc1" and info.value.pc == 0xA000 + 12  # the store (li t0 is two words)
    assert info.value.value == 0  # CTRL1, the word it would have pushed


def test_a_debug_bus_push_into_a_full_fifo_is_undefined():
    """BRISC blocks pipe 1 behind a SEMWAIT, then pushes NOPs through the debug bus until the FIFO
    is full: the documentation says software should not push then."""
    from tensixsim import UndefinedBehavior

    semwait = ISA.encode("SEMWAIT", stall_res=0x7F, sem_sel=0b1, wait_sem_cond=1)
    brisc = f"""
        li t0, 0xFFE50000
        li t1, 0x{semwait:x}
        sw t1, 0(t0)           # semaphore 0 is 0: pipe 1 waits
        li t0, {INSTRN_BUF_CTRL0}
        li t1, 0x{ISA.encode("NOP"):x}
        sw t1, 4(t0)
        li t1, 0x02
        li t2, 0x22
        li t3, 0
        li t4, 100
    1:  sw t2, 0(t0)
        sw t1, 0(t0)
        addi t3, t3, 1
        blt t3, t4, 1b
        ecall
    """
    with pytest.raises(UndefinedBehavior, match="pipe 1's full input FIFO") as info:
        run({"brisc": brisc})
    assert info.value.core == "brisc" and info.value.value == ISA.encode("NOP")
