/* Faults on demand, the wire's part (amqp_internal.h). Each operation point
 * (the client's open, an attach, a transfer, a claim's delivery, a
 * disposition, a $management request, a $cbs put-token) calls here while the
 * broker holds rules; here the broker is asked (broker_fault_check: which
 * rule fires, counted in the store, and its delay waited out on the loop's
 * timers), and what the rule says is carried out:
 *
 *   error      the operation's own refusal with the rule's Service Bus error:
 *              a refused attach, a rejected transfer or disposition, a
 *              $management or $cbs answer with the error's status code; a
 *              receive (which has no answer) and a connect are detached and
 *              closed with it instead
 *   delay      the operation goes on once the delay is over
 *   never      nothing is answered; the client's own timeout fires
 *   detach     the operation's link is closed with the error
 *   close      the connection is closed with the error
 *   lose-lock  (receive) the messages are delivered, their locks ending
 *              afterMs later in the store, as if their lock duration were
 *              that short: a settlement after it is lock-lost
 *
 * While the broker waits, the operation is held here (its link or connection
 * referenced, its bytes owned); a claim's messages are given back to the
 * entity unless they are delivered. A receive-and-delete claim took its
 * messages for good, so they are delivered before the effect applies: the
 * emulator throws nothing away for a fault. */
#include <proton/connection.h>
#include <proton/delivery.h>
#include <stdio.h>
#include <string.h>

#include "amqp_internal.h"
#include "amqp_reply.h"
#include "ent_alloc.h"
#include "ent_clock.h"
#include "ent_log.h"
#include "mgmt_internal.h"
#include "store_faults.h"

typedef enum hold_kind { HOLD_CONNECT, HOLD_ATTACH, HOLD_SEND, HOLD_RECEIVE, HOLD_SETTLE, HOLD_MGMT, HOLD_CBS } hold_kind;

/* An operation a rule has, until the broker answers. Ownership: made by the
 * point's amqp_fault_* call, freed by on_act; it references its link (or, for
 * a connect, its connection) and owns the copies it holds. */
typedef struct fault_hold {
    hold_kind kind;
    amqp_conn *c;
    amqp_link *lk;        /* NULL for a connect */
    pn_delivery_t *d;     /* send, settle */
    uint8_t *buf;         /* send: the transfer's bytes */
    size_t len;
    store_claimed *msgs;  /* receive: copies of the claimed messages, their texts in packed */
    char *packed;
    size_t n;
    int asked;
    bool rewound;         /* receive: a rewind came while the claim was in the store */
    mgmt_req *r;          /* $management */
    mgmt_handler handler;
    pn_message_t *req;    /* $cbs */
    /* The point's continuation (amqp_internal.h): the points hand theirs in,
     * so that this file, below them, never calls them by name. */
    union {
        amqp_fault_go_link attach;
        amqp_fault_go_send send;
        amqp_fault_go_receive receive;
        amqp_fault_go_settle settle;
        const amqp_fault_cbs_ops *cbs;
    } go;
} fault_hold;

/* What a disposition held by a rule carries as its context, so that the
 * client's further updates of it are ignored until the rule lets go. */
static char settle_held;

/* ---- effects every point shares ---- */

static void close_connection(amqp_conn *c, sb_status st, const char *description)
{
    pn_connection_t *pc = c->driver.connection;
    if (!c->wsi || (pn_connection_state(pc) & PN_LOCAL_CLOSED))
        return;
    amqp_condition_set(pn_connection_condition(pc), sb_status_condition(st), description);
    if (!(pn_connection_state(pc) & PN_LOCAL_ACTIVE))
        pn_connection_open(pc); /* a held open: Service Bus answers open, then close */
    pn_connection_close(pc);
    c->held = false;
    amqp_conn_pump(c);
}

static bool link_alive(const amqp_link *lk) { return !lk->closed && lk->conn->wsi; }

/* The path a link names, its dead-letter subqueue spelled out, so that a
 * glob can tell q from q/$DeadLetterQueue. */
static void link_path(const amqp_link *lk, char *out, size_t n)
{
    snprintf(out, n, "%s%s", lk->address.entity, lk->address.dead_letter ? "/$DeadLetterQueue" : "");
}

/* Gives the claimed messages back to their entity (not delivered). */
static void give_back(fault_hold *h)
{
    amqp_server *srv = h->c->srv;
    for (size_t i = 0; i < h->n; i++) {
        amqp_after_release then = amqp_after_release_of(srv, h->lk->entity.id);
        store_settle(srv->store, h->lk->entity.id, h->msgs[i].lock_token, STORE_SETTLE_RELEASE, NULL, NULL, 0,
                     ent_clock_now_ms_in(h->lk->entity.namespace_id), then.cb, then.ctx);
    }
}

static void hold_free(fault_hold *h)
{
    ent_free(h->buf);
    ent_free(h->msgs);
    ent_free(h->packed);
    if (h->req)
        pn_message_free(h->req);
    if (h->lk)
        amqp_link_drop(h->lk);
    else
        amqp_conn_unref(h->c);
    ent_free(h);
}

/* ---- each point's effect ---- */

static void act_connect(fault_hold *h, const broker_fault_act *a)
{
    amqp_conn *c = h->c;
    if (!c->wsi)
        return;
    if (a->effect == ENT_FAULT_NONE)
        amqp_conn_open(c);
    else if (a->effect == ENT_FAULT_ERROR || a->effect == ENT_FAULT_CLOSE)
        close_connection(c, a->error, a->description);
    /* never: the open stays unanswered, the connection held */
}

static void act_attach(fault_hold *h, const broker_fault_act *a)
{
    amqp_link *lk = h->lk;
    if (!link_alive(lk))
        return;
    switch (a->effect) {
    case ENT_FAULT_NONE: h->go.attach(lk); break;
    case ENT_FAULT_ERROR:
    case ENT_FAULT_DETACH: amqp_link_refuse(lk->pn, sb_status_condition(a->error), a->description); break;
    case ENT_FAULT_CLOSE: close_connection(lk->conn, a->error, a->description); break;
    default: break; /* never */
    }
}

static void act_send(fault_hold *h, const broker_fault_act *a)
{
    amqp_link *lk = h->lk;
    if (!link_alive(lk))
        return;
    switch (a->effect) {
    case ENT_FAULT_NONE:
        h->go.send(lk, h->d, h->buf, (ssize_t)h->len);
        h->buf = NULL; /* taken */
        break;
    case ENT_FAULT_ERROR:
        amqp_delivery_reject(h->d, a->error, a->description);
        pn_delivery_settle(h->d);
        break;
    case ENT_FAULT_DETACH: amqp_link_detach_error(lk, a->error, a->description); break;
    case ENT_FAULT_CLOSE: close_connection(lk->conn, a->error, a->description); break;
    default: break; /* never: the transfer stays unsettled */
    }
}

/* Delivers the claim h holds, as on_claimed would have. */
static void deliver_held(fault_hold *h)
{
    bool rewound = h->rewound || h->lk->rewound; /* a rewind while the rule held the claim stands too */
    h->lk->rewound = false;
    h->go.receive(h->lk, h->msgs, h->n, h->asked, rewound);
}

static void on_locks_ended(void *ctx, sb_status st)
{
    fault_hold *h = ctx;
    amqp_link *lk = h->lk;
    if (st != SB_OK)
        LOG_WARN("conn %llu: a fault rule could not shorten the locks of '%s' (%s); delivered with their own",
                 (unsigned long long)lk->conn->id, lk->entity.name, sb_status_name(st));
    lk->claims--;
    if (link_alive(lk))
        deliver_held(h);
    else
        give_back(h);
    amqp_conn_pump(lk->conn);
    hold_free(h);
}

/* Ends the locks of h's messages afterMs from now; true when the store has
 * it (on_locks_ended then delivers them). */
static bool end_locks(fault_hold *h, int64_t after_ms)
{
    amqp_link *lk = h->lk;
    uint8_t(*tokens)[16] = ent_malloc(h->n * sizeof *tokens);
    if (!tokens) {
        LOG_WARN("conn %llu: a lose-lock rule could not run (out of memory); delivered with their locks",
                 (unsigned long long)lk->conn->id);
        return false;
    }
    for (size_t i = 0; i < h->n; i++)
        memcpy(tokens[i], h->msgs[i].lock_token, 16);
    store_fault_lock_end(lk->conn->srv->store, lk->entity.id, (const uint8_t(*)[16])tokens, h->n,
                         ent_clock_now_ms_in(lk->entity.namespace_id) + after_ms, on_locks_ended, h);
    ent_free(tokens);
    return true;
}

/* Answers true when h is still needed (the store is ending the locks). */
static bool act_receive(fault_hold *h, const broker_fault_act *a)
{
    amqp_link *lk = h->lk;
    bool rad = lk->receive_and_delete; /* its claim took the messages for good: delivered whatever the rule */
    if (!link_alive(lk)) {
        lk->claims--;
        if (!rad)
            give_back(h);
        return false;
    }
    if (a->effect == ENT_FAULT_LOSE_LOCK && !rad && end_locks(h, a->after_ms))
        return true; /* still counted in lk->claims until they are delivered */
    bool goes_on = a->effect == ENT_FAULT_NONE || a->effect == ENT_FAULT_LOSE_LOCK;
    /* no new claim starts unless the operation simply goes on: after a
     * never the link delivers nothing more (amqp_link_pump) */
    lk->claims--;
    lk->stalled = !goes_on;
    if (goes_on || rad)
        deliver_held(h);
    else
        give_back(h);
    if (a->effect == ENT_FAULT_ERROR || a->effect == ENT_FAULT_DETACH)
        amqp_link_detach_error(lk, a->error, a->description);
    else if (a->effect == ENT_FAULT_CLOSE)
        close_connection(lk->conn, a->error, a->description);
    return false;
}

static void act_settle(fault_hold *h, const broker_fault_act *a)
{
    amqp_link *lk = h->lk;
    if (!link_alive(lk))
        return;
    switch (a->effect) {
    case ENT_FAULT_NONE:
        pn_delivery_set_context(h->d, NULL);
        h->go.settle(lk, h->d);
        break;
    case ENT_FAULT_ERROR:
        pn_delivery_set_context(h->d, NULL);
        amqp_delivery_reject(h->d, a->error, a->description);
        pn_delivery_settle(h->d);
        break;
    case ENT_FAULT_DETACH: amqp_link_detach_error(lk, a->error, a->description); break;
    case ENT_FAULT_CLOSE: close_connection(lk->conn, a->error, a->description); break;
    default: break; /* never: the disposition stays unanswered */
    }
}

static void act_mgmt(fault_hold *h, const broker_fault_act *a)
{
    mgmt_req *r = h->r;
    amqp_link *lk = h->lk;
    if (!link_alive(lk)) {
        mgmt_forget(r);
        return;
    }
    switch (a->effect) {
    case ENT_FAULT_NONE:
        r->now_ms = ent_clock_now_ms_in(lk->entity.namespace_id); /* the operation happens now, after the delay */
        h->handler(r);
        break;
    case ENT_FAULT_ERROR: mgmt_respond_error(r, a->error, "%s", a->description); break;
    case ENT_FAULT_DETACH:
        amqp_link_detach_error(lk, a->error, a->description);
        mgmt_forget(r);
        break;
    case ENT_FAULT_CLOSE:
        close_connection(lk->conn, a->error, a->description);
        mgmt_forget(r);
        break;
    default: mgmt_forget(r); break; /* never */
    }
}

static void act_cbs(fault_hold *h, const broker_fault_act *a)
{
    amqp_link *lk = h->lk;
    if (!link_alive(lk))
        return;
    switch (a->effect) {
    case ENT_FAULT_NONE:
        h->go.cbs->put_token(lk, h->req);
        h->req = NULL; /* taken */
        break;
    case ENT_FAULT_ERROR: h->go.cbs->respond(lk, h->req, a->error, a->description); break;
    case ENT_FAULT_DETACH: amqp_link_detach_error(lk, a->error, a->description); break;
    case ENT_FAULT_CLOSE: close_connection(lk->conn, a->error, a->description); break;
    default: break; /* never */
    }
}

static void on_act(void *ctx, const broker_fault_act *a)
{
    fault_hold *h = ctx;
    if (a->cancelled) { /* the emulator is stopping: let go, touch nothing */
        if (h->kind == HOLD_MGMT)
            mgmt_forget(h->r);
        hold_free(h);
        return;
    }
    switch (h->kind) {
    case HOLD_CONNECT: act_connect(h, a); break;
    case HOLD_ATTACH: act_attach(h, a); break;
    case HOLD_SEND: act_send(h, a); break;
    case HOLD_RECEIVE:
        if (act_receive(h, a))
            return; /* on_locks_ended finishes it */
        break;
    case HOLD_SETTLE: act_settle(h, a); break;
    case HOLD_MGMT: act_mgmt(h, a); break;
    case HOLD_CBS: act_cbs(h, a); break;
    }
    amqp_conn_pump(h->c);
    hold_free(h);
}

/* ---- asking ---- */

static fault_hold *hold_new(hold_kind kind, amqp_conn *c, amqp_link *lk)
{
    fault_hold *h = ent_calloc(1, sizeof *h);
    if (!h)
        return NULL;
    h->kind = kind;
    h->c = c;
    h->lk = lk;
    if (lk)
        amqp_link_hold(lk);
    else
        amqp_conn_ref(c);
    return h;
}

/* Whether a rule may fire for p at all: the points ask this before they
 * copy anything, so that rules for other operations cost them a walk of the
 * list and no more. */
static bool may_fire(amqp_server *srv, const ent_fault_point *p)
{
    return ent_fault_any_matches(srv->faults, p, ent_clock_now_ms_in(p->ns));
}

/* A point of connection c's namespace (the default's until a token chose one). */
static ent_fault_point point_of(const amqp_conn *c, ent_fault_op op, const char *entity, const char *management)
{
    return (ent_fault_point){op, entity, management, c->ns_name, broker_default_namespace_name(c->srv->broker),
                             c->ns_id};
}

/* Asks the broker for h, which owns what the point hands it from here (on_act
 * may run before this returns). false: no rule fired, and what the point
 * handed (its transfer's bytes, its request) is its own again. */
static bool ask(fault_hold *h, const ent_fault_point *p)
{
    if (broker_fault_check(h->c->srv->broker, p, on_act, h))
        return true;
    h->buf = NULL;
    h->req = NULL;
    hold_free(h);
    return false;
}

bool amqp_fault_connect(amqp_conn *c)
{
    /* at the open only the hostname can have named the namespace */
    char ns[ENT_NAMESPACE_NAME_SIZE], why[256];
    const char *host = pn_connection_remote_hostname(c->driver.connection);
    if (ent_namespace_of_host(host, ns, sizeof ns, why, sizeof why) != 1 ||
        ent_namespace_is_default(ns, broker_default_namespace_name(c->srv->broker)))
        ns[0] = 0;
    ent_fault_point p = {ENT_FAULT_CONNECT, "", NULL, ns, broker_default_namespace_name(c->srv->broker), 0};
    if (!may_fire(c->srv, &p))
        return false;
    fault_hold *h = hold_new(HOLD_CONNECT, c, NULL);
    if (!h)
        return false;
    c->held = true; /* what follows the open waits for the rule */
    if (ask(h, &p))
        return true;
    c->held = false;
    return false;
}

bool amqp_fault_attach(amqp_link *lk, amqp_fault_go_link go)
{
    char path[ENT_FAULT_ENTITY_SIZE];
    link_path(lk, path, sizeof path);
    ent_fault_point p = point_of(lk->conn, ENT_FAULT_ATTACH, path, NULL);
    fault_hold *h = may_fire(lk->conn->srv, &p) ? hold_new(HOLD_ATTACH, lk->conn, lk) : NULL;
    if (!h)
        return false;
    h->go.attach = go;
    return ask(h, &p);
}

bool amqp_fault_send(amqp_link *lk, pn_delivery_t *d, uint8_t *buf, size_t len, amqp_fault_go_send go)
{
    ent_fault_point p = point_of(lk->conn, ENT_FAULT_SEND, lk->address.entity, NULL);
    fault_hold *h = may_fire(lk->conn->srv, &p) ? hold_new(HOLD_SEND, lk->conn, lk) : NULL;
    if (!h)
        return false;
    h->d = d;
    h->buf = buf;
    h->len = len;
    h->go.send = go;
    return ask(h, &p);
}

/* Packs copies of n claimed messages (their bytes and texts in one block). */
static int copy_claimed(fault_hold *h, const store_claimed *msgs, size_t n)
{
    size_t need = 0;
    for (size_t i = 0; i < n; i++) {
        const char *texts[] = {msgs[i].dead_letter_reason, msgs[i].dead_letter_description, msgs[i].message_id,
                               msgs[i].dead_letter_source};
        for (size_t k = 0; k < 4; k++)
            need += texts[k] ? strlen(texts[k]) + 1 : 0;
        need += msgs[i].len;
    }
    h->msgs = ent_malloc(n * sizeof *h->msgs);
    h->packed = ent_malloc(need ? need : 1);
    if (!h->msgs || !h->packed)
        return -1;
    char *at = h->packed;
    for (size_t i = 0; i < n; i++) {
        store_claimed *m = &h->msgs[i];
        *m = msgs[i];
        const char **texts[] = {&m->dead_letter_reason, &m->dead_letter_description, &m->message_id,
                                &m->dead_letter_source};
        for (size_t k = 0; k < 4; k++)
            if (*texts[k]) {
                size_t l = strlen(*texts[k]) + 1;
                memcpy(at, *texts[k], l);
                *texts[k] = at;
                at += l;
            }
        if (m->len)
            memcpy(at, m->bytes, m->len);
        m->bytes = (const uint8_t *)at;
        at += m->len;
    }
    h->n = n;
    return 0;
}

bool amqp_fault_receive(amqp_link *lk, const store_claimed *msgs, size_t n, int asked, bool rewound,
                        amqp_fault_go_receive go)
{
    char path[ENT_FAULT_ENTITY_SIZE];
    link_path(lk, path, sizeof path);
    ent_fault_point p = point_of(lk->conn, ENT_FAULT_RECEIVE, path, NULL);
    fault_hold *h = may_fire(lk->conn->srv, &p) ? hold_new(HOLD_RECEIVE, lk->conn, lk) : NULL;
    if (!h)
        return false;
    if (copy_claimed(h, msgs, n)) {
        LOG_WARN("conn %llu: a fault rule for '%s' not applied: out of memory", (unsigned long long)lk->conn->id,
                 path);
        hold_free(h);
        return false;
    }
    h->asked = asked;
    h->rewound = rewound;
    h->go.receive = go;
    lk->claims++; /* counted as in the store while the rule has these (no claim ahead while rules are set) */
    if (ask(h, &p))
        return true;
    lk->claims--;
    return false;
}

bool amqp_fault_settle(amqp_link *lk, pn_delivery_t *d, ent_settle_kind kind, amqp_fault_go_settle go)
{
    char path[ENT_FAULT_ENTITY_SIZE];
    link_path(lk, path, sizeof path);
    ent_fault_point p = point_of(lk->conn, ent_fault_op_of_settle(kind), path, NULL);
    fault_hold *h = may_fire(lk->conn->srv, &p) ? hold_new(HOLD_SETTLE, lk->conn, lk) : NULL;
    if (!h)
        return false;
    h->d = d;
    h->go.settle = go;
    pn_delivery_set_context(d, &settle_held);
    if (ask(h, &p))
        return true;
    pn_delivery_set_context(d, NULL);
    return false;
}

bool amqp_fault_mgmt(mgmt_req *r, mgmt_handler handler)
{
    amqp_link *lk = r->lk;
    char path[ENT_FAULT_ENTITY_SIZE];
    link_path(lk, path, sizeof path);
    ent_fault_point p = point_of(lk->conn, ENT_FAULT_MANAGEMENT, path, r->operation);
    fault_hold *h = may_fire(lk->conn->srv, &p) ? hold_new(HOLD_MGMT, lk->conn, lk) : NULL;
    if (!h)
        return false;
    h->r = r;
    h->handler = handler;
    return ask(h, &p);
}

bool amqp_fault_cbs(amqp_link *lk, pn_message_t *req, const char *ns_name, const amqp_fault_cbs_ops *go)
{
    /* a token's entity is the path of the audience it is put for */
    char name[1024], path[ENT_ENTITY_PATH_MAX + 1] = "";
    const char *audience = amqp_request_app_string(req, "name", name, sizeof name);
    if (audience && ent_audience_path(audience, path, sizeof path))
        path[0] = 0;
    /* the first token of a connection chooses its namespace: the rules of that one apply */
    ent_fault_point p = point_of(lk->conn, ENT_FAULT_CBS, path, NULL);
    p.namespace_name = ns_name;
    fault_hold *h = may_fire(lk->conn->srv, &p) ? hold_new(HOLD_CBS, lk->conn, lk) : NULL;
    if (!h)
        return false;
    h->req = req;
    h->go.cbs = go;
    return ask(h, &p);
}
