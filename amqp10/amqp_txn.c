/* Transactions, as the .NET and Java SDKs drive them (AMQP 1.0 part 4, and
 * azure-amqp's Controller): the client attaches a sender whose target is a
 * coordinator, and sends `declare` (described 0x31) to get a txn-id (answered
 * with `declared` 0x33 {txn-id}) and `discharge` (0x32 {txn-id, fail}) to end
 * it. Transfers and dispositions whose state is transactional-state (0x34
 * {txn-id, outcome}) join the transaction: they are answered at once with
 * transactional-state and collected (store_txn.h), and nothing reaches the
 * store before a discharge with fail=false commits all of it as one
 * PostgreSQL transaction. A rollback (fail=true, a refused operation, a
 * timeout, the connection ending) drops the collected work: the messages are
 * as they were, locks kept until they lapse, as Service Bus does.
 *
 * A transaction belongs to its connection, so one transaction may span every
 * entity the connection's links reach (.NET's EnableCrossEntityTransactions,
 * and send-via). Limits and verdicts: entities/ent_txn.h. */
#include <proton/codec.h>
#include <proton/disposition.h>
#include <proton/message.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amqp_internal.h"
#include "amqp_reply.h"
#include "ent_alloc.h"
#include "ent_clock.h"
#include "ent_log.h"
#include "ent_txn.h"

#define TXN_DECLARE 0x31
#define TXN_DISCHARGE 0x32
#define TXN_DECLARED 0x33
#define TXN_ID_LEN 8
/* AMQP's transaction error conditions (part 4, 4.5.4). */
#define TXN_UNKNOWN_ID "amqp:transaction:unknown-id"
#define TXN_ROLLBACK "amqp:transaction:rollback"

/* One declared transaction; owned by its connection's list until discharged,
 * or until the coordinator link that declared it closes. */
struct amqp_txn {
    amqp_txn *next;
    amqp_conn *conn;
    const amqp_link *coord; /* the coordinator it was declared on (not owned) */
    uint8_t id[TXN_ID_LEN];
    ent_txn_state state;
    store_txn *work;
    broker_counts tally; /* what its work will do to messages, counted once it commits (GET /metrics) */
};

static void txn_unlink_free(amqp_txn *t)
{
    amqp_conn *c = t->conn;
    for (amqp_txn **pp = &c->txns; *pp; pp = &(*pp)->next)
        if (*pp == t) {
            *pp = t->next;
            c->ntxns--;
            break;
        }
    if (t->work) /* rolled back: what it scheduled goes */
        store_txn_discard(c->srv->store, t->work);
    store_txn_free(t->work);
    broker_counts_free(&t->tally);
    ent_free(t);
}

bool amqp_txn_alive(const amqp_conn *c, const amqp_txn *txn)
{
    for (const amqp_txn *t = c->txns; t; t = t->next)
        if (t == txn)
            return true;
    return false;
}

void amqp_txn_free_all(amqp_conn *c)
{
    while (c->txns)
        txn_unlink_free(c->txns);
}

void amqp_txn_coordinator_closed(amqp_link *lk)
{
    amqp_conn *c = lk->conn;
    unsigned n = 0;
    for (amqp_txn *t = c->txns, *next; t; t = next) {
        next = t->next;
        if (t->coord == lk) {
            txn_unlink_free(t);
            n++;
        }
    }
    if (n)
        LOG_INFO("conn %llu: coordinator link '%s' closed: %u open transaction(s) rolled back",
                 (unsigned long long)c->id, pn_link_name(lk->pn), n);
}

static amqp_txn *find(amqp_conn *c, pn_bytes_t id)
{
    if (id.size != TXN_ID_LEN)
        return NULL;
    for (amqp_txn *t = c->txns; t; t = t->next)
        if (!memcmp(t->id, id.start, TXN_ID_LEN))
            return t;
    return NULL;
}

static void refuse(pn_delivery_t *d, const char *condition, const char *description)
{
    pn_condition_t *cond = pn_disposition_condition(pn_delivery_local(d));
    amqp_condition_set(cond, condition, description);
    pn_delivery_update(d, PN_REJECTED);
    pn_delivery_settle(d);
}

/* ---- joining ---- */

/* The txn-id of a transactional-state, with d's remote data rewound after. */
static pn_bytes_t state_txn_id(pn_delivery_t *d)
{
    pn_data_t *data = pn_disposition_data(pn_delivery_remote(d));
    pn_bytes_t id = {0, NULL};
    pn_data_rewind(data);
    if (pn_data_next(data) && pn_data_type(data) == PN_LIST) {
        pn_data_enter(data);
        if (pn_data_next(data) && pn_data_type(data) == PN_BINARY)
            id = pn_data_get_binary(data);
    }
    pn_data_rewind(data);
    return id;
}

bool amqp_txn_of(amqp_conn *c, pn_delivery_t *d, amqp_txn **txn)
{
    *txn = NULL;
    if (pn_delivery_remote_state(d) != AMQP_TXN_STATE)
        return false;
    *txn = find(c, state_txn_id(d));
    if (!*txn)
        refuse(d, TXN_UNKNOWN_ID, "The transaction id is not one declared on this connection (or it ended).");
    return true;
}

sb_status amqp_txn_admit(amqp_txn *txn, pn_delivery_t *d, int n)
{
    char err[256];
    sb_status st = ent_txn_admit(&txn->state, n, ent_clock_wall_ms(), err, sizeof err);
    if (st != SB_OK) {
        LOG_INFO("conn %llu: transaction operation refused: %s", (unsigned long long)txn->conn->id, err);
        refuse(d, sb_status_condition(st), err);
    }
    return st;
}

sb_status amqp_txn_admit_op(amqp_txn *txn, char *err, size_t errlen)
{
    return ent_txn_admit(&txn->state, 1, ent_clock_wall_ms(), err, errlen);
}

store_txn *amqp_txn_work(amqp_txn *txn) { return txn->work; }

broker_counts *amqp_txn_tally(amqp_txn *txn) { return &txn->tally; }

static void copy_text(pn_data_t *data, char *buf, size_t n)
{
    pn_type_t t = pn_data_type(data);
    pn_bytes_t v = t == PN_STRING ? pn_data_get_string(data) : t == PN_SYMBOL ? pn_data_get_symbol(data)
                                                                                : pn_bytes(0, NULL);
    size_t k = v.size < n - 1 ? v.size : n - 1;
    memcpy(buf, v.start ? v.start : "", k);
    buf[k] = 0;
}

/* rejected's error, described [condition, description, info]: the
 * dead-letter reason and description in info, else the description. */
static void dead_letter_text(pn_data_t *data, char *reason, char *description, size_t n)
{
    if (!pn_data_next(data) || pn_data_type(data) != PN_DESCRIBED)
        return;
    pn_data_enter(data);
    pn_data_next(data);
    if (!pn_data_next(data) || pn_data_type(data) != PN_LIST)
        return;
    pn_data_enter(data);
    pn_data_next(data); /* condition */
    if (pn_data_next(data))
        copy_text(data, description, n);
    if (!pn_data_next(data) || pn_data_type(data) != PN_MAP)
        return;
    pn_data_enter(data);
    while (pn_data_next(data)) {
        char key[32];
        copy_text(data, key, sizeof key);
        if (!pn_data_next(data))
            break;
        if (!strcmp(key, "DeadLetterReason"))
            copy_text(data, reason, n);
        else if (!strcmp(key, "DeadLetterErrorDescription"))
            copy_text(data, description, n);
    }
}

uint64_t amqp_txn_outcome(pn_delivery_t *d, bool *undeliverable, char *reason, char *description, size_t n)
{
    pn_data_t *data = pn_disposition_data(pn_delivery_remote(d));
    uint64_t code = 0;
    *undeliverable = false;
    reason[0] = description[0] = 0;
    pn_data_rewind(data);
    if (pn_data_next(data) && pn_data_type(data) == PN_LIST) {
        pn_data_enter(data);
        pn_data_next(data); /* txn-id */
        if (pn_data_next(data) && pn_data_type(data) == PN_DESCRIBED) {
            pn_data_enter(data);
            pn_data_next(data);
            if (pn_data_type(data) == PN_ULONG)
                code = pn_data_get_ulong(data);
            if (pn_data_next(data) && pn_data_type(data) == PN_LIST) {
                pn_data_enter(data);
                if (code == PN_MODIFIED && pn_data_next(data) && pn_data_next(data) &&
                    pn_data_type(data) == PN_BOOL)
                    *undeliverable = pn_data_get_bool(data);
                else if (code == PN_REJECTED)
                    dead_letter_text(data, reason, description, n);
            }
        }
    }
    pn_data_rewind(data);
    return code;
}

/* A transfer's outcome (accepted); a disposition's is the client's own, echoed. */
void amqp_txn_answer(amqp_txn *txn, pn_delivery_t *d)
{
    pn_data_t *out = pn_disposition_data(pn_delivery_local(d));
    pn_data_clear(out);
    bool transfer = pn_link_is_receiver(pn_delivery_link(d));
    if (transfer) {
        pn_data_put_list(out);
        pn_data_enter(out);
        pn_data_put_binary(out, pn_bytes(TXN_ID_LEN, (const char *)txn->id));
        pn_data_put_described(out);
        pn_data_enter(out);
        pn_data_put_ulong(out, PN_ACCEPTED);
        pn_data_put_list(out);
        pn_data_exit(out);
        pn_data_exit(out);
    } else {
        pn_data_t *in = pn_disposition_data(pn_delivery_remote(d));
        pn_data_rewind(in);
        pn_data_copy(out, in);
        pn_data_rewind(in);
    }
    pn_delivery_update(d, AMQP_TXN_STATE);
    pn_delivery_settle(d);
}

/* ---- declare and discharge ---- */

static void declare(amqp_link *lk, pn_delivery_t *d)
{
    amqp_conn *c = lk->conn;
    if (c->ntxns >= ENT_TXN_MAX_OPEN) {
        char desc[160];
        snprintf(desc, sizeof desc, "This connection has %d transactions open already; discharge one first.",
                 ENT_TXN_MAX_OPEN);
        refuse(d, sb_status_condition(SB_ERR_QUOTA_EXCEEDED), desc);
        return;
    }
    amqp_txn *t = ent_calloc(1, sizeof *t);
    store_txn *w = t ? store_txn_new() : NULL;
    if (!w) {
        ent_free(t);
        refuse(d, sb_status_condition(SB_ERR_INTERNAL), "out of memory");
        return;
    }
    t->conn = c;
    t->coord = lk;
    t->work = w;
    t->state.declared_ms = ent_clock_wall_ms();
    uint32_t n = ++c->txn_counter, id = (uint32_t)c->id;
    for (int b = 0; b < 4; b++) {
        t->id[b] = (uint8_t)(id >> (24 - 8 * b));
        t->id[4 + b] = (uint8_t)(n >> (24 - 8 * b));
    }
    t->next = c->txns;
    c->txns = t;
    c->ntxns++;
    pn_data_t *out = pn_disposition_data(pn_delivery_local(d));
    pn_data_clear(out);
    pn_data_put_list(out);
    pn_data_enter(out);
    pn_data_put_binary(out, pn_bytes(TXN_ID_LEN, (const char *)t->id));
    pn_data_exit(out);
    pn_delivery_update(d, TXN_DECLARED);
    pn_delivery_settle(d);
}

/* What a settlement of the transaction needs once the commit is in. */
typedef struct settled_in_txn {
    int64_t entity_id, dead_letter_target;
    ent_settle_kind kind;
} settled_in_txn;

typedef struct commit_req {
    amqp_link *lk;
    pn_delivery_t *d;
    int64_t *targets;
    size_t ntargets;
    int64_t *resting; /* topics its copies rest in: routed once it committed */
    size_t nresting;
    settled_in_txn *settled;
    size_t nsettled;
    broker_counts tally; /* the transaction's, with its settlements */
} commit_req;

static void on_committed(void *ctx, sb_status st)
{
    commit_req *q = ctx;
    amqp_conn *c = q->lk->conn;
    if (st == SB_OK) {
        pn_delivery_update(q->d, PN_ACCEPTED);
        pn_delivery_settle(q->d);
        /* what it sent, and what its abandons gave back, is for the receivers of those entities */
        for (size_t i = 0; i < q->ntargets; i++) {
            broker_rewind(c->srv->broker, q->targets[i]);
            broker_wake(c->srv->broker, q->targets[i]);
        }
        for (size_t i = 0; i < q->nresting; i++)
            broker_topic_pump(c->srv->broker, q->resting[i]);
        /* and each settlement is followed up as outside a transaction */
        for (size_t i = 0; i < q->nsettled; i++)
            broker_after_settle(c->srv->broker, q->settled[i].entity_id, q->settled[i].dead_letter_target,
                                     q->settled[i].kind);
        broker_count_tally(c->srv->broker, &q->tally);
    } else {
        const char *why = st == SB_ERR_LOCK_LOST
                              ? "The transaction was rolled back: a message it settles lost its lock (it expired, "
                                "or the message was settled already)."
                          : st == SB_ERR_QUOTA_EXCEEDED
                              ? "The transaction was rolled back: an entity it sends to is full (MaxSizeInMegabytes)."
                          : st == SB_ERR_NOT_FOUND ? "The transaction was rolled back: an entity it sends to was deleted."
                                                   : "The transaction was rolled back: the emulator's store failed.";
        LOG_INFO("conn %llu: commit failed: %s", (unsigned long long)c->id, why);
        refuse(q->d, sb_status_condition(st), why);
    }
    amqp_conn_pump(c);
    amqp_link_drop(q->lk);
    ent_free(q->targets);
    ent_free(q->resting);
    ent_free(q->settled);
    broker_counts_free(&q->tally);
    ent_free(q);
}

/* A settlement of the transaction, into its tally (what a link's settlement
 * counts in broker_settle.c). */
static void tally_settlement(broker_counts *tally, const store_settlement *x)
{
    switch (x->kind) {
    case STORE_SETTLE_COMPLETE: broker_counts_add(tally, x->entity_id, BROKER_EV_COMPLETED, 1); break;
    case STORE_SETTLE_ABANDON: broker_counts_add(tally, x->entity_id, BROKER_EV_ABANDONED, 1); break;
    case STORE_SETTLE_DEFER: broker_counts_add(tally, x->entity_id, BROKER_EV_DEFERRED, 1); break;
    case STORE_SETTLE_DEADLETTER: broker_counts_add_dead_letters(tally, x->entity_id, x->reason, 1); break;
    case STORE_SETTLE_RELEASE: break;
    }
}

static void discharge(amqp_link *lk, pn_delivery_t *d, pn_bytes_t id, bool fail)
{
    amqp_conn *c = lk->conn;
    amqp_txn *t = find(c, id);
    if (!t) {
        refuse(d, TXN_UNKNOWN_ID, "The transaction id is not one declared on this connection (or it ended).");
        return;
    }
    char err[256];
    sb_status st = ent_txn_discharge(&t->state, fail, ent_clock_wall_ms(), err, sizeof err);
    if (st == SB_NO_CONTENT) { /* rolled back as asked */
        txn_unlink_free(t);
        pn_delivery_update(d, PN_ACCEPTED);
        pn_delivery_settle(d);
        return;
    }
    if (st != SB_OK) {
        txn_unlink_free(t);
        refuse(d, st == SB_ERR_TIMEOUT ? sb_status_condition(st) : TXN_ROLLBACK, err);
        return;
    }
    commit_req *q = ent_calloc(1, sizeof *q);
    const int64_t *ids;
    size_t n = store_txn_targets(t->work, &ids);
    if (q && n && (q->targets = ent_malloc(n * sizeof *ids)))
        memcpy(q->targets, ids, n * sizeof *ids), q->ntargets = n;
    const int64_t *rest;
    size_t nr = store_txn_resting(t->work, &rest);
    if (q && nr && (q->resting = ent_malloc(nr * sizeof *rest)))
        memcpy(q->resting, rest, nr * sizeof *rest), q->nresting = nr;
    const store_settlement *xs;
    size_t ns = store_txn_settlements(t->work, &xs);
    if (q && ns && (q->settled = ent_malloc(ns * sizeof *q->settled))) {
        for (size_t i = 0; i < ns; i++) {
            q->settled[i] = (settled_in_txn){xs[i].entity_id, xs[i].dead_letter_target, (ent_settle_kind)xs[i].kind};
            tally_settlement(&t->tally, &xs[i]);
        }
        q->nsettled = ns;
    }
    if (!q || (n && !q->targets) || (nr && !q->resting) || (ns && !q->settled)) {
        if (q) {
            ent_free(q->targets);
            ent_free(q->resting);
            ent_free(q->settled);
        }
        ent_free(q);
        txn_unlink_free(t);
        refuse(d, sb_status_condition(SB_ERR_INTERNAL), "out of memory");
        return;
    }
    q->lk = lk;
    q->d = d;
    q->tally = t->tally; /* moves to the commit */
    memset(&t->tally, 0, sizeof t->tally);
    store_txn *w = t->work;
    t->work = NULL;
    txn_unlink_free(t);
    amqp_link_hold(lk);
    store_txn_commit(c->srv->store, w, ent_clock_now_ms_in(c->ns_id), on_committed, q); /* takes w */
}

void amqp_txn_on_control(amqp_link *lk, pn_delivery_t *d)
{
    size_t len = pn_delivery_pending(d);
    char *buf = ent_malloc(len ? len : 1);
    ssize_t got = buf ? pn_link_recv(lk->pn, buf, len) : -1;
    pn_link_advance(lk->pn);
    pn_message_t *msg = got >= 0 ? amqp_request_decode(buf, (size_t)got) : NULL;
    ent_free(buf);
    pn_data_t *body = msg ? pn_message_body(msg) : NULL;
    uint64_t code = 0;
    pn_bytes_t id = {0, NULL};
    bool fail = false;
    if (body) {
        pn_data_rewind(body);
        if (pn_data_next(body) && pn_data_type(body) == PN_DESCRIBED) {
            pn_data_enter(body);
            pn_data_next(body);
            if (pn_data_type(body) == PN_ULONG)
                code = pn_data_get_ulong(body);
            else if (pn_data_type(body) == PN_SYMBOL) {
                pn_bytes_t s = pn_data_get_symbol(body);
                code = s.size == 17 && !memcmp(s.start, "amqp:declare:list", 17)     ? TXN_DECLARE
                       : s.size == 19 && !memcmp(s.start, "amqp:discharge:list", 19) ? TXN_DISCHARGE
                                                                                     : 0;
            }
            if (pn_data_next(body) && pn_data_type(body) == PN_LIST && code == TXN_DISCHARGE) {
                pn_data_enter(body);
                if (pn_data_next(body) && pn_data_type(body) == PN_BINARY)
                    id = pn_data_get_binary(body);
                if (pn_data_next(body) && pn_data_type(body) == PN_BOOL)
                    fail = pn_data_get_bool(body);
            }
        }
    }
    if (code == TXN_DECLARE)
        declare(lk, d);
    else if (code == TXN_DISCHARGE)
        discharge(lk, d, id, fail); /* id points into msg, alive until here */
    else
        refuse(d, sb_status_condition(SB_ERR_ARGUMENT),
               "A coordinator takes declare (amqp:declare:list) and discharge (amqp:discharge:list) only.");
    if (msg)
        pn_message_free(msg);
}
