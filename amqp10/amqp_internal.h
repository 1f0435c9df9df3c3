/* Structures shared by the files of amqp10/. Nothing outside amqp10/ includes this.
 *
 * Ownership: the server owns its connections (a list); a connection owns its
 * Proton driver and its link contexts (a list), and lives until its socket is
 * closed AND no store operation still refers to it (refs == 0): a store
 * callback may therefore always touch its connection and links, but must not
 * ask lws for a write once `wsi` is NULL. */
#ifndef AMQP_INTERNAL_H
#define AMQP_INTERNAL_H

#include <libwebsockets.h>
#include <proton/connection_driver.h>
#include <proton/delivery.h>
#include <proton/event.h>
#include <proton/link.h>
#include <proton/message.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "amqp_frame_guard.h"
#include "amqp_hint.h"
#include "amqp_message.h"
#include "amqp_server.h"
#include "broker.h"
#include "ent_address.h"
#include "ent_cache.h"
#include "ent_session.h"
#include "store_queue.h"
#include "store_txn.h"

/* Credit given to a client that sends to us, topped up at half. */
#define AMQP_INBOUND_CREDIT 300
/* While the store holds more message bytes than this for commits to come,
 * sending links get no new credit: clients wait instead of the emulator's
 * memory growing with what they have in flight. */
#define AMQP_STORE_BACKLOG_MAX_BYTES (8u * 1024 * 1024)
/* The most messages one claim takes, whatever the client's credit. */
#define AMQP_CLAIM_MAX 500
/* CBS grants a connection may hold at once (one per audience). */
#define AMQP_MAX_GRANTS 64
/* Receiving links forget how far they have claimed this often, so a message
 * unlocked where they cannot hear of it (another emulator's abandon or lapse)
 * is seen within this time. */
#define AMQP_CLAIM_REWIND_MS 5000
/* A parked receiver polls the store this often for messages no commit of this
 * process announced (lock expiry, schedules, other replicas). */
#define AMQP_POLL_INTERVAL_MS 500
/* Our AMQP idle timeout: clients must send something at least this often. */
#define AMQP_IDLE_TIMEOUT_MS 240000
/* Frames we accept and send; also what the SDKs expect of Service Bus Standard. */
#define AMQP_MAX_FRAME 262144
#define AMQP_CHANNEL_MAX 4999
/* Bytes a session may buffer before we read them. */
#define AMQP_SESSION_CAPACITY (8u * 1024 * 1024)
/* Bytes written per WRITEABLE callback, so one busy connection cannot starve
 * the loop. It is also the bindings' tx_packet_size: without one, lws sends at
 * most its 4 KiB service buffer per send() and copies the rest of every write
 * into a list of its own, sent 4 KiB per poll (sixteen sends for a 64 KiB
 * message). At 64 KiB, a 64 KiB message took a trip through the loop of its
 * own: 256 KiB received 6,000 x 64 KiB on ten connections at medians of
 * 10,115-10,873 msg/s against 9,076-10,093 (four sets of alternating fresh
 * emulators, 2026-11-29; 1 MiB did no better, and leaves lws more to copy
 * when the socket takes less); 1 KiB receives did not move. */
#define AMQP_WRITE_CHUNK (256 * 1024)
/* Bytes of frames a connection may hold for its socket before its receivers
 * claim more: what is claimed waits in Proton's output buffer, so credit of
 * 1000 for 64 KiB messages put 64 MB there, and every write then moved what
 * remained (64 KiB receives ran at 0.43k msg/s with credit 1000, 3.0k with 10). */
#define AMQP_OUTPUT_AHEAD_MAX (2u * 1024 * 1024)
/* The most messages a receiver's first claim takes, before the link knows
 * how large its messages are (a later claim takes what fits in the room
 * AMQP_OUTPUT_AHEAD_MAX leaves). */
#define AMQP_CLAIM_FIRST_MAX 32
/* Claims one receiver may have in the store at once. The second goes ahead
 * of the first's answer only for messages of AMQP_CLAIM_AHEAD_MIN_BYTES or
 * more (on average, in the link's last claim), where the store's backend sat
 * idle while the emulator handed the first claim's megabyte to Proton. On one
 * connection, 6,000 x 64 KiB peek-lock went from 9,512 to 11,130 msg/s
 * (medians of six alternating fresh emulators, 2026-11-30; with
 * AMQP_OUTPUT_AHEAD_MAX at 4 MiB, 11,351: noise, so the room stays). Ten
 * connections did not move: their receivers wait in line for the entity's
 * turn, and a link with others in line claims no further ahead. Smaller
 * messages were not measured with it (their targets are met). */
#define AMQP_LINK_CLAIMS_MAX 2
#define AMQP_CLAIM_AHEAD_MIN_BYTES (16u * 1024)
/* How long (wall clock) a session receiver's first messages, locked with its
 * session, wait on the link for the client's first credit before they go back
 * to the store (link_held.c): the SDKs give it within a round trip of the
 * attach, and a message that waits while the lock lapses would count a
 * delivery it never had. */
#define AMQP_SESSION_HELD_MAX_MS 1000
/* Bytes read at a time when dropping a refused message's remainder. */
#define AMQP_DISCARD_CHUNK 16384
/* Detached links a connection keeps unfreed until their sessions end, so
 * that the messages still locked on them are not reported settled
 * (amqp_conn.c, link_free); past this many, one is freed at once. */
#define AMQP_LINGERING_LINKS_MAX 64

typedef enum amqp_link_role {
    LINK_CBS_REQUESTS,   /* client -> $cbs */
    LINK_CBS_REPLIES,    /* $cbs -> client */
    LINK_MGMT_REQUESTS,  /* client -> <entity>/$management */
    LINK_MGMT_REPLIES,   /* <entity>/$management -> client */
    LINK_ENTITY_IN,      /* client sends messages to an entity */
    LINK_ENTITY_OUT,     /* client receives messages from an entity */
    LINK_COORDINATOR,    /* client declares and discharges transactions (amqp_txn.c) */
} amqp_link_role;

typedef struct amqp_conn amqp_conn;
typedef struct amqp_link amqp_link;

/* What a connection hands to its handlers (amqp_events.c): the events of
 * links and deliveries, and the ends of links and connections. A table, not
 * calls by name, so that the connection stays below every handler. */
typedef struct amqp_conn_events {
    /* PN_LINK_REMOTE_OPEN, PN_LINK_FLOW, PN_DELIVERY */
    void (*link_event)(amqp_conn *c, pn_event_t *e);
    /* A link detached (before it may be freed): its session and, for a
     * coordinator, its transactions let go. */
    void (*link_closed)(amqp_link *lk);
    /* The socket is gone, or the connection is freed (called for both:
     * must be idempotent): its sessions end, its transactions roll back. */
    void (*conn_closed)(amqp_conn *c);
    /* The socket took enough of what the connection held for it that links
     * waiting on AMQP_OUTPUT_AHEAD_MAX (waiting_output) may claim again. */
    void (*output_drained)(amqp_conn *c);
    /* The client's open came while fault rules are set: true when a rule
     * holds it (the connection is then held, and amqp_conn_open answers). */
    bool (*conn_opening)(amqp_conn *c);
} amqp_conn_events;
extern const amqp_conn_events amqp_events;

/* One per Proton link; owned by its connection's list. It is freed (with its
 * Proton link, or handing that to the connection's lingering list) once both
 * ends have detached and no store operation refers to it (refs == 0), or
 * with its connection: a connection that attaches and detaches receivers all
 * day (a session receiver per session) must not keep them all. A store
 * callback holds it with amqp_link_hold. */
struct amqp_link {
    struct amqp_link *next;
    amqp_conn *conn;
    pn_link_t *pn;
    int refs;             /* store operations in flight that refer to it */
    bool finished;        /* both ends detached: freed when refs drops to 0 */
    amqp_link_role role;
    ent_address address;
    bool open;            /* attach answered with a live link */
    bool counted;         /* in the server's open-links gauge (amqp_link_count) */
    bool closed;          /* detached by either side */
    ent_entity entity;    /* for entity links: from the entity cache, refreshed with it */
    ent_route route;      /* where its sends and dead letters go, likewise */
    int subqueue;         /* 0, or 1 for $DeadLetterQueue */
    bool receive_and_delete;
    /* Its claims in the store, or held by a fault rule (amqp_fault.c): at
     * most AMQP_LINK_CLAIMS_MAX, a second only ahead of a first
     * (link_sender.c). claims_asked: the messages they asked for, which the
     * credit and the output room left for another must cover. */
    int claims;
    int claims_asked;
    bool stalled;         /* a fault rule's never (or error) held a claim: it claims and delivers nothing more */
    bool parked;          /* waiting for messages to appear */
    int64_t claim_from;   /* a session receiver's: the lowest sequence number its next claim looks at (broker_rewind) */
    bool rewound;         /* rewound while a claim was in the store: that claim must not move claim_from */
    amqp_hint_mark claim_mark; /* of its claims in the store (the same for both), for the entity's claim hint (amqp_hint.h) */
    /* Its entity's turn to claim (link_claim_turn.c): held while its claim
     * is in the store, or waited for in the server's queue (turn_prev/next). */
    bool turn_held;
    bool turn_waiting;
    amqp_link *turn_prev, *turn_next;
    bool discarding;      /* dropping an oversized message until its last frame */
    bool starved;         /* credit held back while the store was full (amqp_link_top_up) */
    bool waiting_output;  /* a claim held back while its connection's output was full */
    size_t msg_bytes;     /* the size of its last claim's messages, on average (0: none yet) */
    /* A session receiver (link_session.c): it asked for session_id
     * (session_named) or for the next available one; until it has one its
     * attach is not answered (session_waiting, up to session_deadline_ms on
     * the wall clock). It then holds the session's lock as session_token
     * until session_until_ms on the emulator's clock, and lets go when it
     * detaches. */
    /* Send-via: the client sends to this entity (its sends land there) through
     * the entity it attached to (com.microsoft:transfer-destination-address). */
    char via_destination[ENT_ENTITY_PATH_MAX + 1];
    bool session;
    bool session_named;
    bool session_waiting;
    bool session_locking;  /* a lock attempt is in the store */
    bool session_held;
    char session_id[ENT_SESSION_ID_SIZE];
    uint8_t session_token[16];
    int64_t session_until_ms;
    int64_t session_picked_seq; /* the message a next-available pick found it by (0: named) */
    int64_t session_deadline_ms;
    /* Messages its peek-lock claims locked under the session that no
     * settlement has freed yet (on_settled). At 0, with no claim in the
     * store, its release need not look for locked messages (link_session.c). */
    int64_t session_unsettled;
    /* The messages its lock took with it, waiting for the client's first
     * credit (link_held.c). Owned by the link. */
    struct amqp_held *held;
    /* Answers a waiting next-available attach at its deadline itself: the poll's 500 ms is too
     * coarse for the Go SDK, which sends a com.microsoft:timeout only just short of its own
     * context deadline and expects com.microsoft:timeout back before that passes. */
    lws_sorted_usec_list_t session_timer;
};

typedef struct amqp_grant {
    char path[ENT_ENTITY_PATH_MAX + 1]; /* audience path; "" for the namespace */
    int64_t expires_ms;
} amqp_grant;

struct amqp_server {
    const amqp_conn_events *events; /* &amqp_events: how connections reach the handlers */
    broker *broker;  /* borrowed: the emulator's, which outlives the server */
    store *store;    /* the broker's */
    const broker_settings *settings; /* the broker's: SAS key, max-message-size */
    amqp_settings wire;
    struct lws_context *lws;
    amqp_conn *conns;
    int nconns;
    lws_sorted_usec_list_t poll_timer;
    int64_t rewound_ms;       /* when every link last forgot how far it had claimed */
    amqp_hints session_picks; /* where the next pick of a next available session starts */
    amqp_hints claim_hints;   /* where the next claim of an entity (its main subqueue, no session) starts */
    /* Receivers waiting for their entity's turn to claim, first come first
     * (link_claim_turn.c); borrowed: a link leaves the queue before it is freed. */
    amqp_link *turn_first, *turn_last;
    broker_door_figures figures; /* what the wire counts about itself (GET /metrics) */
    /* The broker's fault rules (broker_faults): every operation point tests
     * faults->n first, the one cost of faults on demand while none is set. */
    const ent_fault_list *faults;
};

struct amqp_conn {
    amqp_conn *next;
    amqp_server *srv;
    struct lws *wsi;      /* NULL once the socket is gone */
    enum lws_write_protocol write_mode; /* LWS_WRITE_RAW, or LWS_WRITE_BINARY on a WebSocket */
    pn_connection_driver_t driver;
    int refs;             /* store operations in flight that refer to this connection */
    amqp_link *links;
    amqp_grant *grants; /* grown as tokens come (most connections hold one or two): an idle connection stays small */
    int ngrants, grants_cap;
    /* The credit its last session receiver first gave (0: none yet): how
     * many messages the next one's lock takes with it (link_session.c). A
     * client gives its session receivers the same credit each time. */
    int session_first_credit;
    /* The namespace it is in (ent_namespace.h), chosen by its first put-token
     * (the open's hostname or the token's audience host, else the token's key
     * name) and kept for its life: a token for another namespace is refused.
     * ns_name "" is the default namespace; ns_id is 0 until the namespace is
     * resolved (every grant comes after), and every look-up uses it. */
    bool ns_chosen;
    char ns_name[ENT_NAMESPACE_NAME_SIZE];
    int32_t ns_id;
    lws_sorted_usec_list_t tick_timer; /* only for a tick nearer than the poll timer's next turn */
    int64_t next_tick_ms;              /* when Proton wants its next tick (wall clock) */
    uint64_t id;
    amqp_frame_guard guard; /* what the client sends must stay AMQP */
    bool hang_up;           /* the client sent garbage: close once the write buffer drains */
    bool pumping;           /* amqp_conn_pump is dispatching this connection's events */
    bool opened;            /* the client's open came: it was a real AMQP client */
    /* Proton's output: the front out_written bytes of its write buffer went to
     * the socket and are popped later (see conn_writeable); out_ahead is what
     * waits for the socket, as of the last pump plus what was delivered since. */
    size_t out_written;
    size_t out_ahead;
    bool out_waiters;       /* a link has waiting_output set */
    bool held;              /* a fault rule holds its open: no event is handled until amqp_conn_open */
    struct amqp_txn *txns;  /* transactions declared and not discharged (amqp_txn.c) */
    int ntxns;
    uint32_t txn_counter;
    /* Proton links detached with deliveries the client has not settled,
     * owned here until their sessions' ends are written (link_free); grown
     * as needed up to AMQP_LINGERING_LINKS_MAX. */
    pn_link_t **lingering;
    int nlingering, lingering_cap;
};

/* amqp_conn.c: what a binding tells its connection. The binding keeps the
 * connection in *slot (NULL until opened, NULL again once closed); the
 * return value is lws's: -1 closes the socket. */
typedef enum amqp_bind_event {
    AMQP_BIND_OPENED,    /* accepted (or upgraded) for AMQP: a connection is made */
    AMQP_BIND_BYTES,     /* bytes of the AMQP stream arrived (in, len) */
    AMQP_BIND_WRITEABLE, /* lws lets us write: drain Proton's output */
    AMQP_BIND_CLOSED,    /* the socket is gone */
} amqp_bind_event;
int amqp_conn_bind(amqp_conn **slot, amqp_bind_event ev, struct lws *wsi, enum lws_write_protocol write_mode,
                   const uint8_t *in, size_t len);

/* The bindings' lws protocols (amqp_bind_raw.c, amqp_bind_ws.c). */
#define AMQP_WS_PROTOCOL_NAME "AMQPWSB10" /* the WebSocket subprotocol the SDKs ask for */
#define AMQP_WS_PROTOCOL_NAME_AMQP "amqp" /* the one the Go SDK's example asks for */
extern const struct lws_protocols amqp_bind_raw_protocol;
extern const struct lws_protocols amqp_bind_ws_protocol;
extern const struct lws_protocols amqp_bind_ws_amqp_protocol;

/* Answers the client's open a fault rule held, and goes on with what followed it. */
void amqp_conn_open(amqp_conn *c);
void amqp_conn_ref(amqp_conn *c);
void amqp_conn_unref(amqp_conn *c);
/* Processes Proton events and asks lws for a write if Proton has bytes to send. */
void amqp_conn_pump(amqp_conn *c);
/* Whether the connection holds AMQP_OUTPUT_AHEAD_MAX or more for its socket;
 * if so, lk waits (waiting_output) until output_drained. Otherwise the room
 * left, in bytes, through *room. */
bool amqp_conn_output_full(amqp_conn *c, amqp_link *lk, size_t *room);
amqp_link *amqp_link_of(pn_link_t *l); /* NULL once the link was freed */
/* A store operation refers to lk until amqp_link_drop (which may free it, and
 * its connection): they also hold and drop the connection. */
void amqp_link_hold(amqp_link *lk);
void amqp_link_drop(amqp_link *lk);

/* link_claim_turn.c: one claim of an entity's main subqueue (no session) in
 * the store at a time, per emulator (amqp_hint_walk_begin says why).
 * take: true if lk may claim now (it holds its entity's turn); false: lk
 * waits in line. end: lk's claim answered (or was never sent): true if it
 * held the turn, which is free now. next: the first link in line for the
 * entity, out of the line, to be pumped (NULL: none, or the turn is taken);
 * link_sender.c pumps them until one takes it. forget: lk closed, or its
 * connection did (amqp_events.c: before either frees it). ahead: lk, with a
 * claim in the store, may send another (a second walk from the same hint, of
 * its own) if it holds the turn or takes it free, and no other link waits
 * for the entity; it never waits in line for this. */
bool amqp_claim_turn_take(amqp_link *lk);
bool amqp_claim_turn_ahead(amqp_link *lk);
bool amqp_claim_turn_end(amqp_link *lk);
amqp_link *amqp_claim_turn_next(amqp_server *srv, int64_t entity_id);
void amqp_claim_turn_forget(amqp_link *lk);

/* amqp_txn.c: transactions (a coordinator link; transfers and dispositions
 * that carry transactional-state join one; discharge commits or rolls back). */
typedef struct amqp_txn amqp_txn;
#define AMQP_TXN_STATE 0x34 /* transactional-state's descriptor */
/* A declare or discharge on the coordinator link. */
void amqp_txn_on_control(amqp_link *lk, pn_delivery_t *d);
/* The coordinator link lk closed: the transactions it declared and did not
 * discharge roll back, and their txn-ids are unknown from then on (as Service
 * Bus does: a transaction lives no longer than its coordinator). */
void amqp_txn_coordinator_closed(amqp_link *lk);
/* Whether delivery d (a transfer from the client, or its disposition of one of
 * ours) carries transactional-state. If so *txn is its transaction, or NULL
 * when the id is unknown here (d was then refused and settled). */
bool amqp_txn_of(amqp_conn *c, pn_delivery_t *d, amqp_txn **txn);
/* n operations (a settlement, or the messages of a send) join txn: SB_OK, or the refusal (d was then refused and
 * settled, and the transaction can only roll back). */
sb_status amqp_txn_admit(amqp_txn *txn, pn_delivery_t *d, int n);
/* The outcome inside a disposition's transactional-state (0: none), with
 * modified's undeliverable-here and rejected's dead-letter reason and
 * description ("" when absent; buffers of n bytes). */
uint64_t amqp_txn_outcome(pn_delivery_t *d, bool *undeliverable, char *reason, char *description, size_t n);
/* The same for an operation that is not a delivery of its own (an item of a
 * $management request): SB_OK, or the refusal with its description. */
sb_status amqp_txn_admit_op(amqp_txn *txn, char *err, size_t errlen);
/* Its work, to add sends and settlements to. */
store_txn *amqp_txn_work(amqp_txn *txn);
/* What its work will do to messages, counted when it commits (broker_figures.h). */
broker_counts *amqp_txn_tally(amqp_txn *txn);
/* Answers d with transactional-state {txn, outcome} (outcome: the client's
 * own for a disposition, accepted for a transfer) and settles it. */
void amqp_txn_answer(amqp_txn *txn, pn_delivery_t *d);
/* Whether txn is still open on connection c (a store callback may outlive it). */
bool amqp_txn_alive(const amqp_conn *c, const amqp_txn *txn);
/* The connection ended: its transactions roll back. */
void amqp_txn_free_all(amqp_conn *c);

/* What the wire counts (GET /metrics; amqp_server.c): a link in or out of
 * the open-links gauge (each idempotent), and a request refused with st. */
void amqp_link_count(amqp_link *lk);
void amqp_link_uncount(amqp_link *lk);
void amqp_count_refusal(amqp_server *srv, sb_status st);
/* What a link is for, as the client sees it (its figures' label, the dashboard's). */
broker_link_kind amqp_link_kind_of(amqp_link_role role);
/* Names what the server's figures count (its $management operations). */
/* names: the $management operations counted by name (mgmt_node.c's, handed
 * in by the server, which sits above both). */
void amqp_figures_init(amqp_server *srv, const char **names, size_t n);
/* mgmt_node.c: the $management operations, for the wire's figures to name. */
size_t amqp_mgmt_operation_names(const char **names, size_t max);
/* amqp_mgmt_on_request counts each request under its operation. */

/* amqp_sasl.c */
void amqp_sasl_install(pn_transport_t *t);

/* amqp_cbs.c */
void amqp_cbs_on_request(amqp_link *lk, pn_delivery_t *d, const char *bytes, size_t len);
bool amqp_cbs_authorized(const amqp_conn *c, const char *entity_path);
/* Answers a put-token request (status-code from st's row of the status table). */
void amqp_cbs_respond(amqp_link *lk, pn_message_t *req, sb_status st, const char *description);

/* link_attach.c */
/* Sets an error condition (name, description) with an info map, empty when nothing fills it:
 * Proton drops a trailing null field, and the Python SDK's pure-Python stack (azure-servicebus
 * >= 7.12, _pyamqp) reads an error's info at index 2 of a rejected outcome or a close without a
 * length check (an IndexError that left a rejected send waiting forever). Service Bus writes
 * all three fields. Every error sbemu sends goes through here. */
void amqp_condition_set(pn_condition_t *cond, const char *name, const char *description);
void amqp_link_on_remote_open(amqp_conn *c, pn_link_t *l);
void amqp_link_refuse(pn_link_t *l, const char *condition, const char *description);
/* Closes an attached link with st's condition (a detach carrying the error):
 * for what ends one link and not its connection, such as running out of
 * memory where going on would leave the link silently stalled. */
void amqp_link_detach_error(amqp_link *lk, sb_status st, const char *description);

/* Grants a receiving link more credit, unless the store holds too much
 * already (then the link is starved until one of its sends commits). */
void amqp_link_top_up(amqp_link *lk);

/* Answers a link's attach with a live link (termini and settle modes echoed). */
void amqp_link_accept(amqp_link *lk);

/* link_session.c: session receivers. */
/* Whether the client's attach carries a session filter; *named and sid
 * (sidlen bytes) say which session, when it names one. */
bool amqp_session_filter_of(pn_link_t *l, bool *named, char *sid, size_t sidlen);
/* Takes the link's session (its entity was looked up and allows it). */
void amqp_session_attach(amqp_link *lk);
/* Messages came: a receiver waiting for the next available session looks again. */
void amqp_session_retry(amqp_link *lk);
/* The poll timer: a waiting receiver past its deadline is told
 * com.microsoft:timeout; a held session whose lock lapsed is detached with
 * com.microsoft:session-lock-lost. */
void amqp_session_tick(amqp_link *lk);
/* The link is gone: its session is free for others. */
void amqp_session_let_go(amqp_link *lk);
/* The link of connection c holding entity_id's session sid, or NULL. */
amqp_link *amqp_session_holder(amqp_conn *c, int64_t entity_id, const char *sid);

/* link_receiver.c */
void amqp_link_on_transfer(amqp_link *lk, pn_delivery_t *d);

/* link_sender.c */
void amqp_link_pump(amqp_link *lk);

/* link_deliver.c: sends one claimed message on lk (its lock token the delivery tag). */
void amqp_link_deliver(amqp_link *lk, const store_claimed *m);
/* Gives back a lock nobody will settle: a release, then the entity's receivers are woken. */
void amqp_release_for_others(amqp_server *srv, int32_t ns, int64_t entity_id, const uint8_t token[16]);

/* link_held.c: a session receiver's first messages, claimed with its
 * session's lock (asked: how many that claim asked for), wait for its first
 * credit. True when the link should be pumped now (amqp_link_pump delivers
 * them as its credit allows). */
bool amqp_link_take_first(amqp_link *lk, const store_claimed *msgs, size_t n, int asked);
/* The credit came (credit > 0): true when the link should claim nothing more now. */
bool amqp_link_deliver_held(amqp_link *lk, int credit);
/* Those still waiting go back to the store if the credit has not come for
 * AMQP_SESSION_HELD_MAX_MS (the poll calls it). */
void amqp_link_held_tick(amqp_link *lk);

/* amqp_link.c: what to do once messages of an entity were given back (a
 * release, a fault rule's claim): rewind and wake its receivers; or a
 * session let go (picked_seq: the message it was picked by, 0 if named):
 * lower where the next pick starts and wake. A store callback and its
 * context (cb NULL when out of memory: nobody is woken, the poll finds
 * them). */
typedef struct amqp_after_release {
    void (*cb)(void *ctx, sb_status st);
    void *ctx;
} amqp_after_release;
amqp_after_release amqp_after_release_of(amqp_server *srv, int64_t entity_id);
amqp_after_release amqp_after_session_release_of(amqp_server *srv, int64_t entity_id, int64_t picked_seq);
void amqp_link_on_disposition(amqp_link *lk, pn_delivery_t *d);

/* mgmt_node.c */
void amqp_mgmt_on_request(amqp_link *lk, pn_delivery_t *d, const char *bytes, size_t len);

/* ---- faults on demand: amqp_fault.c ----
 * Each operation point, when the broker's rules are not empty, asks here
 * before it goes on. false: no rule fired, go on now. true: a rule has the
 * operation (and whatever the call says it takes); its point's continuation
 * below runs later if the rule lets the operation go on (a delay), or the
 * effect is carried out instead (an error, a detach, a close, no answer). */
/* The points' continuations, handed in by each point (amqp_fault.c sits
 * below the points and calls none of them by name). */
typedef void (*amqp_fault_go_link)(amqp_link *lk);
typedef void (*amqp_fault_go_send)(amqp_link *lk, pn_delivery_t *d, uint8_t *buf, ssize_t len); /* takes buf */
/* rewound: a rewind came while the messages were claimed (claim_from stays) */
typedef void (*amqp_fault_go_receive)(amqp_link *lk, const store_claimed *msgs, size_t n, int asked, bool rewound);
typedef void (*amqp_fault_go_settle)(amqp_link *lk, pn_delivery_t *d);
typedef struct amqp_fault_cbs_ops {
    void (*put_token)(amqp_link *lk, pn_message_t *req); /* takes req */
    void (*respond)(amqp_link *lk, pn_message_t *req, sb_status st, const char *description);
} amqp_fault_cbs_ops;
bool amqp_fault_connect(amqp_conn *c);   /* continues: amqp_conn_open */
bool amqp_fault_attach(amqp_link *lk, amqp_fault_go_link go);
bool amqp_fault_send(amqp_link *lk, pn_delivery_t *d, uint8_t *buf, size_t len, amqp_fault_go_send go); /* takes buf */
/* msgs are copied; rewound: as on_claimed read it */
bool amqp_fault_receive(amqp_link *lk, const store_claimed *msgs, size_t n, int asked, bool rewound,
                        amqp_fault_go_receive go);
bool amqp_fault_settle(amqp_link *lk, pn_delivery_t *d, ent_settle_kind kind, amqp_fault_go_settle go);
/* ns_name: the namespace the request is for ("" the default; amqp_cbs.c knows which). */
bool amqp_fault_cbs(amqp_link *lk, pn_message_t *req, const char *ns_name, const amqp_fault_cbs_ops *go); /* takes req */

/* Sets an error condition on a delivery's local state and settles it rejected. */
void amqp_delivery_reject(pn_delivery_t *d, sb_status st, const char *description);

#endif
