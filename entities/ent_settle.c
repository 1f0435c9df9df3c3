/* See ent_settle.h. */
#include "ent_settle.h"

#include <stddef.h>
#include <string.h>

ent_settle_after ent_settle_after_commit(ent_settle_kind kind)
{
    switch (kind) {
    case ENT_SETTLE_ABANDON:
        /* given back, unless that abandon exhausted MaxDeliveryCount: then it was dead-lettered */
        return (ent_settle_after){.redeliver = true, .dead_lettered = true};
    case ENT_SETTLE_RELEASE: return (ent_settle_after){.redeliver = true};
    case ENT_SETTLE_DEADLETTER: return (ent_settle_after){.dead_lettered = true};
    case ENT_SETTLE_COMPLETE:
    case ENT_SETTLE_DEFER: break;
    }
    return (ent_settle_after){0};
}

ent_settle_kind ent_settle_kind_of_outcome(ent_outcome o, bool undeliverable_here)
{
    switch (o) {
    case ENT_OUTCOME_ACCEPTED: return ENT_SETTLE_COMPLETE;
    case ENT_OUTCOME_REJECTED: return ENT_SETTLE_DEADLETTER;
    case ENT_OUTCOME_RELEASED: return ENT_SETTLE_RELEASE;
    case ENT_OUTCOME_MODIFIED: break;
    }
    return undeliverable_here ? ENT_SETTLE_DEFER : ENT_SETTLE_ABANDON;
}

int ent_settle_kind_of_status(const char *status, ent_settle_kind *kind)
{
    static const struct {
        const char *name;
        ent_settle_kind kind;
    } map[] = {
        {"completed", ENT_SETTLE_COMPLETE}, {"abandoned", ENT_SETTLE_ABANDON},
        {"suspended", ENT_SETTLE_DEADLETTER}, {"defered", ENT_SETTLE_DEFER},
        {"deferred", ENT_SETTLE_DEFER}, /* the correct spelling, in case a client uses it */
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (!strcmp(map[i].name, status)) {
            *kind = map[i].kind;
            return 0;
        }
    return -1;
}
