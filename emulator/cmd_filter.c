/* `sbemu filter` (see cmd_filter.h): JSON in, the rule language of
 * entities/ent_filter.h in the middle, "match"/"no match" and JSON out. */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_filter.h"
#include "ent_alloc.h"
#include "ent_filter.h"

#define EXIT_MATCHED_OR_NOT 0
#define EXIT_RULE_ERROR 1
#define EXIT_USAGE 2
/* --param may be repeated this many times. */
#define CMD_FILTER_MAX_PARAMS 64
/* Largest message accepted on stdin. */
#define CMD_FILTER_MAX_INPUT (16 * 1024 * 1024)
#define READ_CHUNK 4096

typedef struct cmd_args {
    const char *expression;
    const char *action;
    ent_filter_prop params[CMD_FILTER_MAX_PARAMS];
    json_t *param_json[CMD_FILTER_MAX_PARAMS]; /* owns the parameter values */
    char *param_names[CMD_FILTER_MAX_PARAMS];
    size_t nparams;
} cmd_args;

static void usage(FILE *f)
{
    fputs("usage: sbemu filter [--action ACTION] [--param NAME=JSONVALUE ...] EXPRESSION\n"
          "\n"
          "Evaluates a Service Bus SQL filter against one message read as JSON on stdin:\n"
          "  {\"system\": {\"MessageId\": \"m1\", \"Label\": \"x\"}, \"properties\": {\"color\": \"red\", \"qty\": 5}}\n"
          "Prints \"match\" or \"no match\". With --action and a match, also prints the message\n"
          "after the action ran. Example:\n"
          "  echo '{\"properties\": {\"qty\": 5}}' | sbemu filter --param @min=3 'qty > @min'\n"
          "Exit status: 0 evaluated, 1 syntax or evaluation error, 2 bad usage or input.\n",
          f);
}

static void args_free(cmd_args *a)
{
    for (size_t i = 0; i < a->nparams; i++) {
        json_decref(a->param_json[i]);
        ent_free(a->param_names[i]);
    }
}

/* ---- JSON -> values ----------------------------------------------------------------- */

/* A JSON scalar as a filter value; strings stay owned by the json_t. */
static int json_to_value(json_t *j, ent_filter_value *v)
{
    switch (json_typeof(j)) {
    case JSON_STRING: *v = ent_fv_string(json_string_value(j), json_string_length(j)); return 0;
    case JSON_INTEGER: *v = ent_fv_int((int64_t)json_integer_value(j)); return 0;
    case JSON_REAL: *v = ent_fv_double(json_real_value(j)); return 0;
    case JSON_TRUE: *v = ent_fv_bool(1); return 0;
    case JSON_FALSE: *v = ent_fv_bool(0); return 0;
    case JSON_NULL: *v = ent_fv_null(); return 0;
    default: return -1;
    }
}

static int add_param(cmd_args *a, const char *spec, FILE *err)
{
    const char *eq = strchr(spec, '=');
    if (!eq || eq == spec || (eq == spec + 1 && spec[0] == '@')) {
        fprintf(err, "sbemu filter: --param needs NAME=JSONVALUE, got '%s'\n", spec);
        return -1;
    }
    if (a->nparams == CMD_FILTER_MAX_PARAMS) {
        fprintf(err, "sbemu filter: more than %d --param options\n", CMD_FILTER_MAX_PARAMS);
        return -1;
    }
    json_error_t jerr;
    json_t *j = json_loads(eq + 1, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
    ent_filter_value v;
    if (!j || json_to_value(j, &v) < 0) {
        fprintf(err, "sbemu filter: --param %.*s: value must be a JSON string, number, boolean or null%s%s\n",
                (int)(eq - spec), spec, j ? "" : ": ", j ? "" : jerr.text);
        json_decref(j);
        return -1;
    }
    char *name = ent_strndup(spec, (size_t)(eq - spec));
    if (!name) {
        json_decref(j);
        return -1;
    }
    a->param_json[a->nparams] = j;
    a->param_names[a->nparams] = name;
    a->params[a->nparams].name = name;
    a->params[a->nparams].value = v;
    a->nparams++;
    return 0;
}

/* Returns 0, 1 for --help, or -1 on bad usage (reported). */
static int parse_args(cmd_args *a, int argc, char **argv, FILE *err)
{
    int options_done = 0;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        const char *val = NULL;
        if (!options_done && !strcmp(s, "--")) {
            options_done = 1;
            continue;
        }
        if (!options_done && (!strcmp(s, "-h") || !strcmp(s, "--help")))
            return 1;
        if (!options_done && (!strcmp(s, "--action") || !strcmp(s, "--param"))) {
            if (i + 1 >= argc) {
                fprintf(err, "sbemu filter: %s needs a value\n", s);
                return -1;
            }
            val = argv[++i];
        } else if (!options_done && !strncmp(s, "--action=", 9)) {
            val = s + 9;
            s = "--action";
        } else if (!options_done && !strncmp(s, "--param=", 8)) {
            val = s + 8;
            s = "--param";
        } else if (!options_done && !strncmp(s, "--", 2)) {
            fprintf(err, "sbemu filter: unknown option '%s'\n", s);
            return -1;
        }
        if (val && !strcmp(s, "--action")) {
            if (a->action) {
                fprintf(err, "sbemu filter: --action given twice\n");
                return -1;
            }
            a->action = val;
        } else if (val) {
            if (add_param(a, val, err) < 0)
                return -1;
        } else if (a->expression) {
            fprintf(err, "sbemu filter: more than one EXPRESSION (quote the filter as one argument)\n");
            return -1;
        } else {
            a->expression = s;
        }
    }
    if (!a->expression) {
        fprintf(err, "sbemu filter: missing EXPRESSION\n");
        return -1;
    }
    return 0;
}

static char *read_all(FILE *in, size_t *len, FILE *err)
{
    size_t cap = READ_CHUNK, n = 0;
    char *buf = ent_malloc(cap);
    while (buf) {
        if (n == cap) {
            if (cap >= CMD_FILTER_MAX_INPUT) {
                fprintf(err, "sbemu filter: message on stdin is larger than %d bytes\n", CMD_FILTER_MAX_INPUT);
                ent_free(buf);
                return NULL;
            }
            char *grown = ent_realloc(buf, cap * 2);
            if (!grown)
                break;
            buf = grown;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n, in);
        n += got;
        if (got == 0)
            break;
    }
    if (!buf)
        fprintf(err, "sbemu filter: out of memory\n");
    *len = n;
    return buf;
}

static int load_system(ent_filter_kvmsg *m, json_t *sys, FILE *err)
{
    const char *key;
    json_t *j;
    json_object_foreach(sys, key, j) {
        int id = ent_filter_sys_lookup(key, strlen(key));
        if (id < 0) {
            fprintf(err, "sbemu filter: unknown system property \"%s\"\n", key);
            return -1;
        }
        if (json_is_null(j))
            continue;
        ent_fv_type want = ent_filter_sys_type((ent_filter_sys)id);
        ent_filter_value v;
        int ok = 0;
        const char *s = json_string_value(j);
        size_t slen = s ? json_string_length(j) : 0;
        int64_t ms;
        switch (want) {
        case ENT_FV_STRING:
            if ((ok = s != NULL))
                v = ent_fv_string(s, slen);
            break;
        case ENT_FV_INT:
            if ((ok = json_is_integer(j)))
                v = ent_fv_int((int64_t)json_integer_value(j));
            break;
        case ENT_FV_TIME:
            if (json_is_integer(j)) {
                ok = 1;
                v = ent_fv_time((int64_t)json_integer_value(j));
            } else if (s && ent_fv_parse_time(s, slen, &ms) == 0) {
                ok = 1;
                v = ent_fv_time(ms);
            }
            break;
        case ENT_FV_DURATION:
            if ((ok = json_is_integer(j)))
                v = ent_fv_duration((int64_t)json_integer_value(j));
            break;
        case ENT_FV_UUID:
            v.type = ENT_FV_UUID;
            ok = s && ent_fv_parse_uuid(s, slen, v.u.uuid) == 0;
            break;
        default: break;
        }
        if (!ok) {
            static const char *const hint[] = {
                [ENT_FV_STRING] = "a string", [ENT_FV_INT] = "an integer",
                [ENT_FV_TIME] = "an ISO 8601 string or integer milliseconds",
                [ENT_FV_DURATION] = "integer milliseconds", [ENT_FV_UUID] = "a GUID string",
            };
            fprintf(err, "sbemu filter: system property \"%s\" must be %s\n", key,
                    hint[want] ? hint[want] : "a scalar");
            return -1;
        }
        if (ent_filter_kvmsg_set_sys(m, (ent_filter_sys)id, &v) < 0)
            return -1;
    }
    return 0;
}

static int load_message(ent_filter_kvmsg *m, const char *buf, size_t len, FILE *err)
{
    size_t i = 0;
    while (i < len && strchr(" \t\r\n", buf[i]))
        i++;
    if (i == len)
        return 0; /* no input: an empty message */

    json_error_t jerr;
    json_t *root = json_loadb(buf, len, JSON_ALLOW_NUL, &jerr);
    if (!root) {
        fprintf(err, "sbemu filter: stdin: line %d, column %d: %s\n", jerr.line, jerr.column, jerr.text);
        return -1;
    }
    int rc = 0;
    const char *key;
    json_t *j;
    if (!json_is_object(root)) {
        fprintf(err, "sbemu filter: stdin: expected a JSON object\n");
        rc = -1;
    }
    json_object_foreach(root, key, j) {
        if (rc < 0)
            break;
        if (strcmp(key, "system") && strcmp(key, "properties")) {
            fprintf(err, "sbemu filter: stdin: unknown key \"%s\" (expected \"system\" and \"properties\")\n", key);
            rc = -1;
        } else if (!json_is_object(j)) {
            fprintf(err, "sbemu filter: stdin: \"%s\" must be an object\n", key);
            rc = -1;
        } else if (!strcmp(key, "system")) {
            rc = load_system(m, j, err);
        } else {
            const char *name;
            json_t *pv;
            json_object_foreach(j, name, pv) {
                ent_filter_value v;
                if (json_to_value(pv, &v) < 0) {
                    fprintf(err, "sbemu filter: property \"%s\" must be a string, number, boolean or null\n", name);
                    rc = -1;
                    break;
                }
                if (ent_filter_kvmsg_set_user(m, name, strlen(name), &v) < 0) {
                    rc = -1;
                    break;
                }
            }
        }
    }
    json_decref(root);
    return rc;
}

/* ---- values -> JSON ------------------------------------------------------------------- */

static void print_json_string(FILE *out, const char *s, size_t len)
{
    json_t *j = json_stringn_nocheck(s, len);
    char *text = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;
    fputs(text ? text : "null", out);
    free(text); /* json_dumps' memory is jansson's (malloc), not ours */
    json_decref(j);
}

static void print_value(FILE *out, const ent_filter_value *v)
{
    char buf[64];
    switch (v->type) {
    case ENT_FV_NULL: fputs("null", out); break;
    case ENT_FV_BOOL: fputs(v->u.b ? "true" : "false", out); break;
    case ENT_FV_INT:
    case ENT_FV_DURATION: fprintf(out, "%lld", (long long)v->u.i); break;
    case ENT_FV_DOUBLE:
        if (!isfinite(v->u.d)) {
            fputs("null", out); /* JSON has no NaN or Infinity */
            break;
        }
        ent_fv_format_double(v->u.d, buf, sizeof buf);
        /* Keep a double a double when read back: "5" would be an integer. */
        fprintf(out, "%s%s", buf, strpbrk(buf, ".E") ? "" : ".0");
        break;
    case ENT_FV_STRING: print_json_string(out, v->u.s.ptr, v->u.s.len); break;
    case ENT_FV_TIME:
        ent_fv_format_time(v->u.i, buf, sizeof buf);
        fprintf(out, "\"%s\"", buf);
        break;
    case ENT_FV_UUID:
        ent_fv_format_uuid(v->u.uuid, buf, sizeof buf);
        fprintf(out, "\"%s\"", buf);
        break;
    }
}

static void print_message(FILE *out, const ent_filter_kvmsg *m)
{
    const char *sep = "";
    fputs("{\"system\":{", out);
    for (int i = 0; i < ENT_SYS_COUNT; i++) {
        if (!m->sys_set[i])
            continue;
        fprintf(out, "%s\"%s\":", sep, ent_filter_sys_name((ent_filter_sys)i));
        print_value(out, &m->sys[i]);
        sep = ",";
    }
    fputs("},\"properties\":{", out);
    sep = "";
    for (size_t i = 0; i < m->nuser; i++) {
        fputs(sep, out);
        print_json_string(out, m->user[i].name, strlen(m->user[i].name));
        fputc(':', out);
        print_value(out, &m->user[i].value);
        sep = ",";
    }
    fputs("}}\n", out);
}

/* ---- the command -------------------------------------------------------------------------- */

static int run(const cmd_args *a, FILE *in, FILE *out, FILE *err)
{
    ent_filter *f = NULL;
    ent_filter_action *act = NULL;
    ent_filter_kvmsg m;
    ent_filter_error e;
    int rc = EXIT_RULE_ERROR;

    ent_filter_kvmsg_init(&m);
    if (ent_filter_parse(a->expression, strlen(a->expression), a->params, a->nparams, &f, &e) < 0) {
        fprintf(err, "sbemu filter: %s\n", e.message);
        goto done;
    }
    if (a->action &&
        ent_filter_action_parse(a->action, strlen(a->action), a->params, a->nparams, &act, &e) < 0) {
        fprintf(err, "sbemu filter: action: %s\n", e.message);
        goto done;
    }
    size_t len;
    char *buf = read_all(in, &len, err);
    if (!buf) {
        rc = EXIT_USAGE;
        goto done;
    }
    int loaded = load_message(&m, buf, len, err);
    ent_free(buf);
    if (loaded < 0) {
        rc = EXIT_USAGE;
        goto done;
    }

    ent_filter_msg view = ent_filter_kvmsg_view(&m);
    ent_filter_result r = ent_filter_eval(f, &view, &e);
    if (r == ENT_FILTER_ERROR) {
        fprintf(err, "sbemu filter: %s\n", e.message);
        goto done;
    }
    if (r != ENT_FILTER_TRUE) {
        fputs("no match\n", out);
        rc = EXIT_MATCHED_OR_NOT;
        goto done;
    }
    if (act) {
        ent_filter_mut_msg mut = ent_filter_kvmsg_mut(&m);
        if (ent_filter_action_exec(act, &mut, &e) < 0) {
            fprintf(err, "sbemu filter: action: %s\n", e.message);
            goto done;
        }
    }
    fputs("match\n", out);
    if (act)
        print_message(out, &m);
    rc = EXIT_MATCHED_OR_NOT;

done:
    ent_filter_free(f);
    ent_filter_action_free(act);
    ent_filter_kvmsg_free(&m);
    return rc;
}

int emu_cmd_filter_io(int argc, char **argv, FILE *in, FILE *out, FILE *err)
{
    cmd_args a;
    memset(&a, 0, sizeof a);
    int rc = parse_args(&a, argc, argv, err);
    if (rc == 1) {
        usage(out);
        rc = EXIT_MATCHED_OR_NOT;
    } else if (rc < 0) {
        usage(err);
        rc = EXIT_USAGE;
    } else {
        rc = run(&a, in, out, err);
    }
    args_free(&a);
    fflush(out);
    return rc;
}

int emu_cmd_filter(int argc, char **argv) { return emu_cmd_filter_io(argc, argv, stdin, stdout, stderr); }
