/* Writes the seeds of corpus/connection and corpus/ws_connection: real client
 * byte streams, as Proton's own client (a second pn_connection_driver) writes
 * them while it talks to sbemu in process (the fake store and socket of
 * fuzz_connection). Each scenario is one stream: SASL or not, open, begin,
 * a $cbs put-token with a valid SAS token for the fuzz targets' key, then
 * attaches, transfers, flows, dispositions, $management requests, a session
 * receiver, a transaction, detaches and close.
 *
 * Run once by hand after a protocol change, not by run.sh:
 *   seedgen_connection tests/fuzz/corpus
 * (built with every test build, build/bin/seedgen_connection, and beside the
 * fuzz targets). */
#include <errno.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <proton/codec.h>
#include <proton/connection.h>
#include <proton/delivery.h>
#include <proton/link.h>
#include <proton/message.h>
#include <proton/sasl.h>
#include <proton/session.h>
#include <proton/terminus.h>
#include <proton/transport.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "amqp_internal.h"
#include "ent_log.h"
#include "fake_lws.h"
#include "fake_store.h"

/* Must match fuzz_connection.c and fuzz_ws_connection.c. */
#define KEY_NAME "RootManageSharedAccessKey"
#define KEY "fuzz-key"
#define TOKEN_EXPIRY "4102444800" /* 2100-01-01 */
#define EXCHANGE_ROUNDS 200

typedef struct gen {
    pn_connection_driver_t client;
    store *st;
    broker *b;
    amqp_server *srv;
    amqp_conn *slot;
    struct lws *wsi;
    uint8_t *rec;
    size_t len, cap;
    pn_session_t *ssn;
    int tag;
} gen;

static void die(const char *what)
{
    fprintf(stderr, "seedgen: %s\n", what);
    exit(1);
}

static void record(gen *g, const void *p, size_t n)
{
    if (g->len + n > g->cap) {
        g->cap = (g->len + n) * 2;
        if (!(g->rec = realloc(g->rec, g->cap)))
            die("out of memory");
    }
    memcpy(g->rec + g->len, p, n);
    g->len += n;
}

static void server_wrote(void *ud, const unsigned char *bytes, size_t len)
{
    gen *g = ud;
    while (len) {
        pn_rwbytes_t rb = pn_connection_driver_read_buffer(&g->client);
        if (!rb.size)
            return;
        size_t n = len < rb.size ? len : rb.size;
        memcpy(rb.start, bytes, n);
        pn_connection_driver_read_done(&g->client, n);
        bytes += n;
        len -= n;
    }
}

/* Client and server talk until neither has anything to say. */
static void exchange(gen *g)
{
    for (int i = 0; i < EXCHANGE_ROUNDS; i++) {
        int moved = 0;
        while (pn_connection_driver_next_event(&g->client))
            moved = 1;
        pn_bytes_t wb = pn_connection_driver_write_buffer(&g->client);
        if (wb.size && g->slot) {
            record(g, wb.start, wb.size);
            if (amqp_conn_bind(&g->slot, AMQP_BIND_BYTES, g->wsi, LWS_WRITE_RAW, (const uint8_t *)wb.start,
                               wb.size) < 0)
                die("the server refused the client's bytes");
            pn_connection_driver_write_done(&g->client, wb.size);
            moved = 1;
        }
        while (g->slot && fake_lws_take_writable()) {
            moved = 1;
            if (amqp_conn_bind(&g->slot, AMQP_BIND_WRITEABLE, g->wsi, LWS_WRITE_RAW, NULL, 0) < 0)
                amqp_conn_bind(&g->slot, AMQP_BIND_CLOSED, g->wsi, LWS_WRITE_RAW, NULL, 0);
        }
        if (fake_store_pending(g->st)) {
            fake_store_turn(g->st);
            moved = 1;
        }
        if (!moved)
            return;
    }
}

typedef enum sasl_kind { NO_SASL, SASL_ANONYMOUS, SASL_PLAIN } sasl_kind;

static void start_framed(gen *g, sasl_kind sasl, uint32_t max_frame);

static void start(gen *g, sasl_kind sasl) { start_framed(g, sasl, 0); }

/* max_frame: the client's (0: Proton's default). */
static void start_framed(gen *g, sasl_kind sasl, uint32_t max_frame)
{
    memset(g, 0, sizeof *g);
    g->st = fake_store_new();
    broker_settings settings = {.sas_key_name = KEY_NAME, .sas_key = KEY, .max_message_size = 256 * 1024};
    g->b = broker_new(g->st, &settings);
    g->srv = amqp_server_new(g->b, &(amqp_settings){0});
    if (!g->b || !g->srv)
        die("out of memory");
    g->wsi = fake_lws_open(g->srv);
    fake_lws_set_sink(server_wrote, g);
    if (amqp_conn_bind(&g->slot, AMQP_BIND_OPENED, g->wsi, LWS_WRITE_RAW, NULL, 0))
        die("no connection");
    if (pn_connection_driver_init(&g->client, NULL, NULL))
        die("no client");
    pn_connection_t *c = g->client.connection;
    if (max_frame)
        pn_transport_set_max_frame(g->client.transport, max_frame);
    pn_connection_set_container(c, "seedgen");
    pn_connection_set_hostname(c, "localhost");
    if (sasl != NO_SASL) {
        pn_sasl_t *s = pn_sasl(g->client.transport);
        pn_sasl_set_allow_insecure_mechs(s, true);
        if (sasl == SASL_PLAIN) {
            pn_connection_set_user(c, KEY_NAME);
            pn_connection_set_password(c, KEY);
            pn_sasl_allowed_mechs(s, "PLAIN");
        } else {
            pn_sasl_allowed_mechs(s, "ANONYMOUS");
        }
    }
    pn_connection_open(c);
    g->ssn = pn_session(c);
    pn_session_open(g->ssn);
    exchange(g);
}

static void put_string(pn_data_t *d, const char *s) { pn_data_put_string(d, pn_bytes(strlen(s), s)); }
static void put_symbol(pn_data_t *d, const char *s) { pn_data_put_symbol(d, pn_bytes(strlen(s), s)); }

static pn_link_t *attach(gen *g, bool sender, const char *name, const char *address, const char *reply_to)
{
    pn_link_t *l = sender ? pn_sender(g->ssn, name) : pn_receiver(g->ssn, name);
    pn_terminus_set_address(sender ? pn_link_target(l) : pn_link_source(l), address);
    pn_terminus_set_address(sender ? pn_link_source(l) : pn_link_target(l), reply_to ? reply_to : name);
    return l;
}

static void open_link(gen *g, pn_link_t *l, int credit)
{
    pn_link_open(l);
    if (credit)
        pn_link_flow(l, credit);
    exchange(g);
}

/* Sends m on l; state (0: none) rides in the transfer, with its data. */
static pn_delivery_t *send_msg(gen *g, pn_link_t *l, pn_message_t *m, uint64_t state, const pn_bytes_t *txn_id)
{
    char buf[8192];
    size_t n = sizeof buf;
    if (pn_message_encode(m, buf, &n))
        die("message encode");
    char tag[16];
    snprintf(tag, sizeof tag, "t%d", g->tag++);
    pn_delivery_t *d = pn_delivery(l, pn_dtag(tag, strlen(tag)));
    if (state) {
        pn_data_t *data = pn_disposition_data(pn_delivery_local(d));
        pn_data_put_list(data);
        pn_data_enter(data);
        pn_data_put_binary(data, *txn_id);
        pn_data_exit(data);
        pn_delivery_update(d, state);
    }
    pn_link_send(l, buf, n);
    pn_link_advance(l);
    exchange(g);
    return d;
}

static pn_message_t *app_message(const char *id, const char *session_id, const char *body)
{
    pn_message_t *m = pn_message();
    pn_data_put_string(pn_message_id(m), pn_bytes(strlen(id), id));
    pn_message_set_subject(m, "a label");
    pn_message_set_content_type(m, "application/json");
    if (session_id)
        pn_message_set_group_id(m, session_id);
    pn_data_t *props = pn_message_properties(m);
    pn_data_put_map(props);
    pn_data_enter(props);
    put_string(props, "color");
    put_string(props, "red");
    put_string(props, "n");
    pn_data_put_long(props, 7);
    pn_data_exit(props);
    pn_data_t *ann = pn_message_annotations(m);
    pn_data_put_map(ann);
    pn_data_enter(ann);
    put_symbol(ann, "x-opt-partition-key");
    put_string(ann, "pk");
    pn_data_exit(ann);
    pn_data_put_binary(pn_message_body(m), pn_bytes(strlen(body), body));
    pn_message_set_inferred(m, true);
    return m;
}

/* Sends app_message(id, session_id, body) on l (state: 0, or a transactional
 * state with txn_id). */
static void send_app(gen *g, pn_link_t *l, uint64_t state, const pn_bytes_t *txn_id, const char *id,
                     const char *session_id, const char *body)
{
    pn_message_t *m = app_message(id, session_id, body);
    send_msg(g, l, m, state, txn_id);
    pn_message_free(m);
}

static void base64url_sig(const char *sr_enc, char *out, size_t outlen)
{
    char msg[256];
    snprintf(msg, sizeof msg, "%s\n%s", sr_enc, TOKEN_EXPIRY);
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int maclen = 0;
    HMAC(EVP_sha256(), KEY, (int)strlen(KEY), (unsigned char *)msg, strlen(msg), mac, &maclen);
    unsigned char b64[128];
    EVP_EncodeBlock(b64, mac, (int)maclen);
    size_t o = 0;
    for (const unsigned char *p = b64; *p && o + 4 < outlen; p++) {
        if (*p == '+' || *p == '/' || *p == '=')
            o += (size_t)snprintf(out + o, outlen - o, "%%%02X", *p);
        else
            out[o++] = (char)*p;
    }
    out[o] = 0;
}

/* $cbs put-token for the whole namespace, as every SDK does first. */
static void put_token(gen *g)
{
    pn_link_t *s = attach(g, true, "cbs-sender", "$cbs", NULL);
    pn_link_t *r = attach(g, false, "cbs-receiver", "$cbs", "cbs-reply");
    open_link(g, s, 0);
    open_link(g, r, 10);
    const char *sr = "sb%3A%2F%2Flocalhost%2F";
    char sig[128], token[512];
    base64url_sig(sr, sig, sizeof sig);
    snprintf(token, sizeof token, "SharedAccessSignature sr=%s&sig=%s&se=%s&skn=%s", sr, sig, TOKEN_EXPIRY, KEY_NAME);
    pn_message_t *m = pn_message();
    pn_data_put_string(pn_message_id(m), pn_bytes(4, "cbs1"));
    pn_message_set_reply_to(m, "cbs-reply");
    pn_data_t *p = pn_message_properties(m);
    pn_data_put_map(p);
    pn_data_enter(p);
    put_string(p, "operation");
    put_string(p, "put-token");
    put_string(p, "type");
    put_string(p, "servicebus.windows.net:sastoken");
    put_string(p, "name");
    put_string(p, "sb://localhost/");
    put_string(p, "expiration");
    pn_data_put_timestamp(p, 4102444800000);
    pn_data_exit(p);
    put_string(pn_message_body(m), token);
    send_msg(g, s, m, 0, NULL);
    pn_message_free(m);
}

/* Reads what arrived on receiver l and settles it with outcomes in turn. */
static void settle_received(gen *g, pn_link_t *l, const uint64_t *outcomes, size_t n)
{
    size_t i = 0;
    pn_delivery_t *d;
    while ((d = pn_link_current(l)) && pn_delivery_readable(d) && !pn_delivery_partial(d)) {
        char sink[8192];
        while (pn_link_recv(l, sink, sizeof sink) > 0) {
        }
        pn_link_advance(l);
        uint64_t o = outcomes[i++ % n];
        if (o == PN_MODIFIED) {
            pn_disposition_set_failed(pn_delivery_local(d), true);
            pn_data_t *ann = pn_disposition_annotations(pn_delivery_local(d));
            pn_data_put_map(ann);
            pn_data_enter(ann);
            put_symbol(ann, "why");
            put_string(ann, "because");
            pn_data_exit(ann);
        } else if (o == PN_REJECTED) {
            pn_condition_t *c = pn_disposition_condition(pn_delivery_local(d));
            pn_condition_set_name(c, "com.microsoft:dead-letter");
            pn_data_t *info = pn_condition_info(c);
            pn_data_put_map(info);
            pn_data_enter(info);
            put_symbol(info, "DeadLetterReason");
            put_string(info, "bad");
            put_symbol(info, "DeadLetterErrorDescription");
            put_string(info, "very bad");
            pn_data_exit(info);
        }
        pn_delivery_update(d, o);
        pn_delivery_settle(d);
    }
    exchange(g);
}

static void close_link(gen *g, pn_link_t *l)
{
    pn_link_close(l);
    exchange(g);
}

static void finish(gen *g, const char *dir, const char *name, const uint8_t header[4])
{
    pn_connection_close(g->client.connection);
    exchange(g);
    if (g->slot)
        amqp_conn_bind(&g->slot, AMQP_BIND_CLOSED, g->wsi, LWS_WRITE_RAW, NULL, 0);
    while (fake_store_pending(g->st))
        fake_store_turn(g->st);
    if (amqp_server_connection_count(g->srv))
        die("the connection was not freed");
    fake_lws_set_sink(NULL, NULL);
    pn_connection_driver_destroy(&g->client);
    amqp_server_free(g->srv);
    broker_free(g->b);
    fake_store_free(g->st);
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(header, 1, 4, f) != 4 || fwrite(g->rec, 1, g->len, f) != g->len || fclose(f))
        die(path);
    printf("seedgen: %s (%zu bytes)\n", path, g->len + 4);
    free(g->rec);
}

/* A $management request on (s, reply r): operation and a body map built by fill. */
static void mgmt(gen *g, pn_link_t *s, const char *op, void (*fill)(pn_data_t *), const char *txn_id)
{
    pn_message_t *m = pn_message();
    char id[64];
    snprintf(id, sizeof id, "req-%s", op);
    pn_data_put_string(pn_message_id(m), pn_bytes(strlen(id), id));
    pn_message_set_reply_to(m, "mgmt-reply");
    pn_data_t *p = pn_message_properties(m);
    pn_data_put_map(p);
    pn_data_enter(p);
    put_string(p, "operation");
    put_string(p, op);
    put_string(p, "com.microsoft:server-timeout");
    pn_data_put_uint(p, 60000);
    if (txn_id) {
        put_string(p, "txn-id");
        pn_data_put_binary(p, pn_bytes(strlen(txn_id), txn_id));
    }
    pn_data_exit(p);
    pn_data_t *b = pn_message_body(m);
    pn_data_put_map(b);
    pn_data_enter(b);
    fill(b);
    pn_data_exit(b);
    send_msg(g, s, m, 0, NULL);
    pn_message_free(m);
}

static void fill_peek(pn_data_t *b)
{
    put_string(b, "from-sequence-number");
    pn_data_put_long(b, 1);
    put_string(b, "message-count");
    pn_data_put_int(b, 3);
}

static const pn_uuid_t token1 = {{1, 0, 0, 0, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0, 0}};

static void fill_renew(pn_data_t *b)
{
    put_string(b, "lock-tokens");
    pn_data_put_array(b, false, PN_UUID);
    pn_data_enter(b);
    pn_data_put_uuid(b, token1);
    pn_data_exit(b);
}

static void fill_schedule(pn_data_t *b)
{
    put_string(b, "messages");
    pn_data_put_list(b);
    pn_data_enter(b);
    pn_data_put_map(b);
    pn_data_enter(b);
    pn_message_t *m = app_message("sched-1", NULL, "{\"later\":true}");
    pn_data_t *ann = pn_message_annotations(m);
    pn_data_rewind(ann);
    pn_data_clear(ann);
    pn_data_put_map(ann);
    pn_data_enter(ann);
    put_symbol(ann, "x-opt-scheduled-enqueue-time");
    pn_data_put_timestamp(ann, 4102444800000);
    pn_data_exit(ann);
    char buf[4096];
    size_t n = sizeof buf;
    pn_message_encode(m, buf, &n);
    pn_message_free(m);
    put_string(b, "message-id");
    put_string(b, "sched-1");
    put_string(b, "message");
    pn_data_put_binary(b, pn_bytes(n, buf));
    pn_data_exit(b);
    pn_data_exit(b);
}

static void fill_cancel(pn_data_t *b)
{
    put_string(b, "sequence-numbers");
    pn_data_put_array(b, false, PN_LONG);
    pn_data_enter(b);
    pn_data_put_long(b, 5);
    pn_data_put_long(b, 6);
    pn_data_exit(b);
}

static void fill_receive_by_seq(pn_data_t *b)
{
    fill_cancel(b);
    put_string(b, "receiver-settle-mode");
    pn_data_put_uint(b, 1);
}

static void fill_update_disposition(pn_data_t *b)
{
    put_string(b, "disposition-status");
    put_string(b, "suspended");
    fill_renew(b);
    put_string(b, "deadletter-reason");
    put_string(b, "why");
    put_string(b, "properties-to-modify");
    pn_data_put_map(b);
    pn_data_enter(b);
    put_string(b, "k");
    pn_data_put_int(b, 1);
    pn_data_exit(b);
}

static void fill_batch_delete(pn_data_t *b)
{
    put_string(b, "message-count");
    pn_data_put_int(b, 10);
    put_string(b, "enqueued-time-utc");
    pn_data_put_timestamp(b, 4102444800000);
}

static void fill_add_rule(pn_data_t *b)
{
    put_string(b, "rule-name");
    put_string(b, "r1");
    put_string(b, "rule-description");
    pn_data_put_map(b);
    pn_data_enter(b);
    put_string(b, "sql-filter");
    pn_data_put_map(b);
    pn_data_enter(b);
    put_string(b, "expression");
    put_string(b, "color = 'red' AND n > @min");
    put_string(b, "parameters");
    pn_data_put_map(b);
    pn_data_enter(b);
    put_string(b, "@min");
    pn_data_put_int(b, 3);
    pn_data_exit(b);
    pn_data_exit(b);
    put_string(b, "sql-rule-action");
    pn_data_put_map(b);
    pn_data_enter(b);
    put_string(b, "expression");
    put_string(b, "SET sys.Label = 'x'");
    pn_data_exit(b);
    pn_data_exit(b);
}

static void fill_add_correlation(pn_data_t *b)
{
    put_string(b, "rule-name");
    put_string(b, "c1");
    put_string(b, "rule-description");
    pn_data_put_map(b);
    pn_data_enter(b);
    put_string(b, "correlation-filter");
    pn_data_put_map(b);
    pn_data_enter(b);
    put_string(b, "correlation-id");
    put_string(b, "cid");
    put_string(b, "label");
    put_string(b, "a label");
    put_string(b, "properties");
    pn_data_put_map(b);
    pn_data_enter(b);
    put_string(b, "color");
    put_string(b, "red");
    pn_data_exit(b);
    pn_data_exit(b);
    pn_data_exit(b);
}

static void fill_remove_rule(pn_data_t *b)
{
    put_string(b, "rule-name");
    put_string(b, "r1");
}

static void fill_enumerate_rules(pn_data_t *b)
{
    put_string(b, "top");
    pn_data_put_int(b, 10);
    put_string(b, "skip");
    pn_data_put_int(b, 0);
}

static void fill_session(pn_data_t *b)
{
    put_string(b, "session-id");
    put_string(b, "s1");
}

static void fill_set_state(pn_data_t *b)
{
    fill_session(b);
    put_string(b, "session-state");
    pn_data_put_binary(b, pn_bytes(5, "state"));
}

static void fill_sessions(pn_data_t *b)
{
    put_string(b, "last-updated-time");
    pn_data_put_timestamp(b, 0);
    put_string(b, "skip");
    pn_data_put_int(b, 0);
    put_string(b, "top");
    pn_data_put_int(b, 10);
}

static void scenario_send(const char *dir, const char *name, sasl_kind sasl, const uint8_t header[4])
{
    gen g;
    start(&g, sasl);
    put_token(&g);
    pn_link_t *s = attach(&g, true, "sender-q", "q", NULL);
    open_link(&g, s, 0);
    send_app(&g, s, 0, NULL, "m1", NULL, "{\"hello\":1}");
    close_link(&g, s);
    finish(&g, dir, name, header);
}

/* A message larger than the frame size the client asks for: a transfer in
 * several frames (more set), as large sends arrive. */
static void scenario_multiframe(const char *dir, const uint8_t header[4])
{
    gen g;
    start_framed(&g, SASL_ANONYMOUS, 1024);
    put_token(&g);
    pn_link_t *s = attach(&g, true, "sender-q", "q", NULL);
    open_link(&g, s, 0);
    char body[3000];
    memset(body, 'x', sizeof body - 1);
    body[sizeof body - 1] = 0;
    send_app(&g, s, 0, NULL, "big", NULL, body);
    finish(&g, dir, "send_multiframe", header);
}

static void scenario_receive(const char *dir, const uint8_t header[4])
{
    gen g;
    start(&g, SASL_ANONYMOUS);
    put_token(&g);
    pn_link_t *s = attach(&g, true, "sender-q", "q", NULL);
    open_link(&g, s, 0);
    send_app(&g, s, 0, NULL, "m1", NULL, "{\"hello\":1}");
    pn_link_t *r = attach(&g, false, "receiver-q", "q", NULL);
    open_link(&g, r, 8);
    static const uint64_t outcomes[] = {PN_ACCEPTED, PN_RELEASED, PN_MODIFIED, PN_REJECTED};
    settle_received(&g, r, outcomes, 4);
    pn_link_drain(r, 4);
    exchange(&g);
    settle_received(&g, r, outcomes, 4);
    pn_link_t *dlq = attach(&g, false, "receiver-dlq", "q/$DeadLetterQueue", NULL);
    pn_link_set_snd_settle_mode(dlq, PN_SND_SETTLED); /* receive-and-delete */
    open_link(&g, dlq, 2);
    close_link(&g, r);
    close_link(&g, dlq);
    close_link(&g, s);
    finish(&g, dir, "receive", header);
}

static void scenario_topic(const char *dir, const uint8_t header[4])
{
    gen g;
    start(&g, SASL_PLAIN);
    put_token(&g);
    pn_link_t *s = attach(&g, true, "sender-t", "t", NULL);
    open_link(&g, s, 0);
    for (int i = 0; i < 2; i++) {
        send_app(&g, s, 0, NULL, i ? "t2" : "t1", NULL, "topic body");
    }
    pn_link_t *r = attach(&g, false, "receiver-s", "t/Subscriptions/s", NULL);
    open_link(&g, r, 4);
    static const uint64_t accept[] = {PN_ACCEPTED};
    settle_received(&g, r, accept, 1);
    pn_link_t *fq = attach(&g, true, "sender-fq", "fq", NULL);
    open_link(&g, fq, 0);
    send_app(&g, fq, 0, NULL, "f1", NULL, "forwarded");
    finish(&g, dir, "topic", header);
}

static void scenario_mgmt(const char *dir, const uint8_t header[4])
{
    gen g;
    start(&g, NO_SASL);
    put_token(&g);
    pn_link_t *s = attach(&g, true, "mgmt-sender", "q/$management", NULL);
    pn_link_t *r = attach(&g, false, "mgmt-receiver", "q/$management", "mgmt-reply");
    open_link(&g, s, 0);
    open_link(&g, r, 50);
    mgmt(&g, s, "com.microsoft:peek-message", fill_peek, NULL);
    mgmt(&g, s, "com.microsoft:renew-lock", fill_renew, NULL);
    mgmt(&g, s, "com.microsoft:schedule-message", fill_schedule, NULL);
    mgmt(&g, s, "com.microsoft:cancel-scheduled-message", fill_cancel, NULL);
    mgmt(&g, s, "com.microsoft:receive-by-sequence-number", fill_receive_by_seq, NULL);
    mgmt(&g, s, "com.microsoft:update-disposition", fill_update_disposition, NULL);
    mgmt(&g, s, "com.microsoft:batch-delete-messages", fill_batch_delete, NULL);
    static const uint64_t accept[] = {PN_ACCEPTED};
    settle_received(&g, r, accept, 1);
    pn_link_t *ss = attach(&g, true, "sub-mgmt-sender", "t/Subscriptions/s/$management", NULL);
    open_link(&g, ss, 0);
    mgmt(&g, ss, "com.microsoft:add-rule", fill_add_rule, NULL);
    mgmt(&g, ss, "com.microsoft:add-rule", fill_add_correlation, NULL);
    mgmt(&g, ss, "com.microsoft:enumerate-rules", fill_enumerate_rules, NULL);
    mgmt(&g, ss, "com.microsoft:remove-rule", fill_remove_rule, NULL);
    finish(&g, dir, "management", header);
}

static void scenario_session(const char *dir, const uint8_t header[4])
{
    gen g;
    start(&g, SASL_ANONYMOUS);
    put_token(&g);
    pn_link_t *s = attach(&g, true, "sender-sq", "sq", NULL);
    open_link(&g, s, 0);
    send_app(&g, s, 0, NULL, "sm1", "s1", "in a session");
    pn_link_t *r = attach(&g, false, "session-receiver", "sq", NULL);
    pn_data_t *f = pn_terminus_filter(pn_link_source(r));
    pn_data_put_map(f);
    pn_data_enter(f);
    put_symbol(f, "com.microsoft:session-filter");
    pn_data_put_described(f);
    pn_data_enter(f);
    pn_data_put_ulong(f, 0x00000137000000CULL);
    put_string(f, "s1");
    pn_data_exit(f);
    pn_data_exit(f);
    pn_data_t *props = pn_link_properties(r);
    pn_data_put_map(props);
    pn_data_enter(props);
    put_symbol(props, "com.microsoft:timeout");
    pn_data_put_uint(props, 1000);
    pn_data_exit(props);
    open_link(&g, r, 5);
    static const uint64_t accept[] = {PN_ACCEPTED, PN_MODIFIED};
    settle_received(&g, r, accept, 2);
    pn_link_t *ms = attach(&g, true, "mgmt-sender", "sq/$management", NULL);
    pn_link_t *mr = attach(&g, false, "mgmt-receiver", "sq/$management", "mgmt-reply");
    open_link(&g, ms, 0);
    open_link(&g, mr, 20);
    mgmt(&g, ms, "com.microsoft:renew-session-lock", fill_session, NULL);
    mgmt(&g, ms, "com.microsoft:set-session-state", fill_set_state, NULL);
    mgmt(&g, ms, "com.microsoft:get-session-state", fill_session, NULL);
    mgmt(&g, ms, "com.microsoft:get-message-sessions", fill_sessions, NULL);
    close_link(&g, r);
    finish(&g, dir, "session", header);
}

/* The txn-id the coordinator declared (the first delivery's declared outcome). */
static pn_bytes_t declared_id(pn_delivery_t *d, char *buf, size_t n)
{
    pn_data_t *data = pn_disposition_data(pn_delivery_remote(d));
    pn_data_rewind(data);
    if (pn_data_next(data) && pn_data_type(data) == PN_LIST && pn_data_enter(data) && pn_data_next(data) &&
        pn_data_type(data) == PN_BINARY) {
        pn_bytes_t b = pn_data_get_binary(data);
        size_t len = b.size < n ? b.size : n;
        memcpy(buf, b.start, len);
        return pn_bytes(len, buf);
    }
    return pn_bytes(0, buf);
}

static void coordinator_msg(gen *g, pn_link_t *c, uint64_t descriptor, const pn_bytes_t *txn_id, bool fail,
                            pn_delivery_t **out)
{
    pn_message_t *m = pn_message();
    pn_data_t *b = pn_message_body(m);
    pn_data_put_described(b);
    pn_data_enter(b);
    pn_data_put_ulong(b, descriptor);
    pn_data_put_list(b);
    pn_data_enter(b);
    if (txn_id) {
        pn_data_put_binary(b, *txn_id);
        pn_data_put_bool(b, fail);
    }
    pn_data_exit(b);
    pn_data_exit(b);
    pn_delivery_t *d = send_msg(g, c, m, 0, NULL);
    if (out)
        *out = d;
    pn_message_free(m);
}

static void scenario_txn(const char *dir, const uint8_t header[4])
{
    gen g;
    start(&g, SASL_ANONYMOUS);
    put_token(&g);
    pn_link_t *c = pn_sender(g.ssn, "coordinator");
    pn_terminus_set_type(pn_link_target(c), PN_COORDINATOR);
    pn_data_t *caps = pn_terminus_capabilities(pn_link_target(c));
    pn_data_put_array(caps, false, PN_SYMBOL);
    pn_data_enter(caps);
    put_symbol(caps, "amqp:local-transactions");
    pn_data_exit(caps);
    open_link(&g, c, 0);
    pn_delivery_t *declare;
    coordinator_msg(&g, c, 0x31, NULL, false, &declare);
    char idbuf[64];
    pn_bytes_t id = declared_id(declare, idbuf, sizeof idbuf);
    pn_link_t *s = attach(&g, true, "sender-q", "q", NULL);
    open_link(&g, s, 0);
    send_app(&g, s, AMQP_TXN_STATE, &id, "tx1", NULL, "in a transaction");
    pn_link_t *r = attach(&g, false, "receiver-q", "q", NULL);
    open_link(&g, r, 2);
    pn_delivery_t *d;
    while ((d = pn_link_current(r)) && pn_delivery_readable(d)) {
        char sink[4096];
        while (pn_link_recv(r, sink, sizeof sink) > 0) {
        }
        pn_link_advance(r);
        pn_data_t *data = pn_disposition_data(pn_delivery_local(d));
        pn_data_put_list(data);
        pn_data_enter(data);
        pn_data_put_binary(data, id);
        pn_data_put_described(data);
        pn_data_enter(data);
        pn_data_put_ulong(data, 0x24); /* accepted */
        pn_data_put_list(data);
        pn_data_exit(data);
        pn_data_exit(data);
        pn_delivery_update(d, AMQP_TXN_STATE);
        pn_delivery_settle(d);
    }
    exchange(&g);
    coordinator_msg(&g, c, 0x32, &id, false, NULL);
    pn_delivery_t *again;
    coordinator_msg(&g, c, 0x31, NULL, false, &again);
    pn_bytes_t id2 = declared_id(again, idbuf, sizeof idbuf);
    coordinator_msg(&g, c, 0x32, &id2, true, NULL); /* rolled back */
    finish(&g, dir, "transaction", header);
}

static void log_line(ent_log_level level, const char *line)
{
    (void)level;
    fprintf(stderr, "  sbemu: %s\n", line);
}

static void mkdir_p(const char *path)
{
    if (mkdir(path, 0755) && errno != EEXIST)
        die(path);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s <corpus dir>\n", argv[0]);
        return 2;
    }
    char conn[1024], ws[1024];
    snprintf(conn, sizeof conn, "%s/connection", argv[1]);
    snprintf(ws, sizeof ws, "%s/ws_connection", argv[1]);
    if (getenv("SEEDGEN_LOG")) { /* what the server made of each stream */
        ent_log_set_sink(log_line);
        ent_log_set_level(ENT_LOG_DEBUG);
    }
    mkdir_p(conn);
    mkdir_p(ws);
    /* fuzz_connection's header: flags, store seed, where to cut, turns between pieces */
    static const uint8_t whole[4] = {0x10, 1, 0, 1};       /* entities loaded before */
    static const uint8_t cut_ws[4] = {0x01, 2, 0x5a, 2};   /* loaded as the first attach asks */
    static const uint8_t cut_errors[4] = {0x30, 3, 0x11, 1}; /* a quarter of store ops fail */
    scenario_send(conn, "send_plain", NO_SASL, whole);
    scenario_send(conn, "send_sasl_plain_ws", SASL_PLAIN, cut_ws);
    scenario_send(conn, "send_sasl_anonymous_errors", SASL_ANONYMOUS, cut_errors);
    scenario_multiframe(conn, whole);
    scenario_receive(conn, whole);
    scenario_topic(conn, cut_ws);
    scenario_mgmt(conn, whole);
    scenario_session(conn, whole);
    scenario_txn(conn, whole);
    (void)ws;
    return 0;
}
