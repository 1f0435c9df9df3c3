/* A settlement's outcome and what must follow its commit.
 *
 * Every way a client settles a locked message (its link's disposition,
 * $management update-disposition, a transaction's commit) carries out the
 * same answer from ent_settle_after_commit, so the three cannot differ: a
 * message given back is looked for again by its entity's receivers at once,
 * and one that may have been dead-lettered reaches where dead letters go at
 * once (a ForwardDeadLetteredMessagesTo topic routes it then, instead of at
 * its next periodic pass). */
#ifndef ENT_SETTLE_H
#define ENT_SETTLE_H

#include <stdbool.h>

/* The outcomes; the values are STMT_SETTLE_SET's kind codes (sql/store_statements.c). */
typedef enum ent_settle_kind {
    ENT_SETTLE_COMPLETE = 0,
    ENT_SETTLE_ABANDON = 1,    /* back to the entity, DeliveryCount + 1 (or dead-lettered past MaxDeliveryCount) */
    ENT_SETTLE_DEADLETTER = 2, /* to the dead-letter subqueue, or where ForwardDeadLetteredMessagesTo says */
    ENT_SETTLE_DEFER = 3,      /* kept, receivable by sequence number only */
    ENT_SETTLE_RELEASE = 4,    /* back to the entity, no delivery counted (Python's prefetch release) */
} ent_settle_kind;

/* What must follow a committed settlement. */
typedef struct ent_settle_after {
    bool redeliver;     /* the message is claimable again in its entity: its receivers look again from the start */
    bool dead_lettered; /* it may have been dead-lettered: wake, or route, where the entity's dead letters go */
} ent_settle_after;

ent_settle_after ent_settle_after_commit(ent_settle_kind kind);

/* The terminal outcomes of an AMQP disposition (the wire reads Proton's). */
typedef enum ent_outcome { ENT_OUTCOME_ACCEPTED, ENT_OUTCOME_REJECTED, ENT_OUTCOME_RELEASED, ENT_OUTCOME_MODIFIED } ent_outcome;
/* What a client's outcome means to Service Bus: accepted completes, rejected
 * dead-letters, released gives back uncounted, modified abandons, or defers
 * when it says undeliverable-here (the SDKs' defer). */
ent_settle_kind ent_settle_kind_of_outcome(ent_outcome o, bool undeliverable_here);
/* $management update-disposition's disposition-status ("completed",
 * "abandoned", "suspended", "defered" as the SDKs spell it, or "deferred"):
 * 0 and *kind, or -1 for any other text. */
int ent_settle_kind_of_status(const char *status, ent_settle_kind *kind);

#endif
