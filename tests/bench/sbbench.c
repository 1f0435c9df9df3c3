/* sbbench: AMQP 1.0 throughput client for sbemu and peer brokers.
 *
 * One process, one thread, Proton-C's proactor. N connections share the work
 * (count/N each). Every connection first sets itself up (SASL, optionally a
 * CBS put-token, then the link on ADDRESS); the clock starts only when every
 * connection is ready, so connection and token set-up are not measured, and
 * stops when COUNT messages are done, over all connections.
 *
 * Receivers give each connection credit for its share only, but count
 * globally: a broker that sends more than the credit it was given (RabbitMQ
 * 3.x does now and then, rabbitmq-server#2597) would otherwise starve the other
 * connections. Messages beyond COUNT are released (peek-lock) or, having been
 * deleted by the broker already, dropped; the number beyond credit is noted
 * on stderr.
 *
 *   send            durable messages, the window of unsettled sends kept full;
 *                   a send counts when the broker's `accepted` arrives.
 *   receive         peek-lock: credit = window, each message settled `accepted`
 *                   (Service Bus "complete"). The link asks for
 *                   rcv-settle-mode second as the Service Bus SDKs do; if the
 *                   broker agrees, a complete counts when the broker's settled
 *                   disposition arrives (complete=confirmed), otherwise when the
 *                   client's settlement is sent (complete=sent). Brokers that
 *                   refuse mode second (RabbitMQ 3.10 ends the session) need
 *                   --rcv-settle-mode first.
 *   receive-delete  receive-and-delete: snd-settle-mode settled; a message
 *                   counts on arrival.
 *   receive-session peek-lock from a queue that requires sessions, as the SDKs'
 *                   next-available session receiver does: a link whose source
 *                   filter is {com.microsoft:session-filter: null}; the broker
 *                   answers the attach once it has locked a session. The link
 *                   takes that session's count/SESSIONS messages (credit never
 *                   beyond them: a session is emptied before moving on),
 *                   completes each as `receive` does, closes once the last
 *                   complete is confirmed and attaches the next session. The
 *                   first attach is set-up; every later one is measured.
 *                   A second line (stderr) splits a session's time into its
 *                   four waits, each a mean over the sessions: the attach's
 *                   answer (the broker locking a session), its messages, the
 *                   last complete's confirmation after the last message came,
 *                   and the detach's answer.
 *   connect         idle connections: opens --connections N (up to --window at
 *                   once, 200 unless given; as each is ready the next starts) and
 *                   measures from the first connect until all are ready. Ready:
 *                   the broker answered the AMQP open, or with --sas-key its CBS
 *                   put-token was accepted (the session and the two $cbs links
 *                   stay attached, as an SDK's do). Then it prints the result
 *                   and "connect: all N open", holds the connections until stdin
 *                   is closed (at once if it is already) or SIGTERM/SIGINT, closes
 *                   them and exits 0. --timeout bounds the whole run, the hold
 *                   included. The line's count is the connections opened and
 *                   its rate connections per second, with ms= the time in ms.
 *   soak            sends and peek-lock receives together on one queue for
 *                   --duration seconds: connection 0 sends at --rate messages
 *                   per second (0: as fast as the window allows), connection 1
 *                   receives with credit = window and completes each message.
 *                   Every --report-every seconds (60) one line: the rates of
 *                   accepted sends and of confirmed completes, p50/p99 of the
 *                   send latency (send handed to Proton -> accepted) and of the
 *                   complete latency (complete sent -> the broker's settled
 *                   disposition), and how many accepted messages are not yet
 *                   completed; then a total line. --count is not used. Pacing,
 *                   latencies and the lines are in sbbench_soak.c.
 *
 * Options for sbemu's sessions and transactions (the SDKs' ways):
 *   --sessions N    send: message i of the run gets group-id (SessionId)
 *                   s<i % N>, 8 digits ("s00000042"), so N sessions of count/N
 *                   messages each; receive-session: the N sessions to empty.
 *   --txn-batch K   one transaction at a time per connection: declare on a
 *                   coordinator link, K sends with transactional-state (the
 *                   window applies within them), discharge once all K are
 *                   answered; the K sends count when the discharge is accepted.
 *
 * Output: one line, `LABEL mode=.. count=.. size=.. conns=.. window=..
 * [sessions=..] [txn-batch=..] [complete=..] secs=.. rate=N msg/s`.
 * Exit status: 0 done, 1 protocol error (reason on stderr), 2 timeout (the line
 * shows what was done; connect: also a SIGTERM before all were open), 3 bad usage.
 *
 * The open-files limit is raised to its hard limit at start (connect: N
 * connections take N descriptors).
 *
 * Build: cc -O2 -Wall -Wextra -o sbbench sbbench.c sbbench_soak.c \
 *          -pthread $(pkg-config --cflags --libs libqpid-proton libcrypto) */
#define _GNU_SOURCE /* memmem */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <proton/condition.h>
#include <proton/connection.h>
#include <proton/delivery.h>
#include <proton/disposition.h>
#include <proton/event.h>
#include <proton/link.h>
#include <proton/message.h>
#include <proton/proactor.h>
#include <proton/sasl.h>
#include <proton/session.h>
#include <proton/terminus.h>
#include <proton/transport.h>

#include "sbbench_soak.h"

enum exit_code { EXIT_OK = 0, EXIT_PROTOCOL = 1, EXIT_TIMEOUT = 2, EXIT_USAGE = 3 };
enum mode { MODE_SEND, MODE_RECEIVE, MODE_RECEIVE_DELETE, MODE_RECEIVE_SESSION, MODE_CONNECT, MODE_SOAK };
/* connect: why the hold ends (set by the watcher thread). */
enum stop_reason { STOP_NONE, STOP_EOF, STOP_SIGNAL };
/* A connection's transaction, one at a time (--txn-batch). */
enum txn_phase { TXN_IDLE, TXN_DECLARING, TXN_OPEN, TXN_DISCHARGING };

#define DEFAULT_URL         "amqp://127.0.0.1:5672"
#define DEFAULT_PORT        "5672"
#define DEFAULT_COUNT       10000
#define DEFAULT_SIZE        1024
#define DEFAULT_WINDOW      1000
#define DEFAULT_TIMEOUT_S   120
#define DEFAULT_SAS_KEYNAME "RootManageSharedAccessKey"
#define MAX_CONNECTIONS     1000
#define MAX_IDLE_CONNECTIONS 1000000     /* --mode connect: the fd limit is the real bound */
#define CONNECT_IN_FLIGHT   200          /* connect: connections being opened at once */
#define FD_RESERVE          32           /* descriptors besides the connections' */
#define CLOSE_GRACE_MS      30000        /* connect: how long closing may take */
#define MAX_SIZE            (64 * 1024 * 1024)
#define MAX_WINDOW          1000000
#define MAX_TIMEOUT_S       86400
#define TOKEN_TTL_S         3600         /* what the JS and Python SDKs ask for */
#define CBS_NODE            "$cbs"
#define CBS_TOKEN_TYPE      "servicebus.windows.net:sastoken"
#define CBS_REPLY_MAX       65536        /* a put-token reply is a few hundred bytes */
#define MSG_OVERHEAD        256          /* header + properties around the body */
#define HOST_MAX            256
#define TEXT_MAX            1024
#define ID_HEX_LEN          28           /* 8 run + 4 connection + 16 sequence */
#define RECV_CHUNK          65536
#define STATUS_ACCEPTED     202          /* .NET accepts 200 and 202 from $cbs */
#define STATUS_OK           200
#define MAX_SESSIONS        99999999     /* fits SESSION_ID_DIGITS */
#define SESSION_ID_DIGITS   8            /* "s00000042": fixed width, patched in place */
#define SESSION_FILTER      "com.microsoft:session-filter"
#define LINK_TIMEOUT        "com.microsoft:timeout"
#define SESSION_WAIT_MS     10000        /* how long the broker may look for a free session */
#define MAX_TXN_BATCH       100          /* Service Bus: 100 operations per transaction */
#define TXN_CAPABILITY      "amqp:local-transactions"
#define TXN_DECLARE         0x31         /* AMQP 1.0 part 4: declare, discharge, */
#define TXN_DISCHARGE       0x32         /* declared, transactional-state */
#define TXN_DECLARED        0x33
#define TXN_STATE           0x34
#define TXN_ID_MAX          32           /* sbemu's are 8 bytes; AMQP allows 32 */
#define CONTROL_MAX         128          /* an encoded declare or discharge */
#define SOAK_CONNECTIONS    2            /* soak: connection 0 sends, 1 receives */
#define SOAK_SENDER         0
#define DEFAULT_REPORT_S    60           /* soak: a line per minute */
#define MAX_RATE            10000000     /* soak: messages per second */

/* soak keeps when a send or a complete went out in its delivery's context. */
_Static_assert(UINTPTR_MAX >= UINT64_MAX, "a delivery's context must hold a 64-bit time");

struct options {
    const char *url, *address, *label;
    const char *sas_key_name, *sas_key;
    const char *user, *password;
    enum mode mode;
    pn_rcv_settle_mode_t peek_lock_settle;
    uint64_t count;
    size_t size;
    int window, connections, timeout_s;
    bool window_given;
    int sessions;   /* send: group-ids s0..s<N-1>; receive-session: sessions to empty */
    int txn_batch;  /* send: sends per transaction, 0 = none */
    long rate;      /* soak: sends per second, 0 = unthrottled */
    int duration_s, report_every_s;  /* soak */
    char host[HOST_MAX], port[HOST_MAX];
};

/* One AMQP connection and its share of the work. Owned by the bench's array;
 * the Proton objects belong to the proactor, which frees them. */
struct conn {
    int index;
    pn_connection_t *pn;
    pn_session_t *session;
    pn_link_t *cbs_sender, *cbs_reply, *work;
    pn_link_t *coordinator;    /* --txn-batch */
    char cbs_reply_addr[64];
    bool token_sent, ready, kicked, closing, closed;
    bool confirmed;        /* peek-lock: broker echoed rcv-settle-mode second */
    bool work_attached, coordinator_attached;
    uint64_t target;       /* this connection's share of --count */
    uint64_t first;        /* send: global index of this connection's first message */
    uint64_t sent, acked;  /* send */
    uint64_t granted, arrived; /* receive: credit issued so far, messages come */
    /* receive-session: the session the work link holds */
    unsigned session_links;    /* links opened so far, to name each apart */
    uint64_t session_granted, session_done;
    uint64_t session_mark_ns;  /* when the session's current wait began (session_waits) */
    /* send --txn-batch: the transaction under way */
    enum txn_phase txn_phase;
    char txn_id[TXN_ID_MAX];
    size_t txn_id_len;
    uint64_t txn_size, txn_sent, txn_answered, control_tag;
    char cbs_buf[CBS_REPLY_MAX];
    size_t cbs_len;
};

static struct options opt;
static struct conn *conns;
static pn_proactor_t *proactor;
static int n_ready, n_closed;
static bool started, finished;
static uint64_t n_done;      /* sends accepted, or messages received and completed */
static uint64_t n_pending;   /* peek-lock completes sent, the broker's answer not yet in */
static uint64_t n_overrun;   /* messages the broker sent beyond the credit given */
static struct timespec t_launch, t_start, t_end;
static char *msg_buf;     /* the encoded message, its id patched before each send */
static size_t msg_len, msg_id_offset;
static size_t msg_group_offset;  /* --sessions: where the group-id digits are */
static uint64_t per_session;     /* receive-session: messages in each session */
/* receive-session: where a session's time goes, summed over the sessions
 * (print_session_waits); a wait ends where the next begins. */
enum session_wait { WAIT_ATTACH, WAIT_MESSAGES, WAIT_LAST_COMPLETE, WAIT_DETACH, SESSION_WAITS };
static uint64_t session_wait_ns[SESSION_WAITS], session_wait_n[SESSION_WAITS];
static uint32_t run_nonce;
static char recv_scratch[RECV_CHUNK];
static char broker_addr[2 * HOST_MAX];
static int n_launched;           /* connections handed to the proactor */
static bool result_printed;
/* connect: every connection ready (the clock stopped at t_end), and the hold's end */
static bool all_open, stop_pending;
static _Atomic int stop_reason = STOP_NONE;

static const char *mode_name(enum mode m)
{
    switch (m) {
    case MODE_SEND: return "send";
    case MODE_RECEIVE: return "receive";
    case MODE_RECEIVE_DELETE: return "receive-delete";
    case MODE_RECEIVE_SESSION: return "receive-session";
    case MODE_CONNECT: return "connect";
    case MODE_SOAK: return "soak";
    }
    return "?";
}

static bool peek_lock(void)
{
    return opt.mode == MODE_RECEIVE || opt.mode == MODE_RECEIVE_SESSION || opt.mode == MODE_SOAK;
}

/* Whether this connection's work link sends (soak: connection 0 sends, the other receives). */
static bool conn_sends(const struct conn *c)
{
    return opt.mode == MODE_SEND || (opt.mode == MODE_SOAK && c->index == SOAK_SENDER);
}

static double elapsed(const struct timespec *a, const struct timespec *b)
{
    return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

/* CPU seconds this client has used (user + system, every thread): run.sh
 * adds it to the broker's and PostgreSQL's to say what a message costs the
 * machine, client included, since all three share its cores. */
static double own_cpu_secs(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0.0;
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* The one result line; cut short (note given), it reports what was done until then. */
static void print_result(const char *note)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    result_printed = true;
    if (opt.mode == MODE_CONNECT) {
        /* count: connections ready; rate: of them per second since the first connect */
        double secs = elapsed(&t_start, all_open ? &t_end : &now);
        printf("%s mode=connect count=%d size=0 conns=%d window=%d secs=%.3f ms=%.0f rate=%.0f conn/s",
               opt.label, n_ready, opt.connections, opt.window, secs, secs * 1000,
               secs > 0 ? n_ready / secs : 0.0);
        if (note)
            printf(" %s after %.0f s (wanted %d)", note, elapsed(&t_launch, &now), opt.connections);
        printf("\n");
        fflush(stdout);
        return;
    }
    if (opt.mode == MODE_SOAK) {
        soak_print_total(soak_now_ns(), opt.window, note);
        return;
    }
    const struct timespec *end = finished ? &t_end : &now;
    double secs = started ? elapsed(&t_start, end) : 0.0;
    uint64_t done = n_done;
    const char *complete = "";
    char extra[64] = "";
    if (opt.sessions > 0)
        snprintf(extra, sizeof extra, " sessions=%d", opt.sessions);
    if (opt.txn_batch > 0)
        snprintf(extra + strlen(extra), sizeof extra - strlen(extra), " txn-batch=%d", opt.txn_batch);
    if (peek_lock()) {
        int confirmed = 0;
        for (int i = 0; i < opt.connections; i++)
            confirmed += conns[i].confirmed;
        complete = confirmed == opt.connections ? " complete=confirmed"
                 : confirmed == 0 ? " complete=sent" : " complete=mixed";
    }
    printf("%s mode=%s count=%" PRIu64 " size=%zu conns=%d window=%d%s%s secs=%.3f rate=%.0f msg/s cpu=%.3f",
           opt.label, mode_name(opt.mode), done, opt.size, opt.connections, opt.window, extra, complete,
           secs, secs > 0 ? (double)done / secs : 0.0, own_cpu_secs());
    if (note)
        printf(" %s after %.0f s (wanted %" PRIu64 ")", note, elapsed(&t_launch, &now), opt.count);
    printf("\n");
    fflush(stdout);
}

/* Wait w of c's session ended now (and the next one began). */
static void session_wait_ends(struct conn *c, enum session_wait w)
{
    uint64_t now = soak_now_ns(); /* (the monotonic clock the soak reads too) */
    if (c->session_mark_ns) {
        session_wait_ns[w] += now - c->session_mark_ns;
        session_wait_n[w]++;
    }
    c->session_mark_ns = now;
}

static void print_session_waits(void)
{
    if (opt.mode != MODE_RECEIVE_SESSION || !session_wait_n[WAIT_ATTACH])
        return;
    double us[SESSION_WAITS];
    for (int w = 0; w < SESSION_WAITS; w++)
        us[w] = session_wait_n[w] ? session_wait_ns[w] / 1000.0 / session_wait_n[w] : 0.0;
    fprintf(stderr,
            "sbbench: %s: a session's waits (mean us): attach answered %.0f, its messages %.0f,"
            " last complete confirmed %.0f, detach answered %.0f (%" PRIu64 " sessions)\n",
            opt.label, us[WAIT_ATTACH], us[WAIT_MESSAGES], us[WAIT_LAST_COMPLETE], us[WAIT_DETACH],
            session_wait_n[WAIT_ATTACH]);
}

/* What the run's result line does not say, on stderr. */
static void print_notes(void)
{
    if (n_overrun > 0)
        fprintf(stderr, "sbbench: %s: note: the broker sent %" PRIu64 " messages beyond the credit given\n",
                opt.label, n_overrun);
    print_session_waits();
}

static void die(enum exit_code code, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "sbbench: %s: ", opt.label ? opt.label : "");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    exit(code);
}

/* A protocol failure: say why, show how far the run got, stop. */
static void fail(const char *fmt, ...)
{
    char why[TEXT_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    fprintf(stderr, "sbbench: %s: error: %s\n", opt.label, why);
    if (started && !result_printed)
        print_result("FAILED");
    exit(EXIT_PROTOCOL);
}

static const char *cond_text(pn_condition_t *c, char *buf, size_t cap)
{
    if (!c || !pn_condition_is_set(c))
        return "(no condition)";
    snprintf(buf, cap, "%s: %s", pn_condition_get_name(c),
             pn_condition_get_description(c) ? pn_condition_get_description(c) : "");
    return buf;
}

/* ---- SAS token (what the SDKs put on $cbs) ---- */

/* quote_plus, as the Python SDK encodes; the emulator signs sr as it appears. */
static void url_encode(const char *in, size_t in_len, char *out, size_t cap)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t o = 0;
    for (size_t i = 0; i < in_len && o + 4 < cap; i++) {
        unsigned char ch = (unsigned char)in[i];
        if ((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
            ch == '-' || ch == '_' || ch == '.' || ch == '~') {
            out[o++] = (char)ch;
        } else if (ch == ' ') {
            out[o++] = '+';
        } else {
            out[o++] = '%';
            out[o++] = hex[ch >> 4];
            out[o++] = hex[ch & 15];
        }
    }
    out[o] = '\0';
}

static void sas_token(const char *audience, char *out, size_t cap)
{
    char sr[TEXT_MAX], to_sign[TEXT_MAX], sig_enc[TEXT_MAX], skn[TEXT_MAX];
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned char b64[4 * ((EVP_MAX_MD_SIZE + 2) / 3) + 1];
    unsigned int mac_len = 0;
    long expiry = (long)time(NULL) + TOKEN_TTL_S;

    url_encode(audience, strlen(audience), sr, sizeof sr);
    int n = snprintf(to_sign, sizeof to_sign, "%s\n%ld", sr, expiry);
    /* The key is the UTF-8 text of the SharedAccessKey, not its base64 decoding. */
    if (!HMAC(EVP_sha256(), opt.sas_key, (int)strlen(opt.sas_key), (const unsigned char *)to_sign,
              (size_t)n, mac, &mac_len))
        die(EXIT_USAGE, "HMAC-SHA256 failed");
    int b64_len = EVP_EncodeBlock(b64, mac, (int)mac_len);
    url_encode((const char *)b64, (size_t)b64_len, sig_enc, sizeof sig_enc);
    url_encode(opt.sas_key_name, strlen(opt.sas_key_name), skn, sizeof skn);
    snprintf(out, cap, "SharedAccessSignature sr=%s&sig=%s&se=%ld&skn=%s", sr, sig_enc, expiry, skn);
}

static void put_string_pair(pn_data_t *d, const char *key, const char *value)
{
    pn_data_put_string(d, pn_bytes(strlen(key), key));
    pn_data_put_string(d, pn_bytes(strlen(value), value));
}

static void send_put_token(struct conn *c)
{
    char audience[TEXT_MAX], token[4 * TEXT_MAX], id[64];
    char buf[8 * TEXT_MAX];
    size_t len = sizeof buf;
    snprintf(audience, sizeof audience, "sb://%s/%s", opt.host, opt.address);
    sas_token(audience, token, sizeof token);
    snprintf(id, sizeof id, "sbbench-put-token-%d", c->index);

    pn_message_t *m = pn_message();
    pn_msgid_t mid = {.type = PN_STRING, .u.as_bytes = pn_bytes(strlen(id), id)};
    pn_message_set_id(m, mid);
    pn_message_set_reply_to(m, c->cbs_reply_addr);
    pn_data_t *props = pn_message_properties(m);
    pn_data_put_map(props);
    pn_data_enter(props);
    put_string_pair(props, "operation", "put-token");
    put_string_pair(props, "type", CBS_TOKEN_TYPE);
    put_string_pair(props, "name", audience);
    pn_data_exit(props);
    pn_data_put_string(pn_message_body(m), pn_bytes(strlen(token), token));
    if (pn_message_encode(m, buf, &len) != 0)
        die(EXIT_USAGE, "cannot encode the put-token request");
    pn_message_free(m);

    pn_delivery(c->cbs_sender, pn_dtag("t", 1));
    pn_link_send(c->cbs_sender, buf, len);
    pn_link_advance(c->cbs_sender);
    c->token_sent = true;
}

/* Reads status-code (and status-description) from the put-token reply. */
static void check_put_token_reply(struct conn *c)
{
    pn_message_t *m = pn_message();
    if (pn_message_decode(m, c->cbs_buf, c->cbs_len) != 0)
        fail("connection %d: undecodable $cbs reply", c->index);
    long code = -1;
    char desc[TEXT_MAX] = "";
    pn_data_t *p = pn_message_properties(m);
    pn_data_rewind(p);
    if (pn_data_next(p) && pn_data_type(p) == PN_MAP) {
        pn_data_enter(p);
        while (pn_data_next(p)) {
            pn_bytes_t key = pn_data_type(p) == PN_STRING ? pn_data_get_string(p) : pn_bytes(0, NULL);
            if (!pn_data_next(p))
                break;
            bool is_code = key.size == 11 && memcmp(key.start, "status-code", 11) == 0;
            bool is_desc = key.size == 18 && memcmp(key.start, "status-description", 18) == 0;
            if (is_code) {
                switch (pn_data_type(p)) {
                case PN_INT: code = pn_data_get_int(p); break;
                case PN_LONG: code = (long)pn_data_get_long(p); break;
                case PN_UINT: code = (long)pn_data_get_uint(p); break;
                case PN_ULONG: code = (long)pn_data_get_ulong(p); break;
                case PN_SHORT: code = pn_data_get_short(p); break;
                case PN_USHORT: code = pn_data_get_ushort(p); break;
                default: break;
                }
            } else if (is_desc && pn_data_type(p) == PN_STRING) {
                pn_bytes_t s = pn_data_get_string(p);
                snprintf(desc, sizeof desc, "%.*s", (int)s.size, s.start);
            }
        }
    }
    pn_message_free(m);
    if (code != STATUS_ACCEPTED && code != STATUS_OK)
        fail("connection %d: put-token refused: status-code %ld %s", c->index, code, desc);
}

/* ---- the measured work ---- */

/* Next available session, as the SDKs ask: a null session-filter lets the
 * broker pick one, and com.microsoft:timeout (ms) bounds how long it looks
 * before it refuses the attach (which fails the run: a session was missing). */
static void ask_for_a_session(pn_link_t *l)
{
    pn_data_t *f = pn_terminus_filter(pn_link_source(l));
    pn_data_put_map(f);
    pn_data_enter(f);
    pn_data_put_symbol(f, pn_bytes(strlen(SESSION_FILTER), SESSION_FILTER));
    pn_data_put_null(f);
    pn_data_exit(f);
    pn_data_t *p = pn_link_properties(l);
    pn_data_put_map(p);
    pn_data_enter(p);
    pn_data_put_symbol(p, pn_bytes(strlen(LINK_TIMEOUT), LINK_TIMEOUT));
    pn_data_put_uint(p, SESSION_WAIT_MS);
    pn_data_exit(p);
}

static void open_work_link(struct conn *c)
{
    char name[64];
    if (opt.mode == MODE_RECEIVE_SESSION)  /* a link per session, each named apart */
        snprintf(name, sizeof name, "sbbench-%s-%d-%u", mode_name(opt.mode), c->index, c->session_links++);
    else
        snprintf(name, sizeof name, "sbbench-%s-%d", mode_name(opt.mode), c->index);
    c->work_attached = false;
    if (conn_sends(c)) {
        c->work = pn_sender(c->session, name);
        pn_terminus_set_address(pn_link_target(c->work), opt.address);
    } else {
        c->work = pn_receiver(c->session, name);
        pn_terminus_set_address(pn_link_source(c->work), opt.address);
        pn_terminus_set_address(pn_link_target(c->work), name);
        if (peek_lock()) {
            /* What the SDKs ask for in peek-lock: the broker confirms each settlement. */
            pn_link_set_snd_settle_mode(c->work, PN_SND_UNSETTLED);
            pn_link_set_rcv_settle_mode(c->work, opt.peek_lock_settle);
        } else {
            /* Receive-and-delete in Service Bus is a source that sends settled. */
            pn_link_set_snd_settle_mode(c->work, PN_SND_SETTLED);
            pn_link_set_rcv_settle_mode(c->work, PN_RCV_FIRST);
        }
        if (opt.mode == MODE_RECEIVE_SESSION) {
            ask_for_a_session(c->work);
            c->session_granted = c->session_done = 0;
            c->session_mark_ns = soak_now_ns(); /* (the first attach, before the clock starts, counts too) */
        }
    }
    pn_link_open(c->work);
}

/* The transaction controller, as .NET attaches it: a sender whose target is
 * a coordinator offering local transactions. */
static void open_coordinator(struct conn *c)
{
    char name[64];
    snprintf(name, sizeof name, "sbbench-txn-%d", c->index);
    c->coordinator = pn_sender(c->session, name);
    pn_terminus_t *t = pn_link_target(c->coordinator);
    pn_terminus_set_type(t, PN_COORDINATOR);
    pn_data_t *caps = pn_terminus_capabilities(t);
    pn_data_put_array(caps, false, PN_SYMBOL);
    pn_data_enter(caps);
    pn_data_put_symbol(caps, pn_bytes(strlen(TXN_CAPABILITY), TXN_CAPABILITY));
    pn_data_exit(caps);
    pn_link_open(c->coordinator);
}

static void open_links(struct conn *c)
{
    open_work_link(c);
    if (opt.txn_batch > 0)
        open_coordinator(c);
}

/* COUNT messages are done: stop the clock, print, and have every connection
 * close itself (from its own batch, see start_run). */
static void finish(void)
{
    clock_gettime(CLOCK_MONOTONIC, &t_end);
    finished = true;
    print_result(NULL);
    for (int i = 0; i < opt.connections; i++)
        pn_connection_wake(conns[i].pn);
    if (opt.mode == MODE_SOAK)  /* the ticks stop; closing may take this long */
        pn_proactor_set_timeout(proactor, CLOSE_GRACE_MS);
}

/* n more done: a transaction's sends all count at once, when it commits. */
static void count_done(uint64_t n)
{
    n_done += n;
    if (!finished && n_done >= opt.count)
        finish();
}

/* The session is empty, its last complete confirmed: detach so the broker
 * lets it go. The next is asked for once the broker has answered (Proton
 * would write a new attach before this detach), as an SDK awaits a session
 * receiver's close before accepting the next session. */
static void let_session_go(struct conn *c)
{
    session_wait_ends(c, WAIT_LAST_COMPLETE);
    c->work_attached = false;
    pn_link_close(c->work);
}

/* The broker answered our detach: the next session, while this connection's
 * share lasts. */
static void on_session_gone(struct conn *c)
{
    session_wait_ends(c, WAIT_DETACH);
    pn_link_free(c->work);
    c->work = NULL;
    if (!finished && c->granted < c->target)
        open_work_link(c);
}

/* A message received and completed: the complete confirmed (complete_ns:
 * when it was sent), or counted when sent (0). */
static void receive_done(struct conn *c, uint64_t complete_ns)
{
    if (opt.mode == MODE_SOAK) {
        soak_completed(complete_ns, soak_now_ns());
        return;
    }
    count_done(1);
    if (opt.mode == MODE_RECEIVE_SESSION && ++c->session_done == per_session)
        let_session_go(c);
}

static const char *state_name(uint64_t state)
{
    switch (state) {
    case 0: return "nothing";
    case TXN_DECLARED: return "declared";
    case TXN_STATE: return "transactional-state";
    default: return pn_disposition_type_name(state);
    }
}

/* A disposition's fields (Proton keeps those of the states it does not know,
 * declared and transactional-state, as a list): positioned on the first. */
static bool first_field(pn_data_t *data)
{
    pn_data_rewind(data);
    if (!pn_data_next(data) || pn_data_type(data) != PN_LIST)
        return false;
    pn_data_enter(data);
    return pn_data_next(data);
}

/* declared {txn-id}: keeps the id for the sends and the discharge. */
static bool read_txn_id(struct conn *c, pn_data_t *data)
{
    bool ok = first_field(data) && pn_data_type(data) == PN_BINARY;
    if (ok) {
        pn_bytes_t id = pn_data_get_binary(data);
        ok = id.size > 0 && id.size <= sizeof c->txn_id;
        if (ok) {
            memcpy(c->txn_id, id.start, id.size);
            c->txn_id_len = id.size;
        }
    }
    pn_data_rewind(data);
    return ok;
}

/* transactional-state {txn-id, outcome}: the outcome's descriptor, 0 if none. */
static uint64_t txn_outcome(pn_data_t *data)
{
    uint64_t code = 0;
    if (first_field(data) && pn_data_next(data) && pn_data_type(data) == PN_DESCRIBED) {
        pn_data_enter(data);
        if (pn_data_next(data) && pn_data_type(data) == PN_ULONG)
            code = pn_data_get_ulong(data);
    }
    pn_data_rewind(data);
    return code;
}

/* declare = described(0x31, []), discharge = described(0x32, [txn-id, false]),
 * each the amqp-value body of a message on the coordinator link. */
static void send_control(struct conn *c, uint64_t code)
{
    char buf[CONTROL_MAX];
    size_t len = sizeof buf;
    pn_message_t *m = pn_message();
    pn_data_t *b = pn_message_body(m);
    pn_data_put_described(b);
    pn_data_enter(b);
    pn_data_put_ulong(b, code);
    pn_data_put_list(b);
    if (code == TXN_DISCHARGE) {
        pn_data_enter(b);
        pn_data_put_binary(b, pn_bytes(c->txn_id_len, c->txn_id));
        pn_data_put_bool(b, false);  /* fail=false: commit */
        pn_data_exit(b);
    }
    pn_data_exit(b);
    if (pn_message_encode(m, buf, &len) != 0)
        fail("connection %d: cannot encode a transaction control message", c->index);
    pn_message_free(m);
    uint64_t tag = c->control_tag++;
    pn_delivery(c->coordinator, pn_dtag((const char *)&tag, sizeof tag));
    if (pn_link_send(c->coordinator, buf, len) < 0)
        fail("connection %d: pn_link_send failed on the coordinator", c->index);
    pn_link_advance(c->coordinator);
}

/* Moves this connection's transaction on: declare when none is open and work
 * is left, discharge once every send in it is answered. Without coordinator
 * credit yet, its flow event calls again. */
static void txn_step(struct conn *c)
{
    if (finished || pn_link_credit(c->coordinator) <= 0)
        return;
    if (c->txn_phase == TXN_IDLE && c->acked < c->target) {
        send_control(c, TXN_DECLARE);
        c->txn_phase = TXN_DECLARING;
    } else if (c->txn_phase == TXN_OPEN && c->txn_answered == c->txn_size) {
        send_control(c, TXN_DISCHARGE);
        c->txn_phase = TXN_DISCHARGING;
    }
}

/* The send joins the transaction: transactional-state {txn-id} as the
 * transfer's state. Proton writes the transfer frame later, when the batch is
 * processed, with the delivery's local state in it. */
static void join_txn(struct conn *c, pn_delivery_t *d)
{
    pn_data_t *s = pn_disposition_data(pn_delivery_local(d));
    pn_data_clear(s);
    pn_data_put_list(s);
    pn_data_enter(s);
    pn_data_put_binary(s, pn_bytes(c->txn_id_len, c->txn_id));
    pn_data_exit(s);
    pn_delivery_update(d, TXN_STATE);
}

/* due: how many sends this connection may have made by now (soak's pacing). */
static bool may_send(struct conn *c, uint64_t due)
{
    if (c->sent >= c->target || c->sent >= due || c->sent - c->acked >= (uint64_t)opt.window)
        return false;
    return opt.txn_batch == 0 || (c->txn_phase == TXN_OPEN && c->txn_sent < c->txn_size);
}

static void pump_sends(struct conn *c)
{
    char id[ID_HEX_LEN + 1], group[32];
    pn_link_t *l = c->work;
    uint64_t now_ns = opt.mode == MODE_SOAK ? soak_now_ns() : 0;
    uint64_t due = opt.mode == MODE_SOAK ? soak_due(now_ns) : UINT64_MAX;
    while (pn_link_credit(l) > 0 && may_send(c, due)) {
        uint64_t tag = c->sent;
        /* A fresh message-id per send, as the SDKs set one, patched in place so
         * the body is encoded once. */
        snprintf(id, sizeof id, "%08" PRIx32 "%04x%016" PRIx64, run_nonce, (unsigned)c->index, tag);
        memcpy(msg_buf + msg_id_offset, id, ID_HEX_LEN);
        if (opt.sessions > 0) {
            /* Round robin by global index: each session gets count/SESSIONS. */
            unsigned k = (unsigned)((c->first + c->sent) % (uint64_t)opt.sessions);
            snprintf(group, sizeof group, "%0*u", SESSION_ID_DIGITS, k);
            memcpy(msg_buf + msg_group_offset, group, SESSION_ID_DIGITS);
        }
        pn_delivery_t *d = pn_delivery(l, pn_dtag((const char *)&tag, sizeof tag));
        if (pn_link_send(l, msg_buf, msg_len) < 0)
            fail("connection %d: pn_link_send failed", c->index);
        if (opt.txn_batch > 0) {
            join_txn(c, d);
            c->txn_sent++;
        }
        if (opt.mode == MODE_SOAK)
            pn_delivery_set_context(d, (void *)(uintptr_t)now_ns);
        pn_link_advance(l);
        c->sent++;
    }
}

/* Keeps the receiver's credit near the window, but never asks for more than
 * this connection's share: extra credit would take messages the next run needs
 * (and, in receive-and-delete, lose them). Topping up at half the window lets
 * the broker claim messages in batches rather than one by one. A session link
 * gets no more than its session holds, so the session is emptied (and let go)
 * before the next is asked for. */
static void top_up_credit(struct conn *c)
{
    if (!c->work_attached)  /* a session link still waiting for its session */
        return;
    int credit = pn_link_credit(c->work);
    if (credit > opt.window / 2)
        return;
    uint64_t room = c->target - c->granted;
    if (opt.mode == MODE_RECEIVE_SESSION && per_session - c->session_granted < room)
        room = per_session - c->session_granted;
    uint64_t add = (uint64_t)(opt.window - credit);
    if (add > room)
        add = room;
    if (add > 0) {
        pn_link_flow(c->work, (int)add);
        c->granted += add;
        c->session_granted += add;
    }
}

/* A connection may only be worked on inside its own event batch (the
 * proactor writes out what that batch produced), so the start reaches each
 * connection as a wake-up. */
static void start_run(void)
{
    started = true;
    clock_gettime(CLOCK_MONOTONIC, &t_start);
    if (opt.mode == MODE_SOAK)
        soak_start(soak_now_ns());
    if (opt.count == 0) {
        finish();
        return;
    }
    for (int i = 0; i < opt.connections; i++)
        pn_connection_wake(conns[i].pn);
}

/* soak: the proactor's timeout is a tick of SOAK_TICK_MS. Before the start it
 * only watches --timeout (the set-up); then it wakes the sender to send what
 * has come due, prints the intervals that have ended, and finishes after
 * --duration. False: not a tick (set-up timed out, or the close grace after
 * the end is over), for the caller to end the run. */
static bool soak_on_tick(void)
{
    if (finished)
        return false;
    if (!started) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (elapsed(&t_launch, &now) >= opt.timeout_s)
            return false;
    } else if (soak_tick(soak_now_ns())) {
        finish();
        return true;
    } else {
        pn_connection_wake(conns[SOAK_SENDER].pn);
    }
    pn_proactor_set_timeout(proactor, SOAK_TICK_MS);
    return true;
}

static void kick(struct conn *c)
{
    if (finished && !c->closing) {
        c->closing = true;
        pn_connection_close(c->pn);
    }
    /* soak's sender is woken every tick to send what has come due */
    if (opt.mode == MODE_CONNECT || !started || finished || (c->kicked && opt.mode != MODE_SOAK))
        return;
    c->kicked = true;
    if (conn_sends(c) && opt.txn_batch > 0)
        txn_step(c);
    else if (conn_sends(c))
        pump_sends(c);
    else
        top_up_credit(c);
}

/* A send in a transaction is answered transactional-state {txn-id, outcome}:
 * taken, but stored only when the discharge commits. A plain `accepted` would
 * mean the transfer's state never reached the broker: stored outside the
 * transaction, the run would measure plain sends. */
static void on_txn_send_update(struct conn *c, pn_delivery_t *d)
{
    uint64_t state = pn_delivery_remote_state(d);
    char buf[TEXT_MAX];
    if (state == 0 && !pn_delivery_settled(d))
        return;
    if (state == PN_ACCEPTED)
        fail("connection %d: a transactional send answered accepted, not transactional-state: "
             "its state did not reach the broker", c->index);
    if (state != TXN_STATE)
        fail("connection %d: a transactional send answered %s: %s", c->index, state_name(state),
             cond_text(pn_disposition_condition(pn_delivery_remote(d)), buf, sizeof buf));
    uint64_t outcome = txn_outcome(pn_disposition_data(pn_delivery_remote(d)));
    if (outcome != PN_ACCEPTED)
        fail("connection %d: a transactional send answered %s in its transactional-state", c->index,
             outcome ? state_name(outcome) : "no outcome");
    pn_delivery_settle(d);
    c->txn_answered++;
    txn_step(c);
}

static void on_send_update(struct conn *c, pn_delivery_t *d)
{
    uint64_t state = pn_delivery_remote_state(d);
    char buf[TEXT_MAX];
    if (opt.txn_batch > 0) {
        on_txn_send_update(c, d);
    } else if (state == PN_ACCEPTED || (state == 0 && pn_delivery_settled(d))) {
        /* Settled without an outcome means the broker took it (the default outcome). */
        if (opt.mode == MODE_SOAK)
            soak_accepted((uint64_t)(uintptr_t)pn_delivery_get_context(d), soak_now_ns());
        pn_delivery_settle(d);
        c->acked++;
        if (opt.mode != MODE_SOAK)
            count_done(1);
        if (!finished)
            pump_sends(c);
    } else if (state == PN_REJECTED || state == PN_RELEASED || state == PN_MODIFIED) {
        fail("connection %d: send %s: %s", c->index, pn_disposition_type_name(state),
             cond_text(pn_disposition_condition(pn_delivery_remote(d)), buf, sizeof buf));
    }
}

/* The coordinator's answers: declared {txn-id} to a declare; accepted to a
 * committing discharge (rejected: rolled back, the reason in its error). */
static void on_control_update(struct conn *c, pn_delivery_t *d)
{
    uint64_t state = pn_delivery_remote_state(d);
    pn_disposition_t *remote = pn_delivery_remote(d);
    char buf[TEXT_MAX];
    if (state == 0 && !pn_delivery_settled(d))
        return;
    if (c->txn_phase == TXN_DECLARING) {
        if (state != TXN_DECLARED || !read_txn_id(c, pn_disposition_data(remote)))
            fail("connection %d: declare answered %s%s: %s", c->index, state_name(state),
                 state == TXN_DECLARED ? " without a txn-id" : "",
                 cond_text(pn_disposition_condition(remote), buf, sizeof buf));
        pn_delivery_settle(d);
        uint64_t left = c->target - c->acked;
        c->txn_size = left < (uint64_t)opt.txn_batch ? left : (uint64_t)opt.txn_batch;
        c->txn_sent = c->txn_answered = 0;
        c->txn_phase = TXN_OPEN;
        pump_sends(c);
    } else if (c->txn_phase == TXN_DISCHARGING) {
        if (state != PN_ACCEPTED)
            fail("connection %d: discharge (commit) answered %s: %s", c->index, state_name(state),
                 cond_text(pn_disposition_condition(remote), buf, sizeof buf));
        pn_delivery_settle(d);
        c->acked += c->txn_size;
        c->txn_phase = TXN_IDLE;
        count_done(c->txn_size);
        txn_step(c);
    }
}

static void on_receive(struct conn *c, pn_delivery_t *d)
{
    pn_link_t *l = c->work;
    if (pn_delivery_readable(d)) {
        /* Read the bytes a real client would read; a large message comes in
         * several transfers, and only the last one completes it. */
        while (pn_link_recv(l, recv_scratch, sizeof recv_scratch) > 0)
            ;
        /* An aborted delivery used credit for a message that never came. */
        if (pn_delivery_aborted(d))
            fail("connection %d: the broker aborted a delivery", c->index);
        if (pn_delivery_partial(d))
            return;
        pn_link_advance(l);
        /* the session's last message: all of its credit given, and used */
        if (opt.mode == MODE_RECEIVE_SESSION && c->session_granted == per_session && c->arrived + 1 == c->granted)
            session_wait_ends(c, WAIT_MESSAGES);
        if (++c->arrived > c->granted)
            n_overrun++;
        /* Settled by the broker as it sent it: nothing to complete. */
        bool presettled = opt.mode == MODE_RECEIVE_DELETE || pn_delivery_settled(d);
        if (finished || n_done + n_pending >= opt.count) {
            /* Beyond COUNT: leave it queued for the next run if we still can. */
            if (!presettled)
                pn_delivery_update(d, PN_RELEASED);
            pn_delivery_settle(d);
        } else if (presettled) {
            pn_delivery_settle(d);
            receive_done(c, 0);
        } else if (c->confirmed) {
            pn_delivery_update(d, PN_ACCEPTED);  /* settled once the broker has */
            if (opt.mode == MODE_SOAK)
                pn_delivery_set_context(d, (void *)(uintptr_t)soak_now_ns());
            n_pending++;
        } else {
            pn_delivery_update(d, PN_ACCEPTED);
            pn_delivery_settle(d);
            receive_done(c, 0);
        }
        if (!finished)
            top_up_credit(c);
    } else if (pn_delivery_updated(d) && pn_delivery_settled(d)) {
        /* The broker's answer to a peek-lock complete. */
        uint64_t state = pn_delivery_remote_state(d);
        char buf[TEXT_MAX];
        if (state != PN_ACCEPTED)
            fail("connection %d: complete answered %s: %s", c->index, pn_disposition_type_name(state),
                 cond_text(pn_disposition_condition(pn_delivery_remote(d)), buf, sizeof buf));
        uint64_t complete_ns = (uint64_t)(uintptr_t)pn_delivery_get_context(d);
        pn_delivery_settle(d);
        n_pending--;
        receive_done(c, complete_ns);
    }
}

/* ---- connect: idle connections ---- */

static void launch_next(void);

/* The hold is over: every connection closes from its own batch (see kick);
 * the run ends when all transports are closed, or after CLOSE_GRACE_MS. */
static void close_all(void)
{
    finished = true;
    pn_proactor_set_timeout(proactor, CLOSE_GRACE_MS);
    for (int i = 0; i < n_launched; i++)
        if (!conns[i].closed)
            pn_connection_wake(conns[i].pn);
}

/* One more ready: the next connection starts in its place; when all are
 * ready, the clock stops and they are held. */
static void connection_ready(struct conn *c)
{
    if (c->ready || finished)
        return;
    c->ready = true;
    n_ready++;
    if (n_launched < opt.connections) {
        launch_next();
        return;
    }
    if (n_ready < opt.connections)
        return;
    clock_gettime(CLOCK_MONOTONIC, &t_end);
    all_open = true;
    print_result(NULL);
    printf("connect: all %d open\n", opt.connections);
    fflush(stdout);
    if (stop_pending)
        close_all();
}

/* The watcher saw stdin close (the hold ends once all are open) or a signal
 * (the run ends now; cut short if not all were open). */
static void on_stop_request(void)
{
    if (finished)
        return;
    if (atomic_load(&stop_reason) == STOP_SIGNAL && !all_open) {
        print_result("INTERRUPTED");
        exit(EXIT_TIMEOUT);
    }
    if (all_open)
        close_all();
    else
        stop_pending = true;
}

/* A thread of its own waits for the end of stdin or SIGTERM/SIGINT (blocked
 * in every thread, read through a signalfd) and interrupts the proactor. */
static int stop_signal_fd = -1;

static void *watch_for_stop(void *arg)
{
    (void)arg;
    struct pollfd p[2] = {{.fd = STDIN_FILENO, .events = POLLIN}, {.fd = stop_signal_fd, .events = POLLIN}};
    int why = STOP_NONE;
    char buf[256];
    while (why == STOP_NONE) {
        if (poll(p, 2, -1) < 0) {
            if (errno != EINTR)
                why = STOP_SIGNAL;
        } else if (p[1].revents) {
            why = STOP_SIGNAL;
        } else if (p[0].revents) {
            ssize_t n = read(STDIN_FILENO, buf, sizeof buf);  /* what comes is ignored */
            if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
                why = STOP_EOF;
        }
    }
    atomic_store(&stop_reason, why);
    pn_proactor_interrupt(proactor);
    return NULL;
}

static void start_stop_watcher(void)
{
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGTERM);
    sigaddset(&signals, SIGINT);
    pthread_t thread;
    if (pthread_sigmask(SIG_BLOCK, &signals, NULL) != 0 ||
        (stop_signal_fd = signalfd(-1, &signals, SFD_CLOEXEC)) < 0 ||
        pthread_create(&thread, NULL, watch_for_stop, NULL) != 0)
        die(EXIT_USAGE, "cannot watch stdin and signals: %s", strerror(errno));
    pthread_detach(thread);
}

static void on_cbs_reply(struct conn *c, pn_delivery_t *d)
{
    if (!pn_delivery_readable(d))
        return;
    ssize_t n;
    while ((n = pn_link_recv(c->cbs_reply, c->cbs_buf + c->cbs_len, sizeof c->cbs_buf - c->cbs_len)) > 0)
        c->cbs_len += (size_t)n;
    if (pn_delivery_partial(d))
        return;
    pn_link_advance(c->cbs_reply);
    pn_delivery_update(d, PN_ACCEPTED);
    pn_delivery_settle(d);
    check_put_token_reply(c);
    if (opt.mode == MODE_CONNECT)
        connection_ready(c);
    else
        open_links(c);
}

/* ---- connection set-up ---- */

static void on_connection_init(struct conn *c)
{
    char container[64];
    snprintf(container, sizeof container, "sbbench-%d-%d", (int)getpid(), c->index);
    pn_connection_set_container(c->pn, container);
    pn_connection_set_hostname(c->pn, opt.host);
    if (opt.user) {
        pn_connection_set_user(c->pn, opt.user);
        pn_connection_set_password(c->pn, opt.password ? opt.password : "");
    }
    pn_connection_open(c->pn);
    if (opt.mode == MODE_CONNECT && !opt.sas_key)
        return;  /* an idle connection: the open alone */
    c->session = pn_session(c->pn);
    pn_session_open(c->session);
    if (opt.sas_key) {
        char name[64];
        snprintf(name, sizeof name, "sbbench-cbs-%d", c->index);
        snprintf(c->cbs_reply_addr, sizeof c->cbs_reply_addr, "sbbench-cbs-reply-%d", c->index);
        c->cbs_sender = pn_sender(c->session, name);
        pn_terminus_set_address(pn_link_target(c->cbs_sender), CBS_NODE);
        pn_link_open(c->cbs_sender);
        c->cbs_reply = pn_receiver(c->session, c->cbs_reply_addr);
        pn_terminus_set_address(pn_link_source(c->cbs_reply), CBS_NODE);
        pn_terminus_set_address(pn_link_target(c->cbs_reply), c->cbs_reply_addr);
        pn_link_open(c->cbs_reply);
        pn_link_flow(c->cbs_reply, 1);
    } else {
        open_links(c);
    }
}

/* Ready once its links are attached; the clock starts when all are. */
static void check_ready(struct conn *c)
{
    if (c->ready || !c->work_attached || (opt.txn_batch > 0 && !c->coordinator_attached))
        return;
    c->ready = true;
    if (++n_ready == opt.connections)
        start_run();
}

static void on_work_attached(struct conn *c)
{
    pn_terminus_t *remote = conn_sends(c) ? pn_link_remote_target(c->work) : pn_link_remote_source(c->work);
    /* A refused attach comes back with no terminus, then a detach with the
     * reason (for a session link: no session came free in time). */
    if (pn_terminus_get_type(remote) == PN_UNSPECIFIED)
        return;
    c->work_attached = true;
    if (opt.mode == MODE_RECEIVE_SESSION)
        session_wait_ends(c, WAIT_ATTACH);
    if (peek_lock() && !conn_sends(c))
        c->confirmed = pn_link_remote_rcv_settle_mode(c->work) == PN_RCV_SECOND;
    if (c->ready)  /* the next session, mid-run */
        top_up_credit(c);
    else
        check_ready(c);
}

static void on_coordinator_attached(struct conn *c)
{
    if (pn_terminus_get_type(pn_link_remote_target(c->coordinator)) == PN_UNSPECIFIED)
        return;
    c->coordinator_attached = true;
    check_ready(c);
}

static void handle(pn_event_t *e)
{
    char buf[TEXT_MAX];
    pn_connection_t *pc = pn_event_connection(e);
    struct conn *c = pc ? pn_connection_get_context(pc) : NULL;
    pn_link_t *l = pn_event_link(e);

    switch (pn_event_type(e)) {
    case PN_CONNECTION_INIT:
        on_connection_init(c);
        break;
    case PN_CONNECTION_WAKE:
        kick(c);
        break;
    case PN_CONNECTION_REMOTE_OPEN:
        if (opt.mode == MODE_CONNECT && !opt.sas_key)
            connection_ready(c);
        break;
    case PN_PROACTOR_INTERRUPT:
        on_stop_request();
        break;
    case PN_LINK_REMOTE_OPEN:
        if (l == c->work)
            on_work_attached(c);
        else if (l == c->coordinator)
            on_coordinator_attached(c);
        break;
    case PN_LINK_FLOW:
        if (l == c->cbs_sender && !c->token_sent && pn_link_credit(l) > 0)
            send_put_token(c);
        else if (l == c->work && c->kicked && conn_sends(c) && !finished)
            pump_sends(c);
        else if (l == c->coordinator && c->kicked)
            txn_step(c);
        break;
    case PN_DELIVERY: {
        pn_delivery_t *d = pn_event_delivery(e);
        if (l == c->cbs_reply)
            on_cbs_reply(c, d);
        else if (l == c->cbs_sender && pn_delivery_updated(d))
            pn_delivery_settle(d);
        else if (l == c->work && conn_sends(c) && pn_delivery_updated(d))
            on_send_update(c, d);
        else if (l == c->coordinator && pn_delivery_updated(d))
            on_control_update(c, d);
        else if (l == c->work && !conn_sends(c))
            on_receive(c, d);
        break;
    }
    case PN_LINK_REMOTE_CLOSE:
    case PN_LINK_REMOTE_DETACH:
        if (l == c->work && (pn_link_state(l) & PN_LOCAL_CLOSED)) {
            on_session_gone(c);  /* only session links are closed before the end */
            break;
        }
        if (!finished)
            fail("connection %d: broker closed link %s: %s", c->index, pn_link_name(l),
                 cond_text(pn_link_remote_condition(l), buf, sizeof buf));
        break;
    case PN_SESSION_REMOTE_CLOSE:
        if (!finished)
            fail("connection %d: broker ended the session: %s", c->index,
                 cond_text(pn_session_remote_condition(pn_event_session(e)), buf, sizeof buf));
        break;
    case PN_CONNECTION_REMOTE_CLOSE:
        if (!finished)
            fail("connection %d: broker closed the connection: %s", c->index,
                 cond_text(pn_connection_remote_condition(pc), buf, sizeof buf));
        pn_connection_close(pc);
        break;
    case PN_TRANSPORT_CLOSED:
        if (!finished)
            fail("connection %d: transport closed: %s", c->index,
                 cond_text(pn_transport_condition(pn_event_transport(e)), buf, sizeof buf));
        if (!c->closed) {
            c->closed = true;
            n_closed++;
        }
        break;
    case PN_PROACTOR_TIMEOUT:
        if (opt.mode == MODE_SOAK && soak_on_tick())
            break;
        if (!finished) {
            if (!result_printed)
                print_result("TIMEOUT");
            else  /* connect: the hold outlasted --timeout */
                fprintf(stderr, "sbbench: %s: --timeout after %d s, %d connections still open\n", opt.label,
                        opt.timeout_s, n_ready);
            print_notes();
            exit(EXIT_TIMEOUT);
        }
        print_notes();
        exit(EXIT_OK);  /* done, but a broker was slow to close: the result is printed */
        break;
    default:
        break;
    }
}

/* ---- set-up ---- */

/* amqp://[user:password@]host[:port][/...]; user and password here are a
 * shorthand for --user/--password. */
static void parse_url(void)
{
    static char userinfo[HOST_MAX];
    const char *s = opt.url;
    const char *scheme = strstr(s, "://");
    if (scheme)
        s = scheme + 3;
    const char *at = strchr(s, '@');
    const char *slash = strchr(s, '/');
    if (at && (!slash || at < slash)) {
        snprintf(userinfo, sizeof userinfo, "%.*s", (int)(at - s), s);
        char *colon = strchr(userinfo, ':');
        if (colon)
            *colon = '\0';
        if (!opt.user)
            opt.user = userinfo;
        if (colon && !opt.password)
            opt.password = colon + 1;
        s = at + 1;
    }
    size_t len = slash ? (size_t)(slash - s) : strlen(s);
    char hostport[HOST_MAX];
    if (len == 0 || len >= sizeof hostport)
        die(EXIT_USAGE, "bad --url %s", opt.url);
    memcpy(hostport, s, len);
    hostport[len] = '\0';
    char *colon = strrchr(hostport, ':');
    if (colon) {
        *colon = '\0';
        snprintf(opt.port, sizeof opt.port, "%s", colon + 1);
    } else {
        snprintf(opt.port, sizeof opt.port, "%s", DEFAULT_PORT);
    }
    snprintf(opt.host, sizeof opt.host, "%s", hostport);
}

/* The body is pseudo-random, not one repeated byte: PostgreSQL compresses
 * values over ~2 KB, and a compressible body would measure pglz, not storage. */
static void build_message(void)
{
    char *body = malloc(opt.size ? opt.size : 1);
    if (!body)
        die(EXIT_USAGE, "out of memory");
    uint64_t x = 0x9e3779b97f4a7c15ULL;
    for (size_t i = 0; i < opt.size; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        body[i] = (char)(x >> 56);
    }
    char id[ID_HEX_LEN + 1];
    snprintf(id, sizeof id, "%08" PRIx32 "%04x%016x", run_nonce, 0u, 0u);

    pn_message_t *m = pn_message();
    pn_message_set_durable(m, true);
    pn_msgid_t mid = {.type = PN_STRING, .u.as_bytes = pn_bytes(ID_HEX_LEN, id)};
    pn_message_set_id(m, mid);
    char group[SESSION_ID_DIGITS + 2];  /* "s" and the digits, patched per send */
    snprintf(group, sizeof group, "s%0*d", SESSION_ID_DIGITS, 0);
    if (opt.sessions > 0)
        pn_message_set_group_id(m, group);
    pn_message_set_inferred(m, true);  /* a binary body goes out as a data section */
    pn_data_put_binary(pn_message_body(m), pn_bytes(opt.size, body));
    msg_len = opt.size + MSG_OVERHEAD;
    msg_buf = malloc(msg_len);
    if (!msg_buf || pn_message_encode(m, msg_buf, &msg_len) != 0)
        die(EXIT_USAGE, "cannot encode a %zu-byte message", opt.size);
    pn_message_free(m);
    free(body);
    const char *at = memmem(msg_buf, msg_len, id, ID_HEX_LEN);
    if (!at)
        die(EXIT_USAGE, "message-id not found in the encoded message");
    msg_id_offset = (size_t)(at - msg_buf);
    if (opt.sessions > 0) {
        /* The properties come before the body, so the first match is the
         * group-id (a hex message-id has no 's'). */
        at = memmem(msg_buf, msg_len, group, SESSION_ID_DIGITS + 1);
        if (!at)
            die(EXIT_USAGE, "group-id not found in the encoded message");
        msg_group_offset = (size_t)(at - msg_buf) + 1;
    }
}

static long parse_long(const char *name, const char *s, long min, long max)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < min || v > max)
        die(EXIT_USAGE, "--%s wants a number from %ld to %ld, got '%s'", name, min, max, s);
    return v;
}

static void usage(FILE *f)
{
    fprintf(f,
        "Usage: sbbench [OPTION]...\n"
        "  --url amqp://[user:pass@]host:port   broker (default %s)\n"
        "  --address NAME          queue address (sbemu: NAME; RabbitMQ 3.10: /queue/NAME)\n"
        "  --mode MODE             send | receive (peek-lock + complete) | receive-delete\n"
        "                          | receive-session (peek-lock, next-available sessions)\n"
        "                          | connect (open --connections, hold them until stdin closes)\n"
        "                          | soak (send at --rate and receive + complete, for --duration)\n"
        "  --count N               messages in all (default %d)\n"
        "  --size BYTES            body size of sent messages (default %d)\n"
        "  --window N              unsettled sends / receiver credit per connection (default %d);\n"
        "                          connect: connections being opened at once (default %d)\n"
        "  --rcv-settle-mode M     receive: second (the broker confirms each complete; default)\n"
        "                          or first (a complete is done when the client settles)\n"
        "  --connections N         connections in parallel, each doing count/N (default 1;\n"
        "                          at most %d, connect: %d)\n"
        "  --sessions N            send: group-id s<i %% N> on message i (N sessions of count/N);\n"
        "                          receive-session: the N sessions to empty (required)\n"
        "  --txn-batch K           send: K sends per transaction, committed by discharge (0 = none)\n"
        "  --rate N                soak: sends per second (0 = as fast as the window allows)\n"
        "  --duration SECONDS      soak: how long (required)\n"
        "  --report-every SECONDS  soak: a line per interval (default %d)\n"
        "  --sas-key-name NAME     with --sas-key (default %s)\n"
        "  --sas-key KEY           SASL ANONYMOUS then a CBS put-token signed with KEY\n"
        "  --user U --password P   SASL PLAIN\n"
        "  --label TEXT            first word of the result line (default sbbench)\n"
        "  --timeout SECONDS       give up after this long, exit 2 (default %d)\n"
        "Exit: 0 done, 1 protocol error, 2 timeout, 3 usage.\n",
        DEFAULT_URL, DEFAULT_COUNT, DEFAULT_SIZE, DEFAULT_WINDOW, CONNECT_IN_FLIGHT, MAX_CONNECTIONS,
        MAX_IDLE_CONNECTIONS, DEFAULT_REPORT_S, DEFAULT_SAS_KEYNAME, DEFAULT_TIMEOUT_S);
}

static void check_combinations(void)
{
    if (opt.mode != MODE_CONNECT && opt.connections > MAX_CONNECTIONS)
        die(EXIT_USAGE, "--connections wants a number from 1 to %d (more with --mode connect)", MAX_CONNECTIONS);
    if (opt.mode == MODE_CONNECT && !opt.window_given)
        opt.window = CONNECT_IN_FLIGHT;
    if (opt.sessions > 0 && opt.mode != MODE_SEND && opt.mode != MODE_RECEIVE_SESSION)
        die(EXIT_USAGE, "--sessions goes with --mode send or receive-session");
    if (opt.txn_batch > 0 && opt.mode != MODE_SEND)
        die(EXIT_USAGE, "--txn-batch goes with --mode send");
    if ((opt.rate >= 0 || opt.duration_s > 0 || opt.report_every_s > 0) && opt.mode != MODE_SOAK)
        die(EXIT_USAGE, "--rate, --duration and --report-every go with --mode soak");
    if (opt.mode == MODE_SOAK) {
        if (opt.duration_s == 0)
            die(EXIT_USAGE, "--mode soak wants --duration SECONDS");
        if (opt.connections != 1)
            die(EXIT_USAGE, "--mode soak opens its own %d connections (one sends, one receives): no --connections",
                SOAK_CONNECTIONS);
        opt.connections = SOAK_CONNECTIONS;
        opt.count = UINT64_MAX;  /* the run ends by time */
        if (opt.rate < 0)
            opt.rate = 0;
        if (opt.report_every_s == 0)
            opt.report_every_s = DEFAULT_REPORT_S;
        soak_init(opt.label, (uint64_t)opt.rate, opt.duration_s, opt.report_every_s);
    }
    if (opt.mode != MODE_RECEIVE_SESSION)
        return;
    /* Every session is emptied by one link, so each holds the same count and
     * belongs to one connection. */
    if (opt.sessions == 0 || opt.count % (uint64_t)opt.sessions != 0)
        die(EXIT_USAGE, "receive-session wants --sessions N with --count a multiple of N");
    if (opt.connections > opt.sessions)
        die(EXIT_USAGE, "receive-session wants no more --connections than --sessions");
    per_session = opt.count / (uint64_t)opt.sessions;
}

static void parse_options(int argc, char **argv)
{
    enum { O_URL = 256, O_ADDRESS, O_MODE, O_COUNT, O_SIZE, O_WINDOW, O_CONNS, O_SKN, O_SK,
           O_USER, O_PASSWORD, O_LABEL, O_TIMEOUT, O_RCV_SETTLE, O_SESSIONS, O_TXN_BATCH, O_RATE, O_DURATION,
           O_REPORT_EVERY, O_HELP };
    static const struct option longopts[] = {
        {"url", required_argument, NULL, O_URL},
        {"address", required_argument, NULL, O_ADDRESS},
        {"mode", required_argument, NULL, O_MODE},
        {"count", required_argument, NULL, O_COUNT},
        {"size", required_argument, NULL, O_SIZE},
        {"window", required_argument, NULL, O_WINDOW},
        {"connections", required_argument, NULL, O_CONNS},
        {"sas-key-name", required_argument, NULL, O_SKN},
        {"sas-key", required_argument, NULL, O_SK},
        {"user", required_argument, NULL, O_USER},
        {"password", required_argument, NULL, O_PASSWORD},
        {"label", required_argument, NULL, O_LABEL},
        {"timeout", required_argument, NULL, O_TIMEOUT},
        {"rcv-settle-mode", required_argument, NULL, O_RCV_SETTLE},
        {"sessions", required_argument, NULL, O_SESSIONS},
        {"txn-batch", required_argument, NULL, O_TXN_BATCH},
        {"rate", required_argument, NULL, O_RATE},
        {"duration", required_argument, NULL, O_DURATION},
        {"report-every", required_argument, NULL, O_REPORT_EVERY},
        {"help", no_argument, NULL, O_HELP},
        {NULL, 0, NULL, 0},
    };
    opt = (struct options){
        .url = DEFAULT_URL, .label = "sbbench", .sas_key_name = DEFAULT_SAS_KEYNAME,
        .mode = MODE_SEND, .peek_lock_settle = PN_RCV_SECOND, .count = DEFAULT_COUNT, .size = DEFAULT_SIZE,
        .window = DEFAULT_WINDOW, .connections = 1, .timeout_s = DEFAULT_TIMEOUT_S, .rate = -1,
    };
    int ch;
    while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (ch) {
        case O_URL: opt.url = optarg; break;
        case O_ADDRESS: opt.address = optarg; break;
        case O_MODE:
            if (strcmp(optarg, "send") == 0) opt.mode = MODE_SEND;
            else if (strcmp(optarg, "receive") == 0) opt.mode = MODE_RECEIVE;
            else if (strcmp(optarg, "receive-delete") == 0) opt.mode = MODE_RECEIVE_DELETE;
            else if (strcmp(optarg, "receive-session") == 0) opt.mode = MODE_RECEIVE_SESSION;
            else if (strcmp(optarg, "connect") == 0) opt.mode = MODE_CONNECT;
            else if (strcmp(optarg, "soak") == 0) opt.mode = MODE_SOAK;
            else die(EXIT_USAGE, "--mode is send, receive, receive-delete, receive-session, connect or soak, "
                     "not '%s'", optarg);
            break;
        case O_COUNT: opt.count = (uint64_t)parse_long("count", optarg, 0, LONG_MAX); break;
        case O_SIZE: opt.size = (size_t)parse_long("size", optarg, 0, MAX_SIZE); break;
        case O_WINDOW:
            opt.window = (int)parse_long("window", optarg, 1, MAX_WINDOW);
            opt.window_given = true;
            break;
        case O_CONNS: opt.connections = (int)parse_long("connections", optarg, 1, MAX_IDLE_CONNECTIONS); break;
        case O_SKN: opt.sas_key_name = optarg; break;
        case O_SK: opt.sas_key = optarg; break;
        case O_USER: opt.user = optarg; break;
        case O_PASSWORD: opt.password = optarg; break;
        case O_LABEL: opt.label = optarg; break;
        case O_TIMEOUT: opt.timeout_s = (int)parse_long("timeout", optarg, 1, MAX_TIMEOUT_S); break;
        case O_RCV_SETTLE:
            if (strcmp(optarg, "first") == 0) opt.peek_lock_settle = PN_RCV_FIRST;
            else if (strcmp(optarg, "second") == 0) opt.peek_lock_settle = PN_RCV_SECOND;
            else die(EXIT_USAGE, "--rcv-settle-mode is first or second, not '%s'", optarg);
            break;
        case O_SESSIONS: opt.sessions = (int)parse_long("sessions", optarg, 0, MAX_SESSIONS); break;
        case O_TXN_BATCH: opt.txn_batch = (int)parse_long("txn-batch", optarg, 0, MAX_TXN_BATCH); break;
        case O_RATE: opt.rate = parse_long("rate", optarg, 0, MAX_RATE); break;
        case O_DURATION: opt.duration_s = (int)parse_long("duration", optarg, 1, MAX_TIMEOUT_S); break;
        case O_REPORT_EVERY: opt.report_every_s = (int)parse_long("report-every", optarg, 1, MAX_TIMEOUT_S); break;
        case 'h':
        case O_HELP: usage(stdout); exit(EXIT_OK);
        default: usage(stderr); exit(EXIT_USAGE);
        }
    }
    if (optind != argc || !opt.address) {
        usage(stderr);
        exit(EXIT_USAGE);
    }
    check_combinations();
    parse_url();
}

/* Connection i's part of n, split as evenly as it goes. */
static uint64_t share(uint64_t n, int i)
{
    uint64_t k = (uint64_t)opt.connections;
    return n / k + ((uint64_t)i < n % k);
}

/* Every connection takes a descriptor: as many as the hard limit allows. */
static void raise_fd_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return;
    if (rl.rlim_cur < rl.rlim_max) {
        rlim_t was = rl.rlim_cur;
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
            rl.rlim_cur = was;
    }
    if (rl.rlim_cur != RLIM_INFINITY && (rlim_t)opt.connections + FD_RESERVE > rl.rlim_cur)
        die(EXIT_USAGE, "--connections %d needs %d open files, the limit is %llu (ulimit -Hn)", opt.connections,
            opt.connections + FD_RESERVE, (unsigned long long)rl.rlim_cur);
}

static void launch(struct conn *c)
{
    c->pn = pn_connection();
    pn_connection_set_context(c->pn, c);
    pn_transport_t *t = pn_transport();
    pn_sasl_t *sasl = pn_sasl(t);
    if (opt.user) {
        pn_sasl_allowed_mechs(sasl, "PLAIN");
        pn_sasl_set_allow_insecure_mechs(sasl, true);  /* loopback, no TLS */
    } else {
        pn_sasl_allowed_mechs(sasl, "ANONYMOUS");
    }
    n_launched++;
    pn_proactor_connect2(proactor, c->pn, t, broker_addr);
}

/* connect: the next connection of the N, in the place of one that is ready. */
static void launch_next(void)
{
    struct conn *c = &conns[n_launched];
    c->index = n_launched;
    launch(c);
}

int main(int argc, char **argv)
{
    parse_options(argc, argv);
    raise_fd_limit();
    clock_gettime(CLOCK_MONOTONIC, &t_launch);
    run_nonce = (uint32_t)time(NULL) ^ ((uint32_t)getpid() << 16);
    if (opt.mode == MODE_SEND || opt.mode == MODE_SOAK)
        build_message();

    conns = calloc((size_t)opt.connections, sizeof *conns);
    proactor = pn_proactor();
    if (!conns || !proactor)
        die(EXIT_USAGE, "out of memory");
    pn_proactor_addr(broker_addr, sizeof broker_addr, opt.host, opt.port);
    if (opt.mode == MODE_CONNECT) {
        /* The clock runs from the first connect; at most --window being opened at once. */
        start_stop_watcher();
        started = true;
        clock_gettime(CLOCK_MONOTONIC, &t_start);
        for (int i = 0; i < opt.connections && i < opt.window; i++)
            launch_next();
    }
    uint64_t first = 0;
    for (int i = 0; opt.mode != MODE_CONNECT && i < opt.connections; i++) {
        struct conn *c = &conns[i];
        c->index = i;
        c->target = opt.mode == MODE_SOAK ? UINT64_MAX : share(opt.count, i);
        if (opt.mode == MODE_RECEIVE_SESSION)  /* whole sessions */
            c->target = share((uint64_t)opt.sessions, i) * per_session;
        c->first = first;
        first += c->target;
        launch(c);
    }
    /* soak ticks; its soak_on_tick watches --timeout until the start */
    pn_proactor_set_timeout(proactor, opt.mode == MODE_SOAK ? SOAK_TICK_MS : (pn_millis_t)opt.timeout_s * 1000);

    while (!(finished && n_closed == n_launched)) {
        pn_event_batch_t *batch = pn_proactor_wait(proactor);
        pn_event_t *e;
        while ((e = pn_event_batch_next(batch)))
            handle(e);
        pn_proactor_done(proactor, batch);
    }
    print_notes();
    pn_proactor_free(proactor);
    free(conns);
    free(msg_buf);
    soak_free();
    return EXIT_OK;
}
