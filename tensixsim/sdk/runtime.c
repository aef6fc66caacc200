/* The four functions a freestanding C program must provide (GCC may call them for struct copies
 * and zeroing even with -fno-builtin). Built with -fno-tree-loop-distribute-patterns (see build.py)
 * so GCC does not turn these very loops back into calls to themselves. */
#include <stddef.h>
#include <stdint.h>

void *memcpy(void *restrict dst, const void *restrict src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    while (n--)
        *d++ = *s++;
    return dst;
}

void *memmove(void *dst, const void *src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    if (d < s) {
        while (n--)
            *d++ = *s++;
    } else {
        while (n--)
            d[n] = s[n];
    }
    return dst;
}

void *memset(void *dst, int c, size_t n)
{
    unsigned char *d = dst;
    while (n--)
        *d++ = (unsigned char)c;
    return dst;
}

int memcmp(const void *a, const void *b, size_t n)
{
    const unsigned char *x = a;
    const unsigned char *y = b;
    for (; n; n--, x++, y++) {
        if (*x != *y)
            return *x - *y;
    }
    return 0;
}

/* ---- printing (tensix_print.h): tt-metal's DPRINT buffer and records ----
 * Buffer: wpos (u32), rpos (u32), core x/y (u16 each), then the data. Type ids follow DPRINT_TYPES
 * in tt-metal's hostdevcommon/dprint_common.h. */
#include "tensixsim.h"
#include "tensix_print.h"

#define PRINT_HEADER_SIZE 12u
#define PRINT_DATA_SIZE (SDK_DPRINT_BUFFER_SIZE - PRINT_HEADER_SIZE)
#define PRINT_STARTING_MAGIC 0x98989898u
#define PRINT_DISABLED_MAGIC 0xf8f8f8f8u
enum { PRINT_CSTR = 0, PRINT_ENDL = 1, PRINT_UINT32 = 5, PRINT_INT32 = 9, PRINT_CHAR = 12, PRINT_HEX = 17,
       PRINT_DEC = 19 };

typedef struct {
    volatile uint32_t wpos;
    volatile uint32_t rpos;
    volatile uint16_t core_x, core_y;
    volatile uint8_t data[PRINT_DATA_SIZE];
} print_buffer_t;

/* 0: not looked yet, 1: the host reads this buffer, 2: it does not (print nothing). */
static uint32_t print_state;

static print_buffer_t *print_buffer(void)
{
    return (print_buffer_t *)(SDK_DPRINT_BASE + SDK_CORE_ID * SDK_DPRINT_BUFFER_SIZE);
}

static int print_ready(print_buffer_t *buffer)
{
    if (print_state == 0) {
        /* The host's server writes the starting magic when it begins reading; without it nobody
         * would ever read, and a full buffer would wait forever. */
        if (buffer->wpos == PRINT_STARTING_MAGIC) {
            buffer->rpos = 0;
            buffer->wpos = 0;
            print_state = 1;
        } else {
            print_state = 2;
        }
    }
    return print_state == 1 && buffer->wpos != PRINT_DISABLED_MAGIC;
}

static void print_record(uint32_t type, const void *payload, uint32_t size)
{
    print_buffer_t *buffer = print_buffer();
    if (!print_ready(buffer))
        return;
    if (size > PRINT_DATA_SIZE - 2)
        size = PRINT_DATA_SIZE - 2; /* (only a long string: cut, its last byte NUL below) */
    uint32_t wpos = buffer->wpos;
    if (wpos + 2 + size > PRINT_DATA_SIZE) {
        while (buffer->rpos < buffer->wpos) /* wait until the host has read everything */
            if (buffer->wpos == PRINT_DISABLED_MAGIC)
                return;
        buffer->wpos = 0;
        buffer->rpos = 0;
        wpos = 0;
    }
    const uint8_t *bytes = payload;
    buffer->data[wpos] = (uint8_t)type;
    buffer->data[wpos + 1] = (uint8_t)size;
    for (uint32_t i = 0; i < size; i++)
        buffer->data[wpos + 2 + i] = bytes[i];
    if (type == PRINT_CSTR)
        buffer->data[wpos + 2 + size - 1] = 0;
    buffer->wpos = wpos + 2 + size; /* the record is complete: the host may read it */
}

void print_str(const char *text)
{
    uint32_t size = 0;
    while (text[size])
        size++;
    print_record(PRINT_CSTR, text, size + 1);
}

void print_u32(uint32_t value) { print_record(PRINT_UINT32, &value, 4); }

void print_i32(int32_t value) { print_record(PRINT_INT32, &value, 4); }

void print_hex(uint32_t value)
{
    uint8_t unused = 0;
    print_record(PRINT_HEX, &unused, 1);
    print_record(PRINT_UINT32, &value, 4);
    print_record(PRINT_DEC, &unused, 1);
}

void print_char(char c) { print_record(PRINT_CHAR, &c, 1); }

void print_endl(void)
{
    uint8_t unused = 0;
    print_record(PRINT_ENDL, &unused, 1);
}
