/* See store_topic.h. */
#include "store_topic.h"

#include <stdlib.h>

#include "ent_alloc.h"
#include "store_binary.h"
#include "store_statements.h"
#include "store_story.h"

/* Columns as STMT_PUBLISH_SET's arrays; its story twin takes five more
 * (store_story.h). */
#define PUBLISH_COLUMNS 18
#define PUBLISH_STORY_COLUMNS (PUBLISH_COLUMNS + 5)
#define PUBLISH_COLUMN_TYPES                                                                                       \
    STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8, \
        STORE_OID_INT8, STORE_OID_TEXT, STORE_OID_TEXT, STORE_OID_BYTEA, STORE_OID_INT8, STORE_OID_TEXT,             \
        STORE_OID_TEXT, STORE_OID_UUID, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_TEXT
static const store_merge_def publish_set_story = {
    STMT_PUBLISH_SET_STORY,
    PUBLISH_STORY_COLUMNS,
    {PUBLISH_COLUMN_TYPES, STORE_OID_INT8, STORE_OID_TEXT, STORE_OID_TEXT, STORE_OID_TEXT, STORE_OID_INT8},
    NULL,
    NULL,
};
static const store_merge_def publish_set = {
    STMT_PUBLISH_SET, PUBLISH_COLUMNS, {PUBLISH_COLUMN_TYPES}, NULL, &publish_set_story,
};

static int publish_row(store_op *op, int i, const store_copy *c, int64_t back)
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
        first && m->story_connection ? P_INT8(conn) : (store_param){0},
        first && m->story_link ? P_TEXT(m->story_link) : (store_param){0},
        {first ? m->story_trace : NULL, first ? (int)m->story_trace_len : 0, 0},
        P_TEXT(c->story_rule),
        c->story_via ? P_INT8(via) : (store_param){0},
    };
    return store_op_row(op, i, cols);
}

static store_op *publish_op(int64_t topic_id, const store_copy *rows, size_t n, store_done_fn done, void *ctx)
{
    store_op *op = store_op_new_merged(&publish_set, topic_id, (int)n, done, ctx);
    if (!op)
        return NULL;
    /* receivers of every subscription of the topic are woken (broker_wake) */
    store_op_set_notify(op, topic_id);
    size_t first = 0; /* the row that starts the current message */
    for (size_t i = 0; i < n; i++) {
        if (rows[i].width > 0)
            first = i;
        if (publish_row(op, (int)i, &rows[i], (int64_t)(i - first))) {
            store_op_set_status(op, SB_ERR_INTERNAL); /* store_submit fails it at once */
            break;
        }
    }
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
