/* See ent_send.h. */
#include "ent_send.h"

#include "ent_dead_letter.h"
#include "ent_message_rules.h"
#include "ent_props.h"

ent_send_fate ent_send_decide(const ent_route *route, int64_t message_ttl_ms, int64_t scheduled_ms, int64_t now_ms)
{
    ent_send_fate f = {0};
    f.ttl_ms = ent_effective_ttl_ms(message_ttl_ms, route->send_target_default_ttl_ms);
    f.available_ms = ent_available_at_ms(now_ms, scheduled_ms);
    f.scheduled = f.available_ms > now_ms;
    f.expires_ms = ent_expires_at_ms(f.available_ms, f.ttl_ms);
    if (route->forward_hops_exceeded) {
        f.dead_letter = true;
        f.dead_letter_reason = ENT_DLQ_REASON_HOPS;
        f.dead_letter_description = ENT_DLQ_DESC_HOPS;
    }
    return f;
}

bool ent_send_diverts(const ent_route *route, int64_t entity_id)
{
    return route->send_target_id != entity_id && ent_forward_diverts(route->send_target_status);
}

void ent_send_forward_failed(ent_send_fate *f)
{
    if (f->dead_letter)
        return; /* already a dead letter (too many hops) */
    f->dead_letter = true;
    f->scheduled = false;
    f->dead_letter_reason = ENT_DLQ_REASON_FORWARD;
    f->dead_letter_description = ENT_DLQ_DESC_FORWARD;
}
