/* See ent_sweep.h. */
#include "ent_sweep.h"

#include <string.h>

#include "ent_alloc.h"

int ent_sweep_plan_make(const ent_cache *c, ent_sweep_plan *out)
{
    memset(out, 0, sizeof *out);
    size_t n = c ? ent_cache_count(c) : 0;
    out->dead_letter_on_expiry = ent_malloc((n ? n : 1) * sizeof(int64_t));
    out->forward_from = ent_malloc((n ? n : 1) * sizeof(int64_t));
    out->forward_to = ent_malloc((n ? n : 1) * sizeof(int64_t));
    if (!out->dead_letter_on_expiry || !out->forward_from || !out->forward_to) {
        ent_sweep_plan_free(out);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        const ent_entity *e = ent_cache_at(c, i);
        const ent_entity *t = ent_cache_dead_letter_target(c, e);
        if (e->dead_lettering_on_expiration)
            out->dead_letter_on_expiry[out->n_dead_letter_on_expiry++] = e->id;
        if (t) {
            out->forward_from[out->n_forward] = e->id;
            out->forward_to[out->n_forward++] = t->id;
        }
    }
    return 0;
}

void ent_sweep_plan_free(ent_sweep_plan *p)
{
    ent_free(p->dead_letter_on_expiry);
    ent_free(p->forward_from);
    ent_free(p->forward_to);
    memset(p, 0, sizeof *p);
}
