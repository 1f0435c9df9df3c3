/* Migration 011's snapshots and reset on a real PostgreSQL (store_fixture.h;
 * never skipped): the snapshot tables have every column of the tables they
 * copy, what Config.json declares is what a reset restores, and a restore
 * brings back every row as saved (locks dropped, delivery counts kept) while
 * sequence numbers never go back; a restore of a snapshot that does not exist
 * changes nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <libpq-fe.h>

#include "emu_config_json.h"
#include "store_config.h"
#include "store_fixture.h"
#include "store_migrate.h"
#include "store_reset.h"
#include "store_setup.h"

static store_fixture pgfx;
static PGconn *conn;
static char err[4096];

static int exec_ok(const char *sql)
{
    PGresult *r = PQexec(conn, sql);
    int ok = PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK;
    if (!ok)
        fprintf(stderr, "%s: %s", sql, PQresultErrorMessage(r));
    PQclear(r);
    return ok ? 0 : -1;
}

/* The single value of a query ("" for no row, NULL for SQL NULL: "(null)"); static storage. */
static const char *value(const char *sql)
{
    static char buf[16384];
    PGresult *r = PQexec(conn, sql);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        fail_msg("%s: %s", sql, PQresultErrorMessage(r));
    snprintf(buf, sizeof buf, "%s", PQntuples(r) == 0 ? "" : PQgetisnull(r, 0, 0) ? "(null)" : PQgetvalue(r, 0, 0));
    PQclear(r);
    return buf;
}

static void apply_config(const char *json)
{
    ent_config cfg;
    if (emu_config_parse(json, strlen(json), "test", &cfg, err, sizeof err))
        fail_msg("config: %s", err);
    if (store_config_apply(conn, &cfg, err, sizeof err))
        fail_msg("apply: %s", err);
    ent_config_free(&cfg);
}

static int group_setup(void **state)
{
    (void)state;
    if (store_fixture_start(&pgfx, "snap", err, sizeof err)) {
        fprintf(stderr, "test_store_snapshot: cannot start PostgreSQL: %s\n", err);
        return -1;
    }
    conn = PQconnectdb(pgfx.conninfo);
    if (PQstatus(conn) != CONNECTION_OK || store_migrate(conn, err, sizeof err)) {
        fprintf(stderr, "test_store_snapshot: %s%s\n", PQerrorMessage(conn), err);
        return -1;
    }
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    PQfinish(conn);
    conn = NULL;
    store_fixture_stop(&pgfx);
    return 0;
}

/* A table's columns and types, in order, without the snapshot's own key. */
static char *columns_of(const char *table)
{
    char sql[512];
    snprintf(sql, sizeof sql,
             "SELECT string_agg(attname || ' ' || format_type(atttypid, atttypmod) || CASE WHEN attnotnull THEN"
             " ' not null' ELSE '' END, ', ' ORDER BY attnum) FROM pg_attribute WHERE attrelid = '%s'::regclass"
             " AND attnum > 0 AND NOT attisdropped AND attname NOT IN ('namespace', 'snapshot')",
             table);
    return strdup(value(sql));
}

static void test_snapshot_tables_have_every_column(void **state)
{
    (void)state;
    static const char *const pairs[][2] = {{"messages", "sbemu_snapshot_messages"},
                                           {"sessions", "sbemu_snapshot_sessions"},
                                           {"duplicate_detection", "sbemu_snapshot_duplicates"}};
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        char *live = columns_of(pairs[i][0]), *snap = columns_of(pairs[i][1]);
        if (strcmp(live, snap))
            fail_msg("%s has columns (%s) but %s keeps (%s): add the new ones to %s", pairs[i][0], live, pairs[i][1],
                     snap, pairs[i][1]);
        free(live);
        free(snap);
    }
}

#define CONFIG                                                                                                        \
    "{\"UserConfig\":{\"Namespaces\":[{\"Name\":\"sbemulatorns\",\"Queues\":[{\"Name\":\"dq\",\"Properties\":"        \
    "{\"MaxDeliveryCount\":4}},{\"Name\":\"dq2\"}],\"Topics\":[{\"Name\":\"dt\",\"Subscriptions\":[{\"Name\":"        \
    "\"plain\"},{\"Name\":\"ruled\",\"Rules\":[{\"Name\":\"red\",\"Properties\":{\"FilterType\":\"Sql\","             \
    "\"SqlFilter\":{\"SqlExpression\":\"color = 'red'\"}}}]}]}]}]}}"

/* What every entity looks like, for comparisons. */
#define ENTITY_VIEW                                                                                                   \
    "SELECT string_agg(x, ' | ' ORDER BY x) FROM (SELECT 'q ' || id || ' ' || name || ' ' || max_delivery_count AS x" \
    " FROM queues UNION ALL SELECT 't ' || id || ' ' || name FROM topics UNION ALL SELECT 's ' || id || ' ' || name" \
    " || ' ' || max_delivery_count FROM subscriptions UNION ALL SELECT 'r ' || id || ' ' || subscription_id || ' ' ||" \
    " name || ' ' || filter_type || ' ' || coalesce(sql_expression, '-') FROM rules) v"

static void test_declared_is_what_a_reset_restores(void **state)
{
    (void)state;
    assert_int_equal(exec_ok("DELETE FROM queues; DELETE FROM topics"), 0);
    apply_config(CONFIG);
    char *declared = strdup(value(ENTITY_VIEW));
    assert_string_equal(value("SELECT entities FROM sbemu_snapshots WHERE namespace = '' AND name = '$declared'"), "5");

    /* everything a test might do */
    assert_int_equal(exec_ok("INSERT INTO queues (name) VALUES ('extra');"
                             "UPDATE queues SET max_delivery_count = 9 WHERE name = 'dq';"
                             "DELETE FROM queues WHERE name = 'dq2';"
                             "INSERT INTO rules (subscription_id, name, filter_type) SELECT id, 'more', 'True'"
                             " FROM subscriptions WHERE name = 'plain';"
                             "DELETE FROM rules WHERE name = 'red';"
                             "INSERT INTO messages (entity_id, sequence_number, state, enqueued_at, available_at,"
                             " message) SELECT id, g, g % 4, now(), now(), '\\x01' FROM queues, generate_series(1, 20) g"
                             " WHERE name = 'dq';"
                             "UPDATE entity_runtime SET next_sequence_number = 21, size_in_bytes = 20"
                             " WHERE entity_id = (SELECT id FROM queues WHERE name = 'dq');"
                             "INSERT INTO sessions (entity_id, session_id, state, updated_at) SELECT id, 's', '\\x02',"
                             " now() FROM queues WHERE name = 'dq';"
                             "INSERT INTO duplicate_detection SELECT id, 'm', now() FROM queues WHERE name = 'dq';"
                             "UPDATE sbemu_clock SET offset_ms = 3600000"),
                     0);
    assert_string_not_equal(value(ENTITY_VIEW), declared);

    assert_int_equal(exec_ok("LISTEN sbemu_reset"), 0);
    assert_string_equal(value("SELECT clock_offset_ms || ' ' || entities || ' ' || messages FROM"
                              " sbemu_snapshot_restore('', '$declared', 1800000000000)"),
                        "0 5 0");
    assert_string_equal(value(ENTITY_VIEW), declared); /* ids too: dq2 is back as it was */
    assert_string_equal(value("SELECT (SELECT count(*) FROM messages) || ' ' || (SELECT count(*) FROM sessions) ||"
                              " ' ' || (SELECT count(*) FROM duplicate_detection) || ' ' || (SELECT offset_ms FROM"
                              " sbemu_clock)"),
                        "0 0 0 0");
    /* the sequence goes on; sizes are 0; activity is the reset's time */
    assert_string_equal(value("SELECT r.next_sequence_number || ' ' || r.size_in_bytes || ' ' || sbemu_ms(r.accessed_at)"
                              " FROM entity_runtime r JOIN queues q ON q.id = r.entity_id WHERE q.name = 'dq'"),
                        "21 0 1800000000000");
    assert_string_equal(value("SELECT count(*) FROM entity_runtime"), "5");
    /* every emulator is told: "<generation> <offset>" */
    PQconsumeInput(conn);
    PGnotify *n = PQnotifies(conn);
    assert_non_null(n);
    assert_string_equal(n->relname, STORE_RESET_CHANNEL);
    assert_non_null(strstr(n->extra, " 0"));
    PQfreemem(n);
    assert_int_equal(exec_ok("UNLISTEN sbemu_reset"), 0);

    /* a second start with the same file declares the same */
    apply_config(CONFIG);
    assert_string_equal(value("SELECT entities FROM sbemu_snapshots WHERE name = '$declared'"), "5");
    assert_string_equal(value("SELECT messages FROM sbemu_snapshot_restore('', '$declared', 1800000000000)"), "0");
    assert_string_equal(value(ENTITY_VIEW), declared);
    free(declared);

    /* an empty configuration (--config none) declares nothing: a reset leaves no entity */
    ent_config none;
    ent_config_init(&none);
    assert_int_equal(store_config_apply(conn, &none, err, sizeof err), 0);
    ent_config_free(&none);
    assert_string_equal(value("SELECT entities FROM sbemu_snapshot_restore('', '$declared', 1800000000000)"), "0");
    assert_string_equal(value("SELECT (SELECT count(*) FROM queues) + (SELECT count(*) FROM topics) +"
                              " (SELECT count(*) FROM entity_runtime)"),
                        "0");
}

/* Every message column as saved, but the lock: what a restore must give back. */
#define MESSAGES_VIEW                                                                                                 \
    "SELECT string_agg(concat_ws(',', entity_id, sequence_number, subqueue, state, sbemu_ms(enqueued_at),"            \
    " sbemu_ms(available_at), sbemu_ms(expires_at), time_to_live_ms, delivery_count, message_id, session_id,"         \
    " dead_letter_reason, dead_letter_error_description, encode(message, 'hex'), dead_letter_source), ' | '"          \
    " ORDER BY entity_id, sequence_number) FROM messages WHERE state <> 3"

static void test_restore_brings_back_every_row(void **state)
{
    (void)state;
    apply_config(CONFIG);
    assert_int_equal(exec_ok("INSERT INTO messages (entity_id, sequence_number, subqueue, state, enqueued_at,"
                             " available_at, expires_at, time_to_live_ms, lock_token, locked_until, delivery_count,"
                             " message_id, session_id, dead_letter_reason, dead_letter_error_description, message,"
                             " dead_letter_source)"
                             " SELECT q.id, g, (g = 5)::int, CASE WHEN g IN (2, 3) THEN g - 1 WHEN g = 6 THEN 3 ELSE 0 END,"
                             " sbemu_ts(1700000000000 + g), sbemu_ts(1700000000000 + g * 1000),"
                             " CASE WHEN g = 1 THEN sbemu_ts(1800000000000) END, CASE WHEN g = 1 THEN 60000 END,"
                             " CASE WHEN g = 4 THEN gen_random_uuid() END, CASE WHEN g = 4 THEN sbemu_ts(1700000060000)"
                             " END, g % 3, 'm' || g, CASE WHEN g = 4 THEN 'sess' END, CASE WHEN g = 5 THEN 'Why' END,"
                             " CASE WHEN g = 5 THEN 'because' END, decode(repeat('ab', g), 'hex'),"
                             " CASE WHEN g = 5 THEN 'elsewhere' END FROM queues q, generate_series(1, 6) g"
                             " WHERE q.name = 'dq';"
                             "UPDATE entity_runtime SET next_sequence_number = 7 WHERE entity_id = (SELECT id FROM"
                             " queues WHERE name = 'dq');"
                             "INSERT INTO sessions SELECT id, 'sess', '\\x0a0b', gen_random_uuid(),"
                             " sbemu_ts(1700000060000), sbemu_ts(1700000000000) FROM queues WHERE name = 'dq';"
                             "INSERT INTO sessions SELECT id, 'locked-only', NULL, gen_random_uuid(),"
                             " sbemu_ts(1700000060000), sbemu_ts(1700000000000) FROM queues WHERE name = 'dq';"
                             "INSERT INTO duplicate_detection SELECT id, 'm1', sbemu_ts(1700000000000) FROM queues"
                             " WHERE name = 'dq';"
                             "UPDATE sbemu_clock SET offset_ms = 7200000"),
                     0);
    char *messages = strdup(value(MESSAGES_VIEW)), *entities = strdup(value(ENTITY_VIEW));
    assert_string_equal(value("SELECT replaced || ' ' || clock_offset_ms || ' ' || entities || ' ' || messages FROM"
                              " sbemu_snapshot_save('', 'snap', 1700000000000)"),
                        "false 7200000 5 5"); /* the state-3 row (a transaction's) is not kept */

    /* a restore of a snapshot that does not exist: no row, nothing changed */
    assert_string_equal(value("SELECT count(*) FROM sbemu_snapshot_restore('', 'nope', 1800000000000)"), "0");
    assert_string_equal(value(MESSAGES_VIEW), messages);
    assert_string_equal(value("SELECT offset_ms FROM sbemu_clock"), "7200000");

    /* change everything, and hand out sequence numbers past the snapshot's */
    assert_int_equal(exec_ok("DELETE FROM messages; DELETE FROM sessions; DELETE FROM duplicate_detection;"
                             "UPDATE entity_runtime SET next_sequence_number = 40 WHERE entity_id = (SELECT id FROM"
                             " queues WHERE name = 'dq');"
                             "DELETE FROM topics; INSERT INTO queues (name) VALUES ('later');"
                             "UPDATE sbemu_clock SET offset_ms = 0"),
                     0);
    assert_string_equal(value("SELECT clock_offset_ms || ' ' || entities || ' ' || messages FROM"
                              " sbemu_snapshot_restore('', 'snap', 1800000000000)"),
                        "7200000 5 5");
    assert_string_equal(value(ENTITY_VIEW), entities);
    assert_string_equal(value(MESSAGES_VIEW), messages);
    assert_string_equal(value("SELECT count(*) FROM messages WHERE lock_token IS NOT NULL OR locked_until IS NOT NULL"),
                        "0");
    assert_string_equal(value("SELECT string_agg(session_id || ':' || encode(state, 'hex') || ':' ||"
                              " coalesce(lock_token::text, 'free'), ',') FROM sessions"),
                        "sess:0a0b:free"); /* a session with a lock and no state is not kept */
    assert_string_equal(value("SELECT string_agg(message_id || ':' || sbemu_ms(seen_at), ',') FROM"
                              " duplicate_detection"),
                        "m1:1700000000000");
    /* the larger of the two next numbers; the size counted from the messages */
    assert_string_equal(value("SELECT r.next_sequence_number || ' ' || r.size_in_bytes FROM entity_runtime r JOIN"
                              " queues q ON q.id = r.entity_id WHERE q.name = 'dq'"),
                        "40 15"); /* 1 + 2 + 3 + 4 + 5 bytes */
    assert_string_equal(value("SELECT offset_ms FROM sbemu_clock"), "7200000");

    /* a snapshot taken when more numbers were handed out restores its own */
    assert_int_equal(exec_ok("UPDATE entity_runtime SET next_sequence_number = 50 WHERE entity_id = (SELECT id"
                             " FROM queues WHERE name = 'dq')"),
                     0);
    assert_string_equal(value("SELECT replaced::text FROM sbemu_snapshot_save('', 'snap', 1700000000000)"), "true");
    /* the live number is lower than the snapshot's (as it is after a reset or an older restore) */
    assert_int_equal(exec_ok("UPDATE entity_runtime SET next_sequence_number = 45 WHERE entity_id = (SELECT id"
                             " FROM queues WHERE name = 'dq')"),
                     0);
    assert_string_equal(value("SELECT messages FROM sbemu_snapshot_restore('', 'snap', 1800000000000)"), "5");
    assert_string_equal(value("SELECT r.next_sequence_number FROM entity_runtime r JOIN queues q ON q.id ="
                              " r.entity_id WHERE q.name = 'dq'"),
                        "50");
    free(messages);
    free(entities);

    /* deleting a snapshot deletes its rows */
    assert_int_equal(exec_ok("DELETE FROM sbemu_snapshots WHERE name = 'snap'"), 0);
    assert_string_equal(value("SELECT (SELECT count(*) FROM sbemu_snapshot_messages) + (SELECT count(*) FROM"
                              " sbemu_snapshot_sessions) + (SELECT count(*) FROM sbemu_snapshot_duplicates) +"
                              " (SELECT count(*) FROM sbemu_snapshot_entities WHERE snapshot = 'snap')"),
                        "0");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_snapshot_tables_have_every_column),
        cmocka_unit_test(test_declared_is_what_a_reset_restores),
        cmocka_unit_test(test_restore_brings_back_every_row),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
