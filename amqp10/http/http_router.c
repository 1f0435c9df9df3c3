/* See http_router.h. */
#include "http_router.h"

#include "http_dash.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Segments of a path this long at most are looked at: the shapes need the
 * last five. */
#define ROUTE_SEGMENTS_MAX 64

typedef struct segments {
    const char *at[ROUTE_SEGMENTS_MAX]; /* start of each, in the path */
    size_t len[ROUTE_SEGMENTS_MAX];
    int n;
} segments;

static void split(const char *path, segments *s)
{
    s->n = 0;
    const char *p = path;
    while (*p && s->n < ROUTE_SEGMENTS_MAX) {
        const char *slash = strchr(p, '/');
        size_t n = slash ? (size_t)(slash - p) : strlen(p);
        s->at[s->n] = p;
        s->len[s->n] = n;
        s->n++;
        if (!slash)
            break;
        p = slash + 1;
    }
}

static bool is(const segments *s, int i, const char *word)
{
    return i >= 0 && i < s->n && s->len[i] == strlen(word) && !strncasecmp(s->at[i], word, s->len[i]);
}

/* Segment i as a string, or the path up to (not including) segment i. */
static void seg_copy(const segments *s, int i, char *out, size_t outlen)
{
    snprintf(out, outlen, "%.*s", (int)s->len[i], s->at[i]);
}

static void prefix_copy(const char *path, const segments *s, int i, char *out, size_t outlen)
{
    size_t n = (size_t)(s->at[i] - path);
    if (n)
        n--; /* the '/' before it */
    snprintf(out, outlen, "%.*s", (int)n, path);
}

static bool allowed(http_req *r, bool get, bool put, bool del, const char *what)
{
    if ((r->method == HTTP_GET && get) || (r->method == HTTP_PUT && put) || (r->method == HTTP_DELETE && del))
        return true;
    http_respond_error(r, SB_ERR_METHOD_NOT_ALLOWED, "%s takes %s%s%s, not this method.", what, get ? "GET" : "",
                       put ? (get ? ", PUT" : "PUT") : "", del ? ", DELETE" : "");
    return false;
}

/* r's path without its trailing '/'s. */
static void normalized_path(const http_req *r, char *path, size_t n)
{
    snprintf(path, n, "%s", r->path);
    size_t plen = strlen(path);
    while (plen && path[plen - 1] == '/')
        path[--plen] = 0;
}

static void route_in_namespace(http_req *r);

void http_route(http_req *r)
{
    /* the emulator's own, without a token (a probe has none) */
    if (!strcasecmp(r->path, "health") || !strcasecmp(r->path, "health/")) {
        http_health(r);
        return;
    }
    if (http_clock_route(r))
        return;
    /* Prometheus scrapes without a token unless --metrics-token-required
     * (http_metrics.c). Every SDK's management request carries api-version:
     * with it, /metrics is still a queue or topic of that name. */
    if ((!strcmp(r->path, "metrics") || !strcmp(r->path, "metrics/")) && !http_req_arg(r, "api-version")) {
        http_metrics(r);
        return;
    }
    /* the dashboard: its page at / and its API under $sbemu/api/ (which checks its own token; http_dash.c) */
    if (http_dash_route(r))
        return;
    char why[512];
    if (http_auth_check(r, why, sizeof why) != SB_OK) {
        http_respond_error(r, SB_ERR_UNAUTHORIZED, "Unauthorized: %s.", why);
        return;
    }
    char path[HTTP_ADMIN_PATH_MAX];
    normalized_path(r, path, sizeof path);
    if (http_reset_route(r, path)) /* a namespace's reset and snapshots (http_reset.c) */
        return;
    if (http_namespaces_route(r, path)) /* the namespaces themselves (http_namespaces.c) */
        return;
    segments s;
    split(path, &s);
    if ((s.n == 2 || s.n == 3) && is(&s, 0, "$sbemu") && is(&s, 1, "faults")) {
        char rule[HTTP_ADMIN_PATH_MAX];
        if (s.n == 3)
            seg_copy(&s, 2, rule, sizeof rule);
        http_faults(r, s.n == 3 ? rule : NULL); /* each rule names its namespace */
        return;
    }
    /* the ATOM API acts in the request's namespace, made on first use as on AMQP */
    char ns[ENT_NAMESPACE_NAME_SIZE];
    if (http_ns_choose(r, ns, sizeof ns, why, sizeof why)) {
        http_respond_error(r, SB_ERR_ARGUMENT, "%s", why); /* the Host names none a namespace may have */
        return;
    }
    http_ns_resolve(r, ns, true, route_in_namespace);
}

/* The ATOM API's resources, once r->ns is the request's namespace. */
static void route_in_namespace(http_req *r)
{
    char path[HTTP_ADMIN_PATH_MAX];
    normalized_path(r, path, sizeof path);
    segments s;
    split(path, &s);
    int n = s.n;
    char topic[HTTP_ADMIN_PATH_MAX], sub[HTTP_ADMIN_PATH_MAX], rule[HTTP_ADMIN_PATH_MAX];
    if (n == 0) {
        http_respond_error(r, SB_ERR_NOT_FOUND, "No resource at '/': name a queue, a topic, $Resources/Queues, "
                           "$Resources/Topics or $namespaceinfo.");
    } else if (n == 1 && is(&s, 0, "$namespaceinfo")) {
        if (allowed(r, true, false, false, "$namespaceinfo"))
            http_namespace_get(r);
    } else if (n == 2 && is(&s, 0, "$Resources")) {
        if (!is(&s, 1, "Queues") && !is(&s, 1, "Topics"))
            http_respond_error(r, SB_ERR_NOT_FOUND, "No collection '%s': the lists are $Resources/Queues and "
                               "$Resources/Topics.", path);
        else if (allowed(r, true, false, false, "A list"))
            is(&s, 1, "Queues") ? http_queue_list(r) : http_topic_list(r);
    } else if (n >= 5 && is(&s, n - 2, "Rules") && is(&s, n - 4, "Subscriptions")) {
        prefix_copy(path, &s, n - 4, topic, sizeof topic);
        seg_copy(&s, n - 3, sub, sizeof sub);
        seg_copy(&s, n - 1, rule, sizeof rule);
        if (!allowed(r, true, true, true, "A rule"))
            return;
        if (r->method == HTTP_GET)
            http_rule_get(r, topic, sub, rule);
        else if (r->method == HTTP_PUT)
            http_rule_put(r, topic, sub, rule);
        else
            http_rule_delete(r, topic, sub, rule);
    } else if (n >= 4 && is(&s, n - 1, "Rules") && is(&s, n - 3, "Subscriptions")) {
        prefix_copy(path, &s, n - 3, topic, sizeof topic);
        seg_copy(&s, n - 2, sub, sizeof sub);
        if (allowed(r, true, false, false, "A list of rules"))
            http_rule_list(r, topic, sub);
    } else if (n >= 3 && is(&s, n - 2, "Subscriptions")) {
        prefix_copy(path, &s, n - 2, topic, sizeof topic);
        seg_copy(&s, n - 1, sub, sizeof sub);
        if (!allowed(r, true, true, true, "A subscription"))
            return;
        if (r->method == HTTP_GET)
            http_subscription_get(r, topic, sub);
        else if (r->method == HTTP_PUT)
            http_subscription_put(r, topic, sub);
        else
            http_subscription_delete(r, topic, sub);
    } else if (n >= 2 && is(&s, n - 1, "Subscriptions")) {
        prefix_copy(path, &s, n - 1, topic, sizeof topic);
        if (allowed(r, true, false, false, "A list of subscriptions"))
            http_subscription_list(r, topic);
    } else if (n == 2 && is(&s, 0, "$sbemu") && is(&s, 1, "story")) {
        http_story(r); /* in the request's namespace */
    } else if (path[0] == '$') {
        http_respond_error(r, SB_ERR_NOT_FOUND, "No resource '%s'.", path);
    } else {
        if (!allowed(r, true, true, true, "A queue or topic"))
            return;
        if (r->method == HTTP_GET)
            http_entity_get(r, path);
        else if (r->method == HTTP_PUT)
            http_entity_put(r, path);
        else
            http_entity_delete(r, path);
    }
}
