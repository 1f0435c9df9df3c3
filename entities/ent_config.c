/* Growable arrays of entity props (see ent_config.h). */
#include "ent_config.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ent_alloc.h"

void ent_config_init(ent_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    strcpy(cfg->namespace_name, ENT_CONFIG_DEFAULT_NAMESPACE);
}

static void free_subscription(ent_subscription_config *s)
{
    for (size_t i = 0; i < s->nrules; i++)
        ent_rule_props_free(&s->rules[i]);
    ent_free(s->rules);
}

void ent_config_free(ent_config *cfg)
{
    if (!cfg)
        return;
    for (size_t i = 0; i < cfg->ntopics; i++) {
        ent_topic_config *t = &cfg->topics[i];
        for (size_t j = 0; j < t->nsubscriptions; j++)
            free_subscription(&t->subscriptions[j]);
        ent_free(t->subscriptions);
    }
    ent_free(cfg->topics);
    ent_free(cfg->queues);
    ent_free(cfg->faults);
    for (size_t i = 0; i < cfg->nothers; i++)
        ent_config_free(&cfg->others[i]);
    ent_free(cfg->others);
    ent_config_init(cfg);
}

/* Appends one zeroed element of size elem to *arr (length *n). */
static void *grow(void **arr, size_t *n, size_t elem)
{
    char *p = ent_realloc(*arr, (*n + 1) * elem);
    if (!p)
        return NULL;
    *arr = p;
    memset(p + *n * elem, 0, elem);
    return p + (*n)++ * elem;
}

ent_queue_props *ent_config_add_queue(ent_config *cfg, const ent_queue_props *q)
{
    ent_queue_props *e = grow((void **)&cfg->queues, &cfg->nqueues, sizeof *e);
    if (e)
        *e = *q;
    return e;
}

ent_fault_rule *ent_config_add_fault(ent_config *cfg, const ent_fault_rule *r)
{
    ent_fault_rule *e = grow((void **)&cfg->faults, &cfg->nfaults, sizeof *e);
    if (e)
        *e = *r;
    return e;
}

ent_topic_config *ent_config_add_topic(ent_config *cfg, const ent_topic_props *t)
{
    ent_topic_config *e = grow((void **)&cfg->topics, &cfg->ntopics, sizeof *e);
    if (e)
        e->props = *t;
    return e;
}

ent_subscription_config *ent_config_add_subscription(ent_topic_config *t, const ent_subscription_props *s)
{
    ent_subscription_config *e = grow((void **)&t->subscriptions, &t->nsubscriptions, sizeof *e);
    if (e)
        e->props = *s;
    return e;
}

ent_rule_props *ent_config_add_rule(ent_subscription_config *s, const ent_rule_props *r)
{
    ent_rule_props *e = grow((void **)&s->rules, &s->nrules, sizeof *e);
    if (!e)
        return NULL;
    if (ent_rule_props_copy(e, r)) {
        s->nrules--;
        return NULL;
    }
    return e;
}

ent_queue_props *ent_config_find_queue(const ent_config *cfg, const char *name)
{
    for (size_t i = 0; i < cfg->nqueues; i++)
        if (!strcasecmp(cfg->queues[i].name, name))
            return &cfg->queues[i];
    return NULL;
}

ent_topic_config *ent_config_find_topic(const ent_config *cfg, const char *name)
{
    for (size_t i = 0; i < cfg->ntopics; i++)
        if (!strcasecmp(cfg->topics[i].props.name, name))
            return &cfg->topics[i];
    return NULL;
}

ent_subscription_config *ent_config_find_subscription(const ent_topic_config *t, const char *name)
{
    for (size_t i = 0; i < t->nsubscriptions; i++)
        if (!strcasecmp(t->subscriptions[i].props.name, name))
            return &t->subscriptions[i];
    return NULL;
}

ent_rule_props *ent_config_find_rule(const ent_subscription_config *s, const char *name)
{
    for (size_t i = 0; i < s->nrules; i++)
        if (!strcasecmp(s->rules[i].name, name))
            return &s->rules[i];
    return NULL;
}

ent_config *ent_config_add_namespace(ent_config *cfg, const char *name)
{
    ent_config *e = grow((void **)&cfg->others, &cfg->nothers, sizeof *e);
    if (!e)
        return NULL;
    ent_config_init(e);
    size_t n = strlen(name);
    if (n >= sizeof e->namespace_name)
        n = sizeof e->namespace_name - 1;
    memcpy(e->namespace_name, name, n);
    e->namespace_name[n] = 0;
    return e;
}

ent_config *ent_config_find_namespace(const ent_config *cfg, const char *name)
{
    for (size_t i = 0; i < cfg->nothers; i++)
        if (!strcasecmp(cfg->others[i].namespace_name, name))
            return &cfg->others[i];
    return NULL;
}
