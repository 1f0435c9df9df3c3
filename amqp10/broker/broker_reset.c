/* A reset or a snapshot restored, as this process sees it (broker.h:
 * broker_replaced). The database changed in one transaction (sql/migrations/
 * 011_snapshots.sql); what an emulator keeps in memory about the namespace is
 * made to agree here, on every emulator of the database (the one that asked
 * calls this from its answer, the others from the NOTIFY):
 *
 *  - the clock: its offset becomes the restored one (0, real time, for a
 *    reset). It only ever moves forward otherwise (ent_clock.h), except
 *    that a refill read before the restore may not move it (forward to
 *    where it was) once the restore set it back.
 *  - the entity cache: refilled (the entity tables' NOTIFY asks too). A link
 *    whose entity kept its id stays attached and takes its properties; one
 *    whose entity is gone is detached with MessagingEntityNotFound, as for a
 *    delete (broker_receivers.refreshed).
 *  - receivers (broker_receivers.replaced): every claim position goes back
 *    to the start, since restored messages have sequence numbers below what a
 *    link had claimed past; a session receiver loses its session, whose lock
 *    (a row of sessions) was deleted; then every waiting receiver looks again.
 *    Deliveries in the clients' hands name locks that no longer exist: their
 *    settlements answer lock-lost, as for a lock that lapsed.
 *  - the sweep runs now: scheduled messages may be due on the restored clock.
 *  - the topic pump: messages restored at rest in a topic are routed now. A
 *    round under way consumes the messages it claimed by lock token; the
 *    restore dropped every lock, so none of its copies is stored
 *    (STMT_PUBLISH_SET keeps only the copies of messages it deleted).
 *  - transactions under way keep their work: their sends are stored at the
 *    discharge like any send after the reset; their settlements and
 *    schedules name rows that are gone, so such a commit fails.
 *  - sequence numbers are reserved in the database only (entity_runtime), and
 *    the restore never moves them back. */
#include "broker_internal.h"
#include "ent_clock.h"
#include "ent_log.h"

void broker_replaced(broker *b, int64_t generation, int64_t offset_ms, int32_t ns)
{
    if (generation == b->replaced_generation)
        return; /* made good already: this emulator asked, and its NOTIFY came back */
    b->replaced_generation = generation;
    int64_t was = ent_clock_offset_ms_in(ns);
    ent_clock_set_offset_in(ns, offset_ms);
    LOG_INFO("namespace %d reset or restored (generation %lld): clock offset %lld ms (was %lld)", (int)ns,
             (long long)generation, (long long)offset_ms, (long long)was);
    if (b->loading)
        b->clocks_stale_refill = b->refills; /* read before this: its clocks are not followed (broker_entities.c) */
    broker_refresh_entities(b);
    if (b->receivers.replaced)
        b->receivers.replaced(b->receivers.ctx, ns);
    if (b->lws) {
        broker_sweep_now(b);
        broker_topic_pump(b, 0);
    }
    broker_wake(b, 0);
}

void broker_replace_begin(broker *b) { b->replacing++; }

void broker_replace_end(broker *b)
{
    if (b->replacing > 0)
        b->replacing--;
    if (!b->replacing && b->sweep_again && !b->sweeping && b->lws) {
        b->sweep_again = false;
        broker_sweep_now(b);
    }
}
