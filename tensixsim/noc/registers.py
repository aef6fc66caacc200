"""The NIU's registers as the request machinery names them: request fields, configuration and
counter windows, NOC_CTRL bits and counter indices (tt-isa-documentation BlackholeA0 NoC
MemoryMap.md, Counters.md, Atomics.md). Another architecture's layout (NocFacts.registers) is decoded
into these fields (tensixsim.noc.niu.Noc.decode)."""

from __future__ import annotations

# The request as the NIU acts on it: Blackhole's fields (another layout is decoded into them). Offsets
# of Blackhole's registers, for code that names them (the tile uses NocFacts.registers).
REQUEST_FIELDS = (
    "NOC_TARG_ADDR_LO",
    "NOC_TARG_ADDR_MID",
    "NOC_TARG_ADDR_HI",
    "NOC_RET_ADDR_LO",
    "NOC_RET_ADDR_MID",
    "NOC_RET_ADDR_HI",
    "NOC_PACKET_TAG",
    "NOC_CTRL",
    "NOC_AT_LEN_BE",
    "NOC_AT_LEN_BE_1",
    "NOC_AT_DATA",
    "NOC_BRCST_EXCLUDE",
)
(
    TARG_LO,
    TARG_MID,
    TARG_HI,
    RET_LO,
    RET_MID,
    RET_HI,
    PACKET_TAG,
    CTRL,
    AT_LEN_BE,
    AT_LEN_BE_1,
    AT_DATA,
    BRCST_EXCLUDE,
) = range(len(REQUEST_FIELDS))
NOC_CMD_CTRL = 0x40
NOC_NODE_ID = 0x44
NOC_ENDPOINT_ID = 0x48
NOC_CLEAR_OUTSTANDING_REQ_CNT = 0x60
CONFIG_BASE = 0x100
CONFIG_WORDS = 32  # Blackhole's configuration window (0x100..0x17F)
TRANSLATION_ENABLE = 1 << 14  # NIU_CFG_0
# Configuration registers with no storage: pulses clearing state that is not modelled.
CONFIG_PULSES = ("DEBUG_COUNTER_RESET", "NIU_TRANS_COUNT_RTZ_CLR")
COUNTER_BASE = 0x200
COUNTER_WORDS = 64
REQUEST_TYPES = {0: "read", 1: "atomic", 2: "write", 3: "reserved"}

# NOC_CTRL fields (MemoryMap.md).
CMD_RD, CMD_AT, CMD_WR = 0, 1, 2
CMD_WR_BE = 1 << 2
CMD_WR_INLINE = 1 << 3
CMD_RESP_MARKED = 1 << 4
CMD_BRCST_PACKET = 1 << 5
CMD_BRCST_SRC_INCLUDE = 1 << 17
CMD_L1_ACC_AT_EN = 1 << 31

# Counter indices (Counters.md).
MST_ATOMIC_RESP_RECEIVED = 0
MST_WR_ACK_RECEIVED = 1
MST_RD_RESP_RECEIVED = 2
MST_RD_DATA_WORD_RECEIVED = 3
MST_CMD_ACCEPTED = 4
MST_RD_REQ_SENT = 5
MST_NONPOSTED_ATOMIC_SENT = 6
MST_POSTED_ATOMIC_SENT = 7
MST_NONPOSTED_WR_DATA_WORD_SENT = 8
MST_POSTED_WR_DATA_WORD_SENT = 9
MST_NONPOSTED_WR_REQ_SENT = 10
MST_POSTED_WR_REQ_SENT = 11
MST_NONPOSTED_WR_REQ_STARTED = 12
MST_POSTED_WR_REQ_STARTED = 13
MST_RD_REQ_STARTED = 14
MST_NONPOSTED_ATOMIC_STARTED = 15
MST_REQS_OUTSTANDING_ID = 16  # + transaction id, 8 bits
MST_WRITE_REQS_OUTGOING_ID = 32  # + transaction id, 8 bits
SLV_ATOMIC_RESP_SENT = 48
SLV_WR_ACK_SENT = 49
SLV_RD_RESP_SENT = 50
SLV_RD_DATA_WORD_SENT = 51
SLV_REQ_ACCEPTED = 52
SLV_RD_REQ_RECEIVED = 53
SLV_NONPOSTED_ATOMIC_RECEIVED = 54
SLV_POSTED_ATOMIC_RECEIVED = 55
SLV_NONPOSTED_WR_DATA_WORD_RECEIVED = 56
SLV_POSTED_WR_DATA_WORD_RECEIVED = 57
SLV_NONPOSTED_WR_REQ_RECEIVED = 58
SLV_POSTED_WR_REQ_RECEIVED = 59
SLV_NONPOSTED_WR_REQ_STARTED = 60
SLV_POSTED_WR_REQ_STARTED = 61
EIGHT_BIT_COUNTERS = range(MST_REQS_OUTSTANDING_ID, SLV_ATOMIC_RESP_SENT)

# NOC_AT_LEN_BE of an atomic (Atomics.md): Ofs bits 0..1, opcode bits 12..15.
AT_INCREMENT = 0x1
AT_SWAP_MASK = 0x3
AT_CAS = 0x4
AT_SWAP_INDEX = 0x6  # bit 2 set; Ofs in bits 0..1
AT_SWAP_INDEX_HIGH = 0x7  # Ofs in bits 2..3
AT_ZAAMO = 0xA  # bit 11 set: a Zaamo operation (Op in bits 8..10); bits 8..11 = 3: an index swap
AT_ACCUMULATE = 0x9
# Names of NOC_AT_LEN_BE's opcodes (Atomics.md), for messages.
ATOMIC_NAMES = {
    AT_INCREMENT: "increment",
    AT_SWAP_MASK: "swap (mask)",
    AT_CAS: "compare and swap",
    AT_SWAP_INDEX: "swap (index)",
    AT_SWAP_INDEX_HIGH: "swap (index)",
    AT_ACCUMULATE: "parallel addition",
    AT_ZAAMO: "Zaamo / swap (index)",
}
