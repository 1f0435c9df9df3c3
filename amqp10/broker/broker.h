/* The broker: what happens to messages between the front doors (the AMQP
 * wire in amqp10/, the HTTP plane in amqp10/http/) and the store (sql/).
 * It owns the entity cache and keeps it true, publishes to topics (each
 * subscription's copy, as entities/ent_topic.h plans it), routes what rests
 * in a topic (the topic pump), runs the background sweep, and carries out
 * what must follow a settlement's commit (entities/ent_settle.h decides it).
 *
 * The broker holds no connection: it tells whoever holds receivers through
 * the broker_receivers callbacks (the wire sets them), so no include points
 * up from here. Every function runs on the loop's thread. */
#ifndef BROKER_H
#define BROKER_H

#include <stdbool.h>
#include <stdint.h>

#include "amqp_message.h"
#include "broker_figures.h"
#include "ent_cache.h"
#include "ent_fault.h"
#include "ent_namespace.h"
#include "ent_settle.h"
#include "store.h"
#include "store_queue.h"
#include "store_txn.h"

struct lws_context;

/* What every front door enforces the same way. The strings are borrowed:
 * they outlive the broker (the emulator's options). */
typedef struct broker_settings {
    const char *sas_key_name;  /* the one SharedAccessKeyName accepted */
    const char *sas_key;       /* its key: HMAC key bytes as written */
    uint32_t max_message_size; /* max-message-size on attach, and the send limit */
    const char *namespace_name; /* the default namespace's (Config.json's) name; NULL: sbemulatorns */
    int64_t story_retention_ms; /* each message's story is kept this long (--story-retention); 0: not pruned */
} broker_settings;

/* Whoever holds receiving links (the AMQP wire): told when what they wait
 * for may have changed. ctx is theirs. */
typedef struct broker_receivers {
    void *ctx;
    /* Messages arrived in entity_id (a topic's id: in its subscriptions):
     * its parked receivers claim again. 0: every waiting receiver retries. */
    void (*wake)(void *ctx, int64_t entity_id);
    /* Messages of entity_id were unlocked: its receivers look from its
     * first sequence number again. */
    void (*rewind)(void *ctx, int64_t entity_id);
    /* The cache was refilled: every attached link takes its entity's new
     * properties, and a link whose entity is gone is detached. */
    void (*refreshed)(void *ctx, const ent_cache *cache);
    /* Namespace ns was reset or a snapshot restored (broker_replaced):
     * every receiver of it looks from the first sequence number again, and a
     * session receiver's lock, deleted with the sessions, is lost. May be NULL. */
    void (*replaced)(void *ctx, int32_t ns);
} broker_receivers;

typedef struct broker broker;

/* Ownership: the emulator creates the broker after the store and frees it
 * after every front door; the broker borrows the store. */
broker *broker_new(store *st, const broker_settings *settings);
void broker_free(broker *b);
void broker_set_receivers(broker *b, const broker_receivers *r);
/* Fills the cache and starts the sweep once the lws context exists. */
void broker_attach_loop(broker *b, struct lws_context *ctx);
/* Cancels the sweep; call before the loop's context is destroyed. */
void broker_detach_loop(broker *b);

store *broker_store(const broker *b);
const broker_settings *broker_settings_of(const broker *b);
/* The entity cache, or NULL before the first refill. */
const ent_cache *broker_cache(const broker *b);

/* ---- entities (broker_entities.c) ----
 * Look-ups find their entity in the cache; a miss refills the cache once
 * (for every look-up waiting) and looks again, so an entity made a moment
 * ago with SQL is found. cb may run before this returns. */
typedef void (*broker_entity_cb)(void *ctx, sb_status st, const ent_entity *e, const ent_route *route);
/* The entity of that name in namespace ns (ent_namespace.h; 0: the default). */
void broker_entity_lookup(broker *b, int32_t ns, const char *name, broker_entity_cb cb, void *ctx);
/* cb (with e NULL) once a refill that started after this call has ended:
 * what was committed before it is in the cache (a rule change answered only
 * then routes the client's next send by the new rules). */
void broker_after_refill(broker *b, broker_entity_cb cb, void *ctx);
/* Entities changed (sbemu_entities): refill the cache. */
void broker_refresh_entities(broker *b);

/* ---- namespaces (broker_namespaces.c) ----
 * The namespaces this emulator knows (entities/ent_namespace.h), refilled
 * with the entities. A look-up by name finds one in memory, or makes it in
 * the store (its first use) and answers once it is made: cb with its id.
 * name is ent_namespace_choose's: "" (and every name of the default) is the
 * default namespace, answered at once. cb may run before this returns. */
typedef void (*broker_namespace_cb)(void *ctx, sb_status st, int32_t ns);
void broker_namespace_resolve(broker *b, const char *name, broker_namespace_cb cb, void *ctx);
/* The same for a namespace that must exist already: one not in memory is
 * looked for again after a refill, and is SB_ERR_NOT_FOUND if still missing. */
void broker_namespace_find(broker *b, const char *name, broker_namespace_cb cb, void *ctx);
/* What the broker knows now (never NULL). */
const ent_namespaces *broker_namespaces(const broker *b);
/* The default namespace's own name (Config.json's, or sbemulatorns). */
const char *broker_default_namespace_name(const broker *b);

/* ---- publishing to a topic (broker_publish.c) ----
 * The copies of n messages sent to a topic, committed together (cb once
 * they are; SB_ERR_NOT_FOUND when the topic is gone). consume: per message, the lock token of the message at rest in
 * the topic it was (NULL: a fresh send). parsed[i] spans msgs[i].bytes.
 * Everything is copied before this returns. */
void broker_publish(broker *b, int64_t topic_id, const store_new_message *msgs, const amqp_msg *parsed, size_t n,
                    const uint8_t (*consume)[16], store_status_cb cb, void *ctx);
/* The same copies, added to a transaction's work instead (committed on its
 * discharge), and what they will do counted in tally (NULL: not counted),
 * for the caller to add once the transaction commits. 0, or -1 (the topic is
 * gone, or out of memory). */
int broker_publish_txn(broker *b, int64_t topic_id, const store_new_message *msgs, const amqp_msg *parsed, size_t n,
                       store_txn *txn, broker_counts *tally);
/* Routes what rests in a topic now (0: every topic; broker_topic_pump.c). */
void broker_topic_pump(broker *b, int64_t topic_id);

/* ---- sending (broker_send.c) ----
 * The one path of a client's send, whichever front door it came through (a
 * link's transfer, the dashboard): stamp each message (its fate,
 * entities/ent_send.h), check it, find its target, commit. */

/* Fills out for message m (parsed from bytes/len) sent through route at now. */
void broker_send_stamp(const ent_route *route, const amqp_msg *m, const uint8_t *bytes, size_t len, int64_t now,
                       store_new_message *out);
/* SB_OK, or the refusal (desc says why) of a message whose ids are too long
 * or whose session the entity (entity_name, for the text) cannot take. */
sb_status broker_send_check(const ent_route *route, const char *entity_name, const amqp_msg *m,
                            const store_new_message *stamped, char *desc, size_t desclen);
/* Where n stamped messages sent to entity_id go: the end of its ForwardTo
 * chain, or entity_id itself with them made ForwardingFailed dead letters
 * when that end refuses sends. */
int64_t broker_send_target(const ent_route *route, int64_t entity_id, store_new_message *msgs, size_t n);
/* Commits n stamped messages sent to entity_id (through route) to target
 * (broker_send_target's), all or none, and counts them once committed; cb
 * with the store's outcome. A ForwardTo end without room (quota exceeded)
 * makes them ForwardingFailed dead letters of entity_id instead. Takes buf,
 * msgs and parsed (ent_malloc'd; msgs point into buf and parsed). */
void broker_send_commit(broker *b, int64_t entity_id, const ent_route *route, int64_t target, uint8_t *buf,
                        store_new_message *msgs, amqp_msg *parsed, size_t n, store_status_cb cb, void *ctx);
/* What such a send will do, added to tally (a transaction's, added when it commits). */
void broker_send_tally(broker_counts *tally, int64_t target, const store_new_message *msgs, size_t n);
/* ---- the story (broker_story.c) ----
 * Each message's story (sql/store_story.h). While it is recorded: marks n
 * messages (parsed[i] spans msgs[i].bytes) as sent by link of connection, to
 * entity_id, going to target (where broker_send_target sends them), with the
 * trace context each carries. Costs nothing while it is not. */
void broker_story_sent(store_new_message *msgs, const amqp_msg *parsed, size_t n, uint64_t connection,
                       const char *link, int64_t entity_id, int64_t target);

/* ---- the sweep (broker_sweep.c) ----
 * Runs the background sweep now (after the clock moved). */
void broker_sweep_now(broker *b);
/* Namespace ns's clock was moved forward here (ent_clock): publishes it (every
 * emulator follows; cb answers), then sweeps and wakes every receiver. In
 * that order: the sweep, behind the publish in the store, acts only while the
 * database holds the clock it computed its time with (SWEEP_CLOCK_HOLDS). */
void broker_clock_moved(broker *b, int32_t ns, void (*cb)(void *ctx, sb_status st), void *ctx);

/* ---- settling (broker_settle.c) ---- */

/* What one settlement call says of its locks. Borrowed for the call. */
typedef struct broker_settlement {
    int64_t entity_id;
    int64_t dead_letter_target; /* where the entity's dead letters go (0: its own subqueue) */
    ent_settle_kind kind;
    const char *reason, *description; /* a dead letter's (NULL: none) */
    const uint8_t *mods;              /* properties to modify, an encoded map with string keys (NULL: none) */
    size_t modslen;
    int64_t now_ms;
} broker_settlement;

/* Settles the n messages whose locks are tokens as x says, and once all
 * have, carries out what must follow (broker_after_settle) and calls cb with
 * SB_OK or the first failure (SB_ERR_LOCK_LOST preferred; SB_ERR_ARGUMENT
 * when the properties cannot be applied). Everything is copied. */
void broker_settle(broker *b, const broker_settlement *x, const uint8_t (*tokens)[16], size_t n, store_status_cb cb,
                   void *ctx);

/* ---- figures (broker.c; see broker_figures.h) ----
 * What committed work did to messages, counted once the store said it
 * committed, once per delivery, commit or settlement call: n messages of
 * entity_id had ev happen to them (a dead letter's reason: NULL for none). */
void broker_count(broker *b, int64_t entity_id, broker_event ev, uint64_t n);
void broker_count_dead_letters(broker *b, int64_t entity_id, const char *reason, uint64_t n);
/* Adds a tally an operation made of what its commit did. */
void broker_count_tally(broker *b, const broker_counts *tally);
/* Every entity's counters so far (GET /metrics reads them). */
const broker_counts *broker_counts_of(const broker *b);

/* ---- a reset or a restore (broker_reset.c) ---- */
/* Namespace ns's state was replaced in the database, here or by another
 * emulator (store_reset.h: generation names that restore, offset_ms is the
 * namespace clock's offset from now on): makes what this process holds in
 * memory agree. Once per generation: the emulator that asked calls it from
 * its callback, and the NOTIFY that every emulator gets calls it again. */
void broker_replaced(broker *b, int64_t generation, int64_t offset_ms, int32_t ns);
/* A reset or restore this emulator asked for is in the store (begin, then
 * end once it is answered, before broker_replaced): no sweep starts
 * meanwhile. A sweep reads the clock when it starts; one started before the
 * answer, and run by the store after the restore's commit, would use the
 * offset the restore is about to set back, and expire the restored
 * messages. The sweep put off runs at the end. */
void broker_replace_begin(broker *b);
void broker_replace_end(broker *b);

/* ---- after a commit (broker_after.c) ---- */
/* Messages arrived in entity_id (0: anywhere): its receivers claim again. */
void broker_wake(broker *b, int64_t entity_id);
/* Messages of entity_id were unlocked: its receivers look from the start. */
void broker_rewind(broker *b, int64_t entity_id);
/* A settlement of kind in entity_id committed: carries out what
 * ent_settle_after_commit says must follow (the one rule every settlement
 * path uses: a link's disposition, $management update-disposition, a
 * transaction's discharge). dead_letter_target: where the entity's dead
 * letters go (0: its own dead-letter subqueue). */
void broker_after_settle(broker *b, int64_t entity_id, int64_t dead_letter_target, ent_settle_kind kind);

/* ---- faults on demand (broker_fault.c) ----
 * The rules in force (entities/ent_fault.h), loaded from the store at start
 * and reloaded whenever sbemu_faults changes on any emulator of the
 * database. A wire point asks at its operation; while no rule is set that
 * costs it one test: broker_faults(b)->n. */

/* What a wire point does once its operation's rule has fired. */
typedef struct broker_fault_act {
    ent_fault_effect effect; /* ENT_FAULT_NONE: go on (no rule fired after all, or the rule's delay is over) */
    sb_status error;         /* ERROR, DETACH, CLOSE: the error to answer with */
    const char *description; /* its description (borrowed for the call) */
    int64_t after_ms;        /* LOSE_LOCK: how long the delivered messages keep their locks */
    bool cancelled;          /* the emulator is stopping: let go of what the operation holds, answer nothing */
} broker_fault_act;
typedef void (*broker_fault_cb)(void *ctx, const broker_fault_act *act);

/* The rules in force; the pointer is the broker's for its whole life. */
const ent_fault_list *broker_faults(const broker *b);
/* Whether a rule fires for the operation p now. false: none does; go on
 * (cb is never called). true: one fires; cb is called exactly once, maybe
 * before this returns, once the store has counted the firing (and after the
 * rule's delay), and the point must hold the operation until then. Every
 * firing is logged. p's strings are copied. */
bool broker_fault_check(broker *b, const ent_fault_point *p, broker_fault_cb cb, void *ctx);
/* Reloads the rules from the store; cb (may be NULL) once a reload that
 * started after this call has ended, with its status. */
void broker_faults_reload(broker *b, void (*cb)(void *ctx, sb_status st), void *ctx);

#endif
