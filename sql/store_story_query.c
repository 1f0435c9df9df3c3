/* The story's queries (store_story.h): an op each, the events parsed out
 * of the answer they stay in. */
#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>

#include "ent_alloc.h"
#include "store_binary.h"
#include "store_story.h"

/* An answer: the events point into the result they came in. */
typedef struct story_result {
    size_t n;
    store_story_event *events;
    void *pgresult;
} story_result;

static void result_free(void *p)
{
    story_result *r = p;
    PQclear(r->pgresult);
    ent_free(r->events);
    ent_free(r);
}

static void story_parse(store_op *op, int stmt, const void *res)
{
    (void)stmt;
    PGresult *r = (PGresult *)res;
    int rows = PQntuples(r);
    story_result *out = ent_calloc(1, sizeof *out);
    if (!out || (rows && !(out->events = ent_calloc((size_t)rows, sizeof *out->events)))) {
        ent_free(out);
        store_op_set_status(op, SB_ERR_INTERNAL);
        return;
    }
    store_op_take_result(op);
    out->pgresult = r;
    out->n = (size_t)rows;
    for (int i = 0; i < rows; i++) {
        store_story_event *e = &out->events[i];
        e->id = col_i64(r, i, 0);
        e->ord = col_i64(r, i, 1);
        e->at_ms = col_i64(r, i, 2);
        e->kind = (int)col_i64(r, i, 3);
        e->entity_id = col_i64(r, i, 4);
        e->subqueue = (int)col_i64(r, i, 5);
        if ((e->has_sequence_number = !PQgetisnull(r, i, 6)))
            e->sequence_number = col_i64(r, i, 6);
        e->message_id = PQgetvalue(r, i, 7);
        e->note = col_str_or_null(r, i, 8);
        e->description = col_str_or_null(r, i, 9);
        if ((e->has_number = !PQgetisnull(r, i, 10)))
            e->number = col_i64(r, i, 10);
        if ((e->has_lock_token = !PQgetisnull(r, i, 11) && PQgetlength(r, i, 11) == 16))
            memcpy(e->lock_token, PQgetvalue(r, i, 11), 16);
        e->connection = col_i64(r, i, 12);
        e->link = col_str_or_null(r, i, 13);
        e->locked_until_ms = col_i64(r, i, 14);
        e->other_entity_id = col_i64(r, i, 15);
    }
    store_op_set_result(op, out, result_free);
}

static void story_done(store_op *op, sb_status st)
{
    user_cb *u = store_op_ctx(op);
    story_result *r = store_op_result(op);
    if (st == SB_OK && r)
        ((store_story_cb)u->fn)(u->ctx, SB_OK, r->events, r->n);
    else
        ((store_story_cb)u->fn)(u->ctx, st == SB_OK ? SB_ERR_INTERNAL : st, NULL, 0);
    ent_free(u);
}

static void query(store *s, const char *stmt, const store_param *params, int n, store_story_cb cb, void *ctx)
{
    store_op *op = store_op_or_fail(1, story_parse, story_done, user_new((void (*)(void))cb, ctx));
    if (!op) {
        cb(ctx, SB_ERR_INTERNAL, NULL, 0);
        return;
    }
    if (store_op_stmt(op, 0, stmt, params, n))
        store_op_set_status(op, SB_ERR_INTERNAL);
    store_submit(s, op);
}

void store_story_of_message(store *s, store_story_place at, const char *message_id, int max, store_story_cb cb,
                            void *ctx)
{
    int8_param e = be_int8(at.entity_id), m = be_int8(max), t = be_int8(at.topic_id);
    if (at.entity_id)
        query(s, STMT_STORY_OF_MESSAGE_IN, (store_param[]){P_INT8(e), P_TEXT(message_id), P_INT8(m), P_INT8(t)}, 4, cb,
              ctx);
    else
        query(s, STMT_STORY_OF_MESSAGE, (store_param[]){P_TEXT(message_id), P_INT8(m)}, 2, cb, ctx);
}

void store_story_of_sequence(store *s, store_story_place at, int64_t seq, int max, store_story_cb cb, void *ctx)
{
    int8_param e = be_int8(at.entity_id), q = be_int8(seq), m = be_int8(max), t = be_int8(at.topic_id);
    query(s, STMT_STORY_OF_SEQUENCE, (store_param[]){P_INT8(e), P_INT8(q), P_INT8(m), P_INT8(t)}, 4, cb, ctx);
}

void store_story_of_entity(store *s, store_story_place at, ent_story_cursor below, int max, store_story_cb cb,
                           void *ctx)
{
    bool newest = below.id <= 0;
    int8_param e = be_int8(at.entity_id), id = be_int8(newest ? INT64_MAX : below.id),
               ord = be_int8(newest ? INT64_MAX : below.ord), m = be_int8(max), t = be_int8(at.topic_id);
    query(s, STMT_STORY_OF_ENTITY, (store_param[]){P_INT8(e), P_INT8(id), P_INT8(ord), P_INT8(m), P_INT8(t)}, 5, cb,
          ctx);
}
