/* What the $management operations (mgmt_<op>.c) share: the request they are
 * answering (its body map is read with mgmt_map.h), and the response
 * (mgmt_reply.c): the envelope of wire-protocol §7.2 (statusCode int,
 * statusDescription string, errorCondition symbol on errors, body an
 * amqp-value map with string keys) and the bodies several operations share.
 *
 * Ownership: mgmt_node.c creates an mgmt_req per request and hands it to the
 * operation, which owns it from then on and must end it exactly once with
 * mgmt_respond_error, mgmt_send or a mgmt_reply_* (all free it). An operation that waits for
 * the store calls mgmt_hold first: the request then keeps its connection (and
 * so its links) alive until it is answered. */
#ifndef MGMT_INTERNAL_H
#define MGMT_INTERNAL_H

#include <proton/codec.h>
#include <proton/message.h>
#include <stdbool.h>
#include <stdint.h>

#include "amqp_internal.h"
#include "amqp_message.h"
#include "mgmt_map.h"
#include "store_mgmt.h"

/* Service Bus limits (common-limits.md): peek returns at most 250 messages per
 * call; a batch delete removes at most 4000 (Premium; Standard says 500). */
#define MGMT_PEEK_MAX 250
#define MGMT_BATCH_DELETE_MAX 4000

typedef struct mgmt_req {
    amqp_link *lk;       /* the request link */
    pn_message_t *msg;   /* the request (owned) */
    pn_data_t *body;     /* pn_message_body(msg) */
    const char *operation;
    char op_buf[128];
    int64_t now_ms;      /* the emulator's clock when the request arrived */
    bool held;           /* mgmt_hold took a connection reference */
    unsigned flags;      /* for the operation's own use */
    amqp_txn *txn;       /* the request carried transactional-state: its transaction */
} mgmt_req;

typedef void (*mgmt_handler)(mgmt_req *r);

/* The operations, one file each. */
void mgmt_peek(mgmt_req *r);                  /* mgmt_peek.c */
void mgmt_renew_lock(mgmt_req *r);            /* mgmt_renew_lock.c */
void mgmt_receive_by_seq(mgmt_req *r);        /* mgmt_receive_by_seq.c */
void mgmt_update_disposition(mgmt_req *r);    /* mgmt_update_disposition.c */
void mgmt_schedule(mgmt_req *r);              /* mgmt_schedule.c */
void mgmt_cancel_scheduled(mgmt_req *r);      /* mgmt_schedule.c */
void mgmt_batch_delete(mgmt_req *r);          /* mgmt_batch_delete.c */
void mgmt_renew_session_lock(mgmt_req *r);    /* mgmt_session.c */
void mgmt_get_session_state(mgmt_req *r);     /* mgmt_session.c */
void mgmt_set_session_state(mgmt_req *r);     /* mgmt_session.c */
void mgmt_get_message_sessions(mgmt_req *r);  /* mgmt_session.c */

/* ---- answering (mgmt_reply.c) ---- */

/* Keeps the connection alive while the store works for this request. */
void mgmt_hold(mgmt_req *r);
/* Ends r without an answer (a fault rule that never answers). Frees r. */
void mgmt_forget(mgmt_req *r);
/* amqp_fault.c: a fault rule for this request (its operation's handler
 * runs later, if the rule lets it). false: none fired; run handler now. */
bool amqp_fault_mgmt(mgmt_req *r, mgmt_handler handler);
/* Answers with an error status: statusDescription from the printf format,
 * errorCondition from the status table. Frees r. */
void mgmt_respond_error(mgmt_req *r, sb_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Answers 410 message-lock-lost with the service's wording. Frees r. */
void mgmt_respond_lock_lost(mgmt_req *r);
/* Starts a success response (SB_OK = 200, SB_NO_CONTENT = 204); the caller may
 * fill pn_message_body() and then calls mgmt_send. NULL when out of memory. */
pn_message_t *mgmt_response(mgmt_req *r, sb_status st);
/* Routes and sends resp (NULL: answers 500) and frees it and r. */
void mgmt_send(mgmt_req *r, pn_message_t *resp);

/* The 200 answers whose body more than one operation writes (the users are
 * listed in mgmt_reply.c's header). Each frees r, as mgmt_send. */
/* {key: value}, value any AMQP atom (int, timestamp, binary, null). */
void mgmt_reply_value(mgmt_req *r, const char *key, pn_atom_t value);
/* {key: array of long or of timestamp}, see mgmt_put_array. */
void mgmt_reply_array(mgmt_req *r, const char *key, pn_type_t type, const int64_t *v, size_t n);
/* {"messages": list of mgmt_put_message_entry for the request link's (sub)queue}. */
void mgmt_reply_messages(mgmt_req *r, const store_mgmt_msg *msgs, size_t n, unsigned flags);
/* A listing's store answer: a failure st is answered with the description
 * `failure`, an empty page (n == 0) 204 No Content; true when answered (r is
 * freed), false when there are n items for the caller to answer with. */
bool mgmt_reply_failed_or_empty(mgmt_req *r, sb_status st, size_t n, const char *failure);

/* ---- pure writers (mgmt_reply.c; unit-tested) ---- */

void mgmt_put_string(pn_data_t *d, const char *s);
/* Writes the statusCode / statusDescription / errorCondition entries into an
 * application-properties map the caller has entered. */
void mgmt_put_status(pn_data_t *props, sb_status st, const char *description);
/* Writes key: an AMQP array of long or of timestamp (type PN_LONG or
 * PN_TIMESTAMP) into an entered map: what .NET reads with GetValue<long[]> /
 * GetValue<DateTime[]> (wire-protocol §0 #6: arrays, not lists). */
void mgmt_put_array(pn_data_t *d, const char *key, pn_type_t type, const int64_t *v, size_t n);
/* Builds a whole response to req (properties map closed, no body): what
 * mgmt_respond_error sends, and what the tests decode. */
pn_message_t *mgmt_build_response(pn_message_t *req, sb_status st, const char *description);

/* Appends {"message": binary, ["lock-token": uuid]} for a stored message to an
 * open list, encoded as a receiver would get it (broker annotations, header
 * delivery count, x-opt-message-state, absolute-expiry-time outside the
 * dead-letter subqueue); flags MGMT_ENTRY_*. */

enum {
    MGMT_ENTRY_PEEK = 1,       /* no delivery: header count as is, no lock shown */
    MGMT_ENTRY_LOCK_TOKEN = 2, /* add lock-token (map) and x-opt-lock-token (delivery annotation) */
    MGMT_ENTRY_OMIT_BODY = 4,  /* peek's omit-message-body: no body sections */
};
int mgmt_put_message_entry(pn_data_t *list, const store_mgmt_msg *m, int subqueue, unsigned flags);

/* Whole response bodies (into an empty pn_data), what the mgmt_reply_* above
 * send. A message that cannot be encoded is logged (naming entity) and left
 * out of the list. */
void mgmt_body_value(pn_data_t *body, const char *key, pn_atom_t value);
void mgmt_body_array(pn_data_t *body, const char *key, pn_type_t type, const int64_t *v, size_t n);
void mgmt_body_messages(pn_data_t *body, const store_mgmt_msg *msgs, size_t n, int subqueue, unsigned flags,
                        const char *entity);

#endif
