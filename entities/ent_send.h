/* The fate of a message sent to an entity, decided before it is stored: when
 * it becomes visible, how long it lives, and whether it goes straight to the
 * dead-letter subqueue (a ForwardTo chain too long, or whose end refuses it).
 * The wire fills in the bytes and ids; the store stores what this says. Pure
 * C, the rules of Service Bus "Message expiration", "Scheduled messages" and
 * "Auto-forwarding". */
#ifndef ENT_SEND_H
#define ENT_SEND_H

#include <stdbool.h>
#include <stdint.h>

#include "ent_cache.h"

typedef struct ent_send_fate {
    int64_t available_ms; /* visible from: the scheduled enqueue time, or now */
    bool scheduled;       /* rests unseen until available_ms */
    int64_t ttl_ms;       /* the message's TTL, capped by the target's default (ENT_TTL_NONE: none) */
    int64_t expires_ms;   /* from available_ms (a scheduled message lives its TTL once visible); 0: never */
    bool dead_letter;     /* stored in the dead-letter subqueue, with the reason and description below */
    const char *dead_letter_reason, *dead_letter_description; /* static strings (ent_dead_letter.h) */
} ent_send_fate;

/* A message with TTL message_ttl_ms (ENT_TTL_NONE: none) and scheduled
 * enqueue time scheduled_ms (0: none), sent now through route. */
ent_send_fate ent_send_decide(const ent_route *route, int64_t message_ttl_ms, int64_t scheduled_ms, int64_t now_ms);

/* Whether a send to entity_id goes somewhere else than entity_id itself
 * (its ForwardTo chain's end) and that end refuses it by its status: then
 * the send is stored in entity_id, dead-lettered (ent_send_forward_failed). */
bool ent_send_diverts(const ent_route *route, int64_t entity_id);

/* The chain's end would not take the message (its status, or it is full):
 * it becomes a ForwardingFailed dead letter of the entity it was sent to, no
 * longer held as scheduled. A dead letter already keeps its reason. */
void ent_send_forward_failed(ent_send_fate *f);

#endif
