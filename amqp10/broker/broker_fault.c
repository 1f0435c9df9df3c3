/* Faults on demand, the broker's part (broker.h): the rules in force, loaded
 * from the store at start and whenever sbemu_faults changes (its trigger's
 * NOTIFY, on any emulator of the database), and the firing of one rule for
 * one operation: counted in the store first (one statement per firing: the
 * "next N times" count is shared by every replica, so only the database can
 * take one of them atomically), logged, then delayed on an lws timer or
 * handed back to the wire point that asked, which carries the effect out.
 *
 * The rules are one list in memory; while it is empty a wire point pays one
 * test of its length, and nothing else. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "broker_internal.h"
#include "ent_alloc.h"
#include "ent_clock.h"
#include "ent_config.h"
#include "ent_log.h"
#include "store_faults.h"

/* A rule found used up by the store (another replica took its last firing)
 * lets the operation look for the next rule this many times at most. */
#define BROKER_FAULT_REDECIDE_MAX 3

/* One operation whose rule is firing (being counted in the store) or whose
 * delay is running. Ownership: the broker's list (b->fault_waits) until it
 * is answered, then freed. */
typedef struct fault_wait {
    struct fault_wait *next;
    broker *b;
    broker_fault_cb cb;
    void *ctx;
    ent_fault_point point; /* its strings point into entity, management and namespace_name below */
    char entity[ENT_FAULT_ENTITY_SIZE];
    char management[ENT_FAULT_MANAGEMENT_SIZE];
    char namespace_name[ENT_NAMESPACE_NAME_SIZE];
    ent_fault_rule rule; /* a copy of the rule that fires */
    int rounds;
    bool delaying;
    lws_sorted_usec_list_t delay;
} fault_wait;

/* Someone waiting for a reload that started after they asked. */
typedef struct fault_reload_waiter {
    struct fault_reload_waiter *next;
    void (*cb)(void *ctx, sb_status st);
    void *ctx;
    uint64_t need; /* the first reload that started after the call */
} fault_reload_waiter;

static void reload(broker *b);
static void fire(fault_wait *w, ent_fault_rule *r);

const ent_fault_list *broker_faults(const broker *b) { return &b->faults; }

static const char *namespace_of(const broker *b)
{
    return b->settings.namespace_name && *b->settings.namespace_name ? b->settings.namespace_name
                                                                     : ENT_CONFIG_DEFAULT_NAMESPACE;
}

/* The rule of the list in force with this name and generation, or NULL (it
 * was removed or replaced meanwhile). */
static ent_fault_rule *rule_in_force(broker *b, const char *name, int64_t generation)
{
    for (size_t i = 0; i < b->faults.n; i++)
        if (b->faults.rules[i].generation == generation && !strcasecmp(b->faults.rules[i].name, name))
            return &b->faults.rules[i];
    return NULL;
}

/* ---- answering the wire point ---- */

static void unlink_wait(fault_wait *w)
{
    for (fault_wait **pp = &w->b->fault_waits; *pp; pp = &(*pp)->next)
        if (*pp == w) {
            *pp = w->next;
            break;
        }
}

static void finish(fault_wait *w, ent_fault_effect effect, bool cancelled)
{
    unlink_wait(w);
    char description[ENT_FAULT_DESCRIPTION_SIZE];
    ent_fault_describe(&w->rule, description, sizeof description);
    broker_fault_act act = {effect, w->rule.error, description, w->rule.after_ms, cancelled};
    w->cb(w->ctx, &act);
    ent_free(w);
}

static void on_delay_over(lws_sorted_usec_list_t *sul)
{
    fault_wait *w = lws_container_of(sul, fault_wait, delay);
    finish(w, ENT_FAULT_NONE, false); /* the delay was the effect: now the operation goes on */
}

/* One log line per firing: which rule, which operation on what, and what it does. */
static void log_fired(const fault_wait *w, int64_t remaining)
{
    const ent_fault_rule *r = &w->rule;
    char what[160] = "";
    if (r->effect == ENT_FAULT_ERROR || r->effect == ENT_FAULT_DETACH || r->effect == ENT_FAULT_CLOSE)
        snprintf(what, sizeof what, " %s", sb_status_condition(r->error));
    else if (r->effect == ENT_FAULT_DELAY)
        snprintf(what, sizeof what, " %lld ms", (long long)r->delay_ms);
    else if (r->effect == ENT_FAULT_LOSE_LOCK)
        snprintf(what, sizeof what, " after %lld ms", (long long)r->after_ms);
    char left[48] = "";
    if (remaining >= 0)
        snprintf(left, sizeof left, " (%lld more time%s)", (long long)remaining, remaining == 1 ? "" : "s");
    const ent_fault_point *p = &w->point;
    char on[ENT_FAULT_ENTITY_SIZE + 8] = "";
    if (p->entity[0])
        snprintf(on, sizeof on, " on '%s'", p->entity);
    LOG_INFO("fault rule '%s' fired: %s%s: %s%s%s", r->name,
             p->op == ENT_FAULT_MANAGEMENT ? p->management : ent_fault_op_name(p->op), on,
             ent_fault_effect_name(r->effect), what, left);
}

static void on_fired(void *ctx, sb_status st, bool fired, int64_t remaining)
{
    fault_wait *w = ctx;
    broker *b = w->b;
    if (!b->lws) { /* stopping: the point lets go of what it holds */
        finish(w, ENT_FAULT_NONE, true);
        return;
    }
    ent_fault_rule *local = rule_in_force(b, w->rule.name, w->rule.generation);
    if (st != SB_OK) {
        if (local && local->remaining >= 0)
            local->remaining++; /* not taken after all */
        LOG_WARN("fault rule '%s' could not be counted in the store (%s): the operation goes on unharmed", w->rule.name,
                 sb_status_name(st));
        finish(w, ENT_FAULT_NONE, false);
        return;
    }
    if (!fired) {
        /* used up (by another replica), past its until, or replaced: it no
         * longer applies here either; another rule still may */
        if (local)
            local->remaining = 0;
        ent_fault_rule *next = ++w->rounds < BROKER_FAULT_REDECIDE_MAX
                                   ? ent_fault_decide(&b->faults, &w->point, ent_clock_now_ms_in(w->point.ns))
                                   : NULL;
        if (next)
            fire(w, next);
        else
            finish(w, ENT_FAULT_NONE, false);
        return;
    }
    if (local && local->remaining >= 0)
        local->remaining = remaining; /* what the store says is left, every replica's firings counted */
    log_fired(w, remaining);
    if (w->rule.effect == ENT_FAULT_DELAY) {
        w->delaying = true;
        lws_sul_schedule(b->lws, 0, &w->delay, on_delay_over, (lws_usec_t)w->rule.delay_ms * LWS_US_PER_MS);
        return;
    }
    finish(w, w->rule.effect, false);
}

static void fire(fault_wait *w, ent_fault_rule *r)
{
    w->rule = *r;
    if (r->remaining > 0)
        r->remaining--; /* taken here at once, so that this emulator does not ask the store for more than is left */
    store_fault_fire(w->b->store, r->name, r->generation, ent_clock_now_ms_in(w->point.ns), on_fired, w);
}

bool broker_fault_check(broker *b, const ent_fault_point *p, broker_fault_cb cb, void *ctx)
{
    if (!b->faults.n || !b->lws)
        return false;
    ent_fault_rule *r = ent_fault_decide(&b->faults, p, ent_clock_now_ms_in(p->ns));
    if (!r)
        return false;
    fault_wait *w = ent_calloc(1, sizeof *w);
    if (!w) {
        LOG_WARN("fault rule '%s' not fired: out of memory", r->name);
        return false;
    }
    w->b = b;
    w->cb = cb;
    w->ctx = ctx;
    snprintf(w->entity, sizeof w->entity, "%s", p->entity ? p->entity : "");
    snprintf(w->management, sizeof w->management, "%s", p->management ? p->management : "");
    snprintf(w->namespace_name, sizeof w->namespace_name, "%s", p->namespace_name ? p->namespace_name : "");
    w->point = (ent_fault_point){p->op, w->entity, w->management, w->namespace_name, namespace_of(b), p->ns};
    w->next = b->fault_waits;
    b->fault_waits = w;
    fire(w, r);
    return true;
}

/* ---- loading the rules ---- */

/* Carries this emulator's draws over to the same rule (name and generation)
 * in the new list, so a seeded pattern is not restarted by another rule's
 * change. */
static void carry_draws(const ent_fault_list *old, ent_fault_rule *r)
{
    for (size_t i = 0; i < old->n; i++)
        if (old->rules[i].generation == r->generation && !strcasecmp(old->rules[i].name, r->name))
            r->draws = old->rules[i].draws;
}

static void install(broker *b, const ent_fault_rule *rows, size_t n)
{
    ent_fault_rule *rules = n ? ent_calloc(n, sizeof *rules) : NULL;
    if (n && !rules) {
        LOG_ERROR("fault rules: out of memory; the rules in force stay");
        return;
    }
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        char err[ENT_FAULT_ERR_MAX];
        if (ent_fault_validate(&rows[i], namespace_of(b), err, sizeof err) != SB_OK) {
            LOG_WARN("fault rule '%s' is left out: %s", rows[i].name, err);
            continue;
        }
        if (kept == ENT_FAULT_RULES_MAX) {
            LOG_WARN("fault rules: more than %d; '%s' and the rest are left out", ENT_FAULT_RULES_MAX, rows[i].name);
            break;
        }
        rules[kept] = rows[i];
        carry_draws(&b->faults, &rules[kept]);
        kept++;
    }
    if (kept != b->faults.n)
        LOG_INFO("fault rules: %zu in force", kept);
    ent_free(b->faults.rules);
    b->faults.rules = kept ? rules : NULL;
    b->faults.n = kept;
    if (!kept)
        ent_free(rules);
}

static void on_loaded(void *ctx, sb_status st, const ent_fault_rule *rows, size_t n)
{
    broker *b = ctx;
    b->faults_loading = false;
    if (st == SB_OK)
        install(b, rows, n);
    else
        LOG_WARN("fault rules could not be loaded (%s); the rules in force stay", sb_status_name(st));
    fault_reload_waiter *w = b->fault_reload_waiters, **keep = &b->fault_reload_waiters;
    b->fault_reload_waiters = NULL;
    while (w) {
        fault_reload_waiter *next = w->next;
        if (w->need > b->fault_reloads) {
            w->next = NULL;
            *keep = w;
            keep = &w->next;
        } else {
            w->cb(w->ctx, st);
            ent_free(w);
        }
        w = next;
    }
    if (b->faults_load_again) {
        b->faults_load_again = false;
        reload(b);
    }
}

static void reload(broker *b)
{
    if (b->faults_loading) {
        b->faults_load_again = true;
        return;
    }
    b->faults_loading = true;
    b->fault_reloads++;
    store_faults_load(b->store, on_loaded, b);
}

void broker_faults_reload(broker *b, void (*cb)(void *ctx, sb_status st), void *ctx)
{
    if (cb) {
        fault_reload_waiter *w = ent_calloc(1, sizeof *w);
        if (!w) {
            cb(ctx, SB_ERR_INTERNAL);
            return;
        }
        w->cb = cb;
        w->ctx = ctx;
        w->need = b->fault_reloads + 1;
        w->next = b->fault_reload_waiters;
        b->fault_reload_waiters = w;
    }
    reload(b);
}

/* ---- the broker's life ---- */

void broker_faults_stop(broker *b)
{
    /* delays end now, answered as cancelled; firings still in the store are
     * answered so when the store fails them (b->lws is NULL by then) */
    for (fault_wait *w = b->fault_waits, *next; w; w = next) {
        next = w->next;
        if (w->delaying) {
            lws_sul_cancel(&w->delay);
            finish(w, ENT_FAULT_NONE, true);
        }
    }
}

void broker_faults_free(broker *b)
{
    ent_free(b->faults.rules);
    b->faults.rules = NULL;
    b->faults.n = 0;
    for (fault_reload_waiter *w = b->fault_reload_waiters, *next; w; w = next) {
        next = w->next;
        ent_free(w);
    }
    b->fault_reload_waiters = NULL;
}
