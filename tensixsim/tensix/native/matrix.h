/* The matrix unit (matrix.c, matrix_moves.c, matrix_shifts.c, matrix_pool.c) and its Src banks' hand-over
 * (src_banks.c). */
#ifndef TENSIXSIM_MATRIX_H
#define TENSIXSIM_MATRIX_H
#include <stdint.h>

#include "copro.h"

/* Coprocessor.matrix_hold (matrix.moves.held_until) for `word` issued at `cycle`: 0 it goes, a cycle
 * > 0 until which the matrix unit holds it after a data move, -1 Python decides. */
int64_t tsim_matrix_hold(struct copro_view *v, uint32_t word, int64_t cycle);

/* The matrix unit's instructions (ops.c dispatch): cycles, or NATIVE_DEFER having changed nothing.
 * tsim_native_op has checked `thread` against v->threads. */
int64_t matrix_mvmul(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t matrix_elwadd(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t matrix_elwsub(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t matrix_elwmul(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t matrix_dotpv(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t matrix_gapool(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t matrix_gmpool(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle); /* matrix_pool.c */
int64_t matrix_movd2a(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t matrix_movd2b(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t matrix_movb2a(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t matrix_mova2d(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t matrix_movb2d(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t matrix_movdbga2d(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t matrix_zeroacc(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
/* matrix_shifts.c: matrix/src_shifts.py */
int64_t matrix_shiftxa(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t matrix_shiftxb(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t matrix_trnspsrcb(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t matrix_gatesrcrst(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t matrix_clrexphist(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);

/* src_banks.c: the Src banks between the unpackers and the matrix unit (regs.py's ZEROSRC, CLEARDVALID,
 * SETDVALID; unpack/src_banks.py's UNPACR_NOP). Cycles, NATIVE_DEFER or NATIVE_WAIT. */
int64_t src_banks_zerosrc(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t src_banks_cleardvalid(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t src_banks_setdvalid(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);
int64_t src_banks_unpacr_nop(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle);

#endif
