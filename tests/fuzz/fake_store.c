/* See fake_store.h. Linked into the connection fuzz targets in place of sql/'s
 * typed store files: as long as this file defines every store function the
 * amqp10/ objects need, the linker takes none of sql/'s objects that talk to
 * PostgreSQL (store_rule_json.c, plain JSON, is still the real one). */
#include "fake_store.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ent_cache.h"
#include "ent_clock.h"
#include "ent_session.h"
#include "store_faults.h"
#include "store_mgmt.h"
#include "store_namespace.h"
#include "store_queue.h"
#include "store_rule_json.h"
#include "store_rules.h"
#include "store_session.h"
#include "store_topic.h"
#include "store_txn.h"

/* The most results one operation returns (messages of a claim or peek). */
#define FAKE_RESULTS_MAX 4
/* Messages claims may hand out per run: a client granting a billion credits
 * must not keep the harness claiming for ever. */
#define FAKE_CLAIM_BUDGET 24
/* Bytes of the last message sent that claims and peeks give back. */
#define FAKE_MSG_MAX 4096
/* Entities a transaction's targets list remembers. */
#define FAKE_TXN_TARGETS 8
#define FAKE_LOCK_MS 60000
/* The namespace every name other than the default's is (it holds no entity). */
#define FAKE_NAMESPACE_ID 2

/* properties (empty list) and a data section "hi": the smallest real message. */
static const uint8_t canned_msg[] = {0x00, 0x53, 0x73, 0x45, 0x00, 0x53, 0x75, 0xa0, 0x02, 'h', 'i'};

typedef struct fop fop;
typedef void (*fop_finish)(store *s, fop *op, sb_status st);

/* One operation waiting for its turn; what its result needs is copied in. */
struct fop {
    fop *next;
    fop_finish finish;
    const sb_status *errors; /* what it may fail with, ending in SB_OK */
    union {
        store_status_cb status;
        store_settled_cb settled;
        store_entities_cb entities;
        store_claim_cb claim;
        store_sweep_cb sweep;
        store_session_lock_cb lock;
        store_session_lock_claim_cb lock_claim;
        store_session_renew_cb renew;
        store_session_state_cb state;
        store_session_list_cb list;
        store_txn_seqs_cb txn_seqs;
        store_mgmt_msgs_cb msgs;
        store_renew_cb renew_locks;
        store_deferred_cb deferred;
        store_seqs_cb seqs;
        store_count_cb count;
        store_bytes_cb bytes;
        store_rule_add_cb rule_add;
        store_rule_status_cb rule_status;
        store_rules_cb rules;
        store_namespace_cb ns;
    } cb;
    void *ctx;
    int64_t entity_id;
    int64_t now_ms;
    int max;               /* results asked for (claims, peeks) */
    size_t n;              /* items given (seqs, tokens, messages) */
    bool deferred;         /* a receive-by-sequence-number: answers store_deferred_cb */
    int64_t *seqs;         /* the sequence numbers it names (owned) */
    bool named;            /* a session named by the caller */
    char session_id[ENT_SESSION_ID_SIZE];
    size_t held_bytes;     /* message bytes counted in store_pending_bytes */
    store_txn *txn;        /* a commit takes its transaction */
};

struct store {
    fop *head, **tail;
    size_t pending;
    size_t pending_bytes;
    uint32_t rng;
    unsigned error_shift;
    int claim_budget;
    int64_t next_seq;
    uint64_t next_token;
    uint8_t msg[FAKE_MSG_MAX];
    size_t msg_len;
    char last_error[STORE_LAST_ERROR_MAX];
};

struct store_txn {
    int64_t targets[FAKE_TXN_TARGETS];
    size_t ntargets;
    store_settlement settles[FAKE_TXN_TARGETS]; /* texts not kept: nobody reads them back */
    size_t nsettles;
};

static const sb_status errs_any[] = {SB_ERR_INTERNAL, SB_ERR_SERVER_BUSY, SB_ERR_NOT_FOUND, SB_OK};
static const sb_status errs_send[] = {SB_ERR_INTERNAL, SB_ERR_SERVER_BUSY, SB_ERR_NOT_FOUND, SB_ERR_QUOTA_EXCEEDED, SB_OK};
static const sb_status errs_lock[] = {SB_ERR_INTERNAL, SB_ERR_SERVER_BUSY, SB_ERR_LOCK_LOST, SB_OK};
static const sb_status errs_session[] = {SB_ERR_INTERNAL, SB_ERR_SESSION_CANNOT_BE_LOCKED, SB_ERR_SESSION_LOCK_LOST,
                                         SB_OK};
static const sb_status errs_deferred[] = {SB_ERR_INTERNAL, SB_ERR_MESSAGE_NOT_FOUND, SB_OK};
static const sb_status errs_rule[] = {SB_ERR_INTERNAL, SB_ERR_NOT_FOUND, SB_ERR_ALREADY_EXISTS, SB_ERR_QUOTA_EXCEEDED,
                                      SB_OK};

/* ---- the harness's side ---- */

store *fake_store_new(void)
{
    store *s = calloc(1, sizeof *s);
    if (s)
        s->tail = &s->head;
    fake_store_reset(s, 1, 0);
    return s;
}

void fake_store_reset(store *s, uint32_t seed, unsigned error_shift)
{
    s->rng = seed ? seed : 1;
    s->error_shift = error_shift;
    s->claim_budget = FAKE_CLAIM_BUDGET;
    s->next_seq = 1;
    s->msg_len = 0;
    s->last_error[0] = 0;
}

static uint32_t draw(store *s)
{
    uint32_t x = s->rng; /* xorshift32: the same input, the same outcomes */
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return s->rng = x;
}

static sb_status outcome(store *s, const sb_status *errors)
{
    uint32_t r = draw(s);
    if (!s->error_shift || (r & ((1u << s->error_shift) - 1)))
        return SB_OK;
    size_t n = 0;
    while (errors[n] != SB_OK)
        n++;
    sb_status st = errors[(r >> 16) % n];
    if (st == SB_ERR_SERVER_BUSY) /* the store lost PostgreSQL: it says why */
        snprintf(s->last_error, sizeof s->last_error, "fake: the database is gone");
    return st;
}

static void release(store *s, fop *op)
{
    s->pending_bytes -= op->held_bytes;
    free(op->seqs);
    free(op->txn);
    free(op);
}

size_t fake_store_turn(store *s)
{
    fop *op = s->head;
    s->head = NULL;
    s->tail = &s->head;
    size_t ran = 0;
    while (op) {
        fop *next = op->next;
        s->pending--;
        op->finish(s, op, outcome(s, op->errors));
        release(s, op);
        op = next;
        ran++;
    }
    return ran;
}

size_t fake_store_pending(const store *s) { return s->pending; }

void fake_store_free(store *s)
{
    if (!s)
        return;
    s->error_shift = 1; /* everything fails from here on ... */
    s->rng = 0;         /* ... by a draw of 0 (xorshift keeps 0) */
    while (s->head) {
        fop *op = s->head;
        s->head = op->next;
        if (!s->head)
            s->tail = &s->head;
        s->pending--;
        op->finish(s, op, SB_ERR_INTERNAL);
        release(s, op);
    }
    free(s);
}

/* ---- shared by the operations ---- */

static fop *submit(store *s, fop_finish finish, const sb_status *errors, void *ctx, int64_t entity_id)
{
    fop *op = calloc(1, sizeof *op);
    if (!op)
        abort(); /* the harness cannot answer the caller: stop, libFuzzer reports it */
    op->finish = finish;
    op->errors = errors;
    op->ctx = ctx;
    op->entity_id = entity_id;
    op->now_ms = ent_clock_now_ms();
    *s->tail = op;
    s->tail = &op->next;
    s->pending++;
    return op;
}

/* Remembers a message a client sent, for claims to give back. */
static void keep_msg(store *s, fop *op, const uint8_t *bytes, size_t len)
{
    op->held_bytes += len;
    s->pending_bytes += len;
    if (bytes && len && len <= sizeof s->msg) {
        memcpy(s->msg, bytes, len);
        s->msg_len = len;
    }
}

static void msg_bytes(const store *s, const uint8_t **bytes, size_t *len)
{
    *bytes = s->msg_len ? s->msg : canned_msg;
    *len = s->msg_len ? s->msg_len : sizeof canned_msg;
}

static void next_token(store *s, uint8_t token[16])
{
    uint64_t t = ++s->next_token;
    memset(token, 0, 16);
    memcpy(token, &t, sizeof t);
    token[6] = (uint8_t)((token[6] & 0x0f) | 0x40); /* an RFC 4122 version-4 shape */
    token[8] = (uint8_t)((token[8] & 0x3f) | 0x80);
}

/* How many results: up to asked, and as the PRNG says (often all asked). */
static size_t how_many(store *s, int asked)
{
    if (asked <= 0)
        return 0;
    size_t n = draw(s) % (FAKE_RESULTS_MAX + 2);
    if (n > FAKE_RESULTS_MAX)
        n = FAKE_RESULTS_MAX;
    return n < (size_t)asked ? n : (size_t)asked;
}

/* ---- entities ---- */

static void entity(ent_entity *e, int64_t id, ent_kind kind, const char *name, const char *status)
{
    memset(e, 0, sizeof *e);
    e->id = id;
    e->kind = kind;
    strncpy(e->name, name, sizeof e->name - 1);
    strncpy(e->status, status, sizeof e->status - 1);
    e->lock_duration_ms = FAKE_LOCK_MS;
    e->max_delivery_count = 10;
    e->default_ttl_ms = -1;
    e->max_size_mb = 1024;
    e->duplicate_window_ms = 600000;
}

static void finish_entities(store *s, fop *op, sb_status st)
{
    (void)s;
    ent_entity list[6];
    entity(&list[0], FAKE_QUEUE_ID, ENT_KIND_QUEUE, "q", "Active");
    list[0].requires_duplicate_detection = true;
    list[0].dead_lettering_on_expiration = true;
    entity(&list[1], FAKE_SESSION_QUEUE_ID, ENT_KIND_QUEUE, "sq", "Active");
    list[1].requires_session = true;
    list[1].default_ttl_ms = 3600000;
    entity(&list[2], FAKE_TOPIC_ID, ENT_KIND_TOPIC, "t", "Active");
    entity(&list[3], FAKE_SUBSCRIPTION_ID, ENT_KIND_SUBSCRIPTION, "t/Subscriptions/s", "Active");
    list[3].topic_id = FAKE_TOPIC_ID;
    list[3].dead_lettering_on_filter_exceptions = true;
    strcpy(list[3].forward_dead_lettered_to, "q");
    entity(&list[4], FAKE_FORWARD_QUEUE_ID, ENT_KIND_QUEUE, "fq", "Active");
    strcpy(list[4].forward_to, "q");
    entity(&list[5], FAKE_DISABLED_QUEUE_ID, ENT_KIND_QUEUE, "dq", "Disabled");

    ent_filter_prop props[] = {{"color", ent_fv_cstr("red")}, {"@p", ent_fv_int(3)}};
    ent_rule_def rules[] = {
        {.subscription_id = FAKE_SUBSCRIPTION_ID, .name = "sql", .filter_type = "Sql",
         .sql_expression = "color = 'red' OR sys.Label LIKE 'a%' OR n > @p", .filter_params = &props[1],
         .nfilter_params = 1, .action_expression = "SET sys.Label = 'routed'; SET hops = 1"},
        {.subscription_id = FAKE_SUBSCRIPTION_ID, .name = "corr", .filter_type = "Correlation",
         .correlation = {.correlation_id = "c1", .label = "x", .properties = props, .nproperties = 1}},
        {.subscription_id = FAKE_SUBSCRIPTION_ID, .name = "$Default", .filter_type = "True"},
    };
    ent_namespace namespaces[] = {{ENT_NAMESPACE_DEFAULT_ID, "sbemulatorns", 0, 0}, {FAKE_NAMESPACE_ID, "other", 0, 0}};
    if (st == SB_OK)
        op->cb.entities(op->ctx, SB_OK, list, 6, rules, 3, namespaces, 2, NULL, 0);
    else
        op->cb.entities(op->ctx, st, NULL, 0, NULL, 0, NULL, 0, NULL, 0);
}

void store_load_entities(store *s, store_entities_cb cb, void *ctx)
{
    submit(s, finish_entities, errs_any, ctx, 0)->cb.entities = cb;
}

/* Every namespace a client names is FAKE_NAMESPACE_ID, which has no entities. */
static void finish_namespace(store *s, fop *op, sb_status st)
{
    (void)s;
    op->cb.ns(op->ctx, st, st == SB_OK ? FAKE_NAMESPACE_ID : 0);
}

void store_namespace_ensure(store *s, const char *name, store_namespace_cb cb, void *ctx)
{
    (void)name;
    submit(s, finish_namespace, errs_any, ctx, 0)->cb.ns = cb;
}

void store_namespace_touch(store *s, int32_t ns, int64_t now_ms) { (void)s, (void)ns, (void)now_ms; }

void store_namespace_sweep(store *s, int64_t wall_ms, store_namespace_swept_cb cb, void *ctx)
{
    (void)s, (void)wall_ms;
    if (cb)
        cb(ctx, SB_OK, NULL, 0); /* no namespace is ever idle here */
}

/* ---- sends, claims, settlements ---- */

static void finish_status(store *s, fop *op, sb_status st)
{
    (void)s;
    if (op->cb.status)
        op->cb.status(op->ctx, st);
}

void store_send(store *s, int64_t entity_id, const store_new_message *msgs, size_t n, store_status_cb cb, void *ctx)
{
    fop *op = submit(s, finish_status, errs_send, ctx, entity_id);
    op->cb.status = cb;
    for (size_t i = 0; i < n; i++)
        keep_msg(s, op, msgs[i].bytes, msgs[i].len);
}

void store_publish(store *s, int64_t topic_id, const store_copy *rows, size_t n, store_status_cb cb, void *ctx)
{
    fop *op = submit(s, finish_status, errs_send, ctx, topic_id);
    op->cb.status = cb;
    for (size_t i = 0; i < n; i++)
        keep_msg(s, op, rows[i].m.bytes, rows[i].m.bytes ? rows[i].m.len : 0);
}

size_t store_pending_bytes(const store *s) { return s->pending_bytes; }

const char *store_last_error(const store *s) { return s->last_error; }

/* The messages a claim of op gives (none unless st is SB_OK), into msgs, their ids in ids. */
static size_t make_claimed(store *s, fop *op, sb_status st, store_claimed msgs[FAKE_RESULTS_MAX],
                           char ids[FAKE_RESULTS_MAX][24])
{
    size_t n = st == SB_OK ? how_many(s, op->max < s->claim_budget ? op->max : s->claim_budget) : 0;
    s->claim_budget -= (int)n;
    const uint8_t *bytes;
    size_t len;
    msg_bytes(s, &bytes, &len);
    for (size_t i = 0; i < n; i++) {
        uint32_t r = draw(s);
        store_claimed *m = &msgs[i];
        memset(m, 0, sizeof *m);
        m->sequence_number = s->next_seq++;
        m->enqueued_ms = op->now_ms;
        m->locked_until_ms = op->now_ms + FAKE_LOCK_MS;
        m->ttl_ms = r & 1 ? 60000 : -1;
        m->expires_ms = r & 1 ? op->now_ms + 60000 : 0;
        next_token(s, m->lock_token);
        m->delivery_count = (int32_t)(1 + (r >> 1) % 3);
        snprintf(ids[i], sizeof ids[i], "m%lld", (long long)m->sequence_number);
        m->message_id = ids[i];
        if (r & 8) {
            m->dead_letter_reason = "MaxDeliveryCountExceeded";
            m->dead_letter_description = "fake";
            m->dead_letter_source = r & 16 ? "q" : NULL;
        }
        m->bytes = bytes;
        m->len = len;
    }
    return n;
}

static void finish_claim(store *s, fop *op, sb_status st)
{
    store_claimed msgs[FAKE_RESULTS_MAX];
    char ids[FAKE_RESULTS_MAX][24];
    size_t n = make_claimed(s, op, st, msgs, ids);
    op->cb.claim(op->ctx, st, n ? msgs : NULL, n);
}

void store_claim(store *s, int64_t entity_id, int subqueue, bool from_log, store_claim_mode mode, int max, int64_t now_ms,
                 int64_t locked_until_ms, bool is_activity, int64_t from_seq, const struct store_peer *peer,
                 store_claim_cb cb, void *ctx)
{
    (void)subqueue, (void)from_log, (void)mode, (void)locked_until_ms, (void)is_activity, (void)from_seq, (void)peer;
    fop *op = submit(s, finish_claim, errs_any, ctx, entity_id);
    op->cb.claim = cb;
    op->max = max;
    op->now_ms = now_ms;
}

void store_claim_session(store *s, int64_t entity_id, const char *session_id, const uint8_t session_token[16],
                         store_claim_mode mode, int max, int64_t now_ms, bool is_activity, int64_t from_seq,
                         const struct store_peer *peer, store_claim_cb cb, void *ctx)
{
    (void)session_id, (void)session_token;
    store_claim(s, entity_id, 0, false, mode, max, now_ms, 0, is_activity, from_seq, peer, cb, ctx);
}

void store_settle(store *s, int64_t entity_id, const uint8_t lock_token[16], store_settle_kind kind,
                  const char *reason, const char *description, int64_t dead_letter_target, int64_t now_ms,
                  store_status_cb cb, void *ctx)
{
    (void)lock_token, (void)kind, (void)reason, (void)description, (void)dead_letter_target, (void)now_ms;
    submit(s, finish_status, errs_lock, ctx, entity_id)->cb.status = cb;
}

static void finish_settled(store *s, fop *op, sb_status st)
{
    (void)s;
    op->cb.settled(op->ctx, st, false);
}

void store_settle_counted(store *s, int64_t entity_id, const uint8_t lock_token[16], store_settle_kind kind,
                          const char *reason, const char *description, int64_t dead_letter_target, int64_t now_ms,
                          store_settled_cb cb, void *ctx)
{
    (void)lock_token, (void)kind, (void)reason, (void)description, (void)dead_letter_target, (void)now_ms;
    submit(s, finish_settled, errs_lock, ctx, entity_id)->cb.settled = cb;
}

static void finish_sweep(store *s, fop *op, sb_status st)
{
    (void)s;
    static const int64_t touched[] = {FAKE_QUEUE_ID, FAKE_TOPIC_ID};
    op->cb.sweep(op->ctx, st, st == SB_OK ? touched : NULL, st == SB_OK ? 2 : 0);
}

void store_sweep(store *s, int64_t now_ms, const store_sweep_policy *policy, store_sweep_cb cb, void *ctx)
{
    (void)now_ms, (void)policy;
    submit(s, finish_sweep, errs_any, ctx, 0)->cb.sweep = cb;
}

/* ---- sessions ---- */

static fop *session_op(store *s, fop_finish finish, int64_t entity_id, const char *session_id, void *ctx)
{
    fop *op = submit(s, finish, errs_session, ctx, entity_id);
    op->named = session_id != NULL;
    strncpy(op->session_id, session_id ? session_id : "s1", sizeof op->session_id - 1);
    return op;
}

static void finish_lock(store *s, fop *op, sb_status st)
{
    (void)s;
    op->cb.lock(op->ctx, st, st == SB_OK ? op->session_id : NULL, 0);
}

void store_session_lock(store *s, int64_t entity_id, const char *session_id, const uint8_t token[16],
                        int64_t now_ms, int64_t locked_until_ms, int64_t pick_from, store_session_lock_cb cb,
                        void *ctx)
{
    (void)token, (void)now_ms, (void)locked_until_ms, (void)pick_from;
    session_op(s, finish_lock, entity_id, session_id, ctx)->cb.lock = cb;
}

static void finish_lock_claim(store *s, fop *op, sb_status st)
{
    store_claimed msgs[FAKE_RESULTS_MAX];
    char ids[FAKE_RESULTS_MAX][24];
    size_t n = make_claimed(s, op, st, msgs, ids);
    op->cb.lock_claim(op->ctx, st, st == SB_OK ? op->session_id : NULL, 0, n ? msgs : NULL, n);
}

void store_session_lock_claim(store *s, int64_t entity_id, const char *session_id, const uint8_t token[16],
                              int64_t now_ms, int64_t locked_until_ms, int64_t pick_from, int max, bool is_activity,
                              const struct store_peer *peer, store_session_lock_claim_cb cb, void *ctx)
{
    (void)token, (void)locked_until_ms, (void)pick_from, (void)is_activity, (void)peer;
    fop *op = session_op(s, finish_lock_claim, entity_id, session_id, ctx);
    op->cb.lock_claim = cb;
    op->max = max;
    op->now_ms = now_ms;
}

void store_session_release(store *s, int64_t entity_id, const char *session_id, const uint8_t token[16],
                           int64_t now_ms, bool all_settled, store_status_cb cb, void *ctx)
{
    (void)token, (void)now_ms, (void)all_settled;
    session_op(s, finish_status, entity_id, session_id, ctx)->cb.status = cb;
}

static void finish_renew(store *s, fop *op, sb_status st)
{
    (void)s;
    op->cb.renew(op->ctx, st, st == SB_OK ? op->now_ms + FAKE_LOCK_MS : 0);
}

void store_session_renew(store *s, int64_t entity_id, const char *session_id, const uint8_t token[16],
                         int64_t now_ms, int64_t locked_until_ms, store_session_renew_cb cb, void *ctx)
{
    (void)token, (void)locked_until_ms;
    fop *op = session_op(s, finish_renew, entity_id, session_id, ctx);
    op->cb.renew = cb;
    op->now_ms = now_ms;
}

static void finish_state(store *s, fop *op, sb_status st)
{
    static const uint8_t state[] = {0xa1, 0x02, 'o', 'k'};
    bool has = st == SB_OK && (draw(s) & 1);
    op->cb.state(op->ctx, st, has ? state : NULL, has ? sizeof state : 0);
}

void store_session_get_state(store *s, int64_t entity_id, const char *session_id, const uint8_t token[16],
                             int64_t now_ms, store_session_state_cb cb, void *ctx)
{
    (void)token, (void)now_ms;
    session_op(s, finish_state, entity_id, session_id, ctx)->cb.state = cb;
}

void store_session_set_state(store *s, int64_t entity_id, const char *session_id, const uint8_t token[16],
                             int64_t now_ms, const uint8_t *state, size_t len, store_status_cb cb, void *ctx)
{
    (void)token, (void)now_ms, (void)state, (void)len;
    session_op(s, finish_status, entity_id, session_id, ctx)->cb.status = cb;
}

static void finish_list(store *s, fop *op, sb_status st)
{
    static const char *const ids[] = {"s1", "s2", "s3"};
    size_t n = st == SB_OK ? how_many(s, op->max) : 0;
    op->cb.list(op->ctx, st, n ? ids : NULL, n < 3 ? n : 3);
}

void store_session_list(store *s, int64_t entity_id, int64_t since_ms, int skip, int top, store_session_list_cb cb,
                        void *ctx)
{
    (void)since_ms, (void)skip;
    fop *op = session_op(s, finish_list, entity_id, NULL, ctx);
    op->cb.list = cb;
    op->max = top;
}

/* ---- transactions ---- */

store_txn *store_txn_new(void) { return calloc(1, sizeof(store_txn)); }

void store_txn_free(store_txn *t) { free(t); }

static int txn_target(store_txn *t, int64_t id)
{
    for (size_t i = 0; i < t->ntargets; i++)
        if (t->targets[i] == id)
            return 0;
    if (t->ntargets < FAKE_TXN_TARGETS)
        t->targets[t->ntargets++] = id;
    return 0;
}

int store_txn_send(store_txn *t, int64_t entity_id, const store_new_message *msgs, size_t n)
{
    (void)msgs, (void)n;
    return txn_target(t, entity_id);
}

int store_txn_publish(store_txn *t, int64_t topic_id, const store_copy *rows, size_t n)
{
    (void)rows, (void)n;
    return txn_target(t, topic_id);
}

int store_txn_settle(store_txn *t, const store_settlement *x)
{
    if (t->nsettles < FAKE_TXN_TARGETS) {
        t->settles[t->nsettles] = *x;
        t->settles[t->nsettles].reason = t->settles[t->nsettles].description = NULL;
        t->nsettles++;
    }
    return txn_target(t, x->entity_id);
}

size_t store_txn_settlements(const store_txn *t, const store_settlement **out)
{
    *out = t->settles;
    return t->nsettles;
}

int store_txn_activate(store_txn *t, int64_t entity_id, const int64_t *seqs, size_t n)
{
    (void)seqs, (void)n;
    return txn_target(t, entity_id);
}

size_t store_txn_targets(const store_txn *t, const int64_t **ids)
{
    *ids = t->targets;
    return t->ntargets;
}

/* Resting topics are the real store's bookkeeping for the broker's pump: none here. */
int store_txn_rest(store_txn *t, int64_t topic_id)
{
    (void)t, (void)topic_id;
    return 0;
}

size_t store_txn_resting(const store_txn *t, const int64_t **ids)
{
    (void)t;
    *ids = NULL;
    return 0;
}

void store_txn_commit(store *s, store_txn *t, int64_t now_ms, store_status_cb cb, void *ctx)
{
    (void)now_ms;
    fop *op = submit(s, finish_status, errs_lock, ctx, 0);
    op->cb.status = cb;
    op->txn = t; /* it takes t */
}

/* One sequence number per message, as the real store answers. */
static int64_t *new_seqs(store *s, size_t n)
{
    int64_t *seqs = calloc(n ? n : 1, sizeof *seqs);
    if (!seqs)
        abort();
    for (size_t i = 0; i < n; i++)
        seqs[i] = s->next_seq++;
    return seqs;
}

static void finish_txn_seqs(store *s, fop *op, sb_status st)
{
    size_t n = st == SB_OK ? op->n : 0;
    int64_t *seqs = new_seqs(s, n);
    op->cb.txn_seqs(op->ctx, st, n ? seqs : NULL, n);
    free(seqs);
}

static void finish_seqs(store *s, fop *op, sb_status st)
{
    size_t n = st == SB_OK ? op->n : 0;
    int64_t *seqs = new_seqs(s, n);
    op->cb.seqs(op->ctx, st, n ? seqs : NULL, n);
    free(seqs);
}

static fop *schedule_op(store *s, fop_finish finish, int64_t entity_id, const store_new_message *msgs, size_t n,
                        void *ctx)
{
    fop *op = submit(s, finish, errs_send, ctx, entity_id);
    op->n = n;
    for (size_t i = 0; i < n; i++)
        keep_msg(s, op, msgs[i].bytes, msgs[i].len);
    return op;
}

void store_schedule_pending(store *s, int64_t entity_id, const store_new_message *msgs, size_t n,
                            int64_t pending_until_ms, store_txn_seqs_cb cb, void *ctx)
{
    (void)pending_until_ms;
    schedule_op(s, finish_txn_seqs, entity_id, msgs, n, ctx)->cb.txn_seqs = cb;
}

void store_txn_discard(store *s, store_txn *t) { (void)s, (void)t; }

/* ---- $management ---- */

static void finish_msgs(store *s, fop *op, sb_status st)
{
    /* a peek returns what it finds; a receive by sequence number all it named, or an error */
    size_t n = st != SB_OK ? 0 : op->deferred ? op->n : how_many(s, op->max);
    store_mgmt_msg *msgs = calloc(n ? n : 1, sizeof *msgs);
    if (!msgs)
        abort();
    const uint8_t *bytes;
    size_t len;
    msg_bytes(s, &bytes, &len);
    for (size_t i = 0; i < n; i++) {
        uint32_t r = draw(s);
        store_mgmt_msg *m = &msgs[i];
        m->sequence_number = op->deferred ? op->seqs[i] : s->next_seq++;
        m->enqueued_ms = op->now_ms;
        m->ttl_ms = -1;
        m->delivery_count = (int32_t)(r % 3);
        m->state = op->deferred ? 1 : (int)(r >> 2) % 3;
        m->locked = op->deferred || (r & 32);
        m->locked_until_ms = m->locked ? op->now_ms + FAKE_LOCK_MS : 0;
        if (m->locked)
            next_token(s, m->lock_token);
        m->message_id = "peeked";
        m->dead_letter_reason = r & 64 ? "TTLExpiredException" : NULL;
        m->bytes = bytes;
        m->len = len;
    }
    if (op->deferred)
        op->cb.deferred(op->ctx, st, st == SB_ERR_MESSAGE_NOT_FOUND && op->n ? op->seqs[0] : 0, n ? msgs : NULL, n);
    else
        op->cb.msgs(op->ctx, st, n ? msgs : NULL, n);
    free(msgs);
}

void store_peek(store *s, int64_t entity_id, int subqueue, int64_t from_seq, int max, int64_t now_ms,
                store_mgmt_msgs_cb cb, void *ctx)
{
    (void)subqueue, (void)from_seq;
    fop *op = submit(s, finish_msgs, errs_any, ctx, entity_id);
    op->cb.msgs = cb;
    op->max = max;
    op->now_ms = now_ms;
}

void store_peek_session(store *s, int64_t entity_id, const char *session_id, int64_t from_seq, int max,
                        int64_t now_ms, store_mgmt_msgs_cb cb, void *ctx)
{
    (void)session_id;
    store_peek(s, entity_id, 0, from_seq, max, now_ms, cb, ctx);
}

void store_receive_deferred(store *s, int64_t entity_id, int subqueue, const int64_t *seqs, size_t n, bool delete,
                            int64_t now_ms, int64_t until_ms, store_deferred_cb cb, void *ctx)
{
    (void)subqueue, (void)delete, (void)until_ms;
    fop *op = submit(s, finish_msgs, errs_deferred, ctx, entity_id);
    op->cb.deferred = cb;
    op->deferred = true;
    op->n = n;
    op->seqs = malloc((n ? n : 1) * sizeof *op->seqs);
    if (!op->seqs)
        abort();
    if (n)
        memcpy(op->seqs, seqs, n * sizeof *seqs);
    op->now_ms = now_ms;
}

static void finish_renew_locks(store *s, fop *op, sb_status st)
{
    size_t n = st == SB_OK ? op->n : 0;
    int64_t *until = new_seqs(s, n); /* one answer per token */
    for (size_t i = 0; i < n; i++)
        until[i] = op->now_ms + FAKE_LOCK_MS;
    op->cb.renew_locks(op->ctx, st, n ? until : NULL, n);
    free(until);
}

void store_renew_locks(store *s, int64_t entity_id, const uint8_t (*tokens)[16], size_t n, int64_t now_ms,
                       int64_t until_ms, store_renew_cb cb, void *ctx)
{
    (void)tokens, (void)until_ms;
    fop *op = submit(s, finish_renew_locks, errs_lock, ctx, entity_id);
    op->cb.renew_locks = cb;
    op->n = n;
    op->now_ms = now_ms;
}

void store_schedule(store *s, int64_t entity_id, const store_new_message *msgs, size_t n, int64_t now_ms,
                    store_seqs_cb cb, void *ctx)
{
    (void)now_ms;
    schedule_op(s, finish_seqs, entity_id, msgs, n, ctx)->cb.seqs = cb;
}

void store_cancel_scheduled(store *s, int64_t entity_id, const int64_t *seqs, size_t n, int64_t now_ms,
                            store_status_cb cb, void *ctx)
{
    (void)seqs, (void)n, (void)now_ms;
    submit(s, finish_status, errs_any, ctx, entity_id)->cb.status = cb;
}

static void finish_count(store *s, fop *op, sb_status st)
{
    op->cb.count(op->ctx, st, st == SB_OK ? (int64_t)(draw(s) % (unsigned)(op->max > 0 ? op->max + 1 : 1)) : 0);
}

void store_batch_delete(store *s, int64_t entity_id, int subqueue, int max, int64_t before_ms, int64_t now_ms,
                        store_count_cb cb, void *ctx)
{
    (void)subqueue, (void)before_ms, (void)now_ms;
    fop *op = submit(s, finish_count, errs_any, ctx, entity_id);
    op->cb.count = cb;
    op->max = max;
}

static void finish_bytes(store *s, fop *op, sb_status st)
{
    const uint8_t *bytes;
    size_t len;
    msg_bytes(s, &bytes, &len);
    op->cb.bytes(op->ctx, st, st == SB_OK ? bytes : NULL, st == SB_OK ? len : 0);
}

void store_read_locked_message(store *s, int64_t entity_id, const uint8_t token[16], int64_t now_ms,
                               store_bytes_cb cb, void *ctx)
{
    (void)token, (void)now_ms;
    submit(s, finish_bytes, errs_lock, ctx, entity_id)->cb.bytes = cb;
}

void store_replace_locked_message(store *s, int64_t entity_id, const uint8_t token[16], int64_t now_ms,
                                  const uint8_t *bytes, size_t len, store_status_cb cb, void *ctx)
{
    (void)token, (void)now_ms;
    fop *op = submit(s, finish_status, errs_lock, ctx, entity_id);
    op->cb.status = cb;
    keep_msg(s, op, bytes, len);
}

void store_touch_queue(store *s, int64_t entity_id, int64_t now_ms, store_status_cb cb, void *ctx)
{
    (void)now_ms;
    submit(s, finish_status, errs_any, ctx, entity_id)->cb.status = cb;
}

/* broker_clock_moved publishes before it sweeps; the fuzz targets never move
 * the clock, but broker_sweep.c is linked whole. */
void store_clock_publish(store *s, int32_t ns, int64_t offset_ms, void (*cb)(void *ctx, sb_status st), void *ctx)
{
    (void)ns, (void)offset_ms;
    submit(s, finish_status, errs_any, ctx, 0)->cb.status = cb;
}

/* ---- rules ---- */

static void finish_rule_add(store *s, fop *op, sb_status st)
{
    op->cb.rule_add(op->ctx, st, st == SB_ERR_QUOTA_EXCEEDED ? 2000 : (int64_t)(draw(s) % 4));
}

void store_rule_add(store *s, int64_t subscription_id, const store_rule *rule, int64_t limit, int64_t now_ms,
                    store_rule_add_cb cb, void *ctx)
{
    (void)rule, (void)limit, (void)now_ms;
    submit(s, finish_rule_add, errs_rule, ctx, subscription_id)->cb.rule_add = cb;
}

static void finish_rule_status(store *s, fop *op, sb_status st)
{
    (void)s;
    op->cb.rule_status(op->ctx, st);
}

void store_rule_remove(store *s, int64_t subscription_id, const char *name, int64_t now_ms, store_rule_status_cb cb,
                       void *ctx)
{
    (void)name, (void)now_ms;
    submit(s, finish_rule_status, errs_rule, ctx, subscription_id)->cb.rule_status = cb;
}

static void finish_rules(store *s, fop *op, sb_status st)
{
    const store_rule rules[] = {
        {.name = "sql", .filter_type = "Sql", .sql_expression = "color = @c", .filter_parameters = "{\"@c\":\"red\"}",
         .action_expression = "SET a = 1", .created_ms = op->now_ms},
        {.name = "corr", .filter_type = "Correlation",
         .correlation = "{\"CorrelationId\":\"c1\",\"Properties\":{\"n\":3,"
                        "\"t\":{\"type\":\"timespan\",\"value\":\"00:00:05\"}}}",
         .created_ms = op->now_ms},
        {.name = "$Default", .filter_type = "True", .created_ms = op->now_ms},
    };
    size_t n = st == SB_OK ? how_many(s, op->max) : 0;
    op->cb.rules(op->ctx, st, n ? rules : NULL, n < 3 ? n : 3);
}

void store_rule_list(store *s, int64_t subscription_id, int64_t skip, int64_t top, store_rules_cb cb, void *ctx)
{
    (void)skip;
    fop *op = submit(s, finish_rules, errs_any, ctx, subscription_id);
    op->cb.rules = cb;
    op->max = top > FAKE_RESULTS_MAX ? FAKE_RESULTS_MAX : (int)top;
}

/* The real one (sql/store_rules.c) sits beside the PostgreSQL operations; the
 * JSON of the properties is what matters to the caller, who frees it. */
char *store_rule_correlation_json(const ent_filter_correlation *c)
{
    return store_rule_props_json(c->properties, c->nproperties);
}

/* Faults on demand: the targets never attach the broker to a loop, so no
 * rule is ever loaded and these only answer, at once, that nothing is there. */
void store_faults_load(store *s, store_faults_cb cb, void *ctx)
{
    (void)s;
    cb(ctx, SB_OK, NULL, 0);
}

void store_fault_fire(store *s, const char *name, int64_t generation, int64_t now_ms, store_fault_fired_cb cb,
                      void *ctx)
{
    (void)s, (void)name, (void)generation, (void)now_ms;
    cb(ctx, SB_OK, false, 0);
}

void store_fault_lock_end(store *s, int64_t entity_id, const uint8_t (*tokens)[16], size_t n, int64_t until_ms,
                          store_status_cb cb, void *ctx)
{
    (void)s, (void)entity_id, (void)tokens, (void)n, (void)until_ms;
    if (cb)
        cb(ctx, SB_OK);
}
