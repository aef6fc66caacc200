/* The vector unit's scheduler in a library that runs none of its instructions (Wormhole's: its
 * SFPLOADMACRO is its own, tensixsim/tensix/sfpu): work SFPLOADMACRO scheduled is always settled by
 * Python (sfpu.macro.settle), so the engine hands over whenever any is outstanding. Blackhole's
 * library has sfpu_macro.c instead; this file is empty there. */
#include "sfpu.h"

#ifdef TSIM_WORMHOLE
enum { SLOTS = SFPU_MACRO_SLOTS, COLUMNS = SFPU_MACRO_COLUMNS };

int sfpu_macro_pending(struct copro_view *v)
{
    if (v->sched[SCHED_IDLE])
        return 0;
    for (uint32_t slot = 0; slot < SLOTS; slot++)
        if (v->macro_pending[(uint64_t)slot * COLUMNS + SFPU_MACRO_VALID])
            return 1;
    v->sched[SCHED_IDLE] = 1;
    return 0;
}

int sfpu_macro_settle(struct copro_view *v, int64_t cycle)
{
    (void)v;
    (void)cycle;
    return 0; /* Python settles */
}
#else
typedef int sfpu_deferred_unused; /* (ISO C wants something in a translation unit) */
#endif
