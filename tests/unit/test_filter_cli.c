/* `sbemu filter`, run in-process through emu_cmd_filter_io: exit codes,
 * stdout and stderr for matches, actions, errors and bad usage. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cmd_filter.h"

#define MAX_ARGS 16

typedef struct cli_case {
    const char *args[MAX_ARGS]; /* after "filter", NULL-terminated */
    const char *stdin_text;
    int rc;
    const char *out;      /* exact stdout, or NULL to skip */
    const char *err_part; /* substring of stderr, or NULL */
} cli_case;

#define MSG "{\"system\": {\"MessageId\": \"m1\", \"Label\": \"x\"}, \"properties\": {\"color\": \"red\", \"qty\": 5}}"

static const cli_case cli_cases[] = {
    {{"color = 'red'"}, MSG, 0, "match\n", NULL},
    {{"color = 'blue'"}, MSG, 0, "no match\n", NULL},
    {{"missing = 1"}, MSG, 0, "no match\n", NULL},
    {{"sys.Label = 'x' AND qty > 4"}, MSG, 0, "match\n", NULL},
    {{"--action", "SET qty = qty + 1; SET sys.Label = 'y'; REMOVE color", "1=1"},
     MSG,
     0,
     "match\n{\"system\":{\"MessageId\":\"m1\",\"Label\":\"y\"},\"properties\":{\"qty\":6}}\n",
     NULL},
    {{"--action=SET d = 2.0, SET s = 'a\"b', SET n = NULL, SET b = FALSE", "TRUE"},
     "{}",
     0,
     "match\n{\"system\":{},\"properties\":{\"d\":2.0,\"s\":\"a\\\"b\",\"n\":null,\"b\":false}}\n",
     NULL},
    {{"--action", "SET x = 1", "color = 'blue'"}, MSG, 0, "no match\n", NULL},
    {{"--param", "@c=\"red\"", "--param", "n=4", "color = @c AND qty > @N"}, MSG, 0, "match\n", NULL},
    {{"--param=@f=1.5", "qty > @f"}, MSG, 0, "match\n", NULL},
    {{"--", "-qty = -5"}, MSG, 0, "match\n", NULL},
    {{"-qty = -5"}, MSG, 0, "match\n", NULL},
    {{"TRUE"}, "", 0, "match\n", NULL},
    {{"EXISTS(a)"}, "  \n", 0, "no match\n", NULL},
    {{"sys.EnqueuedTimeUtc > sys.ScheduledEnqueueTimeUtc"},
     "{\"system\": {\"EnqueuedTimeUtc\": \"2024-01-02T00:00:00Z\", \"ScheduledEnqueueTimeUtc\": 1704067200000}}",
     0,
     "match\n",
     NULL},
    {{"--action", "SET sys.ScheduledEnqueueTimeUtc = sys.EnqueuedTimeUtc + sys.TimeToLive", "1=1"},
     "{\"system\": {\"EnqueuedTimeUtc\": 0, \"TimeToLive\": 1500, \"LockToken\": "
     "\"A1B2C3D4-0000-4000-8000-000000000001\"}}",
     0,
     "match\n{\"system\":{\"ScheduledEnqueueTimeUtc\":\"1970-01-01T00:00:01.500Z\",\"TimeToLive\":1500,"
     "\"EnqueuedTimeUtc\":\"1970-01-01T00:00:00.000Z\",\"LockToken\":\"a1b2c3d4-0000-4000-8000-000000000001\"},"
     "\"properties\":{}}\n",
     NULL},
    {{"sys.subject = 'x'"}, "{\"system\": {\"subject\": \"x\"}}", 0, "match\n", NULL},
    {{"sys.To = 'x'"}, MSG, 0, "no match\n", NULL}, /* unset string system property: NULL */
    {{"sys.To IS NULL"}, MSG, 0, "match\n", NULL},
    /* errors: 1 */
    {{"(a = 1"}, MSG, 1, "", "sbemu filter: expected ')' at column 7"},
    {{"sys.LockToken = newid()"}, MSG, 1, "", "sbemu filter: system property 'sys.LockToken' is not set at column 1"},
    {{"--action", "SET sys.SequenceNumber = 1", "TRUE"},
     MSG,
     1,
     "",
     "sbemu filter: action: system property 'sys.SequenceNumber' cannot be changed by an action at column 5"},
    {{"--action", "SET a = 1 / 0", "TRUE"}, MSG, 1, "", "sbemu filter: action: division by zero at column 11"},
    /* usage and input: 2 */
    {{NULL}, MSG, 2, "", "missing EXPRESSION"},
    {{"a = 1", "b = 2"}, MSG, 2, "", "more than one EXPRESSION"},
    {{"--bogus", "a = 1"}, MSG, 2, "", "unknown option '--bogus'"},
    {{"--action"}, MSG, 2, "", "--action needs a value"},
    {{"--action", "SET a = 1", "--action", "SET b = 1", "TRUE"}, MSG, 2, "", "--action given twice"},
    {{"--param", "novalue", "TRUE"}, MSG, 2, "", "--param needs NAME=JSONVALUE"},
    {{"--param", "@=1", "TRUE"}, MSG, 2, "", "--param needs NAME=JSONVALUE"},
    {{"--param", "@p=red", "TRUE"}, MSG, 2, "", "--param @p: value must be a JSON string"},
    {{"--param", "@p=[1]", "TRUE"}, MSG, 2, "", "--param @p: value must be a JSON string"},
    {{"TRUE"}, "{", 2, "", "sbemu filter: stdin: line"},
    {{"TRUE"}, "[1]", 2, "", "expected a JSON object"},
    {{"TRUE"}, "{\"sys\": {}}", 2, "", "unknown key \"sys\""},
    {{"TRUE"}, "{\"system\": []}", 2, "", "\"system\" must be an object"},
    {{"TRUE"}, "{\"system\": {\"Nope\": 1}}", 2, "", "unknown system property \"Nope\""},
    {{"TRUE"}, "{\"system\": {\"MessageId\": 1}}", 2, "", "\"MessageId\" must be a string"},
    {{"TRUE"}, "{\"system\": {\"SequenceNumber\": \"1\"}}", 2, "", "\"SequenceNumber\" must be an integer"},
    {{"TRUE"}, "{\"system\": {\"EnqueuedTimeUtc\": \"yesterday\"}}", 2, "", "must be an ISO 8601 string"},
    {{"TRUE"}, "{\"system\": {\"LockToken\": \"x\"}}", 2, "", "must be a GUID string"},
    {{"TRUE"}, "{\"properties\": {\"a\": {}}}", 2, "", "property \"a\" must be a string, number"},
    /* help: 0 on stdout */
    {{"--help"}, "", 0, NULL, NULL},
};

static char *run_case(const cli_case *c, int *rc, char **err_text)
{
    char *argv[MAX_ARGS + 2];
    int argc = 0;
    argv[argc++] = "filter";
    for (int i = 0; i < MAX_ARGS && c->args[i]; i++)
        argv[argc++] = (char *)c->args[i];
    argv[argc] = NULL;

    FILE *in = fmemopen((void *)c->stdin_text, strlen(c->stdin_text), "r");
    if (!in) /* fmemopen refuses an empty buffer on some libcs */
        in = fopen("/dev/null", "r");
    char *out_text = NULL, *err_buf = NULL;
    size_t out_len = 0, err_len = 0;
    FILE *out = open_memstream(&out_text, &out_len);
    FILE *err = open_memstream(&err_buf, &err_len);
    *rc = emu_cmd_filter_io(argc, argv, in, out, err);
    fclose(in);
    fclose(out);
    fclose(err);
    *err_text = err_buf;
    return out_text;
}

static void test_cli_table(void **state)
{
    (void)state;
    int failures = 0;
    for (size_t i = 0; i < sizeof cli_cases / sizeof cli_cases[0]; i++) {
        const cli_case *c = &cli_cases[i];
        int rc;
        char *err;
        char *out = run_case(c, &rc, &err);
        if (rc != c->rc) {
            print_error("row %zu: rc %d want %d (stderr: %s)\n", i, rc, c->rc, err);
            failures++;
        }
        if (c->out && strcmp(out, c->out) != 0) {
            print_error("row %zu: stdout\n   got: %s\n  want: %s\n", i, out, c->out);
            failures++;
        }
        if (c->err_part && !strstr(err, c->err_part)) {
            print_error("row %zu: stderr lacks \"%s\": %s\n", i, c->err_part, err);
            failures++;
        }
        if (!c->err_part && c->rc == 0 && err[0]) {
            print_error("row %zu: unexpected stderr: %s\n", i, err);
            failures++;
        }
        free(out);
        free(err);
    }
    assert_int_equal(failures, 0);
}

static void test_cli_help(void **state)
{
    (void)state;
    cli_case c = {{"-h"}, "", 0, NULL, NULL};
    int rc;
    char *err;
    char *out = run_case(&c, &rc, &err);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "usage: sbemu filter"));
    assert_string_equal(err, "");
    free(out);
    free(err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cli_table),
        cmocka_unit_test(test_cli_help),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
