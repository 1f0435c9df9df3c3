/* The message every filter test evaluates against, and a printer that
 * shows a message with its value types, for the test_filter*.c files. */
#ifndef FILTER_FIXTURE_H
#define FILTER_FIXTURE_H

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ent_filter.h"

/* 2024-01-01T00:00:00Z */
#define FIX_ENQUEUED_MS INT64_C(1704067200000)
#define FIX_LOCK_TOKEN "a1b2c3d4-0000-4000-8000-000000000001"
#define FIX_LONG_LEN 10000
#define FIX_UNUSED __attribute__((unused))

FIX_UNUSED static char fix_long[FIX_LONG_LEN];

FIX_UNUSED static void fix_sys_str(ent_filter_kvmsg *m, ent_filter_sys id, const char *s)
{
    ent_filter_value v = ent_fv_cstr(s);
    ent_filter_kvmsg_set_sys(m, id, &v);
}

FIX_UNUSED static void fix_user(ent_filter_kvmsg *m, const char *name, ent_filter_value v)
{
    ent_filter_kvmsg_set_user(m, name, strlen(name), &v);
}

/* Set: MessageId, CorrelationId, Label, To, ContentType, SessionId,
 * SequenceNumber, EnqueuedTimeUtc, TimeToLive, DeliveryCount, LockToken.
 * Unset: ReplyTo, ReplyToSessionId, PartitionKey, ScheduledEnqueueTimeUtc,
 * ExpiresAtUtc, DeadLetterSource, ... */
FIX_UNUSED static void fix_message(ent_filter_kvmsg *m)
{
    ent_filter_value v;
    ent_filter_kvmsg_init(m);
    fix_sys_str(m, ENT_SYS_MESSAGE_ID, "m1");
    fix_sys_str(m, ENT_SYS_CORRELATION_ID, "corr-1");
    fix_sys_str(m, ENT_SYS_LABEL, "Bus Label");
    fix_sys_str(m, ENT_SYS_TO, "store5");
    fix_sys_str(m, ENT_SYS_CONTENT_TYPE, "application/json");
    fix_sys_str(m, ENT_SYS_SESSION_ID, "s1");
    v = ent_fv_int(42);
    ent_filter_kvmsg_set_sys(m, ENT_SYS_SEQUENCE_NUMBER, &v);
    v = ent_fv_time(FIX_ENQUEUED_MS);
    ent_filter_kvmsg_set_sys(m, ENT_SYS_ENQUEUED_TIME_UTC, &v);
    v = ent_fv_duration(60000);
    ent_filter_kvmsg_set_sys(m, ENT_SYS_TIME_TO_LIVE, &v);
    v = ent_fv_int(1);
    ent_filter_kvmsg_set_sys(m, ENT_SYS_DELIVERY_COUNT, &v);
    v.type = ENT_FV_UUID;
    ent_fv_parse_uuid(FIX_LOCK_TOKEN, strlen(FIX_LOCK_TOKEN), v.u.uuid);
    ent_filter_kvmsg_set_sys(m, ENT_SYS_LOCK_TOKEN, &v);

    fix_user(m, "color", ent_fv_cstr("red"));
    fix_user(m, "qty", ent_fv_int(5));
    fix_user(m, "price", ent_fv_double(2.5));
    fix_user(m, "big", ent_fv_int(INT64_C(9007199254740993)));
    fix_user(m, "flag", ent_fv_bool(1));
    fix_user(m, "nothing", ent_fv_null());
    fix_user(m, "name", ent_fv_cstr("O'Brien"));
    fix_user(m, "pct", ent_fv_cstr("50%"));
    fix_user(m, "path", ent_fv_cstr("a_b"));
    fix_user(m, "empty", ent_fv_cstr(""));
    fix_user(m, "uni", ent_fv_cstr("h\xc3\xa9llo"));
    fix_user(m, "neg", ent_fv_int(-3));
    fix_user(m, "nan", ent_fv_double(NAN));
    fix_user(m, "guidstr", ent_fv_cstr(FIX_LOCK_TOKEN));
    fix_user(m, "Property With Space", ent_fv_cstr("x"));
    fix_user(m, "HR-EmployeeID", ent_fv_int(7));
    fix_user(m, "a]b", ent_fv_int(1));
    fix_user(m, "q\"x", ent_fv_int(2));
    memset(fix_long, 'L', sizeof fix_long);
    fix_user(m, "long", ent_fv_string(fix_long, sizeof fix_long));
}

/* s:'text' i:5 d:2.5 b:true n:null t:ISO ts:ms g:guid */
FIX_UNUSED static void fix_value_text(const ent_filter_value *v, char *buf, size_t cap)
{
    char tmp[64];
    switch (v->type) {
    case ENT_FV_NULL: snprintf(buf, cap, "n:null"); break;
    case ENT_FV_BOOL: snprintf(buf, cap, "b:%s", v->u.b ? "true" : "false"); break;
    case ENT_FV_INT: snprintf(buf, cap, "i:%lld", (long long)v->u.i); break;
    case ENT_FV_DOUBLE: snprintf(buf, cap, "d:%g", v->u.d); break;
    case ENT_FV_STRING: snprintf(buf, cap, "s:'%.*s'", (int)v->u.s.len, v->u.s.ptr); break;
    case ENT_FV_TIME:
        ent_fv_format_time(v->u.i, tmp, sizeof tmp);
        snprintf(buf, cap, "t:%s", tmp);
        break;
    case ENT_FV_DURATION: snprintf(buf, cap, "ts:%lld", (long long)v->u.i); break;
    case ENT_FV_UUID:
        ent_fv_format_uuid(v->u.uuid, tmp, sizeof tmp);
        snprintf(buf, cap, "g:%s", tmp);
        break;
    }
}

/* "sys{MessageId=s:'m1' ...} user{color=s:'red' ...}"; "long" is skipped. */
FIX_UNUSED static void fix_print(const ent_filter_kvmsg *m, char *buf, size_t cap)
{
    size_t n = 0;
    char v[256];
    n += (size_t)snprintf(buf + n, cap - n, "sys{");
    for (int i = 0; i < ENT_SYS_COUNT && n < cap; i++) {
        if (!m->sys_set[i])
            continue;
        fix_value_text(&m->sys[i], v, sizeof v);
        n += (size_t)snprintf(buf + n, cap - n, " %s=%s", ent_filter_sys_name((ent_filter_sys)i), v);
    }
    n += (size_t)snprintf(buf + n, cap - n, " } user{");
    for (size_t i = 0; i < m->nuser && n < cap; i++) {
        if (!strcmp(m->user[i].name, "long"))
            continue;
        fix_value_text(&m->user[i].value, v, sizeof v);
        n += (size_t)snprintf(buf + n, cap - n, " %s=%s", m->user[i].name, v);
    }
    snprintf(buf + n, cap - n, " }");
}

#endif
