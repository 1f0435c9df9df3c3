/* One AMQP connection: a Proton pn_connection_driver_t and the link contexts
 * of its handlers, transport-neutral. A binding (amqp_bind_raw.c for TCP and
 * TLS, amqp_bind_ws.c for WebSockets) owns the socket and tells the
 * connection what happened to it through amqp_conn_bind (amqp_bind_event:
 * opened, bytes, writeable, closed).
 *
 * Bytes in -> read_buffer/read_done -> events -> handlers (the connection
 * handles its own and its sessions' events, and hands those of links and
 * deliveries to amqp_events.c through the server's table); handlers and store
 * callbacks leave frames in the driver, and amqp_conn_pump asks lws for
 * WRITEABLE, where write_buffer/write_done drain them in the binding's
 * lws_write mode (raw bytes, or WebSocket binary frames). */
#include <proton/codec.h>
#include <proton/connection.h>
#include <proton/event.h>
#include <proton/session.h>
#include <proton/transport.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amqp_internal.h"
#include "ent_alloc.h"
#include "ent_clock.h"
#include "ent_log.h"

/* Bytes written before they are taken off the front of Proton's output
 * buffer: each pop moves what remains to the front, so popping every chunk
 * moved the whole buffer once per 64 KiB written. */
#define AMQP_WRITE_POP_AT (1024 * 1024)

static uint64_t next_conn_id = 1;

/* ---- connection lifetime ---- */

static void tick(lws_sorted_usec_list_t *sul);

static amqp_conn *conn_new(amqp_server *srv, struct lws *wsi, enum lws_write_protocol write_mode)
{
    amqp_conn *c = ent_calloc(1, sizeof *c);
    if (!c || pn_connection_driver_init(&c->driver, NULL, NULL)) {
        ent_free(c);
        return NULL;
    }
    c->srv = srv;
    c->wsi = wsi;
    c->write_mode = write_mode;
    c->refs = 1; /* the socket's */
    c->id = next_conn_id++;
    pn_transport_t *t = c->driver.transport;
    pn_transport_set_server(t);
    pn_transport_require_auth(t, false); /* rhea without a username sends no SASL */
    amqp_sasl_install(t);
    pn_transport_set_max_frame(t, AMQP_MAX_FRAME);
    pn_transport_set_channel_max(t, AMQP_CHANNEL_MAX);
    pn_transport_set_idle_timeout(t, AMQP_IDLE_TIMEOUT_MS);
    pn_connection_set_context(c->driver.connection, c);
    amqp_frame_guard_init(&c->guard, AMQP_MAX_FRAME);
    c->next = srv->conns;
    srv->conns = c;
    srv->nconns++;
    return c;
}

static void conn_destroy(amqp_conn *c)
{
    amqp_server *srv = c->srv;
    for (amqp_conn **pp = &srv->conns; *pp; pp = &(*pp)->next)
        if (*pp == c) {
            *pp = c->next;
            break;
        }
    srv->nconns--;
    if (c->opened)
        srv->figures.connections_open--;
    lws_sul_cancel(&c->tick_timer);
    srv->events->conn_closed(c); /* done already when the socket closed first */
    pn_connection_driver_destroy(&c->driver);
    for (amqp_link *lk = c->links, *next; lk; lk = next) {
        next = lk->next;
        /* a next-available session attach still waiting has its deadline in
         * lws's timer list: freed with it scheduled, the next timer insert
         * walks freed memory (a client gone mid-wait crashed sbemu) */
        lws_sul_cancel(&lk->session_timer);
        amqp_link_uncount(lk);
        ent_free(lk->held);
        ent_free(lk);
    }
    LOG_DEBUG("conn %llu: freed", (unsigned long long)c->id);
    ent_free(c->lingering); /* their Proton links went with the driver */
    ent_free(c->grants);
    ent_free(c);
}

void amqp_conn_ref(amqp_conn *c) { c->refs++; }

void amqp_conn_unref(amqp_conn *c)
{
    if (--c->refs == 0)
        conn_destroy(c);
}

amqp_link *amqp_link_of(pn_link_t *l) { return pn_link_get_context(l); }

static bool linger(amqp_conn *c, pn_link_t *l);

/* Unlinks and frees a finished link nobody refers to, and lets Proton free its
 * own (events still queued for it find no context). */
static void link_free(amqp_link *lk)
{
    amqp_conn *c = lk->conn;
    for (amqp_link **pp = &c->links; *pp; pp = &(*pp)->next)
        if (*pp == lk) {
            *pp = lk->next;
            break;
        }
    lws_sul_cancel(&lk->session_timer);
    amqp_link_uncount(lk);
    pn_link_set_context(lk->pn, NULL);
    if (!(c->wsi && pn_link_is_sender(lk->pn) && pn_link_unsettled(lk->pn) > 0 && linger(c, lk->pn)))
        pn_link_free(lk->pn);
    ent_free(lk->held);
    ent_free(lk);
}

/* Proton settles what a freed link still has unsettled, and while the link's
 * session lives it says so to the client: rhea then takes the messages for
 * settled, and the JS SDK refuses to complete them through $management (a
 * receiver closed before its messages were settled, or one the SDK closed
 * when its drain took over 200 ms). In Service Bus a lock outlives its link.
 * So such a link stays unfreed until its session's end is written, after
 * which Proton settles without a word (free_lingering). False when the
 * connection keeps AMQP_LINGERING_LINKS_MAX already (or is out of memory):
 * the link is freed at once. */
static bool linger(amqp_conn *c, pn_link_t *l)
{
    if (c->nlingering == c->lingering_cap) {
        int cap = c->lingering_cap ? 2 * c->lingering_cap : 4;
        if (cap > AMQP_LINGERING_LINKS_MAX)
            return false;
        pn_link_t **grown = ent_realloc(c->lingering, (size_t)cap * sizeof *grown);
        if (!grown)
            return false;
        c->lingering = grown;
        c->lingering_cap = cap;
    }
    c->lingering[c->nlingering++] = l;
    return true;
}

/* Frees the lingering links whose sessions have ended on our side: called
 * once Proton has written its output, which carries those sessions' ends. */
static void free_lingering(amqp_conn *c)
{
    int kept = 0;
    for (int i = 0; i < c->nlingering; i++) {
        pn_link_t *l = c->lingering[i];
        if (pn_session_state(pn_link_session(l)) & PN_LOCAL_CLOSED)
            pn_link_free(l);
        else
            c->lingering[kept++] = l;
    }
    c->nlingering = kept;
}

void amqp_link_hold(amqp_link *lk)
{
    lk->refs++;
    amqp_conn_ref(lk->conn);
}

void amqp_link_drop(amqp_link *lk)
{
    amqp_conn *c = lk->conn;
    if (--lk->refs == 0 && lk->finished)
        link_free(lk);
    amqp_conn_unref(c);
}

/* ---- events ---- */

static void on_link_closed(pn_link_t *l)
{
    amqp_link *lk = amqp_link_of(l);
    if (lk) {
        lk->closed = true;
        lk->parked = false;
        amqp_link_uncount(lk);
        lk->conn->srv->events->link_closed(lk);
    }
    if (!(pn_link_state(l) & PN_LOCAL_CLOSED))
        pn_link_close(l);
    if (lk) {
        lk->finished = true;
        if (lk->refs == 0)
            link_free(lk);
    }
}



static void on_connection_init(pn_connection_t *pc)
{
    pn_connection_set_container(pc, "sbemu");
    /* A full-length open frame: pyamqp reads performative fields by position. */
    pn_data_t *props = pn_connection_properties(pc);
    pn_data_put_map(props);
    pn_data_enter(props);
    pn_data_put_symbol(props, pn_bytes(7, "product"));
    pn_data_put_string(props, pn_bytes(5, "sbemu"));
    pn_data_exit(props);
}

static void dispatch(amqp_conn *c, pn_event_t *e)
{
    switch (pn_event_type(e)) {
    case PN_CONNECTION_INIT:
        on_connection_init(pn_event_connection(e));
        break;
    case PN_CONNECTION_REMOTE_OPEN: {
        /* Offer no larger frames than the client takes itself: uamqp-c (the
         * Python SDK) cuts a message into frames of our max-frame-size but
         * will not encode a frame over its own (64 KiB), so a message over
         * 64 KiB failed in the client before it left. Our open is not
         * written yet, so it carries the lowered size. */
        pn_transport_t *t = c->driver.transport;
        uint32_t theirs = pn_transport_get_remote_max_frame(t);
        if (theirs && theirs < pn_transport_get_max_frame(t))
            pn_transport_set_max_frame(t, theirs);
        if (!c->opened) {
            c->srv->figures.connections_open++;
            c->srv->figures.connections_opened++;
        }
        c->opened = true;
        if (c->wsi)
            lws_set_timeout(c->wsi, NO_PENDING_TIMEOUT, 0); /* the handshake is over */
        if (c->srv->faults->n && c->srv->events->conn_opening(c))
            break; /* a fault rule holds the open: amqp_conn_open answers it */
        pn_connection_open(pn_event_connection(e));
        break;
    }
    case PN_CONNECTION_REMOTE_CLOSE:
        pn_connection_close(pn_event_connection(e));
        break;
    case PN_SESSION_REMOTE_OPEN: {
        pn_session_t *s = pn_event_session(e);
        /* room for the largest message this emulator takes, whole */
        size_t need = (size_t)c->srv->settings->max_message_size + 2u * AMQP_MAX_FRAME;
        pn_session_set_incoming_capacity(s, need > AMQP_SESSION_CAPACITY ? need : AMQP_SESSION_CAPACITY);
        pn_session_open(s);
        break;
    }
    case PN_SESSION_REMOTE_CLOSE:
        pn_session_close(pn_event_session(e));
        break;
    case PN_LINK_REMOTE_CLOSE:
    case PN_LINK_REMOTE_DETACH:
        on_link_closed(pn_event_link(e));
        break;
    case PN_LINK_REMOTE_OPEN:
    case PN_LINK_FLOW:
    case PN_DELIVERY:
        c->srv->events->link_event(c, e); /* the handlers' */
        break;
    case PN_TRANSPORT_ERROR: {
        pn_condition_t *cond = pn_transport_condition(pn_event_transport(e));
        /* one that left before its open (a port probe, a health check) is no news */
        ent_log(c->opened ? ENT_LOG_INFO : ENT_LOG_DEBUG, "conn %llu: transport error: %s: %s", (unsigned long long)c->id,
                 pn_condition_get_name(cond) ? pn_condition_get_name(cond) : "?",
                 pn_condition_get_description(cond) ? pn_condition_get_description(cond) : "");
        break;
    }
    default:
        break;
    }
}

void amqp_conn_pump(amqp_conn *c)
{
    /* Called again from inside a handler (an answer that came at once): the
     * loop below is already draining events, and Proton's current event must
     * stay valid until its handler returns. */
    if (c->pumping)
        return;
    c->pumping = true;
    pn_event_t *e;
    /* held: what follows the client's open waits for our answer to it */
    while (!c->held && (e = pn_connection_driver_next_event(&c->driver)))
        dispatch(c, e);
    c->pumping = false;
    if (!c->wsi)
        return;
    pn_bytes_t wb = pn_connection_driver_write_buffer(&c->driver);
    if (c->nlingering)
        free_lingering(c); /* after the write buffer: it holds their sessions' ends */
    if (c->out_written > wb.size)
        c->out_written = 0; /* Proton dropped its output (its head closed) */
    c->out_ahead = wb.size - c->out_written;
    if (c->out_ahead || pn_connection_driver_write_closed(&c->driver) || c->hang_up)
        lws_callback_on_writable(c->wsi);
    /* Heartbeats and the idle timeout. The server's poll timer pumps every
     * connection each AMQP_POLL_INTERVAL_MS, which is soon enough for any
     * tick further off than that; only a nearer one gets a timer of its own.
     * (A timer per connection, rescheduled at every pump, cost an insertion
     * into lws's sorted timer list, a walk over every connection: accepting
     * 10,000 connections took 16 s of CPU.) */
    int64_t now = ent_clock_wall_ms();
    int64_t next = pn_transport_tick(c->driver.transport, now);
    c->next_tick_ms = next > 0 ? next : INT64_MAX;
    if (next > 0 && next - now < AMQP_POLL_INTERVAL_MS && !pn_connection_driver_finished(&c->driver))
        lws_sul_schedule(lws_get_context(c->wsi), 0, &c->tick_timer, tick,
                         (lws_usec_t)(next > now ? next - now : 1) * LWS_US_PER_MS);
}

/* A fault rule held the client's open (c->held): answer it now, and go on
 * with the events that waited behind it. */
void amqp_conn_open(amqp_conn *c)
{
    c->held = false;
    if (!(pn_connection_state(c->driver.connection) & PN_LOCAL_ACTIVE))
        pn_connection_open(c->driver.connection);
    amqp_conn_pump(c);
}

static void tick(lws_sorted_usec_list_t *sul)
{
    amqp_conn *c = lws_container_of(sul, amqp_conn, tick_timer);
    amqp_conn_pump(c);
}

/* ---- the bindings' entry points ---- */

static amqp_conn *conn_accept(struct lws *wsi, enum lws_write_protocol write_mode)
{
    /* the server is the user of our protocols (amqp_server_protocols) */
    const struct lws_protocols *proto = lws_get_protocol(wsi);
    amqp_server *srv = proto ? proto->user : NULL;
    amqp_conn *c = srv ? conn_new(srv, wsi, write_mode) : NULL;
    if (!c)
        return NULL;
    LOG_DEBUG("conn %llu: accepted (%s%s)", (unsigned long long)c->id, write_mode == LWS_WRITE_RAW ? "amqp" : "ws",
              lws_is_ssl(wsi) ? " over TLS" : "");
    /* Brokers close what has not finished its handshake (header, SASL,
     * open) in bounded time: idle half-open sockets cost memory and fds.
     * Cleared at the client's open. */
    if (c->srv->wire.handshake_timeout_s > 0)
        lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, c->srv->wire.handshake_timeout_s);
    amqp_conn_pump(c);
    return c;
}

static void conn_closed(amqp_conn *c)
{
    c->wsi = NULL;
    lws_sul_cancel(&c->tick_timer);
    c->srv->events->conn_closed(c); /* its sessions end with it, its transactions roll back */
    pn_connection_driver_close(&c->driver);
    amqp_conn_pump(c);
    LOG_DEBUG("conn %llu: socket closed", (unsigned long long)c->id);
    amqp_conn_unref(c);
}

static int conn_bytes(amqp_conn *c, const uint8_t *in, size_t len)
{
    char why[128];
    bool garbage = amqp_frame_guard_feed(&c->guard, in, len, why, sizeof why) != 0;
    if (garbage)
        len = c->guard.refused_at; /* Proton gets the frames before the refused one, not it */
    while (len) {
        pn_rwbytes_t rb = pn_connection_driver_read_buffer(&c->driver);
        if (!rb.size)
            break; /* read side closed (protocol error): drop the rest */
        size_t n = len < rb.size ? len : rb.size;
        memcpy(rb.start, in, n);
        pn_connection_driver_read_done(&c->driver, n);
        in += n;
        len -= n;
        amqp_conn_pump(c);
    }
    if (garbage) {
        LOG_INFO("conn %llu: closing: %s", (unsigned long long)c->id, why);
        if (!pn_connection_driver_read_closed(&c->driver)) {
            pn_connection_driver_errorf(&c->driver, "amqp:connection:framing-error", "%s", why);
            pn_connection_driver_read_close(&c->driver); /* Proton writes its close frame if it can */
        }
        c->hang_up = true; /* once what Proton still has to say is written */
        amqp_conn_pump(c);
        lws_callback_on_writable(c->wsi);
    }
    amqp_conn_pump(c);
    return 0;
}

bool amqp_conn_output_full(amqp_conn *c, amqp_link *lk, size_t *room)
{
    if (c->out_ahead >= AMQP_OUTPUT_AHEAD_MAX) {
        lk->waiting_output = true;
        c->out_waiters = true;
        return true;
    }
    *room = AMQP_OUTPUT_AHEAD_MAX - c->out_ahead;
    return false;
}

/* Writes the next chunk of Proton's output from where the last one ended,
 * and pops what was written only every AMQP_WRITE_POP_AT bytes, or once all
 * of it went. */
static int conn_writeable(amqp_conn *c)
{
    pn_bytes_t wb = pn_connection_driver_write_buffer(&c->driver);
    if (c->out_written > wb.size)
        c->out_written = 0; /* Proton dropped its output (its head closed) */
    if (wb.size > c->out_written) {
        size_t left = wb.size - c->out_written;
        size_t n = left < AMQP_WRITE_CHUNK ? left : AMQP_WRITE_CHUNK;
        int w;
        if (c->write_mode == LWS_WRITE_RAW) {
            /* straight from Proton's buffer: a raw socket's write adds no
             * header in front (only WebSocket framing needs LWS_PRE), and
             * what the socket does not take lws copies into its own list */
            w = lws_write(c->wsi, (unsigned char *)(uintptr_t)(wb.start + c->out_written), n, c->write_mode);
        } else {
            unsigned char *buf = ent_malloc(LWS_PRE + n);
            if (!buf)
                return -1;
            memcpy(buf + LWS_PRE, wb.start + c->out_written, n);
            w = lws_write(c->wsi, buf + LWS_PRE, n, c->write_mode);
            ent_free(buf);
        }
        if (w < 0)
            return -1;
        c->out_written += n;
        if (c->out_written == wb.size || c->out_written >= AMQP_WRITE_POP_AT) {
            pn_connection_driver_write_done(&c->driver, c->out_written);
            c->out_written = 0;
        }
        c->out_ahead = left - n;
        if (c->out_waiters && c->out_ahead < AMQP_OUTPUT_AHEAD_MAX / 2) {
            c->out_waiters = false;
            c->srv->events->output_drained(c);
        }
        amqp_conn_pump(c);
        return 0;
    }
    if (pn_connection_driver_write_closed(&c->driver) || c->hang_up)
        return -1; /* everything said, including close: hang up */
    return 0;
}

int amqp_conn_bind(amqp_conn **slot, amqp_bind_event ev, struct lws *wsi, enum lws_write_protocol write_mode,
                   const uint8_t *in, size_t len)
{
    amqp_conn *c = *slot;
    switch (ev) {
    case AMQP_BIND_OPENED:
        *slot = conn_accept(wsi, write_mode);
        return *slot ? 0 : -1;
    case AMQP_BIND_BYTES:
        return c ? conn_bytes(c, in, len) : -1;
    case AMQP_BIND_WRITEABLE:
        return c ? conn_writeable(c) : -1;
    case AMQP_BIND_CLOSED:
        *slot = NULL;
        if (c)
            conn_closed(c);
        return 0;
    }
    return -1;
}
