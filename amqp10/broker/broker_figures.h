/* The process's own figures for GET /metrics: what happened to messages per
 * entity (the broker keeps them), and what each front door counts about
 * itself (the shape both doors share; each door owns its instance). Process
 * counters: they start at zero with the process, as Prometheus expects, and
 * the entity counts that several replicas must agree on (active, dead-letter,
 * ...) are not here but read from the database at each scrape.
 *
 * Nothing here costs a message more than an add: a caller counts once per
 * delivery, commit or settlement call, with how many messages it carried, and
 * only after the store said the work committed. Every function runs on the
 * loop's thread. */
#ifndef BROKER_FIGURES_H
#define BROKER_FIGURES_H

#include <stddef.h>
#include <stdint.h>

#include "ent_status.h"

/* What can happen to messages of an entity (the per-entity counters). */
typedef enum broker_event {
    BROKER_EV_IN,            /* accepted into it: sent, published, routed or forwarded there */
    BROKER_EV_OUT,           /* delivered to a receiver (locked, or received and deleted) */
    BROKER_EV_COMPLETED,     /* completed by a receiver */
    BROKER_EV_ABANDONED,     /* given back by a receiver */
    BROKER_EV_DEFERRED,      /* deferred by a receiver */
    BROKER_EV_DEAD_LETTERED, /* moved to its dead-letter subqueue (or where its dead letters go), any reason */
    BROKER_EV_EXPIRED,       /* expired (dead-lettered or dropped) */
    BROKER_EV_SCHEDULED,     /* accepted for later (a scheduled enqueue time) */
    BROKER_EVENTS
} broker_event;

/* A dead-letter reason is a label value: at most this many bytes of it are
 * kept (cut on a UTF-8 boundary), and an entity keeps at most this many
 * distinct reasons, the last of them BROKER_REASON_OTHER, which counts every
 * reason that came after the others: a client inventing reasons cannot grow
 * the process (or Prometheus) without end. A dead letter with no reason is
 * counted under BROKER_REASON_NONE. */
#define BROKER_REASON_LABEL_MAX 128
#define BROKER_REASONS_MAX 16
#define BROKER_REASON_OTHER "(other)"
#define BROKER_REASON_NONE "(none)"

typedef struct broker_reason_count {
    char reason[BROKER_REASON_LABEL_MAX + 1];
    uint64_t n;
} broker_reason_count;

/* One entity's counters. */
typedef struct broker_entity_counts {
    int64_t id;                 /* 0: a free slot */
    uint64_t n[BROKER_EVENTS];
    broker_reason_count *reasons; /* dead letters by reason (owned), nreasons of them */
    size_t nreasons;
} broker_entity_counts;

/* Counters per entity id: the broker's for the whole process, or a tally an
 * operation makes of what its commit will do (a publish's copies into many
 * subscriptions), added to the broker's once the commit succeeded.
 * Ownership: its creator's; an empty one allocates nothing. */
typedef struct broker_counts {
    broker_entity_counts *slots; /* open addressing by id; cap a power of two */
    size_t cap, used;
} broker_counts;

void broker_counts_free(broker_counts *c);
/* n more of ev in entity (0: nothing; out of memory: the count is lost, never the work). */
void broker_counts_add(broker_counts *c, int64_t entity, broker_event ev, uint64_t n);
/* n more dead letters in entity for reason (NULL or "": none); BROKER_EV_DEAD_LETTERED too. */
void broker_counts_add_dead_letters(broker_counts *c, int64_t entity, const char *reason, uint64_t n);
/* Adds everything in from to into. */
void broker_counts_merge(broker_counts *into, const broker_counts *from);
/* The entity's counters, or NULL when nothing was counted for it. */
const broker_entity_counts *broker_counts_get(const broker_counts *c, int64_t entity);
/* Forgets the entities keep() says are gone (deleted entities' counters). */
void broker_counts_keep(broker_counts *c, int (*keep)(void *ctx, int64_t entity), void *ctx);

/* ---- the front doors' own figures ---- */

/* Links by what they are for, as the client sees them. */
typedef enum broker_link_kind {
    BROKER_LINK_SENDER,      /* the client sends messages to an entity */
    BROKER_LINK_RECEIVER,    /* the client receives from an entity */
    BROKER_LINK_MANAGEMENT,  /* $management requests and replies */
    BROKER_LINK_CBS,         /* $cbs requests and replies */
    BROKER_LINK_COORDINATOR, /* transactions */
    BROKER_LINK_KINDS
} broker_link_kind;
/* The label value of each ("sender", ...). */
const char *broker_link_kind_name(broker_link_kind k);

/* Operations a door counts by name ($management's), at most. */
#define BROKER_DOOR_OPS_MAX 32

/* What a front door (the AMQP wire, the HTTP plane) counts about itself.
 * Ownership: embedded in the door's state; the names are static texts. */
typedef struct broker_door_figures {
    const char *door;               /* its label value: "amqp", "http" */
    uint64_t connections_open;      /* connections whose protocol opened and that are not gone */
    uint64_t connections_opened;    /* all such so far */
    uint64_t links_open[BROKER_LINK_KINDS];
    const char *op_names[BROKER_DOOR_OPS_MAX]; /* its operations' names (static texts), nops of them */
    size_t nops;
    uint64_t op_requests[BROKER_DOOR_OPS_MAX + 1]; /* per operation; [nops]: one it does not know */
    uint64_t cbs_put_tokens;        /* $cbs put-token requests */
    uint64_t claims_ahead;          /* receivers' claims sent while their previous one was in the store */
    uint64_t refusals[SB_STATUS_COUNT]; /* requests answered with each error status */
} broker_door_figures;

/* A refusal with status st was answered (nothing for a success). */
static inline void broker_door_refused(broker_door_figures *f, sb_status st)
{
    if (f && st >= SB_ERR_ARGUMENT && st < SB_STATUS_COUNT)
        f->refusals[st]++;
}

/* Which family a refusal counts in: a throttle (server-busy: the SDKs wait
 * and retry), a server error (internal-error: the emulator or its store
 * failed), or the client's error (everything else: a lost lock, a missing
 * entity, a session wait that timed out). */
typedef enum broker_refusal_kind {
    BROKER_REFUSED_CLIENT_ERROR,
    BROKER_REFUSED_SERVER_ERROR,
    BROKER_REFUSED_THROTTLED
} broker_refusal_kind;
broker_refusal_kind broker_refusal_kind_of(sb_status st);

#endif
