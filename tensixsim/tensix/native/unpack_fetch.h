/* The unpackers' L1 fetch timing (unpack/fetch.py), for unpack.c: both unpackers' schedules as plain
 * data, so a planned fetch can be dropped when the instruction defers. */
#ifndef TENSIXSIM_NATIVE_UNPACK_FETCH_H
#define TENSIXSIM_NATIVE_UNPACK_FETCH_H
#include "ops.h"

enum { FETCH_UNITS = 2 };
static const int8_t shared_speeds[UNPACK_SPEEDS][UNPACK_SPEEDS][2] = UNPACK_SHARED_SPEEDS;

/* ------------------------------------------------------------------------------ fetch timing */

/* unpack/fetch.py's UnpackState fetch schedule of both unpackers, copied so a plan can be dropped. */
struct fetch {
    int64_t end, anchor, left, shared_until;
    int8_t want, shared_speed;
    int64_t rate; /* bytes a cycle at x1 (UnpackState.bytes_per_cycle) */
};

static inline int64_t rate(const struct fetch *f, int speed) { return f->rate << speed; }

/* Python's -(-a // b) for the a >= 0, b > 0 it is used with. */
static inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

static inline int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

static inline int speed_ok(int8_t s) { return s >= 0 && s < (int)UNPACK_SPEEDS; }

/* unpack.fetch.left_at: the bytes still to fetch at the start of `cycle`; -1 when the schedule holds a
 * speed Python could not use (it would fail). */
static inline int64_t left_at(const struct fetch *f, int64_t cycle, int *ok)
{
    if (f->end <= cycle)
        return 0;
    if (!speed_ok(f->shared_speed) || !speed_ok(f->want)) {
        *ok = 0;
        return 0;
    }
    int64_t shared = max64(0, min64(cycle, f->shared_until) - f->anchor);
    int64_t solo = max64(0, cycle - max64(f->shared_until, f->anchor));
    return f->left - shared * rate(f, f->shared_speed) - solo * rate(f, f->want);
}

/* unpack.fetch.start_fetch on the copies `f` (both unpackers): 1 when only `unit`'s schedule changed, 2
 * when both did (the other was still fetching at `start`), 0 when Python would fail. */
static inline int start_fetch(struct fetch f[FETCH_UNITS], uint32_t unit, int64_t start, int64_t nbytes, int8_t want)
{
    uint32_t other = 1 - unit;
    int ok = 1;
    int64_t rest = left_at(&f[other], start, &ok);
    if (!ok)
        return 0;
    f[unit].anchor = start;
    f[unit].left = nbytes;
    f[unit].want = want;
    if (rest <= 0) {
        f[unit].shared_until = start;
        f[unit].shared_speed = want;
        f[unit].end = start + ceil_div(nbytes, rate(f, want));
        return 1;
    }
    int8_t other_want = f[other].want; /* checked by left_at */
    const int8_t *gets = unit == 0 ? shared_speeds[want][other_want] : shared_speeds[other_want][want];
    int8_t speed = gets[unit], other_speed = gets[other];
    int64_t shared_end =
        min64(start + ceil_div(nbytes, rate(f, speed)), start + ceil_div(rest, rate(f, other_speed)));
    const struct {
        uint32_t u;
        int64_t total;
        int8_t shared, alone;
    } legs[2] = {{unit, nbytes, speed, want}, {other, rest, other_speed, other_want}};
    for (int i = 0; i < 2; i++) {
        struct fetch *g = &f[legs[i].u];
        g->anchor = start;
        g->left = legs[i].total;
        g->shared_until = shared_end;
        g->shared_speed = legs[i].shared;
        int64_t remaining = legs[i].total - (shared_end - start) * rate(f, legs[i].shared);
        g->end = shared_end + (remaining > 0 ? ceil_div(remaining, rate(f, legs[i].alone)) : 0);
    }
    return 2;
}

static inline void load_fetch(const struct copro_view *v, uint32_t u, struct fetch *f)
{
    f->end = v->unpack_end[u];
    f->anchor = v->unpack_anchor[u];
    f->left = v->unpack_left[u];
    f->shared_until = v->unpack_shared_until[u];
    f->want = v->unpack_want[u];
    f->shared_speed = v->unpack_shared_speed[u];
    f->rate = v->unpack_rate[0];
}

static inline void store_fetch(struct copro_view *v, uint32_t u, const struct fetch *f)
{
    v->unpack_end[u] = f->end;
    v->unpack_anchor[u] = f->anchor;
    v->unpack_left[u] = f->left;
    v->unpack_shared_until[u] = f->shared_until;
    v->unpack_want[u] = f->want;
    v->unpack_shared_speed[u] = f->shared_speed;
}

#endif
