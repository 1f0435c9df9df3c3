/* The CHECK constraints of migration 008 against the emulator's own validators,
 * on a real PostgreSQL (store_fixture.h; never skipped).
 *
 * Every limit is tried at its boundaries, computed from the C constants of
 * entities/ent_props.h: just inside must pass both, just outside must be
 * refused by both, and the table's refusal must name the constraint of that
 * rule. Name rules are swept over every ASCII character. So a limit changed
 * in C and not in SQL (or the other way) fails here, not in a user's psql.
 * Last, what the emulator itself writes (Config.json at every limit, the
 * image's default entities) must pass the constraints. */
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
#include "emu_default_config.h"
#include "ent_filter.h"
#include "ent_props.h"
#include "mgmt_rules.h"
#include "store_config.h"
#include "store_fixture.h"
#include "store_migrate.h"
#include "store_rule_json.h"

static store_fixture pgfx;
static PGconn *conn;
static char err[4096];

/* The parents the rows under test hang from (made in group_setup). */
#define TOPIC "checks"
#define SUB "sub"
static char topic_id[24], sub_id[24];

/* Names the rows under test take; the C props are made with the same. */
#define QNAME "checks-q"
#define TNAME "checks-t"
#define SNAME "checks-s"
#define RNAME "checks-r"

/* ---- The cluster (one per run: the fixture's own database) ------------- */

static int exec_on(PGconn *c, const char *sql)
{
    PGresult *r = PQexec(c, sql);
    int ok = PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK;
    if (!ok)
        fprintf(stderr, "%s: %s", sql, PQresultErrorMessage(r));
    PQclear(r);
    return ok ? 0 : -1;
}

/* The single value of a query, into buf. */
static int value_of(const char *sql, char *buf, size_t len)
{
    PGresult *r = PQexec(conn, sql);
    int ok = PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1;
    if (ok)
        snprintf(buf, len, "%s", PQgetvalue(r, 0, 0));
    else
        fprintf(stderr, "%s: %s", sql, PQresultErrorMessage(r));
    PQclear(r);
    return ok ? 0 : -1;
}

static int group_setup(void **state)
{
    (void)state;
    ent_limits_set(NULL);
    if (store_fixture_start(&pgfx, "checks", err, sizeof err)) {
        fprintf(stderr, "test_store_entity_checks: cannot start PostgreSQL: %s\n", err);
        return -1;
    }
    conn = PQconnectdb(pgfx.conninfo);
    if (PQstatus(conn) != CONNECTION_OK || store_migrate(conn, err, sizeof err)) {
        fprintf(stderr, "test_store_entity_checks: %s%s\n", PQerrorMessage(conn), err);
        return -1;
    }
    if (value_of("INSERT INTO topics (name) VALUES ('" TOPIC "') RETURNING id", topic_id, sizeof topic_id) ||
        value_of("INSERT INTO subscriptions (topic_id, name) SELECT id, '" SUB "' FROM topics RETURNING id", sub_id,
                 sizeof sub_id))
        return -1;
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

/* ---- Trying a row ------------------------------------------------------- */

/* Runs one statement with text parameters in a transaction that is rolled
 * back (so that no case sees another's row). Returns "" when it passed, the
 * name of the constraint it broke, or "error: ..." for any other failure. */
static const char *attempt(const char *sql, int n, const char *const *params)
{
    static char result[1024];
    result[0] = '\0';
    if (exec_on(conn, "BEGIN"))
        return "error: BEGIN";
    PGresult *r = PQexecParams(conn, sql, n, NULL, params, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_COMMAND_OK && PQresultStatus(r) != PGRES_TUPLES_OK) {
        const char *name = PQresultErrorField(r, PG_DIAG_CONSTRAINT_NAME);
        snprintf(result, sizeof result, "%s%s", name ? "" : "error: ", name ? name : PQresultErrorMessage(r));
    }
    PQclear(r);
    exec_on(conn, "ROLLBACK");
    return result;
}

typedef enum kind { QUEUE, TOPIC_KIND, SUBSCRIPTION } kind;
static const char *const tables[] = {"queues", "topics", "subscriptions"};

/* A row of `k` with `column` set to the SQL expression `value` (which may
 * use $1, given as p1). */
static const char *attempt_entity(kind k, const char *column, const char *value, const char *p1)
{
    char sql[512];
    if (k == SUBSCRIPTION)
        snprintf(sql, sizeof sql, "INSERT INTO subscriptions (topic_id, name, %s) VALUES (%s, '%s', %s)", column,
                 topic_id, SNAME, value);
    else
        snprintf(sql, sizeof sql, "INSERT INTO %s (name, %s) VALUES ('%s', %s)", tables[k], column,
                 k == QUEUE ? QNAME : TNAME, value);
    const char *params[] = {p1};
    return attempt(sql, p1 ? 1 : 0, params);
}

/* The emulator's verdict: a property set by name on props of kind `k` (the
 * setters check the value against the limits, as Config.json does). */
static bool c_takes(kind k, const char *property, ent_value v)
{
    char why[1024];
    switch (k) {
    case QUEUE: {
        ent_queue_props q;
        assert_int_equal(ent_queue_props_init(&q, QNAME, why, sizeof why), SB_OK);
        return ent_queue_set(&q, property, v, why, sizeof why) == SB_OK;
    }
    case TOPIC_KIND: {
        ent_topic_props t;
        assert_int_equal(ent_topic_props_init(&t, TNAME, why, sizeof why), SB_OK);
        return ent_topic_set(&t, property, v, why, sizeof why) == SB_OK;
    }
    case SUBSCRIPTION: {
        ent_subscription_props s;
        assert_int_equal(ent_subscription_props_init(&s, TOPIC, SNAME, why, sizeof why), SB_OK);
        return ent_subscription_set(&s, property, v, why, sizeof why) == SB_OK;
    }
    }
    return false;
}

/* What a case must get: a value at a limit's boundary is known to be just
 * inside (both must take it) or just outside (both must refuse it); a sweep
 * (every ASCII character, shapes of names) only asks that the two agree. */
typedef enum { EITHER, INSIDE, OUTSIDE } expect;

/* The two verdicts agree, are what `e` says, and a refusal names `constraint`. */
static void agree(const char *what, expect e, bool c_ok, const char *sql_result, const char *constraint)
{
    if (e == OUTSIDE && c_ok && !*sql_result)
        fail_msg("%s: just outside the limit, yet the emulator and the table both take it", what);
    if (e == INSIDE && !c_ok)
        fail_msg("%s: just inside the limit, yet the emulator refuses it", what);
    if (c_ok && *sql_result)
        fail_msg("%s: the emulator takes it, the table refuses it (%s)", what, sql_result);
    if (!c_ok && strcmp(sql_result, constraint))
        fail_msg("%s: the emulator refuses it; the table answers \"%s\", expected %s", what,
                 *sql_result ? sql_result : "ok", constraint);
}

/* A string of n copies of the UTF-8 character u (so that lengths are counted
 * in characters, not bytes), between prefix and suffix. Caller frees. */
static char *repeat(const char *prefix, const char *u, size_t n, const char *suffix)
{
    size_t ul = strlen(u);
    char *s = malloc(strlen(prefix) + n * ul + strlen(suffix) + 1);
    assert_non_null(s);
    char *p = s + sprintf(s, "%s", prefix);
    for (size_t i = 0; i < n; i++, p += ul)
        memcpy(p, u, ul);
    strcpy(p, suffix);
    return s;
}

/* ---- Durations and counts ----------------------------------------------- */

#define MS_PARAM "($1::bigint * interval '1 millisecond')"
#define TEN_YEARS_MS (3650 * ENT_DURATION_MS_PER_DAY)

static void duration_case(kind k, const char *column, const char *property, const char *constraint, int64_t ms,
                          expect e)
{
    char iso[ENT_DURATION_TEXT_MAX], p[32], what[256];
    ent_duration_format(ms, iso, sizeof iso);
    snprintf(p, sizeof p, "%lld", (long long)ms);
    snprintf(what, sizeof what, "%s.%s = %s", tables[k], column, iso);
    agree(what, e, c_takes(k, property, ent_value_string(iso)), attempt_entity(k, column, MS_PARAM, p), constraint);
}

/* min - 1 ms, min, and max and max + 1 ms (or, with no maximum, ten years). */
static void durations_around(kind k, const char *column, const char *property, const char *constraint, int64_t min,
                             int64_t max)
{
    duration_case(k, column, property, constraint, min - 1, OUTSIDE);
    duration_case(k, column, property, constraint, min, INSIDE);
    if (max == INT64_MAX) {
        duration_case(k, column, property, constraint, TEN_YEARS_MS, INSIDE);
        return;
    }
    duration_case(k, column, property, constraint, max, INSIDE);
    duration_case(k, column, property, constraint, max + 1, OUTSIDE);
}

static void test_durations(void **state)
{
    (void)state;
    durations_around(QUEUE, "lock_duration", "LockDuration", "queues_lock_duration_5s_to_5m",
                     ENT_LOCK_DURATION_MIN_MS, ENT_LOCK_DURATION_MAX_MS);
    durations_around(SUBSCRIPTION, "lock_duration", "LockDuration", "subscriptions_lock_duration_5s_to_5m",
                     ENT_LOCK_DURATION_MIN_MS, ENT_LOCK_DURATION_MAX_MS);
    const char *ttl[] = {"queues_default_message_time_to_live_at_least_1s",
                         "topics_default_message_time_to_live_at_least_1s",
                         "subscriptions_default_message_time_to_live_at_least_1s"};
    const char *idle[] = {"queues_auto_delete_on_idle_at_least_5m", "topics_auto_delete_on_idle_at_least_5m",
                          "subscriptions_auto_delete_on_idle_at_least_5m"};
    for (kind k = QUEUE; k <= SUBSCRIPTION; k++) {
        durations_around(k, "default_message_time_to_live", "DefaultMessageTimeToLive", ttl[k],
                         ENT_DEFAULT_TTL_MIN_MS, INT64_MAX);
        durations_around(k, "auto_delete_on_idle", "AutoDeleteOnIdle", idle[k], ENT_AUTO_DELETE_ON_IDLE_MIN_MS,
                         INT64_MAX);
    }
    durations_around(QUEUE, "duplicate_detection_history_time_window", "DuplicateDetectionHistoryTimeWindow",
                     "queues_duplicate_detection_history_time_window_20s_to_7d", ENT_DUP_WINDOW_MIN_MS,
                     ENT_DUP_WINDOW_MAX_MS);
    durations_around(TOPIC_KIND, "duplicate_detection_history_time_window", "DuplicateDetectionHistoryTimeWindow",
                     "topics_duplicate_detection_history_time_window_20s_to_7d", ENT_DUP_WINDOW_MIN_MS,
                     ENT_DUP_WINDOW_MAX_MS);
    /* NULL is unlimited where the column allows it */
    assert_string_equal(attempt_entity(QUEUE, "default_message_time_to_live", "NULL", NULL), "");
    assert_string_equal(attempt_entity(SUBSCRIPTION, "auto_delete_on_idle", "NULL", NULL), "");
}

static void count_case(kind k, const char *column, const char *property, const char *constraint, int64_t v, expect e)
{
    char p[32], what[256];
    snprintf(p, sizeof p, "%lld", (long long)v);
    snprintf(what, sizeof what, "%s.%s = %s", tables[k], column, p);
    agree(what, e, c_takes(k, property, ent_value_int(v)), attempt_entity(k, column, "$1::integer", p), constraint);
}

static void test_counts(void **state)
{
    (void)state;
    const int64_t deliveries[] = {ENT_MAX_DELIVERY_COUNT_MIN - 1, ENT_MAX_DELIVERY_COUNT_MIN, INT32_MAX};
    const expect dexp[] = {OUTSIDE, INSIDE, INSIDE};
    for (size_t i = 0; i < sizeof deliveries / sizeof deliveries[0]; i++) {
        count_case(QUEUE, "max_delivery_count", "MaxDeliveryCount", "queues_max_delivery_count_at_least_1",
                   deliveries[i], dexp[i]);
        count_case(SUBSCRIPTION, "max_delivery_count", "MaxDeliveryCount",
                   "subscriptions_max_delivery_count_at_least_1", deliveries[i], dexp[i]);
    }
    const int64_t sizes[] = {ENT_MAX_SIZE_IN_MEGABYTES_MIN - 1, ENT_MAX_SIZE_IN_MEGABYTES_MIN,
                             ENT_MAX_SIZE_IN_MEGABYTES_MAX, ENT_MAX_SIZE_IN_MEGABYTES_MAX + 1};
    const expect sexp[] = {OUTSIDE, INSIDE, INSIDE, OUTSIDE};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        count_case(QUEUE, "max_size_in_megabytes", "MaxSizeInMegabytes", "queues_max_size_in_megabytes_1_to_81920",
                   sizes[i], sexp[i]);
        count_case(TOPIC_KIND, "max_size_in_megabytes", "MaxSizeInMegabytes",
                   "topics_max_size_in_megabytes_1_to_81920", sizes[i], sexp[i]);
    }
}

/* ---- Text: user metadata, status ---------------------------------------- */

static void text_case(kind k, const char *column, const char *property, const char *constraint, const char *text,
                      expect e)
{
    char what[256];
    snprintf(what, sizeof what, "%s.%s = \"%.40s\"", tables[k], column, text);
    agree(what, e, c_takes(k, property, ent_value_string(text)), attempt_entity(k, column, "$1", text), constraint);
}

static void test_user_metadata_and_status(void **state)
{
    (void)state;
    const char *meta[] = {"queues_user_metadata_max_1024_chars", "topics_user_metadata_max_1024_chars",
                          "subscriptions_user_metadata_max_1024_chars"};
    const char *status[] = {"queues_status_active_disabled_send_or_receive_disabled",
                            "topics_status_active_disabled_or_send_disabled",
                            "subscriptions_status_active_disabled_or_receive_disabled"};
    for (kind k = QUEUE; k <= SUBSCRIPTION; k++) {
        for (size_t n = ENT_USER_METADATA_MAX; n <= ENT_USER_METADATA_MAX + 1; n++) {
            char *text = repeat("", "\xc3\xa9", n, ""); /* é: two bytes, one character */
            text_case(k, "user_metadata", "UserMetadata", meta[k], text, n <= ENT_USER_METADATA_MAX ? INSIDE : OUTSIDE);
            free(text);
        }
        for (ent_entity_status s = ENT_ENTITY_ACTIVE; s <= ENT_ENTITY_RECEIVE_DISABLED; s++)
            text_case(k, "status", "Status", status[k], ent_entity_status_name(s), EITHER); /* each kind has three */
    }
}

/* ---- Names ---------------------------------------------------------------- */

static void path_case(kind k, const char *name, const char *constraint, expect e)
{
    char what[128], why[512], sql[128];
    snprintf(what, sizeof what, "%s.name \"%.40s\"", tables[k], name);
    snprintf(sql, sizeof sql, "INSERT INTO %s (name) VALUES ($1)", tables[k]);
    const char *params[] = {name};
    agree(what, e, ent_check_entity_path("name", name, why, sizeof why) == SB_OK, attempt(sql, 1, params), constraint);
}

static void test_entity_names(void **state)
{
    (void)state;
    for (kind k = QUEUE; k <= TOPIC_KIND; k++) {
        char syntax[64], empty[64], longest[64];
        snprintf(syntax, sizeof syntax, "%s_name_path_syntax", tables[k]);
        snprintf(empty, sizeof empty, "%s_name_not_empty", tables[k]);
        snprintf(longest, sizeof longest, "%s_name_max_260_chars", tables[k]);
        /* every ASCII character inside a name (ENT_NAME_FORBIDDEN_CHARS among them) */
        for (int c = 1; c < 128; c++) {
            char name[4] = {'a', (char)c, 'b', 0};
            path_case(k, name, syntax, EITHER);
        }
        for (const char *f = ENT_NAME_FORBIDDEN_CHARS; *f; f++) {
            char name[4] = {'a', *f, 'b', 0};
            path_case(k, name, syntax, OUTSIDE);
        }
        const char *shapes[] = {"a", "a/b", "A.b-c_d~9/x", "/a", "a/", "a//b", "/", "\xc3\xa9", "a b"};
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
            path_case(k, shapes[i], syntax, EITHER);
        path_case(k, "", empty, OUTSIDE);
        for (size_t n = ENT_ENTITY_PATH_MAX; n <= ENT_ENTITY_PATH_MAX + 1; n++) {
            char *name = repeat("", "a", n, "");
            path_case(k, name, longest, n <= ENT_ENTITY_PATH_MAX ? INSIDE : OUTSIDE);
            free(name);
        }
    }
}

static void child_case(const char *table, size_t max, const char *name, const char *constraint, expect e)
{
    char what[128], why[512], sql[160];
    snprintf(what, sizeof what, "%s.name \"%.40s\"", table, name);
    const char *params[] = {name};
    if (!strcmp(table, "rules"))
        snprintf(sql, sizeof sql, "INSERT INTO rules (subscription_id, name, filter_type) VALUES (%s, $1, 'True')",
                 sub_id);
    else
        snprintf(sql, sizeof sql, "INSERT INTO subscriptions (topic_id, name) VALUES (%s, $1)", topic_id);
    agree(what, e, ent_check_child_name("name", name, max, why, sizeof why) == SB_OK, attempt(sql, 1, params),
          constraint);
}

static void test_child_names(void **state)
{
    (void)state;
    const struct {
        const char *table;
        size_t max;
    } kinds[] = {{"subscriptions", ENT_SUBSCRIPTION_NAME_MAX}, {"rules", ENT_RULE_NAME_MAX}};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        const char *t = kinds[i].table;
        char forbidden[64], control[64], empty[64], longest[64];
        snprintf(forbidden, sizeof forbidden, "%s_name_no_forbidden_chars", t);
        snprintf(control, sizeof control, "%s_name_no_control_chars", t);
        snprintf(empty, sizeof empty, "%s_name_not_empty", t);
        snprintf(longest, sizeof longest, "%s_name_max_%zu_chars", t, kinds[i].max);
        for (int c = 1; c < 128; c++) {
            char name[4] = {'a', (char)c, 'b', 0};
            child_case(t, kinds[i].max, name, strchr(ENT_CHILD_NAME_FORBIDDEN_CHARS, c) ? forbidden : control,
                       strchr(ENT_CHILD_NAME_FORBIDDEN_CHARS, c) || c < 32 || c == 127 ? OUTSIDE : EITHER);
        }
        child_case(t, kinds[i].max, "$Rule", forbidden, EITHER); /* both take it: "$" is not among ENT_CHILD_NAME_FORBIDDEN_CHARS */
        child_case(t, kinds[i].max, "", empty, OUTSIDE);
        for (size_t n = kinds[i].max; n <= kinds[i].max + 1; n++) {
            char *name = repeat("", "\xc3\xa9", n, "");
            child_case(t, kinds[i].max, name, longest, n <= kinds[i].max ? INSIDE : OUTSIDE);
            free(name);
        }
    }
}

/* ---- Forwarding ------------------------------------------------------------ */

static void test_forwarding(void **state)
{
    (void)state;
    const struct {
        kind k;
        const char *self; /* what the entity may not forward to */
        const char *loop;
    } kinds[] = {{QUEUE, "CHECKS-Q", "not_itself"}, {SUBSCRIPTION, "CHECKS", "not_own_topic"}};
    const struct {
        const char *column, *property;
    } columns[] = {{"forward_to", "ForwardTo"}, {"forward_dead_lettered_messages_to", "ForwardDeadLetteredMessagesTo"}};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        kind k = kinds[i].k;
        for (size_t j = 0; j < sizeof columns / sizeof columns[0]; j++) {
            const char *col = columns[j].column, *prop = columns[j].property;
            char loop[96], syntax[96], longest[96], empty[96];
            snprintf(loop, sizeof loop, "%s_%s_%s", tables[k], col, kinds[i].loop);
            snprintf(syntax, sizeof syntax, "%s_%s_path_syntax", tables[k], col);
            snprintf(longest, sizeof longest, "%s_%s_max_260_chars", tables[k], col);
            snprintf(empty, sizeof empty, "%s_%s_not_empty", tables[k], col);
            text_case(k, col, prop, loop, kinds[i].self, OUTSIDE); /* its own name in other letters */
            text_case(k, col, prop, syntax, "elsewhere", INSIDE);
            text_case(k, col, prop, syntax, "a@b", EITHER);
            text_case(k, col, prop, syntax, "a//b", OUTSIDE);
            for (size_t n = ENT_ENTITY_PATH_MAX; n <= ENT_ENTITY_PATH_MAX + 1; n++) {
                char *target = repeat("", "f", n, "");
                text_case(k, col, prop, longest, target, n <= ENT_ENTITY_PATH_MAX ? INSIDE : OUTSIDE);
                free(target);
            }
            /* No target is NULL. The emulator's props say it with "", which the
             * column refuses: one way to say "none". */
            assert_true(c_takes(k, prop, ent_value_string("")));
            assert_string_equal(attempt_entity(k, col, "''", NULL), empty);
            assert_string_equal(attempt_entity(k, col, "NULL", NULL), "");
        }
    }
}

/* ---- Rules ------------------------------------------------------------------ */

/* A rule row; columns and values are SQL (values may use $1 = p1). */
static const char *attempt_rule(const char *columns, const char *values, const char *p1)
{
    char sql[512];
    snprintf(sql, sizeof sql, "INSERT INTO rules (subscription_id, name, %s) VALUES (%s, '%s', %s)", columns, sub_id,
             RNAME, values);
    const char *params[] = {p1};
    return attempt(sql, p1 ? 1 : 0, params);
}

/* The emulator's verdict on a rule of this filter type with this SQL filter
 * and action (NULL: not set), as Config.json sets and validates it. */
static bool c_takes_rule(const char *filter_type, const char *sql, const char *action)
{
    ent_rule_props r;
    char why[512];
    assert_int_equal(ent_rule_props_init(&r, TOPIC, SUB, RNAME, why, sizeof why), SB_OK);
    bool ok = ent_rule_set(&r, "FilterType", ent_value_string(filter_type), why, sizeof why) == SB_OK &&
              (!sql || ent_rule_set(&r, "SqlFilter.SqlExpression", ent_value_string(sql), why, sizeof why) == SB_OK) &&
              (!action || ent_rule_set(&r, "Action.SqlExpression", ent_value_string(action), why, sizeof why) == SB_OK) &&
              ent_rule_validate(&r, why, sizeof why) == SB_OK;
    ent_rule_props_free(&r);
    return ok;
}

static void sql_filter_case(const char *sql, const char *constraint, expect e)
{
    char what[96];
    snprintf(what, sizeof what, "Sql rule \"%.40s\"", sql ? sql : "(null)");
    agree(what, e, c_takes_rule("Sql", sql, NULL),
          attempt_rule("filter_type, sql_expression", sql ? "'Sql', $1" : "'Sql', NULL", sql), constraint);
}

static void action_case(const char *action, const char *constraint, expect e)
{
    char what[96];
    snprintf(what, sizeof what, "action \"%.40s\"", action);
    agree(what, e, c_takes_rule("True", NULL, action), attempt_rule("filter_type, action_expression", "'True', $1", action),
          constraint);
}

static void test_sql_filters_and_actions(void **state)
{
    (void)state;
    sql_filter_case("a = 1", "", INSIDE);
    sql_filter_case(NULL, "rules_sql_filter_needs_sql_expression", OUTSIDE);
    sql_filter_case("", "rules_sql_filter_needs_sql_expression", OUTSIDE);
    sql_filter_case(" \t\n\v\f\r", "rules_sql_filter_needs_sql_expression", OUTSIDE);
    for (size_t n = ENT_SQL_EXPRESSION_MAX; n <= ENT_SQL_EXPRESSION_MAX + 1; n++) {
        char *sql = repeat("a = '", "\xc3\xa9", n - 6, "'"); /* n characters */
        sql_filter_case(sql, "rules_sql_expression_max_1024_chars", n <= ENT_SQL_EXPRESSION_MAX ? INSIDE : OUTSIDE);
        free(sql);
        char *action = repeat("SET a = '", "\xc3\xa9", n - 10, "'");
        action_case(action, "rules_action_expression_max_1024_chars", n <= ENT_SQL_EXPRESSION_MAX ? INSIDE : OUTSIDE);
        free(action);
    }
    /* True and False need neither a SQL filter nor a correlation */
    assert_true(c_takes_rule("True", NULL, NULL));
    assert_true(c_takes_rule("False", NULL, NULL));
    assert_string_equal(attempt_rule("filter_type", "'True'", NULL), "");
    assert_string_equal(attempt_rule("filter_type", "'False'", NULL), "");
    assert_string_equal(attempt_rule("filter_type", "'Sometimes'", NULL), "rules_filter_type_sql_correlation_true_or_false");
    /* No action is NULL. Config.json stores a blank one as NULL, $management
     * refuses it; the column refuses it too. */
    assert_string_equal(attempt_rule("filter_type, action_expression", "'True', ' '", NULL),
                        "rules_action_expression_not_blank");
}

/* A correlation document the table takes must be one the emulator reads
 * (store_rule_correlation_parse, as the entity cache does) into a filter
 * that compiles; one it refuses must be refused with `constraint`. */
static void correlation_case(const char *json, const char *constraint)
{
    const char *got = attempt_rule("filter_type, correlation", "'Correlation', $1::jsonb", json);
    if (strcmp(got, constraint))
        fail_msg("correlation %s: the table answers \"%s\", expected \"%s\"", json, *got ? got : "ok", constraint);
    if (*constraint)
        return;
    ent_filter_correlation c;
    char *storage;
    store_rule_props props;
    char why[256];
    if (store_rule_correlation_parse(json, &c, &storage, &props, why, sizeof why))
        fail_msg("correlation %s: the table takes it, the emulator cannot read it: %s", json, why);
    ent_filter *f = NULL;
    ent_filter_error fe = {0};
    if (ent_filter_new_correlation(&c, &f, &fe))
        fail_msg("correlation %s: the table takes it, the emulator cannot compile it: %s", json, fe.message);
    ent_filter_free(f);
    free(storage);
    store_rule_props_free(&props);
}

static void test_correlation_filters(void **state)
{
    (void)state;
    const char *empty = "rules_correlation_filter_needs_a_property", *shape = "rules_correlation_known_keys_and_types";
    correlation_case("{\"Label\": \"x\"}", "");
    correlation_case("{\"ContentType\": \"a\", \"CorrelationId\": \"b\", \"Label\": \"c\", \"MessageId\": \"d\","
                     " \"ReplyTo\": \"e\", \"ReplyToSessionId\": \"f\", \"SessionId\": \"g\", \"To\": \"h\","
                     " \"Properties\": {\"s\": \"v\", \"n\": 7, \"d\": 0.5, \"b\": true, \"z\": null,"
                     " \"t\": {\"type\": \"timestamp\", \"value\": \"2026-01-02T03:04:05Z\"},"
                     " \"p\": {\"type\": \"timespan\", \"value\": \"00:01:30\"},"
                     " \"g\": {\"type\": \"guid\", \"value\": \"8f5e7c1a-2b3c-4d5e-8f9a-0b1c2d3e4f5a\"}}}",
                     "");
    correlation_case("{\"Properties\": {\"region\": \"eu\"}}", "");
    correlation_case("{\"Label\": \"\"}", ""); /* an empty string is a value to match */
    correlation_case("{\"To\": \"x\", \"Label\": null, \"Properties\": null}", "");
    correlation_case("{}", empty);
    correlation_case("{\"Label\": null}", empty);
    correlation_case("{\"Properties\": {}}", empty);
    correlation_case("[\"Label\"]", empty);
    correlation_case("{\"Subject\": \"x\"}", shape);                     /* Config.json's alias; the column says Label */
    correlation_case("{\"Label\": \"x\", \"label\": \"y\"}", shape);     /* keys are case-sensitive */
    correlation_case("{\"Label\": \"x\", \"To\": 1}", shape);
    correlation_case("{\"Properties\": {\"a\": [1]}}", shape);
    correlation_case("{\"Properties\": {\"\": 1}}", shape);
    correlation_case("{\"Properties\": {\"a\": {\"type\": \"date\", \"value\": \"x\"}}}", shape);
    correlation_case("{\"Label\": \"x\", \"Properties\": [1]}", shape);
    assert_string_equal(attempt_rule("filter_type", "'Correlation'", NULL), empty);
    /* parameters: an object of rule values, as for correlation properties */
    assert_string_equal(attempt_rule("filter_type, sql_expression, filter_parameters",
                                     "'Sql', 'a = @a', '{\"@a\": {\"type\": \"guid\", \"value\": \"8f5e7c1a-2b3c-4d5e-8f9a-0b1c2d3e4f5a\"}}'", NULL),
                        "");
    assert_string_equal(attempt_rule("filter_type, sql_expression, filter_parameters", "'Sql', 'a = @a', '[1]'", NULL),
                        "rules_filter_parameters_known_types");
    assert_string_equal(attempt_rule("filter_type, action_expression, action_parameters",
                                     "'True', 'SET a = @a', '{\"@a\": {\"x\": 1}}'", NULL),
                        "rules_action_parameters_known_types");
}

/* ---- What the emulator writes itself ----------------------------------------- */

static void apply(const char *text)
{
    ent_config cfg;
    if (emu_config_parse(text, strlen(text), NULL, &cfg, err, sizeof err))
        fail_msg("parse: %s", err);
    if (store_config_apply(conn, &cfg, err, sizeof err))
        fail_msg("the constraints refuse what Config.json wrote: %s", err);
    ent_config_free(&cfg);
}

/* A Config.json with every limit at its edge, from the C constants. */
static void test_config_at_every_limit_passes(void **state)
{
    (void)state;
    char lock_min[ENT_DURATION_TEXT_MAX], lock_max[ENT_DURATION_TEXT_MAX], ttl[ENT_DURATION_TEXT_MAX],
        idle[ENT_DURATION_TEXT_MAX], dup_min[ENT_DURATION_TEXT_MAX], dup_max[ENT_DURATION_TEXT_MAX];
    ent_duration_format(ENT_LOCK_DURATION_MIN_MS, lock_min, sizeof lock_min);
    ent_duration_format(ENT_LOCK_DURATION_MAX_MS, lock_max, sizeof lock_max);
    ent_duration_format(ENT_DEFAULT_TTL_MIN_MS, ttl, sizeof ttl);
    ent_duration_format(ENT_AUTO_DELETE_ON_IDLE_MIN_MS, idle, sizeof idle);
    ent_duration_format(ENT_DUP_WINDOW_MIN_MS, dup_min, sizeof dup_min);
    ent_duration_format(ENT_DUP_WINDOW_MAX_MS, dup_max, sizeof dup_max);
    char *qname = repeat("q", "x", ENT_ENTITY_PATH_MAX - 1, "");
    char *tname = repeat("t", "x", ENT_ENTITY_PATH_MAX - 1, "");
    char *sname = repeat("", "\xc3\xa9", ENT_SUBSCRIPTION_NAME_MAX, "");
    char *rname = repeat("$", "\xc3\xa9", ENT_RULE_NAME_MAX - 1, "");
    char *meta = repeat("", "\xc3\xa9", ENT_USER_METADATA_MAX, "");
    char *sql = repeat("a = '", "\xc3\xa9", ENT_SQL_EXPRESSION_MAX - 6, "'");
    char *action = repeat("SET a = '", "\xc3\xa9", ENT_SQL_EXPRESSION_MAX - 10, "'");
    size_t cap = 16384 + strlen(qname) * 3 + strlen(tname) * 2 + strlen(meta) * 3 + strlen(sql) + strlen(action);
    char *text = malloc(cap);
    assert_non_null(text);
    snprintf(text, cap,
             "{\"UserConfig\": {\"Namespaces\": [{\"Name\": \"sbemulatorns\","
             " \"Queues\": [{\"Name\": \"edge\"},"
             "  {\"Name\": \"%s\", \"Properties\": {\"LockDuration\": \"%s\", \"MaxDeliveryCount\": %d,"
             "   \"DefaultMessageTimeToLive\": \"%s\", \"DuplicateDetectionHistoryTimeWindow\": \"%s\","
             "   \"AutoDeleteOnIdle\": \"%s\", \"MaxSizeInMegabytes\": %d, \"UserMetadata\": \"%s\","
             "   \"ForwardTo\": \"%s\", \"ForwardDeadLetteredMessagesTo\": \"edge\", \"Status\": \"ReceiveDisabled\"}},"
             "  {\"Name\": \"edge.max\", \"Properties\": {\"LockDuration\": \"%s\", \"DuplicateDetectionHistoryTimeWindow\": \"%s\","
             "   \"MaxSizeInMegabytes\": %d, \"DefaultMessageTimeToLive\": \"" ENT_DURATION_MAXVALUE_TEXT "\","
             "   \"AutoDeleteOnIdle\": \"" ENT_DURATION_MAXVALUE_TEXT "\", \"ForwardTo\": \"\", \"UserMetadata\": \"\"}}],"
             " \"Topics\": [{\"Name\": \"%s\", \"Properties\": {\"DefaultMessageTimeToLive\": \"%s\","
             "   \"DuplicateDetectionHistoryTimeWindow\": \"%s\", \"AutoDeleteOnIdle\": \"%s\", \"MaxSizeInMegabytes\": %d,"
             "   \"UserMetadata\": \"%s\", \"Status\": \"SendDisabled\"},"
             "  \"Subscriptions\": [{\"Name\": \"%s\", \"Properties\": {\"LockDuration\": \"%s\", \"MaxDeliveryCount\": %d,"
             "   \"DefaultMessageTimeToLive\": \"%s\", \"AutoDeleteOnIdle\": \"%s\", \"UserMetadata\": \"%s\","
             "   \"ForwardTo\": \"edge\", \"ForwardDeadLetteredMessagesTo\": \"%s\", \"Status\": \"ReceiveDisabled\"},"
             "   \"Rules\": [{\"Name\": \"%s\", \"Properties\": {\"FilterType\": \"Sql\", \"SqlFilter\": {\"SqlExpression\": \"%s\"},"
             "     \"Action\": {\"SqlExpression\": \"%s\"}}},"
             "    {\"Name\": \"corr\", \"Properties\": {\"FilterType\": \"Correlation\", \"CorrelationFilter\": {\"Subject\": \"s\","
             "     \"ContentType\": \"c\", \"CorrelationId\": \"i\", \"MessageId\": \"m\", \"ReplyTo\": \"r\","
             "     \"ReplyToSessionId\": \"rs\", \"SessionId\": \"si\", \"To\": \"t\","
             "     \"Properties\": {\"s\": \"v\", \"n\": 7, \"d\": 0.5, \"b\": false}}}},"
             "    {\"Name\": \"props-only\", \"Properties\": {\"FilterType\": \"Correlation\","
             "     \"CorrelationFilter\": {\"Properties\": {\"p\": \"v\"}}, \"Action\": {\"SqlExpression\": \"  \"}}},"
             "    {\"Name\": \"never\", \"Properties\": {\"FilterType\": \"False\"}}]}]}]}],"
             " \"Logging\": {\"Type\": \"File\"}}}",
             qname, lock_min, ENT_MAX_DELIVERY_COUNT_MIN, ttl, dup_min, idle, ENT_MAX_SIZE_IN_MEGABYTES_MIN, meta, tname,
             lock_max, dup_max, ENT_MAX_SIZE_IN_MEGABYTES_MAX, tname, ttl, dup_max, idle, ENT_MAX_SIZE_IN_MEGABYTES_MAX,
             meta, sname, lock_max, ENT_MAX_DELIVERY_COUNT_MIN, ttl, idle, meta, qname, rname, sql, action);
    apply(text);
    apply(text); /* and as an update of the same rows */
    char n[32];
    assert_int_equal(value_of("SELECT count(*) FROM rules r JOIN subscriptions s ON s.id = r.subscription_id"
                              " JOIN topics t ON t.id = s.topic_id WHERE t.name LIKE 'tx%'",
                              n, sizeof n),
                     0);
    assert_string_equal(n, "4");
    free(text);
    free(qname);
    free(tname);
    free(sname);
    free(rname);
    free(meta);
    free(sql);
    free(action);
}

static void test_default_entities_pass(void **state)
{
    (void)state;
    apply(emu_default_config_json());
    char n[32];
    assert_int_equal(value_of("SELECT count(*) FROM rules r JOIN subscriptions s ON s.id = r.subscription_id"
                              " JOIN topics t ON t.id = s.topic_id WHERE t.name = 'topic.1'",
                              n, sizeof n),
                     0);
    assert_string_equal(n, "4"); /* three rules, and $Default of subscription.3 */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_durations),
        cmocka_unit_test(test_counts),
        cmocka_unit_test(test_user_metadata_and_status),
        cmocka_unit_test(test_entity_names),
        cmocka_unit_test(test_child_names),
        cmocka_unit_test(test_forwarding),
        cmocka_unit_test(test_sql_filters_and_actions),
        cmocka_unit_test(test_correlation_filters),
        cmocka_unit_test(test_config_at_every_limit_passes),
        cmocka_unit_test(test_default_entities_pass),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
