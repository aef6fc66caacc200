"""Synchronisation figures: tt-metal-style circular-buffer and semaphore calls, the coprocessor's
semaphores, and Tensix instruction pushes."""

from __future__ import annotations

from tensixsim.sdk.calibration.case import BH, NOP, PC_BUF_SYNC, Case, la, li, rept
from tensixsim.sdk.layout import L1_USER_BASE


def _tensix_word(name: str, **fields: int) -> str:
    """A Tensix instruction inline in a TRISC's instruction stream (rotated left by two)."""
    word = BH.encode(name, **fields)
    return f".word 0x{(word << 2 | word >> 30) & 0xFFFFFFFF:08x}"


# --------------------------------------------------------------------------- circular buffers, semaphores
# tt-metal-style circular-buffer calls on ready buffers, as the measured ones make them: the CB's
# interface is a struct in the core's local RAM (cb_iface: fifo_size, fifo_limit, page_size,
# num_pages, rd_ptr, wr_ptr, then received << 16 | acked), its page counters stream 8's tiles-acked
# and tiles-received registers. The buffer never wraps. a0 the interface, a1..a5 scratch.
STREAM_ACKED = 0xFFB48020
STREAM_RECEIVED = 0xFFB48028


def cb_setup(received: int, acked: int) -> str:
    return "\n".join(
        (
            la("a0", "cb_iface"),
            "li a1, 0x1000000\nsw a1, 0(a0)\nli a1, 0x7ffffff0\nsw a1, 4(a0)\nli a1, 2048\nsw a1, 8(a0)",
            "li a1, 32768\nsw a1, 12(a0)\nsw zero, 16(a0)\nsw zero, 20(a0)",
            f"{li('a1', received << 16 | acked)}\nsw a1, 24(a0)",
            f"{li('a2', STREAM_RECEIVED)}\nli a1, {received}\nsw a1, 0(a2)",
            f"{li('a2', STREAM_ACKED)}\nli a1, {acked}\nsw a1, 0(a2)\nfence",
        )
    )


CB_WAIT_FRONT = (
    f"{la('a0', 'cb_iface')}\nlw a1, 24(a0)\nslli a2, a1, 16\nsrli a2, a2, 16\nli a5, 1\n"
    f"3:\n{li('a3', STREAM_RECEIVED)}\nlhu a3, 0(a3)\nsub a4, a3, a2\nli a5, 1\nbgeu a4, a5, 4f\n"
    "fence\nj 3b\n4:\nfence"
)
CB_RESERVE_BACK = (
    f"{la('a0', 'cb_iface')}\nlw a1, 24(a0)\nsrli a1, a1, 16\n"
    f"3:\n{li('a2', STREAM_ACKED)}\nlhu a2, 0(a2)\nsub a3, a1, a2\nlw a4, 12(a0)\nsub a3, a4, a3\n"
    "li a5, 1\nbge a3, a5, 4f\nfence\nj 3b\n4:\nfence"
)
_CB_WR_PTR = (
    "lw a1, 20(a0)\nlw a2, 8(a0)\nadd a1, a1, a2\nlw a2, 4(a0)\nbltu a1, a2, 3f\nlw a2, 0(a0)\n"
    "sub a1, a1, a2\n3:\nsw a1, 20(a0)"
)
_CB_RD_PTR = (
    "lw a1, 16(a0)\nlw a2, 8(a0)\nadd a1, a1, a2\nlw a2, 4(a0)\nbltu a1, a2, 3f\nlw a2, 0(a0)\n"
    "sub a1, a1, a2\n3:\nsw a1, 16(a0)"
)
# The page counter: received (a5) + 1 into the packed word, and written to the stream register.
_CB_RECEIVED = (
    f"lw a3, 24(a0)\nslli a4, a3, 16\nsrli a4, a4, 16\nsrli a5, a3, 16\naddi a5, a5, 1\nslli a5, a5, 16\n"
    f"or a3, a5, a4\nsw a3, 24(a0)\nsrli a5, a5, 16\n{li('a2', STREAM_RECEIVED)}\nsw a5, 0(a2)"
)
_CB_ACKED = (
    "lw a3, 24(a0)\nslli a4, a3, 16\nsrli a4, a4, 16\nsrli a5, a3, 16\naddi a4, a4, 1\nslli a4, a4, 16\n"
    f"srli a4, a4, 16\nslli a5, a5, 16\nor a3, a5, a4\nsw a3, 24(a0)\n{li('a2', STREAM_ACKED)}\n"
    "sw a4, 0(a2)"
)


def _cb_tensix(value: str, gpr16: int, wait: int, gpr: int, register: int) -> str:
    """The TRISC calls' coprocessor path: SETDMAREG of the count into a GPR (a word built at run time,
    pushed through the instruction buffer), STALLWAIT on the packer or unpackers, STOREREG of the GPR
    into the stream register (pushed)."""
    setdmareg = BH.encode(
        "SETDMAREG", payload_sig_sel_size=0, payload_sig_sel=0, set_signals_mode=0, reg_index_16b=gpr16
    )
    storereg = BH.encode("STOREREG", tdma_data_reg_index=gpr, reg_addr=(register >> 2) & 0x3FFFF)
    return (
        f"slli a2, {value}, 8\n{li('a1', setdmareg)}\nadd a2, a2, a1\nlui a1, 0xffe40\nsw a2, 0(a1)\n"
        f"{_tensix_word('STALLWAIT', stall_res=0x20, wait_res=wait)}\n{li('a3', storereg)}\nsw a3, 0(a1)"
    )


_CB_PUSH_BACK = f"{la('a0', 'cb_iface')}\n{_CB_WR_PTR}\n{_CB_RECEIVED}\nfence"
_CB_POP_FRONT = f"{la('a0', 'cb_iface')}\n{_CB_ACKED}\n{_CB_RD_PTR}\nfence"
_CB_PUSH_BACK_TENSIX = (
    f"{la('a0', 'cb_iface')}\n{_CB_WR_PTR}\n{_CB_RECEIVED}\n"
    f"{_cb_tensix('a5', 48, 0x8, 24, STREAM_RECEIVED)}\nfence"
)
_CB_POP_FRONT_TENSIX = (
    f"{la('a0', 'cb_iface')}\n{_CB_ACKED}\n{_cb_tensix('a4', 8, 0x6, 4, STREAM_ACKED)}\n{_CB_RD_PTR}\nfence"
)

# A semaphore in L1 (SEM), as tt-metal's noc_semaphore_set / noc_semaphore_wait: a store and a
# fence; fences around loads until the value is there (it is).
SEM = L1_USER_BASE + 0x30100
_SEM_SET = f"{li('a0', SEM)}\nli a1, 1\nsw a1, 0(a0)\nfence"
SEM_WAIT = f"{li('a0', SEM)}\nli a2, 1\n3:\nfence\nlw a1, 0(a0)\nbeq a1, a2, 4f\nj 3b\n4:\nfence"

# The coprocessor's semaphore 1 (sem_sel bit 1) from TRISC2, and the sync through the PC buffer's
# done check (a store and a load of it: the load returns once the pipe has executed everything).
_SYNC = f"{li('a0', PC_BUF_SYNC)}\nsw zero, 0(a0)\nlw a1, 0(a0)\nand zero, zero, a1"


def _seminit(init: int) -> str:
    return f"{_tensix_word('SEMINIT', max_value=15, init_value=init, sem_sel=2)}\n{_SYNC}"


def _cb_case(name: str, what: str, body: str, silicon: float, received: int, acked: int, **kw) -> Case:
    return Case(name, what, body, 1, (silicon, silicon), setup=cb_setup(received, acked), empty=NOP, **kw)


TRISC2 = {"cores": ("trisc2",), "figure_cores": ("trisc2",)}
SYNC_CASES = (
    _cb_case("cb_wait_front", "cb_wait_front, ready (BRISC)", CB_WAIT_FRONT, 22.0, 1, 0),
    _cb_case("cb_reserve_back", "cb_reserve_back, room (BRISC)", CB_RESERVE_BACK, 23.0, 0, 0),
    _cb_case("cb_push_back", "cb_push_back (BRISC)", _CB_PUSH_BACK, 31.0, 1004, 0),
    _cb_case("cb_pop_front", "cb_pop_front (BRISC)", _CB_POP_FRONT, 31.5, 1004, 0),
    _cb_case(
        "cb_push_back_trisc2",
        "cb_push_back with the coprocessor's STOREREG (TRISC2)",
        _CB_PUSH_BACK_TENSIX,
        41.0,
        1004,
        0,
        **TRISC2,
    ),
    _cb_case(
        "cb_pop_front_trisc2",
        "cb_pop_front with the coprocessor's STOREREG (TRISC2)",
        _CB_POP_FRONT_TENSIX,
        41.5,
        1004,
        0,
        **TRISC2,
    ),
    Case("noc_semaphore_set", "noc_semaphore_set (BRISC)", _SEM_SET, 1, (12.0, 12.0), empty=NOP),
    Case(
        "noc_semaphore_wait",
        "noc_semaphore_wait, already satisfied (BRISC)",
        SEM_WAIT,
        1,
        (19.1, 19.1),
        setup=f"{li('a0', SEM)}\nli a1, 1\nsw a1, 0(a0)\nfence",
        empty=NOP,
    ),
    Case(
        "ttsem_drain",
        "TTSEMPOST + TTSEMGET + drain (TRISC2)",
        f"{_tensix_word('SEMPOST', sem_sel=2)}\n{_tensix_word('SEMGET', sem_sel=2)}\n{_SYNC}",
        1,
        (9.0, 9.0),
        setup=_seminit(1),
        empty=NOP,
        **TRISC2,
    ),
    Case(
        "ttsemwait_drain",
        "TTSEMWAIT (satisfied) + drain (TRISC2)",
        f"{_tensix_word('SEMWAIT', stall_res=2, sem_sel=2, wait_sem_cond=2)}\n{_SYNC}",
        1,
        (8.0, 8.0),
        setup=_seminit(0),
        empty=NOP,
        **TRISC2,
    ),
)

# --------------------------------------------------------------------------- Tensix instruction pushes
# TRISC1 stores instruction words to the instruction buffer (a3), then syncs through the PC buffer.
_PUSH_SETUP = (
    f"lui a3, 0xffe40\n{li('a0', PC_BUF_SYNC)}\n{li('a2', BH.encode('NOP'))}\n"
    f"{li('a4', BH.encode('STALLWAIT', stall_res=0, wait_res=0))}\n"
    f"{li('a5', BH.encode('SEMINIT', max_value=1, init_value=0, sem_sel=2))}"
)
PUSH_SYNC = "sw zero, 0(a0)\nlw a1, 0(a0)\nand zero, zero, a1"
TRISC1 = {"cores": ("trisc1",), "figure_cores": ("trisc1",), "setup": _PUSH_SETUP}
PUSH_CASES = (
    Case("push_sync_empty", "PC-buffer sync, nothing pushed (TRISC1)", PUSH_SYNC, 1, (5.98, 5.98), **TRISC1),
    Case("push_nop", "NOP pushed (TRISC1)", rept(8, "sw a2, 0(a3)"), 8, (0.995, 0.995), **TRISC1),
    Case(
        "push_nop_sync",
        "NOP pushed, then a sync (per push, TRISC1)",
        f"{rept(8, 'sw a2, 0(a3)')}\n{PUSH_SYNC}",
        8,
        (1.999, 1.999),
        **TRISC1,
    ),
    Case(
        "push_stallwait",
        "STALLWAIT with nothing to wait for, pushed (TRISC1)",
        rept(8, "sw a4, 0(a3)"),
        8,
        (1.542, 1.542),
        **TRISC1,
    ),
    Case("push_seminit", "SEMINIT pushed (TRISC1)", rept(4, "sw a5, 0(a3)"), 4, (0.99, 0.99), **TRISC1),
    Case(
        "push_seminit_sync",
        "SEMINIT pushed, then a sync (per push, TRISC1)",
        f"{rept(4, 'sw a5, 0(a3)')}\n{PUSH_SYNC}",
        4,
        (2.998, 2.998),
        **TRISC1,
    ),
)
