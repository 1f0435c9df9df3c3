/* libFuzzer target for the rule language (entities/ent_filter.h).
 *
 * Each input is tried as a SQL filter and as a rule action; what parses is
 * evaluated against a message holding every value type (and executed on a
 * copy of it). On the side, the input feeds the LIKE matcher (checked
 * against a simple dynamic-programming matcher) and the value parsers and
 * formatters (checked to round-trip). Any disagreement aborts, so the fuzzer
 * reports it like a crash; ASan/UBSan/LSan catch the rest. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ent_filter.h"
#include "filter_internal.h"
#include "fuzz_check.h"

/* Longer inputs only exercise the length limit. */
#define MAX_INPUT 4096
/* Subject and pattern for the differential LIKE check stay small: the
 * reference matcher is O(n*m) in memory. */
#define LIKE_MAX_CHARS 64

static char long_text[20000];

static void set_user(ent_filter_kvmsg *m, const char *name, ent_filter_value v)
{
    ent_filter_kvmsg_set_user(m, name, strlen(name), &v);
}

static void set_sys(ent_filter_kvmsg *m, ent_filter_sys id, ent_filter_value v)
{
    ent_filter_kvmsg_set_sys(m, id, &v);
}

static void build_message(ent_filter_kvmsg *m)
{
    ent_filter_kvmsg_init(m);
    set_sys(m, ENT_SYS_MESSAGE_ID, ent_fv_cstr("m1"));
    set_sys(m, ENT_SYS_LABEL, ent_fv_cstr("Bus Label"));
    set_sys(m, ENT_SYS_TO, ent_fv_cstr(""));
    set_sys(m, ENT_SYS_SEQUENCE_NUMBER, ent_fv_int(INT64_MAX));
    set_sys(m, ENT_SYS_ENQUEUED_TIME_UTC, ent_fv_time(INT64_C(1704067200000)));
    set_sys(m, ENT_SYS_TIME_TO_LIVE, ent_fv_duration(INT64_MAX));
    set_sys(m, ENT_SYS_EXPIRES_AT_UTC, ent_fv_time(INT64_MIN));
    unsigned char u[16] = {0xa1, 0xb2, 0xc3, 0xd4, 0, 0, 0x40, 0, 0x80};
    set_sys(m, ENT_SYS_LOCK_TOKEN, ent_fv_uuid(u));
    set_user(m, "s", ent_fv_cstr("red"));
    set_user(m, "i", ent_fv_int(5));
    set_user(m, "min", ent_fv_int(INT64_MIN));
    set_user(m, "d", ent_fv_double(2.5));
    set_user(m, "nan", ent_fv_double(NAN));
    set_user(m, "inf", ent_fv_double(INFINITY));
    set_user(m, "b", ent_fv_bool(1));
    set_user(m, "n", ent_fv_null());
    set_user(m, "u", ent_fv_cstr("h\xc3\xa9llo%_!"));
    set_user(m, "t", ent_fv_time(-1));
    set_user(m, "g", ent_fv_uuid(u));
    memset(long_text, 'L', sizeof long_text);
    set_user(m, "long", ent_fv_string(long_text, sizeof long_text));
}

static const ent_filter_prop params[] = {
    {"@s", {.type = ENT_FV_STRING, .u.s = {"r%", 2}}},
    {"@i", {.type = ENT_FV_INT, .u.i = -1}},
    {"@d", {.type = ENT_FV_DOUBLE, .u.d = 1e300}},
    {"@b", {.type = ENT_FV_BOOL, .u.b = 0}},
    {"@n", {.type = ENT_FV_NULL}},
};

static void check_error(const ent_filter_error *err)
{
    CHECK(err->kind != ENT_FILTER_ERR_NONE);
    CHECK(memchr(err->message, 0, sizeof err->message) != NULL);
    CHECK(err->message[0] != 0);
}

static void fuzz_language(const char *text, size_t len)
{
    static ent_filter_kvmsg base;
    static int built;
    if (!built) {
        build_message(&base);
        built = 1;
    }
    ent_filter_msg view = ent_filter_kvmsg_view(&base);
    ent_filter_error err;

    ent_filter *f = NULL;
    if (ent_filter_parse(text, len, params, sizeof params / sizeof params[0], &f, &err) == 0) {
        CHECK(f != NULL);
        CHECK(strlen(ent_filter_text(f)) <= len);
        ent_filter_result r = ent_filter_eval(f, &view, &err);
        CHECK(r == ENT_FILTER_TRUE || r == ENT_FILTER_FALSE || r == ENT_FILTER_UNKNOWN || r == ENT_FILTER_ERROR);
        if (r == ENT_FILTER_ERROR)
            check_error(&err);
    } else {
        CHECK(f == NULL);
        check_error(&err);
    }

    ent_filter_action *a = NULL;
    if (ent_filter_action_parse(text, len, params, sizeof params / sizeof params[0], &a, &err) == 0) {
        CHECK(ent_filter_action_statement_count(a) >= 1);
        CHECK(ent_filter_action_statement_count(a) <= ENT_FILTER_MAX_ACTION_STATEMENTS);
        ent_filter_kvmsg copy;
        build_message(&copy);
        ent_filter_mut_msg mut = ent_filter_kvmsg_mut(&copy);
        if (ent_filter_action_exec(a, &mut, &err) != 0)
            check_error(&err);
        if (f) {
            ent_filter_msg after = ent_filter_kvmsg_view(&copy);
            if (ent_filter_eval(f, &after, &err) == ENT_FILTER_ERROR)
                check_error(&err);
        }
        ent_filter_kvmsg_free(&copy);
        ent_filter_action_free(a);
    } else {
        CHECK(a == NULL);
        check_error(&err);
    }
    ent_filter_free(f);
}

/* ---- LIKE against a reference ------------------------------------------------------ */

typedef struct pat_elem {
    int kind; /* 0 literal, 1 any, 2 star */
    uint32_t cp;
} pat_elem;

static int reference_like(const char *s, size_t slen, const char *p, size_t plen, int32_t esc)
{
    uint32_t sc[LIKE_MAX_CHARS];
    pat_elem pe[LIKE_MAX_CHARS];
    size_t ns = 0, np = 0;
    for (size_t i = 0; i < slen && ns < LIKE_MAX_CHARS;)
        sc[ns++] = futf8_next(s, slen, &i);
    for (size_t i = 0; i < plen && np < LIKE_MAX_CHARS;) {
        uint32_t c = futf8_next(p, plen, &i);
        if (esc >= 0 && c == (uint32_t)esc) {
            if (i < plen)
                c = futf8_next(p, plen, &i);
            pe[np++] = (pat_elem){0, c};
        } else {
            pe[np++] = (pat_elem){c == '%' ? 2 : c == '_' ? 1 : 0, c};
        }
    }
    /* dp[j]: the first i characters of s match the first j elements. */
    unsigned char dp[LIKE_MAX_CHARS + 1], next[LIKE_MAX_CHARS + 1];
    dp[0] = 1;
    for (size_t j = 1; j <= np; j++)
        dp[j] = dp[j - 1] && pe[j - 1].kind == 2;
    for (size_t i = 1; i <= ns; i++) {
        next[0] = 0;
        for (size_t j = 1; j <= np; j++) {
            const pat_elem *e = &pe[j - 1];
            if (e->kind == 2)
                next[j] = next[j - 1] || dp[j];
            else
                next[j] = dp[j - 1] && (e->kind == 1 || e->cp == sc[i - 1]);
        }
        memcpy(dp, next, np + 1);
    }
    return dp[np];
}

static void fuzz_like(const char *data, size_t len)
{
    const char *nl = memchr(data, '\n', len);
    if (!nl)
        return;
    size_t slen = (size_t)(nl - data), plen = len - slen - 1;
    const char *pat = nl + 1;
    if (futf8_count(data, slen) > LIKE_MAX_CHARS || futf8_count(pat, plen) > LIKE_MAX_CHARS)
        return;
    int32_t esc = slen ? (unsigned char)data[0] % 2 ? '!' : -1 : -1;
    CHECK(flike_match(data, slen, pat, plen, esc) == reference_like(data, slen, pat, plen, esc));
}

/* ---- values --------------------------------------------------------------------------------- */

static void fuzz_values(const char *data, size_t len)
{
    unsigned char u[16];
    char buf[128];
    int64_t ms;
    if (ent_fv_parse_uuid(data, len, u) == 0) {
        unsigned char w[16];
        ent_fv_format_uuid(u, buf, sizeof buf);
        CHECK(ent_fv_parse_uuid(buf, strlen(buf), w) == 0 && memcmp(u, w, 16) == 0);
    }
    if (ent_fv_parse_time(data, len, &ms) == 0) {
        int64_t back;
        ent_fv_format_time(ms, buf, sizeof buf);
        CHECK(ent_fv_parse_time(buf, strlen(buf), &back) == 0);
        CHECK(back == ms);
    }
    if (len >= 8) {
        double d;
        int64_t i;
        memcpy(&d, data, 8);
        memcpy(&i, data, 8);
        ent_fv_format_double(d, buf, sizeof buf);
        if (isfinite(d))
            CHECK(strtod(buf, NULL) == d);
        ent_fv_format_time(i, buf, sizeof buf);
        ent_fv_format_duration(i, buf, sizeof buf);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > MAX_INPUT)
        return 0;
    const char *text = (const char *)data;
    fuzz_language(text, size);
    fuzz_like(text, size);
    fuzz_values(text, size);
    return 0;
}
