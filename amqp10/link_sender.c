/* Messages a client receives: claim as many as it has credit for (one claim in
 * flight per link, two for large messages), deliver them with the lock token
 * as delivery tag, park the link when the entity is empty, answer drain at
 * once, and turn the client's dispositions into settlements (wire-protocol
 * §5, §6). */
#include <proton/codec.h>
#include <proton/disposition.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amqp_internal.h"
#include "store_story.h"
#include "amqp_wire_forms.h"
#include "amqp_message.h"
#include "amqp_props.h"
#include "amqp_reply.h"
#include "ent_alloc.h"
#include "ent_clock.h"
#include "ent_dead_letter.h"
#include "ent_log.h"
#include "ent_props.h"
#include "ent_topic.h"
#include "ent_message_rules.h"

static void deliver_claimed(amqp_link *lk, const store_claimed *msgs, size_t n, int asked, bool rewound);
static void claim_ahead(amqp_link *lk);
static void send_claim(amqp_link *lk, int asked);

typedef struct claim_req {
    amqp_link *lk;
    int asked;
} claim_req;

/* lk's claim answered (or was never sent): if it held its entity's turn,
 * the first in line for the entity claims; one that no longer wants to (no
 * credit, closed) lets the next one try. */
static void pass_turn(amqp_link *lk)
{
    if (!amqp_claim_turn_end(lk))
        return;
    amqp_link *w;
    while ((w = amqp_claim_turn_next(lk->conn->srv, lk->entity.id)))
        amqp_link_pump(w);
}

static void on_claimed(void *ctx, sb_status st, const store_claimed *msgs, size_t n)
{
    claim_req *req = ctx;
    amqp_link *lk = req->lk;
    amqp_conn *c = lk->conn;
    lk->claims--;
    lk->claims_asked -= req->asked;
    bool rewound = lk->rewound; /* while this claim was in the store: its rewind stands (on_rewind) */
    lk->rewound = false;
    if (lk->closed || !c->wsi || lk->stalled) {
        /* the receiver left while we claimed (or a fault rule stalled it): give the locks back at once */
        for (size_t i = 0; st == SB_OK && !lk->receive_and_delete && i < n; i++)
            amqp_release_for_others(c->srv, lk->entity.namespace_id, lk->entity.id, msgs[i].lock_token);
    } else if (st != SB_OK) {
        lk->parked = true; /* retried by the poll timer */
        if (lk->session && !lk->receive_and_delete)
            lk->session_unsettled++; /* whether it locked any is not known: its release looks */
    } else {
        if (lk->session && !lk->receive_and_delete)
            lk->session_unsettled += (int64_t)n; /* locked under its session until settled (on_settled) */
        /* A drain answered while this claim was in the store (amqp_link_pump)
         * took the credit back: what no longer fits is given back at once. */
        size_t fits = n;
        int credit = pn_link_credit(lk->pn);
        if (!lk->receive_and_delete && !lk->session && (size_t)(credit > 0 ? credit : 0) < n) {
            fits = credit > 0 ? (size_t)credit : 0;
            for (size_t i = fits; i < n; i++)
                amqp_release_for_others(c->srv, lk->entity.namespace_id, lk->entity.id, msgs[i].lock_token);
        }
        if (!(fits && c->srv->faults->n && amqp_fault_receive(lk, msgs, fits, req->asked, rewound, deliver_claimed)))
            deliver_claimed(lk, msgs, fits, req->asked, rewound); /* (else a fault rule has them: it goes on, if it may) */
    }
    pass_turn(lk); /* after the hint moved (deliver_claimed): the next claim starts past these */
    amqp_conn_pump(c);
    amqp_link_drop(lk);
    ent_free(req);
}

static void deliver_claimed(amqp_link *lk, const store_claimed *msgs, size_t n, int asked, bool rewound)
{
    size_t bytes = 0;
    for (size_t i = 0; i < n; i++) {
        amqp_link_deliver(lk, &msgs[i]);
        bytes += msgs[i].len;
    }
    if (n)
        lk->msg_bytes = bytes / n > 0 ? bytes / n : 1;
    broker_count(lk->conn->srv->broker, lk->entity.id, BROKER_EV_OUT, n); /* GET /metrics */
    /* what it took is locked or gone: the next claim starts past it (msgs
     * come in sequence order). The entity's claims share one hint, so that
     * no link walks the messages another holds; a session's are its link's
     * own. The dead-letter subqueue gets old sequence numbers, so its links
     * always look from the start. */
    if (n && lk->session && !rewound)
        lk->claim_from = msgs[n - 1].sequence_number + 1;
    else if (n && !lk->session && !lk->subqueue)
        amqp_hint_found(&lk->conn->srv->claim_hints, &lk->claim_mark, msgs[n - 1].sequence_number + 1);
    if ((int)n < asked) {
        lk->parked = true;
        if (pn_link_get_drain(lk->pn))
            pn_link_drained(lk->pn);
    } else {
        amqp_link_pump(lk);
    }
}

/* A drain is answered at once, even with a peek-lock claim in the store or
 * in line for its turn (what that claim locks beyond the credit left is
 * given back when it answers: on_claimed). The JS SDK waits 200 ms for the
 * answer, then closes the link, and the messages it received on it can no
 * longer be completed there (claim_turns.test.js on a busy machine). A
 * receive-and-delete claim's messages are gone from the store, so its drain
 * waits for them. True when it answered. */
static bool drain_now(amqp_link *lk)
{
    if (!pn_link_get_drain(lk->pn) || lk->receive_and_delete || lk->session)
        return false;
    amqp_claim_turn_forget(lk);
    lk->parked = true;
    pn_link_drained(lk->pn);
    return true;
}

void amqp_link_pump(amqp_link *lk)
{
    if (lk->open && !lk->closed && lk->conn->wsi && pn_link_credit(lk->pn) > 0 &&
        (lk->claims || lk->turn_waiting || lk->stalled) && drain_now(lk))
        return;
    if (!lk->open || lk->closed || !lk->conn->wsi || lk->stalled)
        return;
    if (lk->claims) {
        claim_ahead(lk);
        return;
    }
    int credit = pn_link_credit(lk->pn);
    if (credit <= 0) {
        lk->parked = false;
        return;
    }
    if (!ent_entity_status_allows_receive(lk->entity.status)) {
        lk->parked = true;
        if (pn_link_get_drain(lk->pn))
            pn_link_drained(lk->pn);
        return;
    }
    if (lk->session &&
        !ent_session_lock_live(lk->session_held, lk->session_until_ms, ent_clock_now_ms_in(lk->entity.namespace_id))) {
        lk->parked = false; /* nothing to claim until it holds a live session lock */
        if (pn_link_get_drain(lk->pn))
            pn_link_drained(lk->pn);
        return;
    }
    if (lk->held && amqp_link_deliver_held(lk, credit))
        return;
    credit = pn_link_credit(lk->pn); /* (less what the held ones took) */
    size_t room;
    if (amqp_conn_output_full(lk->conn, lk, &room))
        return; /* claimed again once the socket has taken some (output_drained) */
    int asked = credit < AMQP_CLAIM_MAX ? credit : AMQP_CLAIM_MAX;
    if (!lk->msg_bytes && asked > AMQP_CLAIM_FIRST_MAX)
        asked = AMQP_CLAIM_FIRST_MAX;
    else if (lk->msg_bytes && (size_t)asked > room / lk->msg_bytes)
        asked = room / lk->msg_bytes > 0 ? (int)(room / lk->msg_bytes) : 1;
    if (!lk->session && !lk->subqueue && !amqp_claim_turn_take(lk)) {
        drain_now(lk); /* in line behind another claim of the entity: pumped when it answers */
        return;
    }
    send_claim(lk, asked);
}

/* A second claim while lk's first is in the store (AMQP_LINK_CLAIMS_MAX):
 * for large messages, the store's backend reads the next bodies while the
 * emulator hands the first claim's to Proton. Only where nothing can make
 * the two disagree: peek-lock on an entity's main subqueue, no session, no
 * fault rules; a hint unmoved since the first (their answers move it with
 * one mark); and the entity's turn free or lk's, no other receiver waiting
 * for it. What both ask for fits the credit and the output room. */
static void claim_ahead(amqp_link *lk)
{
    if (lk->claims >= AMQP_LINK_CLAIMS_MAX || lk->session || lk->subqueue || lk->receive_and_delete ||
        lk->conn->srv->faults->n || lk->msg_bytes < AMQP_CLAIM_AHEAD_MIN_BYTES || lk->turn_waiting ||
        !ent_entity_status_allows_receive(lk->entity.status) ||
        !amqp_hint_unmoved(&lk->conn->srv->claim_hints, &lk->claim_mark))
        return;
    int credit = pn_link_credit(lk->pn) - lk->claims_asked;
    size_t room;
    if (credit <= 0 || amqp_conn_output_full(lk->conn, lk, &room))
        return;
    size_t claimed_bytes = (size_t)lk->claims_asked * lk->msg_bytes;
    size_t fits = room > claimed_bytes ? (room - claimed_bytes) / lk->msg_bytes : 0;
    if (!fits || !amqp_claim_turn_ahead(lk))
        return; /* pumped again when the claim in the store answers */
    int asked = credit < AMQP_CLAIM_MAX ? credit : AMQP_CLAIM_MAX;
    lk->conn->srv->figures.claims_ahead++; /* GET /metrics */
    send_claim(lk, (size_t)asked < fits ? asked : (int)fits);
}

/* lk claims asked messages (it holds the turn, if it needs one). */
static void send_claim(amqp_link *lk, int asked)
{
    claim_req *req = ent_malloc(sizeof *req);
    if (!req) {
        pass_turn(lk);
        /* without a claim the credit would wait forever: end the link, the SDK attaches again */
        amqp_link_detach_error(lk, SB_ERR_INTERNAL, "The emulator ran out of memory receiving on this link.");
        return;
    }
    int64_t now = ent_clock_now_ms_in(lk->entity.namespace_id);
    /* a parked link re-polling is not a new receive; a receive is stamped once a second at most */
    bool is_activity = !lk->parked && amqp_hint_stamp_due(&lk->conn->srv->claim_hints, lk->entity.id, now);
    req->lk = lk;
    req->asked = asked;
    lk->claims++;
    lk->claims_asked += asked;
    lk->parked = false;
    amqp_link_hold(lk);
    store_claim_mode mode = lk->receive_and_delete ? STORE_CLAIM_DELETE : STORE_CLAIM_LOCK;
    store_peer peer = {lk->conn->id, pn_link_name(lk->pn)}; /* who claims, for the story */
    if (lk->session)
        store_claim_session(lk->conn->srv->store, lk->entity.id, lk->session_id, lk->session_token, mode,
                            req->asked, now, is_activity, lk->claim_from, &peer, on_claimed, req);
    else
        store_claim(lk->conn->srv->store, lk->entity.id, lk->subqueue, ent_topic_reads_log(&lk->entity, lk->subqueue),
                    mode, req->asked, now,
                    ent_lock_until_ms(now, lk->entity.lock_duration_ms), is_activity,
                    lk->subqueue ? 0 : amqp_hint_from(&lk->conn->srv->claim_hints, lk->entity.id, &lk->claim_mark),
                    &peer, on_claimed, req);
}

/* ---- dispositions ---- */

typedef struct settle_req {
    amqp_link *lk;
    pn_delivery_t *d;
    uint64_t outcome;
    store_settle_kind kind;
} settle_req;

static void on_settled(void *ctx, sb_status st)
{
    settle_req *req = ctx;
    amqp_conn *c = req->lk->conn;
    if (st == SB_OK) {
        pn_delivery_update(req->d, req->outcome); /* what follows was done (broker_settle) */
        if (req->lk->session && req->lk->session_unsettled > 0)
            req->lk->session_unsettled--; /* completed, abandoned, deferred or dead-lettered: no longer locked */
    } else if (ent_session_settle_failure(st, req->lk->session,
                                          ent_session_lock_live(req->lk->session_held, req->lk->session_until_ms,
                                                                ent_clock_now_ms_in(req->lk->entity.namespace_id))) ==
               SB_ERR_SESSION_LOCK_LOST) {
        amqp_delivery_reject(req->d, SB_ERR_SESSION_LOCK_LOST,
                             "The session lock has expired on the MessageSession. Accept a new session.");
    } else if (st == SB_ERR_LOCK_LOST) {
        amqp_delivery_reject(req->d, st, SB_TEXT_LOCK_LOST);
    } else {
        amqp_delivery_reject(req->d, st, "The emulator's store could not settle the message; retry.");
    }
    pn_delivery_settle(req->d);
    amqp_conn_pump(c);
    amqp_link_drop(req->lk);
    ent_free(req);
}

static void on_disposition(amqp_link *lk, pn_delivery_t *d, bool fault_checked);

void amqp_link_on_disposition(amqp_link *lk, pn_delivery_t *d) { on_disposition(lk, d, false); }

static void settle_checked(amqp_link *lk, pn_delivery_t *d) { on_disposition(lk, d, true); }

static void on_disposition(amqp_link *lk, pn_delivery_t *d, bool fault_checked)
{
    if (lk->receive_and_delete || pn_delivery_get_context(d))
        return; /* pre-settled, or a settlement already in the store (or held by a fault rule) */
    uint64_t outcome = pn_delivery_remote_state(d);
    bool undeliverable = pn_disposition_is_undeliverable(pn_delivery_remote(d));
    char reason[ENT_DEAD_LETTER_TEXT_SIZE], description[ENT_DEAD_LETTER_TEXT_SIZE];
    const char *r = NULL, *ds = NULL;
    bool in_txn = outcome == AMQP_TXN_STATE;
    if (in_txn) { /* the outcome is inside the transactional-state */
        outcome = amqp_txn_outcome(d, &undeliverable, reason, description, sizeof reason);
        r = reason[0] ? reason : NULL;
        ds = description[0] ? description : NULL;
    }
    ent_outcome o;
    switch (outcome) {
    case PN_ACCEPTED: o = ENT_OUTCOME_ACCEPTED; break;
    case PN_REJECTED: o = ENT_OUTCOME_REJECTED; break;
    case PN_RELEASED: o = ENT_OUTCOME_RELEASED; break;
    case PN_MODIFIED: o = ENT_OUTCOME_MODIFIED; break;
    default:
        if (in_txn) {
            amqp_delivery_reject(d, SB_ERR_ARGUMENT, "The transactional-state carries no outcome.");
            pn_delivery_settle(d);
        }
        return; /* no terminal outcome yet */
    }
    store_settle_kind kind = (store_settle_kind)ent_settle_kind_of_outcome(o, undeliverable); /* Service Bus's reading */
    if (!fault_checked && lk->conn->srv->faults->n && amqp_fault_settle(lk, d, (ent_settle_kind)kind, settle_checked))
        return; /* a fault rule has it: settle_checked goes on, if it may */
    pn_delivery_tag_t tag = pn_delivery_tag(d);
    if (tag.size != 16) {
        amqp_delivery_reject(d, SB_ERR_LOCK_LOST, "The delivery tag is not a lock token.");
        pn_delivery_settle(d);
        return;
    }
    uint8_t token[16];
    amqp_lock_token_swap((const uint8_t *)tag.start, token);
    if (kind == STORE_SETTLE_DEADLETTER && !in_txn) {
        pn_condition_t *cond = pn_disposition_condition(pn_delivery_remote(d));
        r = amqp_map_string(pn_condition_info(cond), "DeadLetterReason", reason, sizeof reason);
        ds = amqp_map_string(pn_condition_info(cond), "DeadLetterErrorDescription", description, sizeof description);
        if (!ds && pn_condition_get_description(cond)) {
            snprintf(description, sizeof description, "%s", pn_condition_get_description(cond));
            ds = description;
        }
    }
    /* properties to modify, carried in the outcome (codec/amqp_props.h); not
     * looked for inside a transactional-state */
    uint8_t *mods = NULL;
    size_t modslen = 0;
    int has_mods = 1;
    if (!in_txn && kind == STORE_SETTLE_DEADLETTER) {
        static const char *const named[] = {"DeadLetterReason", "DeadLetterErrorDescription"};
        has_mods = amqp_properties_from_map(pn_condition_info(pn_disposition_condition(pn_delivery_remote(d))),
                                            named, 2, &mods, &modslen);
    } else if (!in_txn && (kind == STORE_SETTLE_ABANDON || kind == STORE_SETTLE_DEFER)) {
        has_mods = amqp_properties_from_map(pn_disposition_annotations(pn_delivery_remote(d)), NULL, 0, &mods,
                                            &modslen);
    }
    if (has_mods < 0) {
        amqp_delivery_reject(d, SB_ERR_ARGUMENT,
                             "The properties to modify could not be read: their keys must be strings.");
        pn_delivery_settle(d);
        return;
    }
    char why[160];
    sb_status st = ent_dead_letter_text_check("dead-letter reason", r, why, sizeof why);
    if (st == SB_OK)
        st = ent_dead_letter_text_check("dead-letter description", ds, why, sizeof why);
    if (st != SB_OK) {
        ent_free(mods);
        amqp_delivery_reject(d, st, why);
        pn_delivery_settle(d);
        return;
    }
    amqp_txn *txn;
    if (amqp_txn_of(lk->conn, d, &txn)) {
        ent_free(mods); /* none: they are not looked for in a transaction */
        /* part of a transaction: settled when it commits; until then the message stays locked */
        if (txn && amqp_txn_admit(txn, d, 1) == SB_OK) {
            store_settlement x = {kind, lk->entity.id, {0}, r, ds, lk->route.dead_letter_target_id,
                                  ent_clock_now_ms_in(lk->entity.namespace_id)};
            memcpy(x.lock_token, token, 16);
            if (store_txn_settle(amqp_txn_work(txn), &x)) {
                amqp_delivery_reject(d, SB_ERR_INTERNAL, "The settlement could not join the transaction.");
                pn_delivery_settle(d);
            } else {
                amqp_txn_answer(txn, d);
            }
        }
        return;
    }
    settle_req *req = ent_malloc(sizeof *req);
    if (!req) {
        ent_free(mods);
        /* answered, not left unsettled: the message stays locked until its lock lapses */
        amqp_delivery_reject(d, SB_ERR_INTERNAL, "The emulator ran out of memory settling the message.");
        pn_delivery_settle(d);
        return;
    }
    req->lk = lk;
    req->d = d;
    req->outcome = outcome;
    req->kind = kind;
    pn_delivery_set_context(d, req);
    amqp_link_hold(lk);
    broker_settlement x = {lk->entity.id, lk->route.dead_letter_target_id, (ent_settle_kind)kind, r, ds,
                           has_mods == 0 ? mods : NULL, modslen, ent_clock_now_ms_in(lk->entity.namespace_id)};
    broker_settle(lk->conn->srv->broker, &x, (const uint8_t(*)[16])token, 1, on_settled, req); /* copies */
    ent_free(mods);
}
