/* libFuzzer target for a whole AMQP connection as a client drives it: the
 * bytes it sends go through amqp_conn_bind (the frame guard, Proton's
 * connection driver) into our handlers (SASL, open, attach of senders,
 * receivers, $cbs, $management and the coordinator, transfers, flows,
 * dispositions, detach), with a fake store (fake_store.c: no PostgreSQL, the
 * outcomes chosen by the input) and a fake socket (fake_lws.c: no network;
 * this harness plays the binding, WRITEABLE included).
 *
 * Input: a header of FUZZ_HEADER bytes, then the client's byte stream.
 *   [0] flags: FLAG_WEBSOCKET   the WebSocket binding's write mode, the stream
 *                               cut as WebSocket messages arrive (any point)
 *              0x02             unused (every seed puts a valid SAS token on
 *                               $cbs first, signed with FUZZ_KEY)
 *              FLAG_WRITE_FAILS the socket breaks after a few writes
 *              FLAG_SMALL_MAX   --max-message-size of FUZZ_SMALL_MAX bytes
 *              FLAG_PRELOADED   the entity cache filled before the client comes
 *              bits 5-6         store errors: none, 1/8, 1/4 or 1/2 of operations
 *   [1] the store's PRNG seed  [2] where the stream is cut (0: not at all)
 *   [3] store turns between two pieces of the stream (0-3)
 * Seeds (corpus/connection) are real client streams that Proton's client
 * wrote to sbemu (seedgen_connection.c), behind such a header.
 *
 * Checked beyond "no crash, no leak" (ASan, UBSan, LSan): once the socket is
 * closed and the store has answered everything, the connection is freed. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "amqp_internal.h"
#include "fake_lws.h"
#include "fake_store.h"
#include "fuzz_check.h"

/* Longer streams only repeat frames; the guard's frame limit is far above. */
#define FUZZ_MAX_INPUT (512 * 1024)
#define FUZZ_HEADER 4
#define FLAG_WEBSOCKET 0x01
#define FLAG_WRITE_FAILS 0x04
#define FLAG_SMALL_MAX 0x08
#define FLAG_PRELOADED 0x10
#define FUZZ_SMALL_MAX 1024
/* Piece lengths when the stream is cut: 1 to this many bytes. */
#define FUZZ_PIECE_MAX 4096
/* Turns the store gets to settle down after the stream, and after the close:
 * every operation answers in one turn, and answers start new ones only while
 * a link has credit the claim budget (fake_store.c) has not used up. */
#define FUZZ_SETTLE_TURNS 64
#define FUZZ_KEY_NAME "RootManageSharedAccessKey"
#define FUZZ_KEY "fuzz-key"

typedef struct run {
    amqp_conn *slot; /* the binding's pointer to its connection (NULL once closed) */
    struct lws *wsi;
    enum lws_write_protocol mode;
} run;

static void close_socket(run *r) { amqp_conn_bind(&r->slot, AMQP_BIND_CLOSED, r->wsi, r->mode, NULL, 0); }

/* lws calls WRITEABLE as long as the connection asks; -1 closes the socket. */
static void drain_writes(run *r)
{
    while (r->slot && fake_lws_take_writable())
        if (amqp_conn_bind(&r->slot, AMQP_BIND_WRITEABLE, r->wsi, r->mode, NULL, 0) < 0)
            close_socket(r);
}

static void turns(run *r, store *st, int n)
{
    for (int i = 0; i < n && fake_store_pending(st); i++) {
        fake_store_turn(st);
        drain_writes(r);
    }
}

static uint32_t next_rand(uint32_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 17;
    *x ^= *x << 5;
    return *x;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < FUZZ_HEADER || size > FUZZ_MAX_INPUT)
        return 0;
    uint8_t flags = data[0];
    static const unsigned error_shifts[] = {0, 3, 2, 1};
    store *st = fake_store_new();
    CHECK(st);
    fake_store_reset(st, data[1] + 1u, error_shifts[(flags >> 5) & 3]);
    broker_settings settings = {
        .sas_key_name = FUZZ_KEY_NAME,
        .sas_key = FUZZ_KEY,
        .max_message_size = flags & FLAG_SMALL_MAX ? FUZZ_SMALL_MAX : 256 * 1024,
    };
    broker *b = broker_new(st, &settings);
    CHECK(b);
    amqp_server *srv = amqp_server_new(b, &(amqp_settings){.handshake_timeout_s = 60});
    CHECK(srv);
    run r = {.wsi = fake_lws_open(srv), .mode = flags & FLAG_WEBSOCKET ? LWS_WRITE_BINARY : LWS_WRITE_RAW};
    if (flags & FLAG_WRITE_FAILS)
        fake_lws_fail_writes_after(data[3] >> 2);
    if (flags & FLAG_PRELOADED) {
        broker_refresh_entities(b);
        turns(&r, st, 1);
    }

    CHECK(amqp_conn_bind(&r.slot, AMQP_BIND_OPENED, r.wsi, r.mode, NULL, 0) == 0 && r.slot);
    drain_writes(&r);

    const uint8_t *in = data + FUZZ_HEADER;
    size_t left = size - FUZZ_HEADER;
    uint32_t cut = data[2];
    int between = data[3] & 3;
    while (left && r.slot) {
        size_t n = left;
        if (cut)
            n = 1 + next_rand(&cut) % (next_rand(&cut) & 1 ? 16 : FUZZ_PIECE_MAX);
        if (n > left)
            n = left;
        if (amqp_conn_bind(&r.slot, AMQP_BIND_BYTES, r.wsi, r.mode, in, n) < 0)
            close_socket(&r);
        in += n;
        left -= n;
        drain_writes(&r);
        turns(&r, st, between);
    }
    turns(&r, st, FUZZ_SETTLE_TURNS);
    if (r.slot)
        close_socket(&r);
    turns(&r, st, FUZZ_SETTLE_TURNS);

    /* a connection lives until its socket is closed and no store operation refers to it */
    CHECK(fake_store_pending(st) == 0);
    CHECK(amqp_server_connection_count(srv) == 0);
    amqp_server_free(srv);
    broker_free(b);
    fake_store_free(st);
    return 0;
}
