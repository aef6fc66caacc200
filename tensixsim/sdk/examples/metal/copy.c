/* DRAM -> L1 -> DRAM copy of an interleaved buffer, one page at a time, for the tt-metal firmware.
 *
 * Kernel ABI (tt-metal's BRISC/NCRISC kernels): entry `_start` at the start of the image, called by
 * the firmware as `uint32_t (*)(void)`; the runtime arguments are at `rta_l1_base`, a firmware global
 * in the core's local RAM (its address comes from the firmware ELF at link time), and so are the
 * DRAM bank tables the firmware copied from the host at boot.
 *
 * Runtime arguments: source base, destination base, pages, page size, L1 buffer, NoC index.
 */
#include <stdint.h>

extern uint32_t *rta_l1_base;
extern uint16_t dram_bank_to_noc_xy[2][NUM_DRAM_BANKS];
extern int32_t bank_to_dram_offset[NUM_DRAM_BANKS];

#define REG(a) (*(volatile uint32_t *)(a))
#define NIU(noc) ((noc) ? 0xFFB30000u : 0xFFB20000u)
#define TARG_LO 0x00
#define TARG_MID 0x04
#define TARG_HI 0x08
#define RET_LO 0x0C
#define RET_MID 0x10
#define RET_HI 0x14
#define CTRL 0x1C
#define LEN 0x20
#define CMD 0x40
#define NODE_ID 0x44
#define RD_RESP_RECEIVED 0x208
#define WR_ACK_RECEIVED 0x204

static void request(uint32_t niu, uint32_t targ, uint32_t targ_hi, uint32_t ret, uint32_t ret_hi, uint32_t ctrl,
                    uint32_t len) {
    while (REG(niu + CMD) & 1) {
    }
    REG(niu + TARG_LO) = targ;
    REG(niu + TARG_MID) = 0;
    REG(niu + TARG_HI) = targ_hi;
    REG(niu + RET_LO) = ret;
    REG(niu + RET_MID) = 0;
    REG(niu + RET_HI) = ret_hi;
    REG(niu + CTRL) = ctrl;
    REG(niu + LEN) = len;
    REG(niu + CMD) = 1;
}

__attribute__((section(".start"), used)) uint32_t _start(void) {
    const uint32_t *args = rta_l1_base;
    uint32_t src = args[0], dst = args[1], pages = args[2], page = args[3], buffer = args[4], noc = args[5];
    uint32_t niu = NIU(noc);
    uint32_t own = REG(niu + NODE_ID) & 0xFFF;
    uint32_t stride = (page + 63) & ~63u;
    uint32_t reads = REG(niu + RD_RESP_RECEIVED), acks = REG(niu + WR_ACK_RECEIVED);
    for (uint32_t p = 0; p < pages; p++) {
        uint32_t bank = p % NUM_DRAM_BANKS;
        uint32_t offset = (p / NUM_DRAM_BANKS) * stride + bank_to_dram_offset[bank];
        uint32_t xy = dram_bank_to_noc_xy[noc][bank];
        request(niu, src + offset, xy, buffer, own, 0, page);
        reads++;
        while (REG(niu + RD_RESP_RECEIVED) != reads) {
        }
        request(niu, buffer, own, dst + offset, xy, 2 | 0x10, page);
        acks++;
        while (REG(niu + WR_ACK_RECEIVED) != acks) {
        }
    }
    return 0;
}
