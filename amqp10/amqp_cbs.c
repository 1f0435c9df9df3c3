/* The $cbs node: put-token requests authorize later links on the connection.
 * A valid SAS token grants its audience's path until the token's expiry;
 * anything else is answered 401 and grants nothing (wire-protocol §2). */
#include <proton/codec.h>
#include <proton/connection.h>
#include <proton/message.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "amqp_reply.h"
#include "amqp_sas.h"
#include "ent_address.h"
#include "ent_alloc.h"
#include "ent_clock.h"
#include "ent_log.h"
#include "ent_namespace.h"
#include "store_namespace.h"

static void put_token(amqp_link *lk, pn_message_t *req);
/* What a fault rule goes on with, or answers with (amqp_fault.c). */
static const amqp_fault_cbs_ops fault_go = {put_token, amqp_cbs_respond};

/* false if there was no memory for it */
static bool grant(amqp_conn *c, const char *path, int64_t expires_ms)
{
    for (int i = 0; i < c->ngrants; i++)
        if (!strcasecmp(c->grants[i].path, path)) {
            c->grants[i].expires_ms = expires_ms;
            return true;
        }
    if (c->ngrants == c->grants_cap && c->grants_cap < AMQP_MAX_GRANTS) {
        int cap = c->grants_cap ? c->grants_cap * 2 : 2;
        cap = cap > AMQP_MAX_GRANTS ? AMQP_MAX_GRANTS : cap;
        amqp_grant *g = ent_realloc(c->grants, (size_t)cap * sizeof *g);
        if (!g)
            return false;
        c->grants = g;
        c->grants_cap = cap;
    }
    int slot = c->ngrants < c->grants_cap ? c->ngrants++ : 0; /* full: reuse the oldest */
    snprintf(c->grants[slot].path, sizeof c->grants[slot].path, "%s", path);
    c->grants[slot].expires_ms = expires_ms;
    return true;
}

bool amqp_cbs_authorized(const amqp_conn *c, const char *entity_path)
{
    int64_t now = ent_clock_wall_ms(); /* tokens live in wall-clock time */
    for (int i = 0; i < c->ngrants; i++)
        if (c->grants[i].expires_ms > now && ent_path_authorized(c->grants[i].path, entity_path))
            return true;
    return false;
}

/* The token is the amqp-value string body. */
static bool body_string(pn_message_t *m, char *buf, size_t buflen)
{
    pn_data_t *b = pn_message_body(m);
    pn_data_rewind(b);
    if (!pn_data_next(b) || pn_data_type(b) != PN_STRING)
        return false;
    pn_bytes_t s = pn_data_get_string(b);
    if (s.size >= buflen)
        return false;
    memcpy(buf, s.start, s.size);
    buf[s.size] = 0;
    return true;
}

void amqp_cbs_respond(amqp_link *lk, pn_message_t *req, sb_status st, const char *description)
{
    int code = sb_status_cbs_code(st);
    amqp_count_refusal(lk->conn->srv, st);
    pn_message_t *r = amqp_reply_begin(req);
    if (!r)
        return;
    pn_data_t *p = pn_message_properties(r);
    pn_data_put_string(p, pn_bytes(strlen("status-code"), "status-code"));
    pn_data_put_int(p, code);
    pn_data_put_string(p, pn_bytes(strlen("status-description"), "status-description"));
    pn_data_put_string(p, pn_bytes(strlen(description), description));
    amqp_reply_send(lk, req, r);
}

/* A token is answered once its namespace is resolved (a first use makes it
 * in the store) and, when its audience names an entity, once the entity is
 * looked up there: Service Bus refuses put-token for an entity that does not exist with 404
 * ("Put token failed. status-code: 404, status-description: The messaging entity 'sb://...'
 * could not be found"), and that 404 is how the Go SDK tells CodeNotFound (a refused attach is
 * no more than an *amqp.Error to it); .NET and Java name it MessagingEntityNotFound the same way. */
typedef struct put_req {
    amqp_link *lk;
    pn_message_t *req;
    char path[ENT_ENTITY_PATH_MAX + 1];
    char entity[ENT_ENTITY_PATH_MAX + 1]; /* "" when the audience names no entity */
    int64_t expires_ms;
} put_req;

static void put_granted(amqp_link *lk, pn_message_t *req, const char *path, int64_t expires_ms)
{
    amqp_conn *c = lk->conn;
    if (!grant(c, path, expires_ms)) {
        amqp_cbs_respond(lk, req, SB_ERR_INTERNAL, "Error: the emulator is out of memory.");
        return;
    }
    amqp_cbs_respond(lk, req, SB_OK, "Accepted");
    LOG_DEBUG("conn %llu: token granted for '%s' in namespace %d", (unsigned long long)c->id, path, (int)c->ns_id);
}

static void put_done(put_req *p)
{
    amqp_link *lk = p->lk;
    if (!lk->closed && lk->conn->wsi)
        amqp_conn_pump(lk->conn);
    pn_message_free(p->req);
    amqp_link_drop(lk);
    ent_free(p);
}

static void on_put_lookup(void *ctx, sb_status st, const ent_entity *e, const ent_route *route)
{
    (void)e;
    (void)route;
    put_req *p = ctx;
    amqp_link *lk = p->lk;
    if (!lk->closed && lk->conn->wsi) {
        if (st == SB_ERR_NOT_FOUND) {
            const char *h = pn_connection_remote_hostname(lk->conn->driver.connection);
            char desc[ENT_ENTITY_PATH_MAX + 256];
            snprintf(desc, sizeof desc,
                     "The messaging entity 'sb://%s/%s' could not be found%s%s%s. To know more visit "
                     "https://aka.ms/sbResourceMgrExceptions.",
                     h && *h ? h : "localhost", p->path, lk->conn->ns_name[0] ? " in namespace '" : "",
                     lk->conn->ns_name, lk->conn->ns_name[0] ? "'" : "");
            amqp_cbs_respond(lk, p->req, SB_ERR_NOT_FOUND, desc);
            LOG_INFO("conn %llu: put-token refused: no entity '%s' in namespace %d", (unsigned long long)lk->conn->id,
                     p->path, (int)lk->conn->ns_id);
        } else {
            /* a store that cannot look now: the token is taken, the attach will say what is wrong */
            put_granted(lk, p->req, p->path, p->expires_ms);
        }
    }
    put_done(p);
}

static void on_put_namespace(void *ctx, sb_status st, int32_t ns)
{
    put_req *p = ctx;
    amqp_link *lk = p->lk;
    amqp_conn *c = lk->conn;
    if (lk->closed || !c->wsi) {
        put_done(p);
        return;
    }
    if (st != SB_OK) {
        char desc[ENT_NAMESPACE_NAME_SIZE + 128];
        snprintf(desc, sizeof desc, "Error: the namespace '%s' could not be made (%s); retry.", c->ns_name,
                 sb_status_name(st));
        amqp_cbs_respond(lk, p->req, st == SB_ERR_SERVER_BUSY ? st : SB_ERR_INTERNAL, desc);
        put_done(p);
        return;
    }
    c->ns_id = ns;
    const ent_namespace *known = ent_namespaces_get(broker_namespaces(c->srv->broker), ns);
    if (known && known->auto_delete_on_idle_ms > 0) /* a client chose it: it is not idle */
        store_namespace_touch(c->srv->store, ns, ent_clock_now_ms_in(ns));
    if (p->entity[0]) {
        broker_entity_lookup(c->srv->broker, ns, p->entity, on_put_lookup, p); /* may answer at once */
        return;
    }
    put_granted(lk, p->req, p->path, p->expires_ms);
    put_done(p);
}

/* The namespace a token is for (its connection's host name, else its
 * audience's host, else its key name: ent_namespace_choose), into name ("" the
 * default). SB_OK, or SB_ERR_UNAUTHORIZED with why when it names none a
 * namespace may have. */
static sb_status namespace_of_token(const amqp_conn *c, const amqp_sas_result *sas, char *name, size_t n, char *why,
                                    size_t whylen)
{
    char host_ns[ENT_NAMESPACE_NAME_SIZE];
    int h = ent_namespace_of_host(pn_connection_remote_hostname(c->driver.connection), host_ns, sizeof host_ns, why,
                                  whylen);
    if (h == 0)
        h = ent_namespace_of_audience(sas->audience, host_ns, sizeof host_ns, why, whylen);
    if (h < 0)
        return SB_ERR_UNAUTHORIZED;
    return ent_namespace_choose(host_ns, sas->key_name, c->srv->settings->sas_key_name,
                                broker_default_namespace_name(c->srv->broker), name, n, why, whylen);
}

/* Reads and checks a put-token's token: the namespace it is for (name), and
 * its signature with that namespace's key (its own keys when it has any,
 * else the emulator's: ent_namespace_signing_key). A connection is in one
 * namespace: a token for another is refused. SB_OK with sas filled, or an
 * error with why. */
static sb_status check_token(const amqp_conn *c, const char *token, amqp_sas_result *sas, char *name, size_t n,
                             char *why, size_t whylen)
{
    sb_status st = amqp_sas_read(token, sas, why, whylen);
    if (st == SB_OK)
        st = namespace_of_token(c, sas, name, n, why, whylen);
    if (st != SB_OK)
        return st;
    broker *b = c->srv->broker;
    const char *own = broker_default_namespace_name(b);
    if (c->ns_chosen && strcasecmp(c->ns_name, name)) {
        snprintf(why, whylen,
                 "this connection is in namespace '%s' (its first token chose it); a token for namespace '%s' "
                 "cannot be used on it: open one connection per namespace",
                 c->ns_name[0] ? c->ns_name : own, name[0] ? name : own);
        return SB_ERR_UNAUTHORIZED;
    }
    const ent_namespaces *known = broker_namespaces(b);
    const ent_namespace *ns = name[0] ? ent_namespaces_find(known, name, own) : NULL;
    const char *key = ent_namespace_signing_key(known, ns ? ns->id : 0, name, sas->key_name, c->srv->settings->sas_key,
                                                why, whylen);
    if (!key)
        return SB_ERR_UNAUTHORIZED;
    return amqp_sas_verify(token, NULL, key, ent_clock_wall_ms(), sas, why, whylen);
}

/* The namespace a put-token request is for (its connection's once chosen;
 * else the one the request would choose), into out ("" for the default; also
 * when the request names none a namespace may have). */
static void namespace_of_request(amqp_conn *c, pn_message_t *req, char *out, size_t outlen)
{
    out[0] = 0;
    if (c->ns_chosen) {
        snprintf(out, outlen, "%s", c->ns_name);
        return;
    }
    char token[AMQP_SAS_TOKEN_MAX + 1], why[256];
    amqp_sas_result sas;
    if (!body_string(req, token, sizeof token) || amqp_sas_read(token, &sas, why, sizeof why) != SB_OK ||
        namespace_of_token(c, &sas, out, outlen, why, sizeof why) != SB_OK)
        out[0] = 0;
}

void amqp_cbs_on_request(amqp_link *lk, pn_delivery_t *d, const char *bytes, size_t len)
{
    amqp_conn *c = lk->conn;
    pn_message_t *req = amqp_request_decode(bytes, len);
    pn_delivery_update(d, PN_ACCEPTED);
    pn_delivery_settle(d);
    if (!req) {
        LOG_WARN("conn %llu: $cbs request is not an AMQP message", (unsigned long long)c->id);
        return;
    }
    if (c->srv->faults->n) {
        char ns[ENT_NAMESPACE_NAME_SIZE];
        namespace_of_request(c, req, ns, sizeof ns);
        if (amqp_fault_cbs(lk, req, ns, &fault_go))
            return; /* a fault rule has it (and req): put_token goes on, if it may */
    }
    put_token(lk, req);
}

static void put_token(amqp_link *lk, pn_message_t *req)
{
    amqp_conn *c = lk->conn;
    char op[64], type[128], name[1024], token[AMQP_SAS_TOKEN_MAX + 1], why[2 * ENT_ENTITY_PATH_MAX + 128];
    const char *operation = amqp_request_app_string(req, "operation", op, sizeof op);
    const char *ttype = amqp_request_app_string(req, "type", type, sizeof type);
    const char *audience = amqp_request_app_string(req, "name", name, sizeof name);
    if (operation && !strcmp(operation, "put-token"))
        c->srv->figures.cbs_put_tokens++;
    if (!operation || strcmp(operation, "put-token")) {
        amqp_cbs_respond(lk, req, SB_ERR_ARGUMENT, "The $cbs node supports only the put-token operation.");
    } else if (!ttype || (strcmp(ttype, "servicebus.windows.net:sastoken") && strcmp(ttype, "jwt"))) {
        /* The type does not decide: the Python SDK's pure-Python stack (azure-servicebus >= 7.12,
         * _pyamqp) puts its SAS tokens with type "jwt", and Service Bus takes them. Whatever the
         * type, the token must verify as a SAS token below; a real JWT is refused there. */
        amqp_cbs_respond(lk, req, SB_ERR_UNAUTHORIZED,
                "Only SAS tokens (type servicebus.windows.net:sastoken, or jwt carrying one) are accepted.");
    } else if (!body_string(req, token, sizeof token)) {
        amqp_cbs_respond(lk, req, SB_ERR_ARGUMENT, "The put-token body must be the token as an AMQP string.");
    } else {
        amqp_sas_result sas;
        char ns_name[ENT_NAMESPACE_NAME_SIZE];
        sb_status st = check_token(c, token, &sas, ns_name, sizeof ns_name, why, sizeof why);
        /* What the signature covers is the token's own audience (sr): the
         * request's name may narrow it, never widen it (a token signed for
         * sb://host/other put with name=sb://host/q grants nothing). */
        char path[ENT_ENTITY_PATH_MAX + 1], signed_path[ENT_ENTITY_PATH_MAX + 1];
        if (st == SB_OK && (ent_audience_path(sas.audience, signed_path, sizeof signed_path) ||
                            ent_audience_path(audience ? audience : sas.audience, path, sizeof path)))
            st = SB_ERR_UNAUTHORIZED, snprintf(why, sizeof why, "the audience is not a Service Bus path");
        else if (st == SB_OK && !ent_path_authorized(signed_path, path))
            st = SB_ERR_UNAUTHORIZED,
            snprintf(why, sizeof why, "the token was signed for '/%s', which does not cover '/%s'", signed_path,
                     path);
        if (st == SB_OK && !c->ns_chosen) {
            c->ns_chosen = true;
            snprintf(c->ns_name, sizeof c->ns_name, "%s", ns_name);
            if (ns_name[0])
                LOG_DEBUG("conn %llu: in namespace '%s' (open hostname '%s', key name '%s')", (unsigned long long)c->id,
                          ns_name, pn_connection_remote_hostname(c->driver.connection), sas.key_name);
        }
        ent_address a;
        if (st == SB_OK) {
            put_req *p = ent_calloc(1, sizeof *p);
            if (p) {
                p->lk = lk;
                p->req = req;
                snprintf(p->path, sizeof p->path, "%s", path);
                if (path[0] && !ent_address_parse(path, &a) && a.kind != ENT_NODE_CBS && a.entity[0])
                    snprintf(p->entity, sizeof p->entity, "%s", a.entity);
                p->expires_ms = sas.expires_ms;
                amqp_link_hold(lk);
                /* may answer at once; on_put_namespace (or on_put_lookup) frees req */
                broker_namespace_resolve(c->srv->broker, c->ns_name, on_put_namespace, p);
                return;
            }
            st = SB_ERR_INTERNAL, snprintf(why, sizeof why, "the emulator is out of memory");
        }
        char desc[sizeof why + 32];
        snprintf(desc, sizeof desc, "%s: %s.", st == SB_ERR_UNAUTHORIZED ? "Unauthorized" : "Error", why);
        amqp_cbs_respond(lk, req, st, desc);
        LOG_INFO("conn %llu: put-token refused: %s", (unsigned long long)c->id, why);
    }
    pn_message_free(req);
}
