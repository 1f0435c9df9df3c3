/* Session receivers (wire-protocol §5.2): a receiver whose source carries
 * com.microsoft:session-filter takes one session's lock (the named one, or
 * the next available) before its attach is answered. The reply echoes the
 * session id in the filter and carries com.microsoft:locked-until-utc (.NET
 * ticks). A named session held by another receiver: session-cannot-be-locked.
 * No session within the link's com.microsoft:timeout: source null, then
 * detach with com.microsoft:timeout. A lock that lapses detaches the link with
 * session-lock-lost; a detach lets the session go.
 *
 * The lock itself is a row in the database (store_session.h); the link keeps
 * its token and expiry so the claims, the settlements and the $management
 * operations on its connection can name it. */
#include <proton/codec.h>
#include <proton/terminus.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "amqp_internal.h"
#include "amqp_wire_forms.h"
#include "ent_alloc.h"
#include "ent_clock.h"
#include "ent_log.h"
#include "ent_message_rules.h"
#include "mgmt_map.h"
#include "store_session.h"
#include "store_story.h"

#define SESSION_FILTER "com.microsoft:session-filter"
#define LINK_TIMEOUT "com.microsoft:timeout"
#define LOCKED_UNTIL_UTC "com.microsoft:locked-until-utc"

/* Java names the filter without the prefix (wire-protocol §5.1). */
static bool is_session_filter_key(pn_bytes_t k)
{
    static const char suffix[] = "session-filter";
    size_t n = sizeof suffix - 1;
    return k.size >= n && !memcmp(k.start + k.size - n, suffix, n) &&
           (k.size == n || (k.size == sizeof SESSION_FILTER - 1 && !memcmp(k.start, SESSION_FILTER, k.size)));
}

bool amqp_session_filter_of(pn_link_t *l, bool *named, char *sid, size_t sidlen)
{
    pn_data_t *f = pn_terminus_filter(pn_link_remote_source(l));
    *named = false;
    sid[0] = 0;
    pn_data_rewind(f);
    if (!pn_data_next(f) || pn_data_type(f) != PN_MAP)
        return false;
    pn_data_enter(f);
    bool found = false;
    while (pn_data_next(f)) {
        pn_type_t kt = pn_data_type(f);
        pn_bytes_t k = kt == PN_SYMBOL ? pn_data_get_symbol(f) : kt == PN_STRING ? pn_data_get_string(f)
                                                                                  : pn_bytes(0, NULL);
        if (!pn_data_next(f))
            break;
        if (!k.start || !is_session_filter_key(k))
            continue;
        found = true;
        pn_type_t vt = pn_data_type(f);
        if (vt == PN_DESCRIBED) { /* a described filter: its value */
            pn_data_enter(f);
            pn_data_next(f);
            pn_data_next(f);
            vt = pn_data_type(f);
        }
        if (vt == PN_STRING || vt == PN_SYMBOL) {
            pn_bytes_t v = vt == PN_STRING ? pn_data_get_string(f) : pn_data_get_symbol(f);
            size_t n = v.size < sidlen - 1 ? v.size : sidlen - 1;
            memcpy(sid, v.start, n);
            sid[n] = 0;
            *named = true;
        }
        break;
    }
    pn_data_rewind(f);
    return found;
}

static int64_t link_timeout_ms(pn_link_t *l)
{
    pn_data_t *p = pn_link_remote_properties(l);
    if (!p) /* the attach has no properties */
        return 0;
    pn_data_rewind(p);
    if (!pn_data_next(p) || pn_data_type(p) != PN_MAP)
        return 0;
    int64_t ms = mgmt_map_seek(p, LINK_TIMEOUT) ? mgmt_get_integer(p) : 0;
    pn_data_rewind(p);
    return ms;
}

/* The session id goes back in the form the client's filter had. go-amqp (the Go SDK) sends a
 * described filter (descriptor 0x0000013700000000C) and can only decode a described value in a
 * filter set; JS, .NET and Python send a plain string and read a plain string back. */
static void put_session_filter_value(amqp_link *lk, pn_data_t *f)
{
    pn_bytes_t sid = pn_bytes(strlen(lk->session_id), lk->session_id);
    pn_data_t *rf = pn_terminus_filter(pn_link_remote_source(lk->pn));
    pn_data_rewind(rf);
    if (pn_data_next(rf) && pn_data_type(rf) == PN_MAP) {
        pn_data_enter(rf);
        while (pn_data_next(rf)) {
            pn_type_t kt = pn_data_type(rf);
            pn_bytes_t k = kt == PN_SYMBOL ? pn_data_get_symbol(rf) : kt == PN_STRING ? pn_data_get_string(rf)
                                                                                       : pn_bytes(0, NULL);
            if (!pn_data_next(rf))
                break;
            if (!k.start || !is_session_filter_key(k) || pn_data_type(rf) != PN_DESCRIBED)
                continue;
            pn_data_enter(rf);
            if (pn_data_next(rf) && (pn_data_type(rf) == PN_ULONG || pn_data_type(rf) == PN_SYMBOL)) {
                pn_data_put_described(f);
                pn_data_enter(f);
                if (pn_data_type(rf) == PN_ULONG)
                    pn_data_put_ulong(f, pn_data_get_ulong(rf));
                else
                    pn_data_put_symbol(f, pn_data_get_symbol(rf));
                pn_data_put_string(f, sid);
                pn_data_exit(f);
                pn_data_rewind(rf);
                return;
            }
            break;
        }
    }
    pn_data_rewind(rf);
    pn_data_put_string(f, sid);
}

/* The attach reply: the session in the filter, its lock in the properties. */
static void answer(amqp_link *lk)
{
    amqp_link_accept(lk);
    pn_data_t *f = pn_terminus_filter(pn_link_source(lk->pn));
    pn_data_clear(f);
    pn_data_put_map(f);
    pn_data_enter(f);
    pn_data_put_symbol(f, pn_bytes(sizeof SESSION_FILTER - 1, SESSION_FILTER));
    put_session_filter_value(lk, f);
    pn_data_exit(f);
    pn_data_t *props = pn_link_properties(lk->pn);
    pn_data_clear(props);
    pn_data_put_map(props);
    pn_data_enter(props);
    pn_data_put_symbol(props, pn_bytes(sizeof LOCKED_UNTIL_UTC - 1, LOCKED_UNTIL_UTC));
    pn_data_put_long(props, amqp_ticks_from_unix_ms(lk->session_until_ms));
    pn_data_exit(props);
}

static void refuse(amqp_link *lk, sb_status st, const char *description)
{
    LOG_INFO("conn %llu: session receiver '%s' on '%s': %s", (unsigned long long)lk->conn->id, pn_link_name(lk->pn),
             lk->entity.name, description);
    amqp_count_refusal(lk->conn->srv, st);
    amqp_link_refuse(lk->pn, sb_status_condition(st), description);
}

typedef struct lock_req {
    amqp_link *lk;
    int64_t until_ms;
    amqp_hint_mark pick; /* a next available session: the hint it started from */
    int asked;           /* a peek-lock receiver's: the messages its first claim asked for */
} lock_req;

static void try_lock(amqp_link *lk);

/* The lock answered (with_claim: a peek-lock receiver's, which claimed
 * the session's first messages with it, claimed of them). What the receiver
 * gets is Service Bus's rule (ent_session_lock_outcome). True when the link
 * now holds the session and was answered (its messages go out next). */
static bool locked(lock_req *req, sb_status st, const char *sid, int64_t picked_seq, bool with_claim, size_t claimed)
{
    amqp_link *lk = req->lk;
    amqp_conn *c = lk->conn;
    lk->session_locking = false;
    sb_status refusal = SB_ERR_INTERNAL;
    char desc[ENT_SESSION_ID_SIZE + 256];
    ent_session_lock_verdict v = ent_session_lock_outcome(st, lk->session_named ? lk->session_id : NULL, with_claim,
                                                          claimed, &refusal, desc, sizeof desc);
    if (v == ENT_SESSION_LOCK_GIVEN && picked_seq)
        amqp_hint_found(&c->srv->session_picks, &req->pick, picked_seq);
    lk->session_picked_seq = v == ENT_SESSION_LOCK_GIVEN ? picked_seq : 0;
    int64_t now = ent_clock_now_ms_in(lk->entity.namespace_id);
    if (v == ENT_SESSION_LOCK_EMPTY) {
        store_session_release(c->srv->store, lk->entity.id, sid, lk->session_token, now, true, NULL, NULL);
        lk->session_waiting = !lk->closed; /* tried again when messages come, and by the poll timer */
    } else if (v == ENT_SESSION_LOCK_GIVEN && (lk->closed || !c->wsi)) {
        /* the receiver left while we locked: what the lock took goes back */
        snprintf(lk->session_id, sizeof lk->session_id, "%s", sid);
        store_session_release(c->srv->store, lk->entity.id, lk->session_id, lk->session_token, now, claimed == 0,
                              NULL, NULL);
    } else if (lk->closed) {
        /* nothing to answer */
    } else if (v == ENT_SESSION_LOCK_GIVEN) {
        snprintf(lk->session_id, sizeof lk->session_id, "%s", sid);
        lk->session_waiting = false;
        lk->session_held = true;
        lk->session_until_ms = req->until_ms;
        answer(lk);
        return true;
    } else if (v == ENT_SESSION_LOCK_WAIT) {
        lk->session_waiting = true; /* tried again when messages come, and by the poll timer */
    } else {
        refuse(lk, refusal, desc);
    }
    return false;
}

static void lock_answered(lock_req *req)
{
    amqp_link *lk = req->lk;
    amqp_conn_pump(lk->conn);
    amqp_link_drop(lk);
    ent_free(req);
}

/* A receive-and-delete receiver's lock: its claims wait for its credit
 * (what they take is gone from the store, and would be lost with a link
 * closed before the credit came). */
static void on_locked(void *ctx, sb_status st, const char *sid, int64_t picked_seq)
{
    lock_req *req = ctx;
    if (locked(req, st, sid, picked_seq, false, 0))
        amqp_link_pump(req->lk);
    lock_answered(req);
}

static void on_lock_claimed(void *ctx, sb_status st, const char *sid, int64_t picked_seq, const store_claimed *msgs,
                            size_t n)
{
    lock_req *req = ctx;
    amqp_link *lk = req->lk;
    lk->claims--;
    if (locked(req, st, sid, picked_seq, true, n) && amqp_link_take_first(lk, msgs, n, req->asked))
        amqp_link_pump(lk);
    lock_answered(req);
}

/* How many messages a peek-lock receiver's lock takes with it: the credit
 * it gave, if any came with its attach; else what the last session receiver
 * of its connection first gave (the SDKs give credit once the attach is
 * answered, the same each time), or as many as a first claim takes. A
 * session's messages are its holder's alone: those the credit does not
 * cover go back (amqp_link_take_first). */
static int first_claim(const amqp_link *lk)
{
    int credit = pn_link_credit(lk->pn);
    if (credit <= 0)
        credit = lk->conn->session_first_credit;
    return credit > 0 && credit < AMQP_CLAIM_FIRST_MAX ? credit : AMQP_CLAIM_FIRST_MAX;
}

static void try_lock(amqp_link *lk)
{
    lock_req *req = ent_malloc(sizeof *req);
    if (!req) {
        refuse(lk, SB_ERR_INTERNAL, "out of memory");
        return;
    }
    amqp_server *srv = lk->conn->srv;
    int64_t now = ent_clock_now_ms_in(lk->entity.namespace_id);
    req->lk = lk;
    req->until_ms = ent_lock_until_ms(now, lk->entity.lock_duration_ms);
    /* a fresh token per attempt: a lock that lapsed unseen is never mistaken for ours */
    if (getrandom(lk->session_token, sizeof lk->session_token, 0) != (ssize_t)sizeof lk->session_token) {
        ent_free(req);
        refuse(lk, SB_ERR_INTERNAL, "no randomness for a lock token");
        return;
    }
    lk->session_token[6] = (uint8_t)((lk->session_token[6] & 0x0f) | 0x40); /* a version 4 uuid */
    lk->session_token[8] = (uint8_t)((lk->session_token[8] & 0x3f) | 0x80);
    lk->session_locking = true;
    amqp_link_hold(lk);
    int64_t from = lk->session_named ? 0 : amqp_hint_from(&srv->session_picks, lk->entity.id, &req->pick);
    const char *named = lk->session_named ? lk->session_id : NULL;
    if (lk->receive_and_delete) {
        store_session_lock(srv->store, lk->entity.id, named, lk->session_token, now, req->until_ms, from, on_locked,
                           req);
        return;
    }
    req->asked = first_claim(lk);
    lk->claims++; /* a rewind meanwhile must not move claim_from past it (rewind_link) */
    store_peer peer = {lk->conn->id, pn_link_name(lk->pn)}; /* who claims, for the story */
    store_session_lock_claim(srv->store, lk->entity.id, named, lk->session_token, now, req->until_ms, from,
                             req->asked, amqp_hint_stamp_due(&srv->claim_hints, lk->entity.id, now), &peer,
                             on_lock_claimed, req);
}

static void on_session_deadline(lws_sorted_usec_list_t *sul)
{
    amqp_link *lk = lws_container_of(sul, amqp_link, session_timer);
    int64_t now = ent_clock_wall_ms();
    if (lk->session_deadline_ms > now) /* the timer's clock and the wall clock may differ by a hair */
        lk->session_deadline_ms = now;
    amqp_session_tick(lk);
    amqp_conn_pump(lk->conn);
}

void amqp_session_attach(amqp_link *lk)
{
    int64_t timeout_ms = ent_session_accept_timeout_ms(link_timeout_ms(lk->pn));
    lk->session_deadline_ms = ent_clock_wall_ms() + timeout_ms;
    /* the tick answers at the deadline if the attach still waits then (a no-op otherwise) */
    lws_sul_schedule(lk->conn->srv->lws, 0, &lk->session_timer, on_session_deadline,
                     (lws_usec_t)timeout_ms * LWS_US_PER_MS);
    try_lock(lk);
}

void amqp_session_retry(amqp_link *lk)
{
    if (lk->session_waiting && !lk->session_locking && !lk->closed && lk->conn->wsi)
        try_lock(lk);
}

void amqp_session_tick(amqp_link *lk)
{
    if (lk->closed)
        return;
    if (lk->held)
        amqp_link_held_tick(lk);
    if (lk->session_waiting && !lk->session_locking && ent_clock_wall_ms() >= lk->session_deadline_ms) {
        lk->session_waiting = false;
        refuse(lk, SB_ERR_TIMEOUT,
               "The operation did not complete within the allocated time: no session was available to accept.");
    } else if (lk->session_held && ent_clock_now_ms_in(lk->entity.namespace_id) >= lk->session_until_ms) {
        char desc[ENT_SESSION_ID_SIZE + 128];
        snprintf(desc, sizeof desc, "The session lock has expired on the MessageSession '%s'. Accept a new session.",
                 lk->session_id);
        lk->session_held = false; /* lapsed: nothing to release, another receiver may hold it already */
        amqp_link_detach_error(lk, SB_ERR_SESSION_LOCK_LOST, desc);
        lk->parked = false;
    }
}

void amqp_session_let_go(amqp_link *lk)
{
    if (!lk->session_held)
        return;
    lk->session_held = false;
    /* its unsettled messages and the session are free: wake who waits */
    amqp_server *srv = lk->conn->srv;
    amqp_after_release then = amqp_after_session_release_of(srv, lk->entity.id, lk->session_picked_seq);
    if (!then.cb) /* without the hint's correction, picks look from the start */
        amqp_hint_rewind(&srv->session_picks, lk->entity.id);
    /* Every message it locked was settled (and no claim is in the store):
     * the release has no locked message to look for. */
    bool all_settled = lk->session_unsettled == 0 && lk->claims == 0;
    store_session_release(srv->store, lk->entity.id, lk->session_id, lk->session_token,
                          ent_clock_now_ms_in(lk->entity.namespace_id), all_settled, then.cb, then.ctx);
}

amqp_link *amqp_session_holder(amqp_conn *c, int64_t entity_id, const char *sid)
{
    for (amqp_link *lk = c->links; lk; lk = lk->next)
        if (lk->session_held && !lk->closed && lk->entity.id == entity_id && !strcmp(lk->session_id, sid))
            return lk;
    return NULL;
}
