/* See fake_lws.h. Each definition here has the signature of libwebsockets
 * 4.1's own, so a call from amqp10/ resolves to it at link time. */
#include "fake_lws.h"

#include <libwebsockets.h>
#include <stdint.h>

/* Distinct addresses for lws's opaque types: nobody looks inside them. */
static char fake_wsi, fake_vhost, fake_context;
static struct lws_protocols protocol; /* the AMQP binding's, with the run's server as its user */
static bool writable_wanted;
static size_t writes_left = SIZE_MAX;
static size_t written;
static void (*sink_fn)(void *ud, const unsigned char *bytes, size_t len);
static void *sink_ud;

struct lws *fake_lws_open(amqp_server *srv)
{
    protocol = (struct lws_protocols){.name = AMQP_RAW_PROTOCOL_NAME, .user = srv};
    writable_wanted = false;
    writes_left = SIZE_MAX;
    written = 0;
    return (struct lws *)&fake_wsi;
}

bool fake_lws_take_writable(void)
{
    bool w = writable_wanted;
    writable_wanted = false;
    return w;
}

void fake_lws_fail_writes_after(size_t writes) { writes_left = writes; }

size_t fake_lws_written(void) { return written; }

void fake_lws_set_sink(void (*sink)(void *ud, const unsigned char *bytes, size_t len), void *ud)
{
    sink_fn = sink;
    sink_ud = ud;
}

struct lws_vhost *lws_get_vhost(struct lws *wsi)
{
    (void)wsi;
    return (struct lws_vhost *)&fake_vhost;
}

const struct lws_protocols *lws_get_protocol(struct lws *wsi)
{
    return wsi == (struct lws *)&fake_wsi ? &protocol : NULL;
}

struct lws_context *lws_get_context(const struct lws *wsi)
{
    (void)wsi;
    return (struct lws_context *)&fake_context;
}

int lws_is_ssl(struct lws *wsi)
{
    (void)wsi;
    return 0;
}

void lws_set_timeout(struct lws *wsi, enum pending_timeout reason, int secs)
{
    (void)wsi, (void)reason, (void)secs;
}

int lws_callback_on_writable(struct lws *wsi)
{
    (void)wsi;
    writable_wanted = true;
    return 1;
}

int lws_write(struct lws *wsi, unsigned char *buf, size_t len, enum lws_write_protocol protocol)
{
    (void)wsi;
    if (!writes_left)
        return -1;
    if (writes_left != SIZE_MAX)
        writes_left--;
    /* a WebSocket write puts its frame header in the LWS_PRE bytes before buf:
     * they must be ours; a raw write adds nothing in front (lws-write.h) */
    volatile unsigned char first = len ? buf[0] : 0;
    if (protocol != LWS_WRITE_RAW) {
        volatile unsigned char pre = buf[-(int)LWS_PRE];
        (void)pre;
    }
    (void)first;
    written += len;
    if (sink_fn)
        sink_fn(sink_ud, buf, len);
    return (int)len;
}

/* Timers (the heartbeat tick) never fire: one run lasts far less than any
 * AMQP idle timeout, and the harness pumps the connection itself. */
void lws_sul_schedule(struct lws_context *ctx, int tsi, lws_sorted_usec_list_t *sul, sul_cb_t cb, lws_usec_t us)
{
    (void)ctx, (void)tsi, (void)sul, (void)cb, (void)us;
}

void lws_sul_cancel(lws_sorted_usec_list_t *sul) { (void)sul; }
