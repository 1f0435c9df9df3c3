/* Publishing to a topic, as a front door asks: the copies are routed and
 * committed (broker_route.c), then what they left at rest in another topic
 * (a ForwardTo chain ending in a topic) is routed at once by that topic's
 * pump, not at its next periodic turn. */
#include <stdlib.h>

#include "broker_internal.h"
#include "ent_alloc.h"

typedef struct publish_call {
    broker *b;
    store_status_cb cb;
    void *ctx;
} publish_call;

static void on_routed(void *ctx, sb_status st, const int64_t *resting, size_t nresting)
{
    publish_call *call = ctx;
    for (size_t i = 0; i < nresting; i++)
        broker_topic_pump(call->b, resting[i]);
    call->cb(call->ctx, st);
    ent_free(call);
}

void broker_publish(broker *b, int64_t topic_id, const store_new_message *msgs, const amqp_msg *parsed, size_t n,
                    const uint8_t (*consume)[16], store_status_cb cb, void *ctx)
{
    publish_call *call = ent_malloc(sizeof *call);
    if (!call) {
        cb(ctx, SB_ERR_INTERNAL);
        return;
    }
    *call = (publish_call){b, cb, ctx};
    broker_route(b, topic_id, msgs, parsed, n, consume, on_routed, call);
}
