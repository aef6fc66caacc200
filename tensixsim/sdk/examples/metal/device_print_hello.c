/* Prints from a kernel on tt-metal firmware with a shared DEVICE_PRINT buffer (metal_device_print.h).
 *
 * Runtime arguments: a number to print, a line count. Prints a greeting with the number, then the
 * line count of lines "i=<i> i*i=<i*i>" (enough of them fill the buffer, which wraps), then a few
 * formats (integers of each width, floats, bf16, a bool, compile-time strings) and two lines from
 * one message. Arguments are given largest first, as tt-metal lays them out.
 */
#include <stdint.h>

#include "metal_device_print.h"

extern uint32_t *rta_l1_base;

__attribute__((section(".start"), used)) uint32_t _start(void)
{
    const uint32_t *args = rta_l1_base;
    uint32_t id = args[0], lines = args[1];
    DEVICE_PRINT("hello from kernel {0,I}\n", DP_U32(id));
    for (uint32_t i = 0; i < lines; i++)
        DEVICE_PRINT("i={0,I} i*i={1,I:>4}\n", DP_U32(i), DP_U32(i * i));
    DEVICE_PRINT("{0,q} {1,I:#x} {2,i} {3,h} {4,B}\n", DP_I64(-5000000000ll), DP_U32(0xBEEF00u + id),
                 DP_I32(-(int32_t)id), DP_I16(-300), DP_U8(200));
    DEVICE_PRINT("{0,d:.2e} {1,f:.3f} {2,f} {3,w} {4,?}\n", DP_F64(12345.678), DP_F32(3.14159f), DP_F32(0.1f),
                 DP_BF16(0x3FC0u), DP_BOOL(1));
    DEVICE_PRINT("{0,s}: {1,s:>6}|{{}}\n", DP_STR("name"), DP_STR("right"));
    DEVICE_PRINT("two\nlines\n");
    return 0;
}
