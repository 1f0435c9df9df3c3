/* Where a message sent to a topic goes: which subscriptions get a copy, and
 * which copies a rule action changes (Service Bus "Topic filters and
 * actions"). Per subscription:
 *   - the rules without an action that match give one copy, together;
 *   - each rule with an action that matches gives a copy of its own (the
 *     caller applies the action and sets RuleName);
 *   - a rule whose filter fails on the message: one dead-lettered copy when
 *     the subscription has DeadLetteringOnFilterEvaluationExceptions, else the
 *     subscription skips the message;
 *   - a Disabled subscription takes nothing.
 * No copy at all: the send is still accepted (the message is dropped). Pure
 * C; the filters read the message through ent_filter_msg. */
#ifndef ENT_TOPIC_H
#define ENT_TOPIC_H

#include <stdbool.h>
#include <stddef.h>

#include "ent_cache.h"
#include "ent_filter.h"

typedef struct ent_topic_copy {
    const ent_entity *subscription;     /* in the cache: valid until its next replace */
    const ent_filter_rule *rule;        /* a rule with an action: its copy; NULL: the message as sent */
    const char *matched;                /* the rule whose filter gave the copy (the first that matched, for the
                                           message as sent; the failing one, for a dead letter): its name, in
                                           the cache */
    bool dead_letter;                   /* a filter failed: the copy goes to the dead-letter subqueue */
    char error[ENT_FILTER_ERROR_MAX + sizeof(((ent_filter_rule *)0)->name) + 16]; /* for the dead-letter description */
} ent_topic_copy;

/* A growable list of copies, owned by its user; reuse it across messages. */
typedef struct ent_topic_copies {
    ent_topic_copy *v;
    size_t n, cap;
} ent_topic_copies;

/* Appends the copies of one message to out. -1 when out of memory. */
int ent_topic_route(const ent_cache *c, const ent_entity *topic, const ent_filter_msg *msg, ent_topic_copies *out);
void ent_topic_copies_free(ent_topic_copies *l);

/* Where sub's copy lands: the end of its ForwardTo chain, or sub itself
 * (with the dead-letter reason and description set) when that end will not
 * take it or the chain is too long. A chain back into sub's own topic would
 * loop: the copy stays in sub (only plain SQL can set that up). */
const ent_entity *ent_topic_copy_target(const ent_cache *c, const ent_entity *sub, const char **reason,
                                        const char **desc);

/* The TTL a copy lives: the smallest of the message's, the topic's default and
 * the subscription's default (-1: unlimited). */
int64_t ent_topic_copy_ttl_ms(int64_t message_ttl_ms, const ent_entity *topic, const ent_entity *subscription);

/* A rule of sub failed on a message (its filter, or its action): with
 * DeadLetteringOnFilterEvaluationExceptions the subscription's copy is a dead
 * letter described in desc (true); without, the subscription skips the
 * message (false). The one place that rule is decided, for filters
 * (ent_topic_route) and actions (the broker applies those). */
bool ent_topic_rule_failed(const ent_entity *sub, const char *rule, const char *message, char *desc, size_t n);

/* The fate of one copy for subscription sub of a message sent to topic. */
typedef struct ent_copy_fate {
    const ent_entity *target; /* sub, or the end of its ForwardTo chain (in the cache) */
    bool forwarded;           /* target is not sub: the copy takes the target's sequence numbers */
    bool rests_in_topic;      /* target is a topic: the copy rests there until its pump routes it */
    int64_t ttl_ms;           /* ent_topic_copy_ttl_ms, capped again by a forward target's default */
    int64_t expires_ms;       /* from available_ms; 0: never */
    bool dead_letter;         /* in sub's dead-letter subqueue, with the reason and description below */
    const char *dead_letter_reason, *dead_letter_description; /* static, or rule_error */
} ent_copy_fate;

/* rule_error: a rule of sub failed on the message and the copy is a dead
 * letter described so (ent_topic_rule_failed; never forwarded); NULL: the
 * copy goes where sub's ForwardTo chain says. available_ms: when the message
 * becomes visible, from which its TTL runs. */
ent_copy_fate ent_topic_copy_decide(const ent_cache *c, const ent_entity *topic, const ent_entity *sub,
                                    int64_t message_ttl_ms, int64_t available_ms, const char *rule_error);

/* Whether a copy of fate f for sub may live in the topic's log, one entry
 * shared by every subscription it was routed to (sql/store_log.h), rather
 * than as a message of its own: only a copy that differs from the message in
 * nothing but where it is, and that its subscription's receivers take in
 * sequence order without a session. The copy is not scheduled (state 0),
 * its body is the message's (no rule action changed it: !own_body), it is
 * the message's only copy in sub (slot 0), not forwarded nor dead-lettered,
 * and sub requires no session, and the message is no dead letter forwarded
 * on (was_dead_lettered: its reason stays with each copy, which an entry does
 * not keep). Whether copies of one message agree on their expiry is the
 * caller's to check: an entry has one. */
bool ent_topic_copy_loggable(const ent_entity *sub, const ent_copy_fate *f, int state, bool own_body, int slot,
                             bool was_dead_lettered);

/* Whether claims of entity e's subqueue take from its topic's log: a
 * subscription's active messages, received without a session. */
bool ent_topic_reads_log(const ent_entity *e, int subqueue);

#endif
