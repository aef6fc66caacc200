/* The vector unit's scheduler in a library without sfpu_macro.c (Wormhole's: its SFPLOADMACRO is its
 * own, tensixsim/tensix/sfpu/wormhole.py): work SFPLOADMACRO scheduled is always settled by Python
 * (sfpu.macro.settle), so the engine hands over whenever any is outstanding, and the issued
 * instructions' handlers run only when none is. Blackhole's library has sfpu_macro.c instead; this
 * file is empty there. */
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

/* sfpu.macro.issue for an issued instruction when no scheduled work is outstanding (else the caller
 * deferred): the handler runs, unless scheduled work that has finished still bears on this cycle (a
 * scheduled SFPSWAP's neighbours, a sub-unit it took this cycle): that is Python's. */
int64_t sfpu_macro_issue(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle, sfpu_handler handler)
{
    const int64_t *clock = v->macro_clock;
    int64_t swap_next = clock[SFPU_MACRO_SWAP_NEXT];
    if (swap_next == cycle || swap_next == cycle + 1 || clock[SFPU_MACRO_UNITS_AT] == cycle)
        return NATIVE_DEFER;
    return handler(v, thread, word, cycle);
}
#else
typedef int sfpu_deferred_unused; /* (ISO C wants something in a translation unit) */
#endif
