/* See ent_settle.h. */
#include "ent_settle.h"

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
