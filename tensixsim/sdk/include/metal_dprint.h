/* metal_dprint.h: DPRINT from kernels on tt-metal firmware that keeps one print buffer per core.
 *
 * Writes the records tt-metal's device-side dprint.h writes (type-tagged DPRINT, the generation whose
 * mailboxes_t.dprint_buf holds DebugPrintMemLayout data[5], e.g. ttnn 0.67.4) into this core's
 * buffer, whose L1 address the build passes as DPRINT_BUFFER (tensixsim.metal.kernels reads it from
 * the firmware's DWARF: mailboxes_t.dprint_buf.data[<this core's processor index>]). The host's print
 * server (Tile.enable_prints with dprint.firmware_buffers, `tensixsim metal --dprint`) decodes them.
 *
 *     dprint_str("tiles: "); dprint_u32(n); dprint_endl();
 *
 * The protocol, as tt-metal's dprint.h / hostdevcommon/dprint_common.h of that generation define it:
 * - buffer: wpos (u32), rpos (u32), core_x, core_y (u16 each), then 192 bytes of data;
 * - a record is [type id u8][payload size u8][payload]; wpos moves past it only once it is written;
 * - wpos == 0x98989898 (the host server started): the first print sets wpos = rpos = 0;
 *   wpos == 0xF8F8F8F8 (printing disabled for this core): every print returns at once;
 * - when wpos + size + 2 >= 192 the core waits until rpos >= wpos (the host has read it all), giving
 *   up if the host writes the disabled magic meanwhile, then starts again at 0 (wpos = rpos = 0);
 * - a payload longer than 190 bytes (a string) goes in 190-byte pieces, each a record of 189 bytes
 *   of text and a NUL, the core waiting for the host after each piece (then wpos = rpos = 0 again);
 * - ENDL, SETW, SETPRECISION, FIXED, DEFAULTFLOAT, HEX, OCT, DEC carry a one-byte payload (the C++
 *   structs are one char); a string carries its NUL.
 * Type ids are the order of DPRINT_TYPES (dprint_common.h).
 */
#ifndef METAL_DPRINT_H
#define METAL_DPRINT_H

#include <stdint.h>

#ifndef DPRINT_BUFFER
#error "DPRINT_BUFFER is not defined: this firmware has no per-core DPRINT buffers (see tensixsim.observe.dprint)"
#endif

#define DPRINT_STARTING_MAGIC 0x98989898u /* DEBUG_PRINT_SERVER_STARTING_MAGIC */
#define DPRINT_DISABLED_MAGIC 0xF8F8F8F8u /* DEBUG_PRINT_SERVER_DISABLED_MAGIC */
#define DPRINT_DATA_SIZE 192u             /* DPRINT_BUFFER_SIZE (204) - sizeof(Aux) (12) */

enum {
    DPRINT_CSTR, DPRINT_ENDL, DPRINT_SETW, DPRINT_UINT8, DPRINT_UINT16, DPRINT_UINT32, DPRINT_UINT64,
    DPRINT_INT8, DPRINT_INT16, DPRINT_INT32, DPRINT_INT64, DPRINT_FLOAT32, DPRINT_CHAR, DPRINT_BFLOAT16,
    DPRINT_SETPRECISION, DPRINT_FIXED, DPRINT_DEFAULTFLOAT, DPRINT_HEX, DPRINT_OCT, DPRINT_DEC,
    DPRINT_TILESLICE, DPRINT_U32_ARRAY, DPRINT_TYPED_U32_ARRAY,
};

#define DPRINT_WPOS (*(volatile uint32_t *)(uintptr_t)(DPRINT_BUFFER))
#define DPRINT_RPOS (*(volatile uint32_t *)(uintptr_t)((DPRINT_BUFFER) + 4u))
#define DPRINT_DATA ((volatile uint8_t *)(uintptr_t)((DPRINT_BUFFER) + 12u))

/* Wait until the host has read everything written; 0 if it disabled printing meanwhile. */
static inline int dprint_wait_for_host(void)
{
    while (DPRINT_RPOS < DPRINT_WPOS) {
        if (DPRINT_WPOS == DPRINT_DISABLED_MAGIC)
            return 0;
    }
    return 1;
}

static __attribute__((noinline)) void dprint_record(uint8_t type, const void *payload, uint32_t size)
{
    const uint8_t *bytes = (const uint8_t *)payload;
    if (DPRINT_WPOS == DPRINT_STARTING_MAGIC) { /* the DebugPrinter constructor's first-use reset */
        DPRINT_WPOS = 0;
        DPRINT_RPOS = 0;
    }
    if (DPRINT_WPOS == DPRINT_DISABLED_MAGIC)
        return;
    uint32_t wpos = DPRINT_WPOS;
    if (wpos + size + 2u >= DPRINT_DATA_SIZE) {
        if (!dprint_wait_for_host())
            return;
        DPRINT_WPOS = 0;
        DPRINT_RPOS = 0;
        wpos = 0;
        while (size > DPRINT_DATA_SIZE - 2u) { /* only strings get here */
            uint32_t piece = DPRINT_DATA_SIZE - 2u;
            DPRINT_DATA[0] = type;
            DPRINT_DATA[1] = (uint8_t)piece;
            for (uint32_t i = 0; i < piece - 1u; i++)
                DPRINT_DATA[2u + i] = *bytes++;
            DPRINT_DATA[2u + piece - 1u] = 0;
            DPRINT_WPOS = piece + 2u;
            if (!dprint_wait_for_host())
                return;
            size -= piece - 1u;
            /* wpos before rpos, as at every restart: a host reading in between must not find
             * rpos < wpos over the bytes the next piece is about to overwrite. */
            DPRINT_WPOS = 0;
            DPRINT_RPOS = 0;
        }
    }
    DPRINT_DATA[wpos] = type;
    DPRINT_DATA[wpos + 1u] = (uint8_t)size;
    for (uint32_t i = 0; i < size; i++)
        DPRINT_DATA[wpos + 2u + i] = bytes[i];
    DPRINT_WPOS = wpos + 2u + size; /* the record is complete: the host may read it */
}

static inline void dprint_flag(uint8_t type, uint8_t value) { dprint_record(type, &value, 1); }

static inline void dprint_str(const char *text)
{
    uint32_t n = 0;
    while (text[n])
        n++;
    dprint_record(DPRINT_CSTR, text, n + 1u);
}
static inline void dprint_char(char c) { dprint_record(DPRINT_CHAR, &c, 1); }
static inline void dprint_u8(uint8_t v) { dprint_record(DPRINT_UINT8, &v, 1); }
static inline void dprint_u16(uint16_t v) { dprint_record(DPRINT_UINT16, &v, 2); }
static inline void dprint_u32(uint32_t v) { dprint_record(DPRINT_UINT32, &v, 4); }
static inline void dprint_u64(uint64_t v) { dprint_record(DPRINT_UINT64, &v, 8); }
static inline void dprint_i8(int8_t v) { dprint_record(DPRINT_INT8, &v, 1); }
static inline void dprint_i16(int16_t v) { dprint_record(DPRINT_INT16, &v, 2); }
static inline void dprint_i32(int32_t v) { dprint_record(DPRINT_INT32, &v, 4); }
static inline void dprint_i64(int64_t v) { dprint_record(DPRINT_INT64, &v, 8); }
static inline void dprint_f32(float v) { dprint_record(DPRINT_FLOAT32, &v, 4); }
static inline void dprint_bf16(uint16_t bits) { dprint_record(DPRINT_BFLOAT16, &bits, 2); }
static inline void dprint_u32_array(const uint32_t *words, uint32_t count)
{
    dprint_record(DPRINT_U32_ARRAY, words, count * 4u);
}
static inline void dprint_endl(void) { dprint_flag(DPRINT_ENDL, 0); }
static inline void dprint_setw(uint8_t width) { dprint_flag(DPRINT_SETW, width); }
static inline void dprint_setprecision(uint8_t digits) { dprint_flag(DPRINT_SETPRECISION, digits); }
static inline void dprint_fixed(void) { dprint_flag(DPRINT_FIXED, 0); }
static inline void dprint_defaultfloat(void) { dprint_flag(DPRINT_DEFAULTFLOAT, 0); }
static inline void dprint_hex(void) { dprint_flag(DPRINT_HEX, 0); }
static inline void dprint_oct(void) { dprint_flag(DPRINT_OCT, 0); }
static inline void dprint_dec(void) { dprint_flag(DPRINT_DEC, 0); }

#endif
