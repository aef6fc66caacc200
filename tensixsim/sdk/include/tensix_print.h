/* tensixsim SDK: printing from a kernel to the host.
 *
 * Each core appends type-tagged records to its own print buffer in L1, in tt-metal's DPRINT record
 * format (a byte of type, a byte of size, the payload), which the host decodes and prints with the
 * core's name and the cycle (Tile.enable_prints, `tensixsim run --dprint`):
 *
 *     print_str("tiles done: "); print_u32(n); print_endl();
 *
 * Nothing is written unless the host is reading: a program run without a print server prints
 * nothing and never waits. When a buffer is full the core waits for the host to read it.
 */
#ifndef TENSIX_PRINT_H
#define TENSIX_PRINT_H

#include <stdint.h>

void print_str(const char *text);  /* a NUL-terminated string; "\n" ends a line too */
void print_u32(uint32_t value);
void print_i32(int32_t value);
void print_hex(uint32_t value);    /* in hexadecimal, without 0x */
void print_char(char c);
void print_endl(void);             /* ends the line: the host prints it */

#endif
