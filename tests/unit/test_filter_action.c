/* Rule actions (SET/REMOVE), correlation filters, rules and the owning
 * kvmsg message, table-driven where the cases are alike. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ent_filter.h"
#include "filter_fixture.h"

#define PRINT_MAX 4096

/* The message actions start from: small, so that expectations stay readable. */
static void small_message(ent_filter_kvmsg *m)
{
    ent_filter_value v;
    ent_filter_kvmsg_init(m);
    fix_sys_str(m, ENT_SYS_MESSAGE_ID, "m1");
    fix_sys_str(m, ENT_SYS_LABEL, "lbl");
    v = ent_fv_int(42);
    ent_filter_kvmsg_set_sys(m, ENT_SYS_SEQUENCE_NUMBER, &v);
    v = ent_fv_duration(60000);
    ent_filter_kvmsg_set_sys(m, ENT_SYS_TIME_TO_LIVE, &v);
    fix_user(m, "color", ent_fv_cstr("red"));
    fix_user(m, "qty", ent_fv_int(5));
    fix_user(m, "price", ent_fv_double(2.5));
}

#define SYS0 "sys{ MessageId=s:'m1' Label=s:'lbl' TimeToLive=ts:60000 SequenceNumber=i:42 }"
#define USER0 "color=s:'red' qty=i:5 price=d:2.5"

typedef struct action_case {
    const char *action;
    const char *want; /* fix_print() of the result */
} action_case;

static const action_case action_cases[] = {
    {"SET color = 'blue'", SYS0 " user{ color=s:'blue' qty=i:5 price=d:2.5 }"},
    {"SET newp = 1", SYS0 " user{ " USER0 " newp=i:1 }"},
    {"SET qty = qty + 1", SYS0 " user{ color=s:'red' qty=i:6 price=d:2.5 }"},
    {"SET price = 3", SYS0 " user{ color=s:'red' qty=i:5 price=d:3 }"}, /* int -> double */
    {"SET qty = 2.5", SYS0 " user{ color=s:'red' qty=d:2.5 price=d:2.5 }"},
    {"SET qty = 'five'", SYS0 " user{ color=s:'red' qty=s:'five' price=d:2.5 }"},
    {"REMOVE color", SYS0 " user{ qty=i:5 price=d:2.5 }"},
    {"REMOVE missing", SYS0 " user{ " USER0 " }"},
    {"REMOVE user.COLOR", SYS0 " user{ qty=i:5 price=d:2.5 }"},
    {"SET a = 1; SET b = a + 1", SYS0 " user{ " USER0 " a=i:1 b=i:2 }"},
    {"SET a = 1, SET b = 2", SYS0 " user{ " USER0 " a=i:1 b=i:2 }"},
    {"SET a = 1; SET b = 2;", SYS0 " user{ " USER0 " a=i:1 b=i:2 }"},
    {"SET a = 1;, SET b = 2", SYS0 " user{ " USER0 " a=i:1 b=i:2 }"},
    {"set A = 1 ; remove qty", SYS0 " user{ color=s:'red' price=d:2.5 A=i:1 }"},
    {"SET user.Color = 'green'", SYS0 " user{ color=s:'green' qty=i:5 price=d:2.5 }"},
    {"SET [my prop] = TRUE", SYS0 " user{ " USER0 " my prop=b:true }"},
    {"SET x = missing", SYS0 " user{ " USER0 " x=n:null }"},
    {"SET x = NULL", SYS0 " user{ " USER0 " x=n:null }"},
    {"SET color = color + color", SYS0 " user{ color=s:'redred' qty=i:5 price=d:2.5 }"},
    {"SET color = color", SYS0 " user{ " USER0 " }"},
    {"SET flag = qty > 3", SYS0 " user{ " USER0 " flag=b:true }"},
    {"SET u = p('col' + 'or')", SYS0 " user{ " USER0 " u=s:'red' }"},
    {"SET copy = sys.SequenceNumber", SYS0 " user{ " USER0 " copy=i:42 }"},
    {"SET t = sys.TimeToLive", SYS0 " user{ " USER0 " t=ts:60000 }"},
    {"SET r = sys.ReplyTo", SYS0 " user{ " USER0 " r=n:null }"}, /* unset string: NULL */
    {"SET a = 1, REMOVE a", SYS0 " user{ " USER0 " }"},
    {"SET sys.Label = 'new'",
     "sys{ MessageId=s:'m1' Label=s:'new' TimeToLive=ts:60000 SequenceNumber=i:42 } user{ " USER0 " }"},
    {"SET sys.Subject = 'new'",
     "sys{ MessageId=s:'m1' Label=s:'new' TimeToLive=ts:60000 SequenceNumber=i:42 } user{ " USER0 " }"},
    {"SET sys.Label = qty",
     "sys{ MessageId=s:'m1' Label=s:'5' TimeToLive=ts:60000 SequenceNumber=i:42 } user{ " USER0 " }"},
    {"SET sys.Label = price",
     "sys{ MessageId=s:'m1' Label=s:'2.5' TimeToLive=ts:60000 SequenceNumber=i:42 } user{ " USER0 " }"},
    {"SET sys.Label = TRUE",
     "sys{ MessageId=s:'m1' Label=s:'True' TimeToLive=ts:60000 SequenceNumber=i:42 } user{ " USER0 " }"},
    {"SET sys.Label = NULL", "sys{ MessageId=s:'m1' TimeToLive=ts:60000 SequenceNumber=i:42 } user{ " USER0 " }"},
    {"SET sys.Label = missing",
     "sys{ MessageId=s:'m1' TimeToLive=ts:60000 SequenceNumber=i:42 } user{ " USER0 " }"},
    {"REMOVE sys.Label", "sys{ MessageId=s:'m1' TimeToLive=ts:60000 SequenceNumber=i:42 } user{ " USER0 " }"},
    {"SET sys.To = sys.MessageId + '-to'",
     "sys{ MessageId=s:'m1' Label=s:'lbl' To=s:'m1-to' TimeToLive=ts:60000 SequenceNumber=i:42 } user{ " USER0 " }"},
    {"SET sys.CorrelationId = newid() = newid()",
     "sys{ MessageId=s:'m1' CorrelationId=s:'False' Label=s:'lbl' TimeToLive=ts:60000 SequenceNumber=i:42 } user{ " USER0
     " }"},
    {"SET sys.SessionId = 's', SET sys.ReplyTo = 'r', SET sys.ReplyToSessionId = 'rs', SET sys.ContentType = 'c', "
     "SET sys.PartitionKey = 'pk', SET sys.ViaPartitionKey = 'vpk', SET sys.MessageId = 'm2'",
     "sys{ MessageId=s:'m2' Label=s:'lbl' ReplyTo=s:'r' ReplyToSessionId=s:'rs' SessionId=s:'s' ContentType=s:'c' "
     "PartitionKey=s:'pk' ViaPartitionKey=s:'vpk' TimeToLive=ts:60000 SequenceNumber=i:42 } user{ " USER0 " }"},
    {"SET sys.ScheduledEnqueueTimeUtc = '2024-01-01T00:00:00Z'",
     "sys{ MessageId=s:'m1' Label=s:'lbl' ScheduledEnqueueTimeUtc=t:2024-01-01T00:00:00.000Z TimeToLive=ts:60000 "
     "SequenceNumber=i:42 } user{ " USER0 " }"},
    {"SET sys.TimeToLive = sys.TimeToLive + sys.TimeToLive",
     "sys{ MessageId=s:'m1' Label=s:'lbl' TimeToLive=ts:120000 SequenceNumber=i:42 } user{ " USER0 " }"},
    {"REMOVE sys.TimeToLive", "sys{ MessageId=s:'m1' Label=s:'lbl' SequenceNumber=i:42 } user{ " USER0 " }"},
};

static void test_actions(void **state)
{
    (void)state;
    int failures = 0;
    char got[PRINT_MAX];
    for (size_t i = 0; i < sizeof action_cases / sizeof action_cases[0]; i++) {
        const action_case *c = &action_cases[i];
        ent_filter_action *a;
        ent_filter_error err;
        if (ent_filter_action_parse(c->action, strlen(c->action), NULL, 0, &a, &err) != 0) {
            print_error("row %zu: \"%s\" did not parse: %s\n", i, c->action, err.message);
            failures++;
            continue;
        }
        ent_filter_kvmsg m;
        small_message(&m);
        ent_filter_mut_msg mut = ent_filter_kvmsg_mut(&m);
        if (ent_filter_action_exec(a, &mut, &err) != 0) {
            print_error("row %zu: \"%s\" failed: %s\n", i, c->action, err.message);
            failures++;
        } else {
            fix_print(&m, got, sizeof got);
            if (strcmp(got, c->want) != 0) {
                print_error("row %zu: \"%s\"\n   got: %s\n  want: %s\n", i, c->action, got, c->want);
                failures++;
            }
        }
        assert_string_equal(ent_filter_action_text(a), c->action);
        ent_filter_kvmsg_free(&m);
        ent_filter_action_free(a);
    }
    assert_int_equal(failures, 0);
}

typedef struct action_error_case {
    const char *action;
    const char *message;
    ent_filter_err_kind kind;
} action_error_case;

static const action_error_case action_syntax_cases[] = {
    {"", "expected SET or REMOVE at column 1", ENT_FILTER_ERR_SYNTAX},
    {"SET", "expected a property name at column 4", ENT_FILTER_ERR_SYNTAX},
    {"SET a", "expected '=' at column 6", ENT_FILTER_ERR_SYNTAX},
    {"SET a 1", "expected '=', found '1' at column 7", ENT_FILTER_ERR_SYNTAX},
    {"SET a = ", "expected an expression at column 9", ENT_FILTER_ERR_SYNTAX},
    {"SET a = 1 SET b = 2", "expected ',' or ';', found 'SET' at column 11", ENT_FILTER_ERR_SYNTAX},
    {"SET a = 1,", "expected SET or REMOVE at column 11", ENT_FILTER_ERR_SYNTAX},
    {"SET a = 1; foo", "expected SET or REMOVE, found 'foo' at column 12", ENT_FILTER_ERR_SYNTAX},
    {"SET a = 1;;", "expected SET or REMOVE, found ';' at column 11", ENT_FILTER_ERR_SYNTAX},
    {"UPDATE a = 1", "expected SET or REMOVE, found 'UPDATE' at column 1", ENT_FILTER_ERR_SYNTAX},
    {"REMOVE", "expected a property name at column 7", ENT_FILTER_ERR_SYNTAX},
    {"REMOVE 'a'", "expected a property name, found ''a'' at column 8", ENT_FILTER_ERR_SYNTAX},
    {"SET p('a') = 1", "expected '=', found '(' at column 6", ENT_FILTER_ERR_SYNTAX},
    {"SET sys.SequenceNumber = 1", "system property 'sys.SequenceNumber' cannot be changed by an action at column 5",
     ENT_FILTER_ERR_SYNTAX},
    {"REMOVE sys.EnqueuedTimeUtc",
     "system property 'sys.EnqueuedTimeUtc' cannot be changed by an action at column 8", ENT_FILTER_ERR_SYNTAX},
    {"SET sys.LockToken = newid()", "system property 'sys.LockToken' cannot be changed by an action at column 5",
     ENT_FILTER_ERR_SYNTAX},
    {"SET sys.DeliveryCount = 0", "system property 'sys.DeliveryCount' cannot be changed by an action at column 5",
     ENT_FILTER_ERR_SYNTAX},
    {"SET sys.Nope = 1", "unknown system property 'sys.Nope' at column 5", ENT_FILTER_ERR_SYNTAX},
    {"SET a = (1", "expected ')' at column 11", ENT_FILTER_ERR_SYNTAX},
    {"SET a = @x", "parameter '@x' is not defined at column 9", ENT_FILTER_ERR_SYNTAX},
    {"SET a = 1;\nSET b = 'x", "unterminated string constant at line 2, column 9", ENT_FILTER_ERR_SYNTAX},
};

static void test_action_syntax_errors(void **state)
{
    (void)state;
    int failures = 0;
    for (size_t i = 0; i < sizeof action_syntax_cases / sizeof action_syntax_cases[0]; i++) {
        const action_error_case *c = &action_syntax_cases[i];
        ent_filter_action *a = (ent_filter_action *)1;
        ent_filter_error err;
        if (ent_filter_action_parse(c->action, strlen(c->action), NULL, 0, &a, &err) != -1 || a) {
            print_error("row %zu: \"%s\" parsed\n", i, c->action);
            failures++;
            continue;
        }
        if (strcmp(err.message, c->message) != 0 || err.kind != c->kind) {
            print_error("row %zu: \"%s\"\n   got: %s\n  want: %s\n", i, c->action, err.message, c->message);
            failures++;
        }
    }
    assert_int_equal(failures, 0);
}

static const action_error_case action_exec_cases[] = {
    {"SET a = sys.ExpiresAtUtc", "system property 'sys.ExpiresAtUtc' is not set at column 9", ENT_FILTER_ERR_EVAL},
    {"SET a = 1, SET b = qty / 0", "division by zero at column 24", ENT_FILTER_ERR_EVAL},
    {"SET sys.TimeToLive = 5", "cannot assign int64 to sys.TimeToLive (timespan) at column 22", ENT_FILTER_ERR_EVAL},
    {"SET sys.ScheduledEnqueueTimeUtc = 'nope'",
     "cannot assign string to sys.ScheduledEnqueueTimeUtc (timestamp) at column 35", ENT_FILTER_ERR_EVAL},
    {"SET sys.ScheduledEnqueueTimeUtc = 5",
     "cannot assign int64 to sys.ScheduledEnqueueTimeUtc (timestamp) at column 35", ENT_FILTER_ERR_EVAL},
    {"SET a = color * 2", "operator '*' cannot be applied to string and int64 at column 15", ENT_FILTER_ERR_EVAL},
};

static void test_action_exec_errors(void **state)
{
    (void)state;
    int failures = 0;
    for (size_t i = 0; i < sizeof action_exec_cases / sizeof action_exec_cases[0]; i++) {
        const action_error_case *c = &action_exec_cases[i];
        ent_filter_action *a;
        ent_filter_error err;
        assert_int_equal(ent_filter_action_parse(c->action, strlen(c->action), NULL, 0, &a, &err), 0);
        ent_filter_kvmsg m;
        small_message(&m);
        ent_filter_mut_msg mut = ent_filter_kvmsg_mut(&m);
        if (ent_filter_action_exec(a, &mut, &err) != -1) {
            print_error("row %zu: \"%s\" succeeded\n", i, c->action);
            failures++;
        } else if (strcmp(err.message, c->message) != 0 || err.kind != c->kind) {
            print_error("row %zu: \"%s\"\n   got: %s\n  want: %s\n", i, c->action, err.message, c->message);
            failures++;
        }
        ent_filter_kvmsg_free(&m);
        ent_filter_action_free(a);
    }
    assert_int_equal(failures, 0);
}

/* Statements before a failing one stay applied: the caller works on a copy. */
static void test_action_partial(void **state)
{
    (void)state;
    ent_filter_action *a;
    ent_filter_error err;
    const char *text = "SET a = 1, SET b = qty / 0";
    assert_int_equal(ent_filter_action_parse(text, strlen(text), NULL, 0, &a, &err), 0);
    assert_int_equal(ent_filter_action_statement_count(a), 2);
    ent_filter_kvmsg m;
    small_message(&m);
    ent_filter_mut_msg mut = ent_filter_kvmsg_mut(&m);
    assert_int_equal(ent_filter_action_exec(a, &mut, &err), -1);
    char got[PRINT_MAX];
    fix_print(&m, got, sizeof got);
    assert_string_equal(got, SYS0 " user{ " USER0 " a=i:1 }");
    ent_filter_kvmsg_free(&m);
    ent_filter_action_free(a);
}

static void test_action_limit(void **state)
{
    (void)state;
    char text[1024] = "";
    ent_filter_action *a;
    ent_filter_error err;
    for (int i = 0; i < ENT_FILTER_MAX_ACTION_STATEMENTS; i++)
        snprintf(text + strlen(text), sizeof text - strlen(text), "%sSET a%d = %d", i ? "; " : "", i, i);
    assert_int_equal(ent_filter_action_parse(text, strlen(text), NULL, 0, &a, &err), 0);
    assert_int_equal(ent_filter_action_statement_count(a), ENT_FILTER_MAX_ACTION_STATEMENTS);
    ent_filter_action_free(a);

    size_t before = strlen(text);
    strcat(text, ", REMOVE x");
    assert_int_equal(ent_filter_action_parse(text, strlen(text), NULL, 0, &a, &err), -1);
    char want[128];
    snprintf(want, sizeof want, "action has more than 32 statements at column %zu", before + 3);
    assert_string_equal(err.message, want);
    assert_int_equal(err.kind, ENT_FILTER_ERR_LIMIT);

    ent_filter_limits saved = ent_filter_get_limits(), fewer = {.max_action_statements = 2};
    ent_filter_set_limits(&fewer);
    assert_int_equal(ent_filter_action_parse("SET a=1, SET b=2, SET c=3", 25, NULL, 0, &a, &err), -1);
    assert_string_equal(err.message, "action has more than 2 statements at column 19");
    ent_filter_set_limits(&saved);
}

static void test_action_parameters(void **state)
{
    (void)state;
    ent_filter_prop params[] = {{"@dest", ent_fv_cstr("routedOrders")}, {"@n", ent_fv_int(10)}};
    ent_filter_action *a;
    ent_filter_error err;
    const char *text = "SET source = @dest; SET qty = qty * @N";
    assert_int_equal(ent_filter_action_parse(text, strlen(text), params, 2, &a, &err), 0);
    ent_filter_kvmsg m;
    small_message(&m);
    ent_filter_mut_msg mut = ent_filter_kvmsg_mut(&m);
    assert_int_equal(ent_filter_action_exec(a, &mut, &err), 0);
    char got[PRINT_MAX];
    fix_print(&m, got, sizeof got);
    assert_string_equal(got, SYS0 " user{ color=s:'red' qty=i:50 price=d:2.5 source=s:'routedOrders' }");
    ent_filter_kvmsg_free(&m);
    ent_filter_action_free(a);
}

/* A message that refuses changes, as a size-limited AMQP message might. */
static int refuse_sys(void *self, ent_filter_sys id, const ent_filter_value *v)
{
    (void)self, (void)id, (void)v;
    return -1;
}

static int refuse_user(void *self, const char *name, size_t len, const ent_filter_value *v)
{
    (void)self, (void)name, (void)len, (void)v;
    return -1;
}

static int none_sys(const void *self, ent_filter_sys id, ent_filter_value *out)
{
    (void)self, (void)id, (void)out;
    return 0;
}

static int none_user(const void *self, const char *name, size_t len, ent_filter_value *out)
{
    (void)self, (void)name, (void)len, (void)out;
    return 0;
}

static void test_action_refused(void **state)
{
    (void)state;
    static const ent_filter_mut_ops ops = {{none_sys, none_user}, refuse_sys, refuse_user};
    ent_filter_mut_msg mut = {&ops, NULL};
    ent_filter_action *a;
    ent_filter_error err;
    assert_int_equal(ent_filter_action_parse("SET abc = 1", 11, NULL, 0, &a, &err), 0);
    assert_int_equal(ent_filter_action_exec(a, &mut, &err), -1);
    assert_string_equal(err.message, "the message refused the change to 'abc' at column 1");
    assert_int_equal(err.kind, ENT_FILTER_ERR_MESSAGE);
    ent_filter_action_free(a);
    assert_int_equal(ent_filter_action_parse("REMOVE sys.To", 13, NULL, 0, &a, &err), 0);
    assert_int_equal(ent_filter_action_exec(a, &mut, &err), -1);
    assert_string_equal(err.message, "the message refused the change to 'sys.To' at column 1");
    ent_filter_action_free(a);
}

/* ---- correlation filters ---------------------------------------------------------------- */

typedef struct corr_case {
    const char *what;
    ent_filter_correlation spec;
    ent_filter_result want;
} corr_case;

static const ent_filter_prop p_color_red[] = {{"color", {.type = ENT_FV_STRING, .u.s = {"red", 3}}}};
static const ent_filter_prop p_color_Red[] = {{"color", {.type = ENT_FV_STRING, .u.s = {"Red", 3}}}};
static const ent_filter_prop p_COLOR_red[] = {{"COLOR", {.type = ENT_FV_STRING, .u.s = {"red", 3}}}};
static const ent_filter_prop p_qty_5[] = {{"qty", {.type = ENT_FV_INT, .u.i = 5}}};
static const ent_filter_prop p_qty_5d[] = {{"qty", {.type = ENT_FV_DOUBLE, .u.d = 5.0}}};
static const ent_filter_prop p_qty_s5[] = {{"qty", {.type = ENT_FV_STRING, .u.s = {"5", 1}}}};
static const ent_filter_prop p_missing[] = {{"missing", {.type = ENT_FV_INT, .u.i = 1}}};
static const ent_filter_prop p_nothing_null[] = {{"nothing", {.type = ENT_FV_NULL}}};
static const ent_filter_prop p_flag_true[] = {{"flag", {.type = ENT_FV_BOOL, .u.b = 1}}};
static const ent_filter_prop p_two[] = {{"color", {.type = ENT_FV_STRING, .u.s = {"red", 3}}},
                                        {"qty", {.type = ENT_FV_INT, .u.i = 6}}};

static const corr_case corr_cases[] = {
    {"correlation id", {.correlation_id = "corr-1"}, ENT_FILTER_TRUE},
    {"correlation id, other case", {.correlation_id = "CORR-1"}, ENT_FILTER_FALSE},
    {"message id + label", {.message_id = "m1", .label = "Bus Label"}, ENT_FILTER_TRUE},
    {"label differs", {.message_id = "m1", .label = "x"}, ENT_FILTER_FALSE},
    {"reply-to unset", {.reply_to = "x"}, ENT_FILTER_FALSE},
    {"reply-to-session unset", {.reply_to_session_id = "x"}, ENT_FILTER_FALSE},
    {"to + content type + session", {.to = "store5", .content_type = "application/json", .session_id = "s1"},
     ENT_FILTER_TRUE},
    {"session differs", {.to = "store5", .session_id = "s2"}, ENT_FILTER_FALSE},
    {"empty string is not unset", {.to = ""}, ENT_FILTER_FALSE},
    {"user string", {.properties = p_color_red, .nproperties = 1}, ENT_FILTER_TRUE},
    {"user string, other case", {.properties = p_color_Red, .nproperties = 1}, ENT_FILTER_FALSE},
    {"user name, other case", {.properties = p_COLOR_red, .nproperties = 1}, ENT_FILTER_TRUE},
    {"user int", {.properties = p_qty_5, .nproperties = 1}, ENT_FILTER_TRUE},
    {"user int vs double", {.properties = p_qty_5d, .nproperties = 1}, ENT_FILTER_TRUE},
    {"user int vs string", {.properties = p_qty_s5, .nproperties = 1}, ENT_FILTER_FALSE},
    {"user missing", {.properties = p_missing, .nproperties = 1}, ENT_FILTER_FALSE},
    {"user null", {.properties = p_nothing_null, .nproperties = 1}, ENT_FILTER_TRUE},
    {"user bool", {.properties = p_flag_true, .nproperties = 1}, ENT_FILTER_TRUE},
    {"two users, one differs", {.properties = p_two, .nproperties = 2}, ENT_FILTER_FALSE},
    {"system and user", {.correlation_id = "corr-1", .properties = p_color_red, .nproperties = 1}, ENT_FILTER_TRUE},
    {"system fails, user matches", {.correlation_id = "x", .properties = p_color_red, .nproperties = 1},
     ENT_FILTER_FALSE},
};

static void test_correlation(void **state)
{
    (void)state;
    ent_filter_kvmsg m;
    fix_message(&m);
    ent_filter_msg view = ent_filter_kvmsg_view(&m);
    int failures = 0;
    for (size_t i = 0; i < sizeof corr_cases / sizeof corr_cases[0]; i++) {
        ent_filter *f;
        ent_filter_error err;
        assert_int_equal(ent_filter_new_correlation(&corr_cases[i].spec, &f, &err), 0);
        ent_filter_result r = ent_filter_eval(f, &view, &err);
        if (r != corr_cases[i].want) {
            print_error("row %zu (%s): got %d want %d\n", i, corr_cases[i].what, r, corr_cases[i].want);
            failures++;
        }
        assert_int_equal(ent_filter_get_kind(f), ENT_FILTER_KIND_CORRELATION);
        assert_null(ent_filter_text(f));
        ent_filter_free(f);
    }
    ent_filter_kvmsg_free(&m);
    assert_int_equal(failures, 0);
}

static void test_correlation_copies(void **state)
{
    (void)state;
    char cid[] = "corr-1", pname[] = "color", pval[] = "red";
    ent_filter_prop props[] = {{pname, ent_fv_cstr(pval)}};
    ent_filter_correlation spec = {.correlation_id = cid, .properties = props, .nproperties = 1};
    ent_filter *f;
    ent_filter_error err;
    assert_int_equal(ent_filter_new_correlation(&spec, &f, &err), 0);
    memset(cid, 'x', 6);
    memset(pname, 'x', 5);
    memset(pval, 'x', 3);
    const ent_filter_correlation *c = ent_filter_get_correlation(f);
    assert_string_equal(c->correlation_id, "corr-1");
    assert_null(c->message_id);
    assert_int_equal(c->nproperties, 1);
    assert_string_equal(c->properties[0].name, "color");
    assert_int_equal(c->properties[0].value.u.s.len, 3);
    assert_memory_equal(c->properties[0].value.u.s.ptr, "red", 3);

    ent_filter_kvmsg m;
    fix_message(&m);
    ent_filter_msg view = ent_filter_kvmsg_view(&m);
    assert_int_equal(ent_filter_eval(f, &view, &err), ENT_FILTER_TRUE);
    ent_filter_kvmsg_free(&m);
    ent_filter_free(f);

    ent_filter_correlation empty = {0};
    assert_int_equal(ent_filter_new_correlation(&empty, &f, &err), -1);
    assert_null(f);
    assert_string_equal(err.message, "a correlation filter needs at least one system or user property");
    ent_filter_prop noname[] = {{"", ent_fv_int(1)}};
    ent_filter_correlation bad = {.properties = noname, .nproperties = 1};
    assert_int_equal(ent_filter_new_correlation(&bad, &f, &err), -1);
    assert_string_equal(err.message, "correlation property 1 has no name");
}

/* ---- rules ----------------------------------------------------------------------------------- */

static void test_rules(void **state)
{
    (void)state;
    ent_filter_rule r;
    ent_filter_error err;
    assert_int_equal(ent_filter_rule_init_default(&r), 0);
    assert_string_equal(r.name, "$Default");
    assert_string_equal(r.name, ENT_FILTER_DEFAULT_RULE_NAME);
    assert_int_equal(ent_filter_get_kind(r.filter), ENT_FILTER_KIND_TRUE);
    assert_null(r.action);
    ent_filter_kvmsg m;
    fix_message(&m);
    ent_filter_msg view = ent_filter_kvmsg_view(&m);
    assert_int_equal(ent_filter_eval(r.filter, &view, NULL), ENT_FILTER_TRUE);
    ent_filter_rule_free(&r);
    assert_null(r.filter);

    ent_filter *f;
    ent_filter_action *a;
    assert_int_equal(ent_filter_parse("qty = 5", 7, NULL, 0, &f, &err), 0);
    assert_int_equal(ent_filter_action_parse("SET routed = TRUE", 17, NULL, 0, &a, &err), 0);
    assert_int_equal(ent_filter_rule_init(&r, "route-5", f, a, &err), 0);
    assert_string_equal(r.name, "route-5");
    assert_int_equal(ent_filter_eval(r.filter, &view, NULL), ENT_FILTER_TRUE);
    ent_filter_mut_msg mut = ent_filter_kvmsg_mut(&m);
    assert_int_equal(ent_filter_action_exec(r.action, &mut, &err), 0);
    ent_filter_value v;
    assert_int_equal(view.ops->get_user(view.self, "ROUTED", 6, &v), 1);
    assert_int_equal(v.type, ENT_FV_BOOL);
    ent_filter_rule_free(&r);
    ent_filter_kvmsg_free(&m);

    /* 50 characters is the limit; a refused rule frees what it was given. */
    char name[64];
    memset(name, 'r', 50);
    name[50] = 0;
    assert_int_equal(ent_filter_rule_init(&r, name, ent_filter_new_true(), NULL, &err), 0);
    ent_filter_rule_free(&r);
    strcat(name, "r");
    assert_int_equal(ent_filter_rule_init(&r, name, ent_filter_new_true(), NULL, &err), -1);
    assert_string_equal(err.message, "rule name is 51 characters long; the limit is 50");
    assert_int_equal(ent_filter_rule_init(&r, "", ent_filter_new_false(), NULL, &err), -1);
    assert_string_equal(err.message, "a rule needs a name");
    assert_int_equal(ent_filter_rule_init(&r, "x", NULL, NULL, &err), -1);
    assert_string_equal(err.message, "a rule needs a filter");
}

/* ---- kvmsg --------------------------------------------------------------------------------------- */

static void test_kvmsg(void **state)
{
    (void)state;
    ent_filter_kvmsg m;
    ent_filter_kvmsg_init(&m);
    ent_filter_msg view = ent_filter_kvmsg_view(&m);
    ent_filter_value v;
    char name[] = "Color", val[] = "red";

    assert_int_equal(view.ops->get_user(view.self, "color", 5, &v), 0);
    v = ent_fv_cstr(val);
    assert_int_equal(ent_filter_kvmsg_set_user(&m, name, 5, &v), 0);
    memset(val, 'x', 3);
    memset(name, 'x', 5);
    assert_int_equal(view.ops->get_user(view.self, "COLOR", 5, &v), 1);
    assert_int_equal(v.u.s.len, 3);
    assert_memory_equal(v.u.s.ptr, "red", 3);
    assert_int_equal(view.ops->get_user(view.self, "colo", 4, &v), 0);
    assert_int_equal(view.ops->get_user(view.self, "colors", 6, &v), 0);

    /* Many properties: the array grows. */
    for (int i = 0; i < 40; i++) {
        char n[16];
        snprintf(n, sizeof n, "p%d", i);
        v = ent_fv_int(i);
        assert_int_equal(ent_filter_kvmsg_set_user(&m, n, strlen(n), &v), 0);
    }
    assert_int_equal(m.nuser, 41);
    assert_int_equal(view.ops->get_user(view.self, "P39", 3, &v), 1);
    assert_int_equal(v.u.i, 39);
    assert_int_equal(ent_filter_kvmsg_set_user(&m, "p0", 2, NULL), 0);
    assert_int_equal(m.nuser, 40);
    assert_string_equal(m.user[1].name, "p1");

    /* Setting a value from itself (SET a = a). */
    assert_int_equal(view.ops->get_user(view.self, "color", 5, &v), 1);
    assert_int_equal(ent_filter_kvmsg_set_user(&m, "color", 5, &v), 0);
    assert_int_equal(view.ops->get_user(view.self, "color", 5, &v), 1);
    assert_memory_equal(v.u.s.ptr, "red", 3);

    v = ent_fv_cstr("m1");
    assert_int_equal(ent_filter_kvmsg_set_sys(&m, ENT_SYS_MESSAGE_ID, &v), 0);
    assert_int_equal(view.ops->get_sys(view.self, ENT_SYS_MESSAGE_ID, &v), 1);
    assert_int_equal(ent_filter_kvmsg_set_sys(&m, ENT_SYS_MESSAGE_ID, &v), 0);
    assert_int_equal(ent_filter_kvmsg_set_sys(&m, ENT_SYS_MESSAGE_ID, NULL), 0);
    assert_int_equal(view.ops->get_sys(view.self, ENT_SYS_MESSAGE_ID, &v), 0);
    assert_int_equal(ent_filter_kvmsg_set_sys(&m, ENT_SYS_COUNT, &v), -1);
    ent_filter_kvmsg_free(&m);
}

static void test_sys_table(void **state)
{
    (void)state;
    for (int i = 0; i < ENT_SYS_COUNT; i++) {
        const char *n = ent_filter_sys_name((ent_filter_sys)i);
        assert_non_null(n);
        assert_int_equal(ent_filter_sys_lookup(n, strlen(n)), i);
        assert_int_not_equal(ent_filter_sys_type((ent_filter_sys)i), ENT_FV_NULL);
    }
    assert_int_equal(ent_filter_sys_lookup("subject", 7), ENT_SYS_LABEL);
    assert_int_equal(ent_filter_sys_lookup("ENQUEUEDTIMEUTC", 15), ENT_SYS_ENQUEUED_TIME_UTC);
    assert_int_equal(ent_filter_sys_lookup("Nope", 4), -1);
    assert_int_equal(ent_filter_sys_lookup("Label", 3), -1);
    assert_null(ent_filter_sys_name(ENT_SYS_COUNT));
    assert_true(ent_filter_sys_settable(ENT_SYS_LABEL));
    assert_true(ent_filter_sys_settable(ENT_SYS_SCHEDULED_ENQUEUE_TIME_UTC));
    assert_false(ent_filter_sys_settable(ENT_SYS_SEQUENCE_NUMBER));
    assert_false(ent_filter_sys_settable(ENT_SYS_COUNT));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_actions),           cmocka_unit_test(test_action_syntax_errors),
        cmocka_unit_test(test_action_exec_errors), cmocka_unit_test(test_action_partial),
        cmocka_unit_test(test_action_limit),      cmocka_unit_test(test_action_parameters),
        cmocka_unit_test(test_action_refused),    cmocka_unit_test(test_correlation),
        cmocka_unit_test(test_correlation_copies), cmocka_unit_test(test_rules),
        cmocka_unit_test(test_kvmsg),             cmocka_unit_test(test_sys_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
