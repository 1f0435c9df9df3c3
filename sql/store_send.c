/* Sending: every send of a commit to one entity is one merged statement (store_send, store_send_row).
 * Declared in store_queue.h. */
#include "store_queue.h"

#include <libpq-fe.h>

#include "ent_alloc.h"
#include "store_binary.h"
#include "store_statements.h"
#include "store_story.h"

/* The merged send: every send of a commit to one entity is one statement
 * (STMT_SEND_SET). Columns as that statement's arrays; its story twin takes
 * four more (store_story.h). */
#define SEND_COLUMNS 11
#define SEND_STORY_COLUMNS (SEND_COLUMNS + 4)
#define SEND_COLUMN_TYPES                                                                                         \
    STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_TEXT, STORE_OID_TEXT, \
        STORE_OID_BYTEA, STORE_OID_INT8, STORE_OID_TEXT, STORE_OID_TEXT
const store_merge_def store_send_set_story = {
    STMT_SEND_SET_STORY,
    SEND_STORY_COLUMNS,
    {SEND_COLUMN_TYPES, STORE_OID_INT8, STORE_OID_TEXT, STORE_OID_TEXT, STORE_OID_INT8},
    NULL,
    NULL,
};
const store_merge_def store_send_set = {
    STMT_SEND_SET, SEND_COLUMNS, {SEND_COLUMN_TYPES}, NULL, &store_send_set_story,
};

int store_send_row(store_op *op, int i, const store_new_message *m)
{
    int8_param state = be_int8(m->state), now = be_int8(m->now_ms), avail = be_int8(m->available_ms),
               exp = be_int8(m->expires_ms), ttl = be_int8(m->ttl_ms), sq = be_int8(m->subqueue),
               conn = be_int8((int64_t)m->story_connection), via = be_int8(m->story_via);
    /* the story's columns last: a row of the base statement leaves them out */
    store_param cols[SEND_STORY_COLUMNS] = {
        P_INT8(state),
        P_INT8(now),
        P_INT8(avail),
        m->expires_ms ? P_INT8(exp) : (store_param){0},
        m->ttl_ms >= 0 ? P_INT8(ttl) : (store_param){0},
        P_TEXT(m->message_id),
        P_TEXT(m->session_id),
        {m->bytes, (int)m->len, 1},
        P_INT8(sq),
        P_TEXT(m->dead_letter_reason),
        P_TEXT(m->dead_letter_description),
        m->story_connection ? P_INT8(conn) : (store_param){0},
        P_TEXT(m->story_link),
        {m->story_trace, (int)m->story_trace_len, 0},
        m->story_via ? P_INT8(via) : (store_param){0},
    };
    return store_op_row(op, i, cols);
}

void store_send(store *s, int64_t entity_id, const store_new_message *msgs, size_t n, store_status_cb cb, void *ctx)
{
    user_cb *u = user_new((void (*)(void))cb, ctx);
    store_op *op = u ? store_op_new_merged(&store_send_set, entity_id, (int)n, store_status_done, u) : NULL;
    if (!op) {
        ent_free(u);
        cb(ctx, SB_ERR_INTERNAL);
        return;
    }
    store_op_set_notify(op, entity_id);
    for (size_t i = 0; i < n; i++)
        if (store_send_row(op, (int)i, &msgs[i])) {
            store_op_set_status(op, SB_ERR_INTERNAL); /* store_submit fails it at once */
            break;
        }
    store_submit(s, op);
}
