/* What a send tells its story (broker.h, "the story"): who sent each message
 * and its trace context, read from the message only while the story is
 * recorded (entities/ent_story.h says which properties carry it). */
#include <string.h>

#include "amqp_filter_msg.h"
#include "broker_internal.h"
#include "ent_story.h"
#include "store_story.h"

/* The first trace property the message carries, as a span of its bytes. */
static void trace_of(const store_new_message *m, const amqp_msg *parsed, const uint8_t **p, size_t *len)
{
    *p = NULL;
    *len = 0;
    if (!parsed->application_properties.len)
        return; /* nothing to look in: most sends */
    amqp_filter_view v;
    amqp_filter_view_init(&v, m->bytes, m->len, parsed, m->available_ms);
    for (int i = 0; i < ENT_STORY_TRACE_PROPERTIES; i++) {
        const char *name = ent_story_trace_properties[i];
        ent_filter_value val;
        if (amqp_filter_view_get_user(&v, name, strlen(name), &val) && val.type == ENT_FV_STRING) {
            size_t keep = ent_story_text_keep(val.u.s.ptr, val.u.s.len, ENT_STORY_TRACE_MAX);
            if (keep) {
                *p = (const uint8_t *)val.u.s.ptr;
                *len = keep;
                return;
            }
        }
    }
}

void broker_story_sent(store_new_message *msgs, const amqp_msg *parsed, size_t n, uint64_t connection,
                       const char *link, int64_t entity_id, int64_t target)
{
    if (!store_story_on())
        return;
    /* a send the chain's end refused stays in the entity: it was not forwarded */
    int64_t via = target != entity_id ? entity_id : 0;
    for (size_t i = 0; i < n; i++) {
        msgs[i].story_connection = connection;
        msgs[i].story_link = store_story_link(link);
        msgs[i].story_via = via;
        trace_of(&msgs[i], &parsed[i], &msgs[i].story_trace, &msgs[i].story_trace_len);
    }
}
