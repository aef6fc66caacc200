/* metal_device_print.h: DEVICE_PRINT from kernels on tt-metal firmware whose tile has one print
 * buffer shared by its cores (mailboxes_t.dprint_buf.buffer, e.g. ttnn 0.81.1).
 *
 * Writes what tt-metal's device_print.h writes, read on the host by tensixsim.observe.device_print (Tile
 * prints via tensixsim.metal.firmware.enable_firmware_prints, `tensixsim metal --dprint`):
 *
 *     DEVICE_PRINT("tile {0,I} of {1,I}: {2,f:.3f}\n", DP_U32(t), DP_U32(n), DP_F32(x));
 *
 * The format string is given as tt-metal's compiler rewrites it (the C++ header turns "{}" into
 * "{N,T[:spec]}" at compile time; C cannot): N is the argument's slot, T its type character (b B h H
 * i I q Q f d ? w s p: int8 uint8 int16 uint16 int32 uint32 int64 uint64 float double bool bf16
 * string pointer), spec an fmt format spec. Arguments are stored in the order given, slot 0 first;
 * tt-metal orders them largest first (8-byte, then 4, 2, 1), and so should the caller, to lay the
 * payload out as it does. Strings are compile-time constants (DP_STR("...")), as CTSTR.
 *
 * The build passes the buffer's layout from the firmware's DWARF (tensixsim.metal.kernels):
 * DEVICE_PRINT_BUFFER (wpos; rpos follows), DEVICE_PRINT_RISC_STATE, DEVICE_PRINT_LOCK,
 * DEVICE_PRINT_DATA, DEVICE_PRINT_DATA_SIZE, DEVICE_PRINT_PROCESSORS, this core's
 * DEVICE_PRINT_PROCESSOR, and where its kernel id is (DEVICE_PRINT_LAUNCH_RD_PTR,
 * DEVICE_PRINT_LAUNCH0, DEVICE_PRINT_LAUNCH_SIZE, DEVICE_PRINT_KERNEL_ID_OFFSET).
 *
 * Facts from tt-metal (device_print.h, device_print_common.h, device_print_structures.h,
 * dprint_common.h of ttnn 0.81.1; the section addresses from its kernel linker scripts):
 * - a message: a header word (is_kernel:1, risc_id:5, message_payload:10, info_id:16, from bit 0),
 *   then the arguments, the whole padded to a multiple of 4 bytes; message_payload excludes the
 *   header; info_id = (address of the message's DevicePrintStringInfo - start of
 *   .device_print_strings_info) / 16, clamped to 0xFFFF;
 * - DevicePrintStringInfo {format, file, line, padding} in .device_print_strings_info (0x6500000),
 *   format and file name in .device_print_strings (0x6400000), neither loaded into L1;
 * - under a lock (amoswap until 0 is read; released by storing 0), the first print of a kernel on a
 *   core whose risc_state is KernelNotPrinted (0) first writes a header {is_kernel 1, risc_id, payload
 *   1023, info_id = the launch message's watcher_kernel_ids[risc_id]} and sets risc_state to
 *   KernelPrinted (1); PrintingDisabled (2) skips that;
 * - wait_for_space and end_message_write as below (the starting magic resets both positions; the
 *   disabled magic makes every wait give up; rpos == 0xF0E1D2C3 asks the writer to start afresh; a
 *   waiting writer sets bit 31 of wpos; a message that does not fit before the end leaves a wrap
 *   header {info_id 0xFFFF} if a word fits, and goes to the start).
 */
#ifndef METAL_DEVICE_PRINT_H
#define METAL_DEVICE_PRINT_H

#include <stdint.h>

#ifndef DEVICE_PRINT_BUFFER
#error "DEVICE_PRINT_BUFFER is not defined: this firmware has no shared DEVICE_PRINT buffer"
#endif

#define DP_STARTING_MAGIC 0x98989898u /* DEBUG_PRINT_SERVER_STARTING_MAGIC */
#define DP_DISABLED_MAGIC 0xF8F8F8F8u /* DEBUG_PRINT_SERVER_DISABLED_MAGIC */
#define DP_RESET_MAGIC 0xF0E1D2C3u    /* DEVICE_PRINT_RESET_BUFFER_MAGIC */
#define DP_STALL_FLAG 0x80000000u     /* DEVICE_PRINT_WRITE_STALL_FLAG */
#define DP_KERNEL_NOT_PRINTED 0u
#define DP_KERNEL_PRINTED 1u
#define DP_PRINTING_DISABLED 2u

typedef struct {
    const char *format;
    const char *file;
    uint32_t line;
    uint32_t padding;
} dp_string_info_t;

typedef struct {
    uint32_t size; /* bytes in the payload */
    uint32_t lo, hi;
} dp_arg_t;

extern char __device_print_strings_info_start[];

#define DP_WPOS (*(volatile uint32_t *)(uintptr_t)(DEVICE_PRINT_BUFFER))
#define DP_RPOS (*(volatile uint32_t *)(uintptr_t)((DEVICE_PRINT_BUFFER) + 4u))
#define DP_STATE ((volatile uint8_t *)(uintptr_t)(DEVICE_PRINT_RISC_STATE))
#define DP_LOCK ((uint32_t *)(uintptr_t)(DEVICE_PRINT_LOCK))
#define DP_DATA ((volatile uint8_t *)(uintptr_t)(DEVICE_PRINT_DATA))

static inline dp_arg_t dp_arg(uint32_t size, uint64_t bits)
{
    dp_arg_t a = {size, (uint32_t)bits, (uint32_t)(bits >> 32)};
    return a;
}
static inline uint32_t dp_f32_bits(float v)
{
    union { float f; uint32_t u; } x = {.f = v};
    return x.u;
}
static inline uint64_t dp_f64_bits(double v)
{
    union { double d; uint64_t u; } x = {.d = v};
    return x.u;
}
#define DP_I8(v) dp_arg(1, (uint8_t)(int8_t)(v))
#define DP_U8(v) dp_arg(1, (uint8_t)(v))
#define DP_I16(v) dp_arg(2, (uint16_t)(int16_t)(v))
#define DP_U16(v) dp_arg(2, (uint16_t)(v))
#define DP_I32(v) dp_arg(4, (uint32_t)(int32_t)(v))
#define DP_U32(v) dp_arg(4, (uint32_t)(v))
#define DP_I64(v) dp_arg(8, (uint64_t)(int64_t)(v))
#define DP_U64(v) dp_arg(8, (uint64_t)(v))
#define DP_F32(v) dp_arg(4, dp_f32_bits(v))
#define DP_F64(v) dp_arg(8, dp_f64_bits(v))
#define DP_BOOL(v) dp_arg(1, (v) ? 1u : 0u)
#define DP_BF16(bits) dp_arg(2, (uint16_t)(bits))
#define DP_PTR(p) dp_arg(4, (uint32_t)(uintptr_t)(p))
/* A string constant kept in the ELF, not in L1 (tt-metal's CTSTR). */
#define DP_STR(literal)                                                                             \
    ({                                                                                              \
        static const char dp_text_[] __attribute__((section(".device_print_strings"), used)) = literal; \
        dp_arg(4, (uint32_t)(uintptr_t)dp_text_);                                                   \
    })

/* tt-metal's locking::wait_for_space: where a message of `size` bytes goes. */
static uint32_t dp_wait_for_space(uint32_t size)
{
    uint32_t wpos = DP_WPOS, rpos = DP_RPOS;
    if (wpos == DP_STARTING_MAGIC) {
        DP_WPOS = 0;
        DP_RPOS = 0;
        return 0;
    }
    if (wpos == DP_DISABLED_MAGIC)
        return 0;
    if (rpos == DP_RESET_MAGIC) {
        DP_WPOS = 0;
        DP_RPOS = 0;
        return 0;
    }
    if (wpos + size > (DEVICE_PRINT_DATA_SIZE)) {
        if (rpos == 0) { /* wrapping now would look like an empty buffer: wait for the reader */
            DP_WPOS = wpos | DP_STALL_FLAG;
            while (rpos == 0) {
                if (DP_WPOS == DP_DISABLED_MAGIC)
                    return 0;
                rpos = DP_RPOS;
                if (rpos == DP_RESET_MAGIC) {
                    DP_WPOS = 0;
                    DP_RPOS = 0;
                    return 0;
                }
            }
            DP_WPOS = wpos;
        }
        if (wpos < rpos) {
            DP_WPOS = wpos | DP_STALL_FLAG;
            while (wpos < rpos) {
                if (DP_WPOS == DP_DISABLED_MAGIC)
                    return 0;
                rpos = DP_RPOS;
                if (rpos == DP_RESET_MAGIC) {
                    DP_WPOS = 0;
                    DP_RPOS = 0;
                    return 0;
                }
            }
            DP_WPOS = wpos;
        }
        if (wpos + 4u <= (DEVICE_PRINT_DATA_SIZE))
            *(volatile uint32_t *)(DP_DATA + wpos) = 0xFFFFu << 16; /* the wrap header */
        wpos = 0;
        DP_WPOS = 0;
    } else if (wpos > rpos) {
        return wpos;
    }
    if (wpos < rpos && wpos + size >= rpos) {
        DP_WPOS = wpos | DP_STALL_FLAG;
        while (wpos < rpos && wpos + size >= rpos) {
            if (DP_WPOS == DP_DISABLED_MAGIC)
                return 0;
            rpos = DP_RPOS;
            if (rpos == DP_RESET_MAGIC) {
                DP_WPOS = 0;
                DP_RPOS = 0;
                return 0;
            }
        }
        DP_WPOS = wpos;
    }
    return wpos;
}

/* locking::acquire_lock, with its kernel announcement. */
static void dp_acquire(void)
{
#if DEVICE_PRINT_PROCESSORS > 1
    while (__atomic_exchange_n(DP_LOCK, 1u, __ATOMIC_ACQUIRE) != 0) {
    }
#endif
    if (DP_WPOS != DP_DISABLED_MAGIC && DP_STATE[DEVICE_PRINT_PROCESSOR] == DP_KERNEL_NOT_PRINTED) {
        uint32_t launch = *(volatile uint32_t *)(uintptr_t)(DEVICE_PRINT_LAUNCH_RD_PTR);
        uint32_t id = *(volatile uint16_t *)(uintptr_t)((DEVICE_PRINT_LAUNCH0) + launch * (DEVICE_PRINT_LAUNCH_SIZE) +
                                                        (DEVICE_PRINT_KERNEL_ID_OFFSET));
        uint32_t header = 1u | (uint32_t)(DEVICE_PRINT_PROCESSOR) << 1 | 1023u << 6 | id << 16;
        dp_wait_for_space(4);
        uint32_t wpos = DP_WPOS;
        *(volatile uint32_t *)(DP_DATA + wpos) = header;
        DP_WPOS = wpos + 4u;
        DP_STATE[DEVICE_PRINT_PROCESSOR] = DP_KERNEL_PRINTED;
    }
}

static __attribute__((noinline)) void dp_message(const dp_string_info_t *info, const dp_arg_t *args, uint32_t count)
{
    uint32_t total = 4;
    for (uint32_t i = 0; i < count; i++)
        total += args[i].size;
    total = (total + 3u) & ~3u;
    uint32_t info_id = (uint32_t)((uintptr_t)info - (uintptr_t)__device_print_strings_info_start) / 16u;
    if (info_id > 0xFFFFu)
        info_id = 0xFFFFu;
    uint32_t header = 1u | (uint32_t)(DEVICE_PRINT_PROCESSOR) << 1 | (total - 4u) << 6 | info_id << 16;
    dp_acquire();
    uint32_t wpos = dp_wait_for_space(total); /* begin_message_write */
    volatile uint8_t *at = DP_DATA + wpos;
    *(volatile uint32_t *)at = header;
    uint32_t offset = 4;
    for (uint32_t i = 0; i < count; i++) { /* serialize_arguments: each at its offset, by size */
        if (args[i].size == 1)
            at[offset] = (uint8_t)args[i].lo;
        else if (args[i].size == 2)
            *(volatile uint16_t *)(at + offset) = (uint16_t)args[i].lo;
        else {
            *(volatile uint32_t *)(at + offset) = args[i].lo;
            if (args[i].size == 8) /* store_64bit_value: two 32-bit stores */
                *(volatile uint32_t *)(at + offset + 4u) = args[i].hi;
        }
        offset += args[i].size;
    }
    wpos = DP_WPOS; /* end_message_write: move wpos past the header's message, release the lock */
    if (wpos != DP_DISABLED_MAGIC) {
        uint32_t written = *(volatile uint32_t *)(DP_DATA + wpos);
        DP_WPOS = wpos + 4u + ((written >> 6) & 0x3FFu);
    }
#if DEVICE_PRINT_PROCESSORS > 1
    __atomic_store_n(DP_LOCK, 0u, __ATOMIC_RELEASE);
#endif
}

#define DEVICE_PRINT(format, ...)                                                                        \
    do {                                                                                                 \
        static const char dp_format_[] __attribute__((section(".device_print_strings"), used)) = format; \
        static const char dp_file_[] __attribute__((section(".device_print_strings"), used)) = __FILE__; \
        static const dp_string_info_t dp_info_                                                           \
            __attribute__((section(".device_print_strings_info"), used)) = {dp_format_, dp_file_, __LINE__, 0}; \
        const dp_arg_t dp_args_[] = {dp_arg(0, 0), ##__VA_ARGS__};                                       \
        dp_message(&dp_info_, dp_args_ + 1, sizeof(dp_args_) / sizeof(dp_args_[0]) - 1);                  \
    } while (0)

#endif
