/* The dead-letter reasons and descriptions Service Bus itself sets
 * (service-bus-features.md §4.8), so that every path that dead-letters a
 * message writes the same words an SDK user would see on Azure. */
#ifndef ENT_DEAD_LETTER_H
#define ENT_DEAD_LETTER_H

#include <stddef.h>

#include "ent_lengths.h"
#include "ent_settle.h"
#include "ent_status.h"

#define ENT_DLQ_REASON_MAX_DELIVERY "MaxDeliveryCountExceeded"
#define ENT_DLQ_DESC_MAX_DELIVERY "Message couldn't be consumed after maximum delivery attempts."
#define ENT_DLQ_REASON_TTL "TTLExpiredException"
#define ENT_DLQ_DESC_TTL "The message expired and was dead lettered."
#define ENT_DLQ_REASON_HOPS "MaxTransferHopCountExceeded"
#define ENT_DLQ_DESC_HOPS                                                                                              \
    "The maximum number of allowed hops when forwarding between queues has been exceeded. This value is set to 4."

/* Service Bus dead-letters in the source what a full or disabled ForwardTo
 * destination cannot take; its exact reason text is undocumented, so this one
 * is sbemu's own. */
#define ENT_DLQ_REASON_FORWARD "ForwardingFailed"
#define ENT_DLQ_DESC_FORWARD "The ForwardTo destination is full or disabled, so the message was dead-lettered in the source."

/* A subscription's filter (or action) failed on the message, and the
 * subscription dead-letters on that (DeadLetteringOnFilterEvaluationExceptions).
 * The reason text is undocumented; this one names what happened, and the
 * description carries the evaluator's message. */
#define ENT_DLQ_REASON_FILTER "FilterEvaluationException"

/* Auto-forwarding may chain at most this many hops. */
#define ENT_MAX_FORWARD_HOPS 4

/* What a dead-lettered message carries: its DeadLetterReason and
 * DeadLetterErrorDescription (NULL: none). Static texts or the caller's. */
typedef struct ent_dead_letter_reason {
    const char *reason, *description;
} ent_dead_letter_reason;

/* A message delivered MaxDeliveryCount times and then given back (an abandon,
 * or a lock that lapsed). Whether it has been is decided in SQL, under the
 * message's row lock (STMT_SETTLE_SET, STMT_SWEEP_LAPSED): the count lives in the
 * row and every emulator on the database delivers it, so only the row knows.
 * This is what the message then says. */
ent_dead_letter_reason ent_dead_letter_max_delivery(void);
/* A message that expired in an entity that dead-letters on expiration (which
 * entities do is decided from the cache: ent_sweep.c). */
ent_dead_letter_reason ent_dead_letter_expired(void);
/* What a settlement of `kind` carries into the store: a dead-letter, the
 * client's reason and description; an abandon, MaxDeliveryCount's (the store
 * uses it only when the abandon exhausts MaxDeliveryCount); the others, the
 * client's (none: they do not dead-letter). */
ent_dead_letter_reason ent_settle_dead_letter_reason(ent_settle_kind kind, const char *reason,
                                                     const char *description);

/* Whether a client's dead-letter reason or description (what: "dead-letter
 * reason", ...) is within ENT_DEAD_LETTER_TEXT_MAX characters. NULL is none
 * and fine. SB_OK, or SB_ERR_ARGUMENT_RANGE (SB_ERR_ARGUMENT for text that is
 * not UTF-8) with a refusal naming the limit in err. Texts are refused, not
 * cut: a cut reason would be a silent change of what the user wrote. */
sb_status ent_dead_letter_text_check(const char *what, const char *text, char *err, size_t errlen);

#endif
