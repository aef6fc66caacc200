/* Prints from a kernel on tt-metal firmware with per-core DPRINT buffers (metal_dprint.h).
 *
 * Runtime arguments: a number to print, a line count. Prints a greeting with the number, then the
 * line count of lines "i=<i> i*i=<i*i>", then a few formats (hex, a signed value, floats, bf16,
 * a word array), then a string longer than the print buffer.
 */
#include <stdint.h>

#include "metal_dprint.h"

extern uint32_t *rta_l1_base;

__attribute__((section(".start"), used)) uint32_t _start(void)
{
    const uint32_t *args = rta_l1_base;
    uint32_t id = args[0], lines = args[1];
    dprint_str("hello from kernel ");
    dprint_u32(id);
    dprint_endl();
    for (uint32_t i = 0; i < lines; i++) {
        dprint_str("i=");
        dprint_u32(i);
        dprint_str(" i*i=");
        dprint_setw(4);
        dprint_u32(i * i);
        dprint_endl();
    }
    dprint_hex();
    dprint_u32(0xBEEF00u + id);
    dprint_dec();
    dprint_char(' ');
    dprint_i32(-(int32_t)id);
    dprint_char(' ');
    dprint_i64(-5000000000ll);
    dprint_endl();
    dprint_setprecision(3);
    dprint_fixed();
    dprint_f32(3.14159f);
    dprint_defaultfloat();
    dprint_char(' ');
    dprint_bf16(0x3FC0u); /* 1.5 */
    dprint_endl();
    uint32_t words[3] = {1u, 2u, id};
    dprint_u32_array(words, 3);
    dprint_endl();
    dprint_str("0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz"
               "0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz"
               "0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz");
    dprint_endl();
    return 0;
}
