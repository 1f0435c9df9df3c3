/* See store_topic.h. */
#include "store_topic.h"

#include <stdlib.h>

#include "ent_alloc.h"
#include "store_arrays.h"
#include "store_binary.h"
#include "store_statements.h"
#include "store_story.h"

/* Columns as STMT_PUBLISH_SET's arrays; its story twin takes six more
 * (store_story.h). */
#define PUBLISH_COLUMNS 19
#define PUBLISH_STORY_COLUMNS (PUBLISH_COLUMNS + 6)
#define PUBLISH_COLUMN_TYPES                                                                                       \
    STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8, \
        STORE_OID_INT8, STORE_OID_TEXT, STORE_OID_TEXT, STORE_OID_BYTEA, STORE_OID_INT8, STORE_OID_TEXT,             \
        STORE_OID_TEXT, STORE_OID_UUID, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_TEXT, STORE_OID_TEXT
static const store_merge_def publish_set_story = {
    STMT_PUBLISH_SET_STORY,
    PUBLISH_STORY_COLUMNS,
    {PUBLISH_COLUMN_TYPES, STORE_OID_INT8, STORE_OID_TEXT, STORE_OID_TEXT, STORE_OID_TEXT, STORE_OID_INT8,
     STORE_OID_TEXT},
    NULL,
    NULL,
};
static const store_merge_def publish_set = {
    STMT_PUBLISH_SET, PUBLISH_COLUMNS, {PUBLISH_COLUMN_TYPES}, NULL, &publish_set_story,
};

/* log_subs: on the first logged copy of a message, its log entry's
 * subscriptions as an int8[] literal (NULL on every other row); log_rules,
 * for the story, the rule that took the message to each of them (text[]). */
static int publish_row(store_op *op, int i, const store_copy *c, int64_t back, const char *log_subs,
                       const char *log_rules)
{
    const store_new_message *m = &c->m;
    const char *mid = c->width ? m->message_id : NULL;
    int8_param width = be_int8(c->width), slot = be_int8(c->slot), target = be_int8(c->target),
               state = be_int8(m->state), now = be_int8(m->now_ms), avail = be_int8(m->available_ms),
               exp = be_int8(m->expires_ms), ttl = be_int8(m->ttl_ms), sq = be_int8(m->subqueue),
               size = be_int8(c->target ? (int64_t)c->size : 0), bk = be_int8(back),
               conn = be_int8((int64_t)m->story_connection), via = be_int8(c->story_via);
    /* who sent it on the message's first row only, as its MessageId */
    bool first = c->width > 0;
    /* the story's columns last: a row of the base statement leaves them out */
    store_param cols[PUBLISH_STORY_COLUMNS] = {
        P_INT8(width),
        P_INT8(slot),
        c->target ? P_INT8(target) : (store_param){0},
        P_INT8(state),
        P_INT8(now),
        P_INT8(avail),
        m->expires_ms ? P_INT8(exp) : (store_param){0},
        m->ttl_ms >= 0 ? P_INT8(ttl) : (store_param){0},
        P_TEXT(mid),
        P_TEXT(m->session_id),
        {m->bytes, m->bytes ? (int)m->len : 0, 1},
        P_INT8(sq),
        P_TEXT(m->dead_letter_reason),
        P_TEXT(m->dead_letter_description),
        c->consume ? P_UUID(c->consume_token) : (store_param){0},
        P_INT8(size),
        P_INT8(bk),
        P_TEXT(m->dead_letter_source),
        P_TEXT(log_subs),
        first && m->story_connection ? P_INT8(conn) : (store_param){0},
        first && m->story_link ? P_TEXT(m->story_link) : (store_param){0},
        {first ? m->story_trace : NULL, first ? (int)m->story_trace_len : 0, 0},
        P_TEXT(c->story_rule),
        c->story_via ? P_INT8(via) : (store_param){0},
        P_TEXT(log_rules),
    };
    return store_op_row(op, i, cols);
}

/* Each message's log entry subscriptions (an int8[] literal on its first
 * logged copy, NULL elsewhere; and while the story is recorded, the rules
 * that took it to them), and which rows are sent: the message's other logged
 * copies are left out, the first carries them all. */
typedef struct publish_plan {
    char **log_subs;  /* per row */
    char **log_rules; /* per row */
    bool *sent;       /* per row */
    size_t nsent;
} publish_plan;

static void plan_free(publish_plan *p, size_t n)
{
    for (size_t i = 0; p->log_subs && i < n; i++)
        ent_free(p->log_subs[i]);
    for (size_t i = 0; p->log_rules && i < n; i++)
        ent_free(p->log_rules[i]);
    ent_free(p->log_subs);
    ent_free(p->log_rules);
    ent_free(p->sent);
}

static int plan_rows(const store_copy *rows, size_t n, publish_plan *p)
{
    bool story = store_story_on();
    int64_t *subs = ent_malloc((n ? n : 1) * sizeof *subs);
    const char **rules = ent_malloc((n ? n : 1) * sizeof *rules);
    p->log_subs = ent_calloc(n ? n : 1, sizeof *p->log_subs);
    p->log_rules = ent_calloc(n ? n : 1, sizeof *p->log_rules);
    p->sent = ent_calloc(n ? n : 1, sizeof *p->sent);
    p->nsent = 0;
    int rc = -1;
    if (!subs || !rules || !p->log_subs || !p->log_rules || !p->sent)
        goto out;
    for (size_t i = 0; i < n;) {
        size_t end = i + 1, carrier = n, k = 0;
        while (end < n && rows[end].width == 0)
            end++;
        for (size_t j = i; j < end; j++) {
            bool logged = rows[j].slot == STORE_COPY_LOGGED;
            if (logged) {
                if (carrier == n)
                    carrier = j;
                rules[k] = rows[j].story_rule;
                subs[k++] = rows[j].target;
            }
            p->sent[j] = !logged || carrier == j;
            p->nsent += p->sent[j];
        }
        if (k && !(p->log_subs[carrier] = store_int8_array_text(subs, k)))
            goto out;
        if (k && story && !(p->log_rules[carrier] = store_text_array_text(rules, k)))
            goto out;
        i = end;
    }
    rc = 0;
out:
    ent_free(subs);
    ent_free(rules);
    return rc;
}

static store_op *publish_op(int64_t topic_id, const store_copy *rows, size_t n, store_done_fn done, void *ctx)
{
    publish_plan plan = {0};
    if (plan_rows(rows, n, &plan)) {
        plan_free(&plan, n);
        return NULL;
    }
    store_op *op = store_op_new_merged(&publish_set, topic_id, (int)plan.nsent, done, ctx);
    if (!op) {
        plan_free(&plan, n);
        return NULL;
    }
    /* receivers of every subscription of the topic are woken (broker_wake) */
    store_op_set_notify(op, topic_id);
    int at = 0, first = 0; /* the row being sent, and the one that starts its message */
    for (size_t i = 0; i < n; i++) {
        if (!plan.sent[i])
            continue;
        if (rows[i].width > 0)
            first = at;
        if (publish_row(op, at, &rows[i], (int64_t)(at - first), plan.log_subs[i], plan.log_rules[i])) {
            store_op_set_status(op, SB_ERR_INTERNAL); /* store_submit fails it at once */
            break;
        }
        at++;
    }
    plan_free(&plan, n);
    return op;
}

void store_publish(store *s, int64_t topic_id, const store_copy *rows, size_t n, store_status_cb cb, void *ctx)
{
    user_cb *u = user_new((void (*)(void))cb, ctx);
    store_op *op = u ? publish_op(topic_id, rows, n, store_status_done, u) : NULL;
    if (!op) {
        ent_free(u);
        cb(ctx, SB_ERR_INTERNAL);
        return;
    }
    store_submit(s, op);
}

store_op *store_publish_rows(int64_t topic_id, const store_copy *rows, size_t n)
{
    return publish_op(topic_id, rows, n, NULL, NULL);
}
