/* Which namespace a management request is in (http_internal.h), chosen as
 * the wire chooses a connection's (entities/ent_namespace.h): the Host header
 * `<name>.localhost`, else the namespace its SAS token is for (the audience's
 * host, else the key name). A namespace named for the first time is made, as
 * on AMQP; the emulator's own routes that name one in their path
 * ($sbemu/namespaces/{ns}/...) want one that exists. */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "ent_alloc.h"
#include "ent_clock.h"
#include "ent_namespace.h"
#include "http_internal.h"
#include "store_namespace.h"
#include "store_rule_json.h"

/* An error in the shape the request's resource answers with: the ATOM API's
 * XML, or {"error": ...} for the emulator's own. */
__attribute__((format(printf, 3, 4))) static void ns_error(http_req *r, sb_status st, const char *fmt, ...)
{
    char why[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    if (!r->json_errors) {
        http_respond_error(r, st, "%s", why);
        return;
    }
    json_t *doc = json_pack("{ss}", "error", why);
    char *text = doc ? store_json_text(doc, JSON_COMPACT) : NULL;
    json_decref(doc);
    http_respond_json(r, text ? st : SB_ERR_INTERNAL, text ? text : "{\"error\":\"out of memory\"}");
    ent_free(text);
}

int http_ns_choose(const http_req *r, char *out, size_t outlen, char *why, size_t whylen)
{
    char host_ns[ENT_NAMESPACE_NAME_SIZE];
    int h = ent_namespace_of_host(r->host, host_ns, sizeof host_ns, why, whylen);
    if (h < 0)
        return -1;
    const char *own = broker_default_namespace_name(r->broker);
    const char *name = h > 0 ? host_ns : r->token_ns;
    snprintf(out, outlen, "%s", ent_namespace_is_default(name, own) ? "" : name);
    return 0;
}

bool http_ns_token_allows(http_req *r, const char *name)
{
    const char *own = broker_default_namespace_name(r->broker);
    if (ent_namespace_is_default(r->token_ns, own) || !strcasecmp(r->token_ns, name))
        return true;
    ns_error(r, SB_ERR_UNAUTHORIZED,
             "Unauthorized: the token is for namespace '%s' (its key name or audience chose it), not '%s'.",
             r->token_ns, ent_namespace_is_default(name, own) ? own : name);
    return false;
}

static void on_resolved(void *ctx, sb_status st, int32_t ns)
{
    http_req *r = ctx;
    if (http_req_gone(r))
        return;
    if (st == SB_ERR_NOT_FOUND) {
        ns_error(r, st,
                 "The namespace '%s' does not exist: a namespace is made when a client first uses it (its host name or "
                 "SAS key name), by Config.json's Namespaces, or by PUT /$sbemu/namespaces/{name}.",
                 r->ns_name);
        return;
    }
    if (st != SB_OK) {
        ns_error(r, st == SB_ERR_SERVER_BUSY ? st : SB_ERR_INTERNAL,
                 "The namespace '%s' could not be looked up or made (%s); retry.",
                 r->ns_name[0] ? r->ns_name : broker_default_namespace_name(r->broker), sb_status_name(st));
        return;
    }
    r->ns = ns;
    r->now_ms = ent_clock_now_ms_in(ns); /* its own clock, from here on */
    const ent_namespace *known = ent_namespaces_get(broker_namespaces(r->broker), ns);
    if (known && known->auto_delete_on_idle_ms > 0) /* a request in it: it is not idle */
        store_namespace_touch(broker_store(r->broker), ns, r->now_ms);
    r->ns_next(r);
}

void http_ns_resolve(http_req *r, const char *name, bool create, void (*next)(http_req *r))
{
    const char *own = broker_default_namespace_name(r->broker);
    snprintf(r->ns_name, sizeof r->ns_name, "%s", ent_namespace_is_default(name, own) ? "" : name);
    r->ns_next = next;
    if (create)
        broker_namespace_resolve(r->broker, r->ns_name, on_resolved, r);
    else
        broker_namespace_find(r->broker, r->ns_name, on_resolved, r);
}
