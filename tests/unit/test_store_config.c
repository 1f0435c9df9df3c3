/* store_config_apply against a real PostgreSQL: the embedded cluster the test
 * starts itself (store_fixture.h); nothing in the environment chooses another.
 * Each run creates its own database and drops it at the end. Never skipped: a
 * PostgreSQL that cannot start fails the test with the reason. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <libpq-fe.h>

#include "emu_config_json.h"
#include "ent_log.h"
#include "store_config.h"
#include "store_fixture.h"
#include "store_migrate.h"

static const char *conninfo;
static store_fixture pgfx;
static char dbname[64];
static PGconn *conn;
static char err[4096];

/* ---- Database per run --------------------------------------------------- */

static PGconn *connect_to(const char *db)
{
    const char *keys[] = {"dbname", db ? "dbname" : NULL, NULL};
    const char *vals[] = {conninfo, db, NULL};
    PGconn *c = PQconnectdbParams(keys, vals, 1);
    if (PQstatus(c) != CONNECTION_OK) {
        fprintf(stderr, "cannot connect: %s", PQerrorMessage(c));
        PQfinish(c);
        return NULL;
    }
    PQclear(PQexec(c, "SET client_min_messages = warning"));
    return c;
}

static int exec_admin(const char *sql)
{
    PGconn *admin = connect_to(NULL);
    if (!admin)
        return -1;
    PGresult *r = PQexec(admin, sql);
    int ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    if (!ok)
        fprintf(stderr, "%s: %s", sql, PQresultErrorMessage(r));
    PQclear(r);
    PQfinish(admin);
    return ok ? 0 : -1;
}

static int group_setup(void **state)
{
    (void)state;
    if (store_fixture_start(&pgfx, "store-config", err, sizeof err)) {
        fprintf(stderr, "test_store_config: cannot start PostgreSQL: %s\n", err);
        return -1;
    }
    conninfo = pgfx.conninfo;
    srand((unsigned)time(NULL) ^ (unsigned)getpid());
    snprintf(dbname, sizeof dbname, "sbemu_test_config_%d_%d", (int)getpid(), rand() % 100000);
    char sql[160];
    snprintf(sql, sizeof sql, "CREATE DATABASE %s", dbname);
    if (exec_admin(sql))
        return -1;
    conn = connect_to(dbname);
    if (!conn)
        return -1;
    if (store_migrate(conn, err, sizeof err)) {
        fprintf(stderr, "migrate: %s\n", err);
        return -1;
    }
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    int rc = 0;
    if (conn) {
        PQfinish(conn);
        conn = NULL;
        char sql[160];
        snprintf(sql, sizeof sql, "DROP DATABASE IF EXISTS %s WITH (FORCE)", dbname);
        rc = exec_admin(sql);
    }
    store_fixture_stop(&pgfx);
    return rc;
}

/* Each test starts from empty tables. */
static int setup(void **state)
{
    (void)state;
    if (!conn)
        return 0;
    PGresult *r = PQexec(conn, "TRUNCATE queues, topics, subscriptions, rules, messages RESTART IDENTITY CASCADE;"
                               " DELETE FROM namespaces WHERE id <> 1; DELETE FROM sbemu_snapshots;"
                               " UPDATE sbemu_clock SET offset_ms = 0");
    int ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    PQclear(r);
    return ok ? 0 : -1;
}

/* The group setup fails when it has no database, so this only guards. */
#define NEED_PG() assert_non_null(conn)

/* The single value of a query, as text ("<null>" for NULL). */
static char value_buf[4096];
__attribute__((format(printf, 1, 2)))
static const char *q1(const char *fmt, ...)
{
    char sql[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(sql, sizeof sql, fmt, ap);
    va_end(ap);
    PGresult *r = PQexec(conn, sql);
    if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1) {
        snprintf(value_buf, sizeof value_buf, "<error: %s>", PQresultErrorMessage(r));
    } else {
        snprintf(value_buf, sizeof value_buf, "%s", PQgetisnull(r, 0, 0) ? "<null>" : PQgetvalue(r, 0, 0));
    }
    PQclear(r);
    return value_buf;
}

static void exec_ok(const char *sql)
{
    PGresult *r = PQexec(conn, sql);
    if (PQresultStatus(r) != PGRES_COMMAND_OK && PQresultStatus(r) != PGRES_TUPLES_OK)
        fail_msg("%s: %s", sql, PQresultErrorMessage(r));
    PQclear(r);
}

static void parse(const char *text, ent_config *cfg)
{
    if (emu_config_parse(text, strlen(text), NULL, cfg, err, sizeof err))
        fail_msg("%s", err);
}

static void apply_text(const char *text)
{
    ent_config cfg;
    parse(text, &cfg);
    if (store_config_apply(conn, &cfg, err, sizeof err))
        fail_msg("%s", err);
    ent_config_free(&cfg);
}

/* ---- Fixtures ----------------------------------------------------------- */

static const char sample[] =
    "{\n"
    "  // as the official emulator's installer writes it\n"
    "  \"UserConfig\": {\"Namespaces\": [{\"Name\": \"sbemulatorns\",\n"
    "    \"Queues\": [\n"
    "      {\"Name\": \"queue.1\", \"Properties\": {\"DeadLetteringOnMessageExpiration\": false,\n"
    "        \"DefaultMessageTimeToLive\": \"PT1H\", \"DuplicateDetectionHistoryTimeWindow\": \"PT20S\",\n"
    "        \"ForwardDeadLetteredMessagesTo\": \"\", \"ForwardTo\": \"\", \"LockDuration\": \"PT1M\",\n"
    "        \"MaxDeliveryCount\": 3, \"RequiresDuplicateDetection\": false, \"RequiresSession\": false}},\n"
    "      {\"Name\": \"every\", \"Properties\": {\"LockDuration\": \"PT30S\", \"MaxDeliveryCount\": 2000,\n"
    "        \"DefaultMessageTimeToLive\": \"P14D\", \"DeadLetteringOnMessageExpiration\": true,\n"
    "        \"RequiresDuplicateDetection\": true, \"DuplicateDetectionHistoryTimeWindow\": \"P7D\",\n"
    "        \"RequiresSession\": true, \"ForwardTo\": \"queue.1\", \"ForwardDeadLetteredMessagesTo\": \"queue.1\",\n"
    "        \"AutoDeleteOnIdle\": \"PT5M\", \"Status\": \"ReceiveDisabled\", \"MaxSizeInMegabytes\": 5120,\n"
    "        \"EnableBatchedOperations\": false, \"EnablePartitioning\": true, \"UserMetadata\": \"meta\"}}\n"
    "    ],\n"
    "    \"Topics\": [{\"Name\": \"topic.1\", \"Properties\": {\"DefaultMessageTimeToLive\": \"PT1H\",\n"
    "        \"RequiresDuplicateDetection\": true, \"SupportOrdering\": true, \"Status\": \"SendDisabled\"},\n"
    "      \"Subscriptions\": [\n"
    "        {\"Name\": \"sub.corr\", \"Properties\": {\"MaxDeliveryCount\": 3, \"LockDuration\": \"PT45S\"},\n"
    "         \"Rules\": [{\"Name\": \"corr\", \"Properties\": {\"FilterType\": \"Correlation\",\n"
    "           \"CorrelationFilter\": {\"ContentType\": \"application/json\", \"Label\": \"urgent\",\n"
    "             \"Properties\": {\"prop3\": \"value3\", \"n\": 7, \"f\": 0.5, \"b\": false}}}}]},\n"
    "        {\"Name\": \"sub.sql\", \"Properties\": {\"DeadLetteringOnFilterEvaluationExceptions\": false,\n"
    "           \"ForwardTo\": \"queue.1\", \"Status\": \"ReceiveDisabled\"},\n"
    "         \"Rules\": [{\"Name\": \"sql\", \"Properties\": {\"FilterType\": \"Sql\",\n"
    "           \"SqlFilter\": {\"SqlExpression\": \"priority > 3\"},\n"
    "           \"Action\": {\"SqlExpression\": \"SET sys.To = 'x'\"}}}]},\n"
    "        {\"Name\": \"sub.plain\", \"Properties\": {}}\n"
    "      ]}]\n"
    "  }], \"Logging\": {\"Type\": \"File\"}}\n"
    "}\n";

/* ---- Tests -------------------------------------------------------------- */

static void check_sample_rows(void)
{
    assert_string_equal(q1("SELECT count(*) FROM queues"), "2");
    assert_string_equal(q1("SELECT count(*) FROM topics"), "1");
    assert_string_equal(q1("SELECT count(*) FROM subscriptions"), "3");
    assert_string_equal(q1("SELECT count(*) FROM rules"), "3");

    /* queue.1: the official values. */
    assert_string_equal(q1("SELECT sbemu_interval_ms(lock_duration) FROM queues WHERE name = 'queue.1'"), "60000");
    assert_string_equal(q1("SELECT max_delivery_count FROM queues WHERE name = 'queue.1'"), "3");
    assert_string_equal(q1("SELECT sbemu_interval_ms(default_message_time_to_live) FROM queues WHERE name = 'queue.1'"),
                        "3600000");
    assert_string_equal(
        q1("SELECT sbemu_interval_ms(duplicate_detection_history_time_window) FROM queues WHERE name = 'queue.1'"),
        "20000");
    assert_string_equal(q1("SELECT forward_to FROM queues WHERE name = 'queue.1'"), "<null>");
    assert_string_equal(q1("SELECT auto_delete_on_idle FROM queues WHERE name = 'queue.1'"), "<null>");
    assert_string_equal(q1("SELECT user_metadata FROM queues WHERE name = 'queue.1'"), "<null>");
    assert_string_equal(q1("SELECT status FROM queues WHERE name = 'queue.1'"), "Active");
    assert_string_equal(q1("SELECT max_size_in_megabytes FROM queues WHERE name = 'queue.1'"), "1024");
    assert_string_equal(q1("SELECT enable_batched_operations FROM queues WHERE name = 'queue.1'"), "t");

    /* every: every column set. */
    assert_string_equal(
        q1("SELECT concat_ws('|', sbemu_interval_ms(lock_duration), max_delivery_count,"
           " sbemu_interval_ms(default_message_time_to_live), dead_lettering_on_message_expiration,"
           " requires_duplicate_detection, sbemu_interval_ms(duplicate_detection_history_time_window),"
           " requires_session, forward_to, forward_dead_lettered_messages_to,"
           " sbemu_interval_ms(auto_delete_on_idle), status, max_size_in_megabytes, enable_batched_operations,"
           " enable_partitioning, user_metadata) FROM queues WHERE name = 'every'"),
        "30000|2000|1209600000|t|t|604800000|t|queue.1|queue.1|300000|ReceiveDisabled|5120|f|t|meta");

    assert_string_equal(
        q1("SELECT concat_ws('|', sbemu_interval_ms(default_message_time_to_live), requires_duplicate_detection,"
           " sbemu_interval_ms(duplicate_detection_history_time_window), coalesce(auto_delete_on_idle::text, 'null'),"
           " status, max_size_in_megabytes, enable_batched_operations, enable_partitioning, support_ordering,"
           " coalesce(user_metadata, 'null')) FROM topics WHERE name = 'topic.1'"),
        "3600000|t|600000|null|SendDisabled|1024|t|f|t|null");

    assert_string_equal(
        q1("SELECT concat_ws('|', sbemu_interval_ms(lock_duration), max_delivery_count,"
           " coalesce(default_message_time_to_live::text, 'null'), dead_lettering_on_filter_evaluation_exceptions,"
           " status) FROM subscriptions WHERE name = 'sub.corr'"),
        "45000|3|null|t|Active");
    assert_string_equal(
        q1("SELECT concat_ws('|', dead_lettering_on_filter_evaluation_exceptions, forward_to, status)"
           " FROM subscriptions WHERE name = 'sub.sql'"),
        "f|queue.1|ReceiveDisabled");
    assert_string_equal(q1("SELECT count(DISTINCT topic_id) FROM subscriptions"), "1");

    /* Rules. */
    assert_string_equal(
        q1("SELECT concat_ws('|', r.filter_type, coalesce(r.sql_expression, 'null'), r.correlation->>'ContentType',"
           " r.correlation->>'Label', r.correlation->'Properties'->>'prop3', r.correlation->'Properties'->'n',"
           " r.correlation->'Properties'->'f', r.correlation->'Properties'->'b', coalesce(r.action_expression, 'null'))"
           " FROM rules r JOIN subscriptions s ON s.id = r.subscription_id WHERE s.name = 'sub.corr'"),
        "Correlation|null|application/json|urgent|value3|7|0.5|false|null");
    assert_string_equal(q1("SELECT count(*) FROM rules r, jsonb_object_keys(r.correlation) k WHERE r.name = 'corr'"),
                        "3"); /* only the fields that were set */
    assert_string_equal(
        q1("SELECT concat_ws('|', r.name, r.filter_type, r.sql_expression, coalesce(r.correlation::text, 'null'),"
           " r.action_expression)"
           " FROM rules r JOIN subscriptions s ON s.id = r.subscription_id WHERE s.name = 'sub.sql'"),
        "sql|Sql|priority > 3|null|SET sys.To = 'x'");
    assert_string_equal(
        q1("SELECT concat_ws('|', r.name, r.filter_type, coalesce(r.sql_expression, 'null'),"
           " coalesce(r.action_expression, 'null'))"
           " FROM rules r JOIN subscriptions s ON s.id = r.subscription_id WHERE s.name = 'sub.plain'"),
        "$Default|True|null|null");
}

static void test_apply_sample(void **state)
{
    (void)state;
    NEED_PG();
    apply_text(sample);
    check_sample_rows();
}

/* Applying the same file again changes nothing: no row is even rewritten. */
static void test_idempotent(void **state)
{
    (void)state;
    NEED_PG();
    apply_text(sample);
    char before[1024];
    snprintf(before, sizeof before, "%s",
             q1("SELECT string_agg(x, ',' ORDER BY x) FROM ("
                " SELECT 'q' || id || ':' || xmin::text AS x FROM queues UNION ALL"
                " SELECT 't' || id || ':' || xmin::text FROM topics UNION ALL"
                " SELECT 's' || id || ':' || xmin::text FROM subscriptions UNION ALL"
                " SELECT 'r' || id || ':' || xmin::text FROM rules) v"));
    apply_text(sample);
    check_sample_rows();
    assert_string_equal(q1("SELECT string_agg(x, ',' ORDER BY x) FROM ("
                           " SELECT 'q' || id || ':' || xmin::text AS x FROM queues UNION ALL"
                           " SELECT 't' || id || ':' || xmin::text FROM topics UNION ALL"
                           " SELECT 's' || id || ':' || xmin::text FROM subscriptions UNION ALL"
                           " SELECT 'r' || id || ':' || xmin::text FROM rules) v"),
                        before);
}

static void test_update_keeps_messages_and_absent_entities(void **state)
{
    (void)state;
    NEED_PG();
    apply_text(sample);
    const char *qid = q1("SELECT id FROM queues WHERE name = 'queue.1'");
    char id[32];
    snprintf(id, sizeof id, "%s", qid);
    char sql[512];
    snprintf(sql, sizeof sql,
             "INSERT INTO messages (entity_id, sequence_number, enqueued_at, available_at, message)"
             " VALUES (%s, 1, now(), now(), '\\x00'::bytea)",
             id);
    exec_ok(sql);
    exec_ok("UPDATE queues SET updated_at = '2000-01-01' WHERE name = 'queue.1'");

    /* Another casing of the same name, a changed lock, and "every" left out. */
    apply_text("{\"UserConfig\": {\"Namespaces\": [{\"Name\": \"sbemulatorns\", \"Queues\": ["
               "{\"Name\": \"QUEUE.1\", \"Properties\": {\"LockDuration\": \"PT2M\", \"MaxDeliveryCount\": 3,"
               " \"DefaultMessageTimeToLive\": \"PT1H\", \"DuplicateDetectionHistoryTimeWindow\": \"PT20S\"}}],"
               " \"Topics\": []}], \"Logging\": {\"Type\": \"File\"}}}");
    assert_string_equal(q1("SELECT count(*) FROM queues"), "2");
    assert_string_equal(q1("SELECT name FROM queues WHERE lower(name) = 'queue.1'"), "queue.1");
    assert_string_equal(q1("SELECT sbemu_interval_ms(lock_duration) FROM queues WHERE name = 'queue.1'"), "120000");
    assert_string_equal(q1("SELECT updated_at > '2001-01-01' FROM queues WHERE name = 'queue.1'"), "t");
    assert_string_equal(q1("SELECT id FROM queues WHERE name = 'queue.1'"), id);
    assert_string_equal(q1("SELECT count(*) FROM messages"), "1");
    assert_string_equal(q1("SELECT count(*) FROM queues WHERE name = 'every'"), "1");
    assert_string_equal(q1("SELECT count(*) FROM subscriptions"), "3");

    /* A property dropped from the file goes back to its default. */
    apply_text("{\"UserConfig\": {\"Namespaces\": [{\"Name\": \"sbemulatorns\", \"Queues\": ["
               "{\"Name\": \"queue.1\"}]}], \"Logging\": {\"Type\": \"File\"}}}");
    assert_string_equal(q1("SELECT sbemu_interval_ms(lock_duration) FROM queues WHERE name = 'queue.1'"), "60000");
    assert_string_equal(q1("SELECT default_message_time_to_live FROM queues WHERE name = 'queue.1'"), "<null>");
    assert_string_equal(q1("SELECT max_delivery_count FROM queues WHERE name = 'queue.1'"), "10");
}

static void test_default_rule_only_when_no_rules(void **state)
{
    (void)state;
    NEED_PG();
    const char *plain = "{\"UserConfig\": {\"Namespaces\": [{\"Name\": \"sbemulatorns\", \"Topics\": ["
                        "{\"Name\": \"t\", \"Subscriptions\": [{\"Name\": \"s\", \"Rules\": []}]}]}],"
                        " \"Logging\": {\"Type\": \"File\"}}}";
    apply_text(plain);
    assert_string_equal(q1("SELECT string_agg(name || ':' || filter_type, ',') FROM rules"), "$Default:True");
    apply_text(plain);
    assert_string_equal(q1("SELECT count(*) FROM rules"), "1");

    /* A user replaced $Default with a rule of their own: no $Default comes back. */
    exec_ok("DELETE FROM rules");
    exec_ok("INSERT INTO rules (subscription_id, name, filter_type, sql_expression)"
            " SELECT id, 'mine', 'Sql', 'a = 1' FROM subscriptions");
    apply_text(plain);
    assert_string_equal(q1("SELECT string_agg(name, ',') FROM rules"), "mine");

    /* Rules in the file are added next to existing ones; nothing is deleted. */
    apply_text("{\"UserConfig\": {\"Namespaces\": [{\"Name\": \"sbemulatorns\", \"Topics\": ["
               "{\"Name\": \"t\", \"Subscriptions\": [{\"Name\": \"S\", \"Rules\": [{\"Name\": \"other\","
               " \"Properties\": {\"FilterType\": \"False\"}}]}]}]}], \"Logging\": {\"Type\": \"File\"}}}");
    assert_string_equal(q1("SELECT string_agg(name || ':' || filter_type, ',' ORDER BY name) FROM rules"),
                        "mine:Sql,other:False");
    assert_string_equal(q1("SELECT count(*) FROM subscriptions"), "1");

    /* A new subscription with rules in the file has those rules only: its
     * $Default (given by the trigger to every new subscription) is replaced,
     * unless the file names $Default itself. */
    apply_text("{\"UserConfig\": {\"Namespaces\": [{\"Name\": \"sbemulatorns\", \"Topics\": ["
               "{\"Name\": \"t\", \"Subscriptions\": [{\"Name\": \"fresh\", \"Rules\": [{\"Name\": \"f\","
               " \"Properties\": {\"FilterType\": \"Sql\", \"SqlFilter\": {\"SqlExpression\": \"a = 2\"}}}]},"
               " {\"Name\": \"keeps\", \"Rules\": [{\"Name\": \"$default\", \"Properties\": {\"FilterType\": \"Sql\","
               " \"SqlFilter\": {\"SqlExpression\": \"1=1\"}}}]}]}]}], \"Logging\": {\"Type\": \"File\"}}}");
    assert_string_equal(q1("SELECT string_agg(r.name || ':' || r.filter_type, ',') FROM rules r"
                           " JOIN subscriptions s ON s.id = r.subscription_id WHERE s.name = 'fresh'"),
                        "f:Sql");
    assert_string_equal(q1("SELECT string_agg(r.name || ':' || r.filter_type, ',') FROM rules r"
                           " JOIN subscriptions s ON s.id = r.subscription_id WHERE s.name = 'keeps'"),
                        "$Default:Sql");
    /* and a subscription inserted with plain SQL gets $Default */
    exec_ok("INSERT INTO subscriptions (topic_id, name) SELECT id, 'bysql' FROM topics");
    assert_string_equal(q1("SELECT string_agg(r.name || ':' || r.filter_type, ',') FROM rules r"
                           " JOIN subscriptions s ON s.id = r.subscription_id WHERE s.name = 'bysql'"),
                        "$Default:True");
}

/* messages.entity_id has no foreign key (migration 006): deleting an entity,
 * directly or through its topic, deletes its messages in the trigger. */
static void test_deleting_an_entity_deletes_its_messages(void **state)
{
    (void)state;
    NEED_PG();
    exec_ok("INSERT INTO queues (name) VALUES ('gone'), ('stays')");
    exec_ok("WITH t AS (INSERT INTO topics (name) VALUES ('tgone') RETURNING id)"
            " INSERT INTO subscriptions (topic_id, name) SELECT id, s FROM t, (VALUES ('a'), ('b')) v(s)");
    exec_ok("INSERT INTO messages (entity_id, sequence_number, enqueued_at, available_at, message)"
            " SELECT e.id, g, now(), now(), '\\x01'::bytea FROM entities e, generate_series(1, 3) g"
            " WHERE e.kind <> 'topic'");
    assert_string_equal(q1("SELECT count(*) FROM messages"), "12");
    exec_ok("DELETE FROM queues WHERE name = 'gone'");
    assert_string_equal(q1("SELECT count(*) FROM messages"), "9");
    exec_ok("DELETE FROM topics WHERE name = 'tgone'");
    assert_string_equal(q1("SELECT count(*) FROM messages"), "3");
    assert_string_equal(q1("SELECT count(*) FROM messages m JOIN queues q ON q.id = m.entity_id WHERE q.name = 'stays'"),
                        "3");
    assert_string_equal(q1("SELECT count(*) FROM messages m WHERE NOT EXISTS"
                           " (SELECT 1 FROM entities e WHERE e.id = m.entity_id)"), "0");
}

static void test_rule_update(void **state)
{
    (void)state;
    NEED_PG();
    apply_text(sample);
    apply_text("{\"UserConfig\": {\"Namespaces\": [{\"Name\": \"sbemulatorns\", \"Topics\": ["
               "{\"Name\": \"topic.1\", \"Subscriptions\": [{\"Name\": \"sub.corr\", \"Rules\": [{\"Name\": \"CORR\","
               " \"Properties\": {\"FilterType\": \"Sql\", \"SqlFilter\": {\"SqlExpression\": \"b = 2\"}}}]}]}]}],"
               " \"Logging\": {\"Type\": \"File\"}}}");
    assert_string_equal(
        q1("SELECT concat_ws('|', name, filter_type, sql_expression, coalesce(correlation::text, 'null'))"
           " FROM rules WHERE lower(name) = 'corr'"),
        "corr|Sql|b = 2|null");
    /* The topic went back to its defaults, its subscriptions stayed. */
    assert_string_equal(q1("SELECT status FROM topics"), "Active");
    assert_string_equal(q1("SELECT count(*) FROM subscriptions"), "3");
}

/* A failing statement rolls everything back and names the entity. */
static void test_failure_rolls_back(void **state)
{
    (void)state;
    NEED_PG();
    ent_config cfg;
    parse("{\"UserConfig\": {\"Namespaces\": [{\"Name\": \"sbemulatorns\", \"Queues\": ["
          "{\"Name\": \"first\"}, {\"Name\": \"second\"}]}], \"Logging\": {\"Type\": \"File\"}}}",
          &cfg);
    cfg.queues[1].status = (ent_entity_status)42; /* not a status: the CHECK refuses it */
    assert_int_equal(store_config_apply(conn, &cfg, err, sizeof err), -1);
    if (!strstr(err, "queue \"second\": ") || !strstr(err, "check constraint"))
        fail_msg("unexpected error: %s", err);
    assert_null(strchr(err, '\n'));
    ent_config_free(&cfg);
    assert_string_equal(q1("SELECT count(*) FROM queues"), "0");
    /* The connection is usable afterwards. */
    apply_text(sample);
    assert_string_equal(q1("SELECT count(*) FROM queues"), "2");
}

/* Config.json's Namespaces array: the first is the default namespace (row
 * 1, named after it), every other one a namespace of its own, made with its
 * entities and its declared snapshot; a reset of one touches no other. */
static const char several[] =
    "{\"UserConfig\": {\"Namespaces\": ["
    " {\"Name\": \"home-ns\", \"Queues\": [{\"Name\": \"q\"}],"
    "  \"Topics\": [{\"Name\": \"t\", \"Subscriptions\": [{\"Name\": \"s\"}]}]},"
    " {\"Name\": \"suite-a\", \"Queues\": [{\"Name\": \"q\", \"Properties\": {\"MaxDeliveryCount\": 7}},"
    "   {\"Name\": \"fwd\", \"Properties\": {\"ForwardTo\": \"q\"}}],"
    "  \"Topics\": [{\"Name\": \"t\", \"Subscriptions\": [{\"Name\": \"s\", \"Rules\": [{\"Name\": \"only\","
    "   \"Properties\": {\"FilterType\": \"Sql\", \"SqlFilter\": {\"SqlExpression\": \"1=1\"}}}]}]}]},"
    " {\"Name\": \"ns2\", \"Queues\": [{\"Name\": \"other\"}]}]}}";

static void test_several_namespaces(void **state)
{
    (void)state;
    NEED_PG();
    apply_text(several);
    assert_string_equal(q1("SELECT string_agg(id || ':' || name, ',' ORDER BY id) FROM namespaces"),
                        "1:home-ns,2:suite-a,3:ns2");
    assert_string_equal(q1("SELECT string_agg(namespace_id || '/' || name, ',' ORDER BY namespace_id, name)"
                           " FROM queues"),
                        "1/q,2/fwd,2/q,3/other");
    assert_string_equal(q1("SELECT max_delivery_count FROM queues WHERE namespace_id = 2 AND name = 'q'"), "7");
    assert_string_equal(q1("SELECT max_delivery_count FROM queues WHERE namespace_id = 1 AND name = 'q'"), "10");
    assert_string_equal(q1("SELECT string_agg(namespace_id || '/' || path, ',' ORDER BY namespace_id, path)"
                           " FROM entities WHERE kind <> 'queue'"),
                        "1/t,1/t/Subscriptions/s,2/t,2/t/Subscriptions/s");
    assert_string_equal(q1("SELECT string_agg(r.name, ',' ORDER BY t.namespace_id) FROM rules r"
                           " JOIN subscriptions s ON s.id = r.subscription_id JOIN topics t ON t.id = s.topic_id"),
                        "$Default,only");
    /* each namespace's own clock, and what a reset of each restores */
    assert_string_equal(q1("SELECT string_agg(namespace_id::text, ',' ORDER BY namespace_id) FROM sbemu_clock"),
                        "1,2,3");
    assert_string_equal(q1("SELECT string_agg(namespace || ':' || entities, ',' ORDER BY namespace)"
                           " FROM sbemu_snapshots WHERE name = '$declared'"),
                        ":3,ns2:1,suite-a:4");
    /* a second start changes nothing */
    apply_text(several);
    assert_string_equal(q1("SELECT count(*) FROM namespaces"), "3");
    assert_string_equal(q1("SELECT count(*) FROM queues"), "4");

    /* a restore of one namespace leaves the others' messages, entities and clocks alone */
    exec_ok("INSERT INTO messages (entity_id, sequence_number, enqueued_at, available_at, message)"
            " SELECT id, 1, now(), now(), '\\x00' FROM queues");
    exec_ok("INSERT INTO queues (name, namespace_id) VALUES ('extra', 1), ('extra', 2)");
    exec_ok("UPDATE sbemu_clock SET offset_ms = 5000");
    assert_string_equal(q1("SELECT count(*) FROM sbemu_snapshot_restore('suite-a', '$declared', 0)"), "1");
    assert_string_equal(q1("SELECT string_agg(q.namespace_id::text, ',' ORDER BY q.namespace_id) FROM messages m"
                           " JOIN queues q ON q.id = m.entity_id"),
                        "1,3");
    assert_string_equal(q1("SELECT string_agg(namespace_id || '/' || name, ',' ORDER BY namespace_id, name)"
                           " FROM queues"),
                        "1/extra,1/q,2/fwd,2/q,3/other");
    assert_string_equal(q1("SELECT string_agg(namespace_id || ':' || offset_ms, ',' ORDER BY namespace_id)"
                           " FROM sbemu_clock"),
                        "1:5000,2:0,3:5000");
    /* a snapshot of one namespace holds only its own */
    assert_string_equal(q1("SELECT entities || '/' || messages FROM sbemu_snapshot_save('', 'mine', 0)"), "4/1");
    assert_string_equal(q1("SELECT entities || '/' || messages FROM sbemu_snapshot_save('NS2', 'mine', 0)"), "1/1");
    assert_string_equal(q1("SELECT count(*) FROM sbemu_snapshots WHERE name = 'mine'"), "2");

    /* a namespace deleted takes its entities, their messages and its clock */
    exec_ok("DELETE FROM namespaces WHERE name = 'ns2'");
    assert_string_equal(q1("SELECT count(*) FROM queues WHERE name = 'other'"), "0");
    assert_string_equal(q1("SELECT count(*) FROM messages"), "1"); /* the default's; suite-a's went with its reset */
    assert_string_equal(q1("SELECT count(*) FROM sbemu_clock"), "2");

    /* the default may not take a name another namespace has */
    ent_config cfg;
    parse("{\"UserConfig\": {\"Namespaces\": [{\"Name\": \"Suite-A\"}]}}", &cfg);
    assert_int_equal(store_config_apply(conn, &cfg, err, sizeof err), -1);
    assert_non_null(strstr(err, "the default namespace is named \"Suite-A\" (Namespaces[0].Name), the name of another"
                                " namespace in the database"));
    ent_config_free(&cfg);
    assert_string_equal(q1("SELECT name FROM namespaces WHERE id = 1"), "home-ns");
    /* plain SQL cannot make a namespace of a name no namespace may have, nor a second "default" */
    PGresult *r = PQexec(conn, "INSERT INTO namespaces (name) VALUES ('a.b')");
    assert_int_equal(PQresultStatus(r), PGRES_FATAL_ERROR);
    assert_non_null(strstr(PQresultErrorMessage(r), "namespaces_name_syntax"));
    PQclear(r);
    r = PQexec(conn, "INSERT INTO namespaces (name) VALUES ('Default')");
    assert_int_equal(PQresultStatus(r), PGRES_FATAL_ERROR);
    PQclear(r);
    /* made on first use, once whatever the letter case */
    assert_string_equal(q1("SELECT sbemu_namespace_ensure('Fresh') = sbemu_namespace_ensure('fresh')"), "t");
}

/* Migration 014: a namespace's own keys and idle time (sbemu_namespace_put),
 * its deletion when idle on its own clock (sbemu_namespace_sweep), and a
 * namespace made again getting back what Config.json declared for it. */
static void test_namespace_keys_and_idle(void **state)
{
    (void)state;
    NEED_PG();
    apply_text(several);
    /* made, with keys and an idle time; then changed */
    assert_string_equal(q1("SELECT created FROM sbemu_namespace_put('fresh', 120000,"
                           " '[{\"name\": \"sender\", \"key\": \"k1\"}]')"),
                        "t");
    assert_string_equal(q1("SELECT created FROM sbemu_namespace_put('FRESH', NULL,"
                           " '[{\"name\": \"a\", \"key\": \"k2\"}, {\"name\": \"b\", \"key\": \"k3\"}]')"),
                        "f");
    assert_string_equal(q1("SELECT string_agg(k.key_name || '=' || k.key, ',' ORDER BY k.key_name) FROM namespace_keys k"
                           " JOIN namespaces n ON n.id = k.namespace_id WHERE n.name = 'fresh'"),
                        "a=k2,b=k3");
    assert_string_equal(q1("SELECT auto_delete_on_idle IS NULL FROM namespaces WHERE name = 'fresh'"), "t");
    /* the table's own checks */
    PGresult *r = PQexec(conn, "INSERT INTO namespace_keys VALUES (1, 'x', 'y')");
    assert_int_equal(PQresultStatus(r), PGRES_FATAL_ERROR);
    assert_non_null(strstr(PQresultErrorMessage(r), "namespace_keys_not_the_default"));
    PQclear(r);
    r = PQexec(conn, "UPDATE namespaces SET auto_delete_on_idle = '10 seconds' WHERE name = 'fresh'");
    assert_int_equal(PQresultStatus(r), PGRES_FATAL_ERROR);
    assert_non_null(strstr(PQresultErrorMessage(r), "namespaces_auto_delete_on_idle_at_least_1m"));
    PQclear(r);

    /* idle past its time on its own clock: suite-a (idle 2 min) goes once its clock is 3 min ahead; ns2 (no
     * idle time) and the default never do */
    assert_string_equal(q1("SELECT count(*) FROM sbemu_namespace_put('suite-a', 120000, '[]')"), "1");
    exec_ok("INSERT INTO messages (entity_id, sequence_number, enqueued_at, available_at, message)"
            " SELECT id, 1, now(), now(), '\\x00' FROM queues");
    assert_string_equal(q1("SELECT count(*) FROM sbemu_namespace_sweep(sbemu_ms(now()))"), "0");
    exec_ok("UPDATE sbemu_clock SET offset_ms = 180000 WHERE namespace_id = (SELECT id FROM namespaces"
            " WHERE name = 'suite-a')");
    assert_string_equal(q1("SELECT string_agg(name, ',') FROM sbemu_namespace_sweep(sbemu_ms(now()))"), "suite-a");
    assert_string_equal(q1("SELECT count(*) FROM namespaces WHERE name = 'suite-a'"), "0");
    assert_string_equal(q1("SELECT count(*) FROM queues q WHERE NOT EXISTS (SELECT 1 FROM namespaces n"
                           " WHERE n.id = q.namespace_id)"),
                        "0");
    assert_string_equal(q1("SELECT count(*) FROM messages"), "2"); /* the default's and ns2's */
    /* activity keeps it: an entity's accessed_at on its clock */
    assert_string_equal(q1("SELECT count(*) FROM sbemu_namespace_put('busy', 60000, '[]')"), "1");
    exec_ok("INSERT INTO queues (name, namespace_id) SELECT 'q', id FROM namespaces WHERE name = 'busy'");
    exec_ok("UPDATE sbemu_clock SET offset_ms = 600000 WHERE namespace_id = (SELECT id FROM namespaces"
            " WHERE name = 'busy')");
    exec_ok("UPDATE entity_runtime SET accessed_at = now() + interval '10 minutes' WHERE entity_id ="
            " (SELECT q.id FROM queues q JOIN namespaces n ON n.id = q.namespace_id WHERE n.name = 'busy')");
    assert_string_equal(q1("SELECT count(*) FROM sbemu_namespace_sweep(sbemu_ms(now()))"), "0");
    /* made again on first use: what Config.json declared comes back */
    assert_string_equal(q1("SELECT sbemu_namespace_ensure('suite-a') > 0"), "t");
    assert_string_equal(q1("SELECT string_agg(q.name, ',' ORDER BY q.name) FROM queues q JOIN namespaces n"
                           " ON n.id = q.namespace_id WHERE n.name = 'suite-a'"),
                        "fwd,q");
    assert_string_equal(q1("SELECT count(*) FROM subscriptions s JOIN topics t ON t.id = s.topic_id"
                           " JOIN namespaces n ON n.id = t.namespace_id WHERE n.name = 'suite-a'"),
                        "1");
}

static void test_load_and_apply(void **state)
{
    (void)state;
    NEED_PG();
    char path[] = "/tmp/sbemu-store-config-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, sample, strlen(sample)), (ssize_t)strlen(sample));
    close(fd);
    if (emu_config_load_and_apply(conn, path, err, sizeof err))
        fail_msg("%s", err);
    check_sample_rows();

    FILE *f = fopen(path, "w");
    fputs("{\"UserConfig\": {\"Namespaces\": [{\"Queues\": [{\"Name\": \"x\", \"Properties\": "
          "{\"MaxDeliveryCount\": 0}}]}]}}",
          f);
    fclose(f);
    assert_int_equal(emu_config_load_and_apply(conn, path, err, sizeof err), -1);
    assert_non_null(strstr(err, "queue \"x\": MaxDeliveryCount 0 is below the minimum 1"));
    assert_string_equal(q1("SELECT count(*) FROM queues WHERE name = 'x'"), "0");
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_apply_sample, setup),
        cmocka_unit_test_setup(test_deleting_an_entity_deletes_its_messages, setup),
        cmocka_unit_test_setup(test_idempotent, setup),
        cmocka_unit_test_setup(test_update_keeps_messages_and_absent_entities, setup),
        cmocka_unit_test_setup(test_default_rule_only_when_no_rules, setup),
        cmocka_unit_test_setup(test_rule_update, setup),
        cmocka_unit_test_setup(test_failure_rolls_back, setup),
        cmocka_unit_test_setup(test_load_and_apply, setup),
        cmocka_unit_test_setup(test_several_namespaces, setup),
        cmocka_unit_test_setup(test_namespace_keys_and_idle, setup),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
