/* ISO-8601 durations <-> milliseconds (see ent_duration.h). */
#include "ent_duration.h"
#include "ent_status.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Designators in the order they must appear; the index is the position. */
static const char date_designators[] = "YMWD";
static const char time_designators[] = "HMS";

static const int64_t date_unit_ms[] = {
    ENT_DURATION_DAYS_PER_YEAR * ENT_DURATION_MS_PER_DAY,
    ENT_DURATION_DAYS_PER_MONTH * ENT_DURATION_MS_PER_DAY,
    7 * ENT_DURATION_MS_PER_DAY,
    ENT_DURATION_MS_PER_DAY,
};
static const int64_t time_unit_ms[] = {3600000, 60000, 1000};

/* Saturates at INT64_MAX: anything that large means "unlimited" anyway. */
static int64_t sat_add(int64_t a, int64_t b)
{
    int64_t r;
    return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}

static int64_t sat_mul(int64_t a, int64_t b)
{
    int64_t r;
    return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

/* One "<digits>[.<digits>]<designator>" component. *idx is the index of the
 * last designator seen in this part (-1 at the start) so order is enforced. */
static int parse_component(const char **pp, const char *designators, const int64_t *unit_ms, int *idx,
                           int is_time, int64_t *total, char *err, size_t errlen)
{
    const char *p = *pp;
    if (!isdigit((unsigned char)*p)) {
        if (*p == '-' || *p == '+')
            return ent_fail(err, errlen, "signs are not allowed inside a duration ('%c')", *p);
        return ent_fail(err, errlen, "expected a number, found '%c'", *p);
    }
    int64_t value = 0;
    while (isdigit((unsigned char)*p))
        value = sat_add(sat_mul(value, 10), *p++ - '0');
    int64_t frac_ms = 0;
    int has_frac = 0;
    if (*p == '.' || *p == ',') {
        has_frac = 1;
        p++;
        if (!isdigit((unsigned char)*p))
            return ent_fail(err, errlen, "a decimal point must be followed by digits");
        /* Milliseconds are the first three digits; the rest is truncated. */
        for (int n = 0; isdigit((unsigned char)*p); n++, p++)
            if (n < 3)
                frac_ms += (*p - '0') * (n == 0 ? 100 : n == 1 ? 10 : 1);
    }
    if (*p == '\0')
        return ent_fail(err, errlen, "a number must be followed by a designator");
    int c = toupper((unsigned char)*p);
    const char *d = strchr(designators, c);
    if (!d || c == 0) {
        if (!is_time && strchr(time_designators, c))
            return ent_fail(err, errlen, "'%c' belongs after 'T' (e.g. PT1H)", c);
        return ent_fail(err, errlen, "unexpected '%c' (not a duration designator)", *p);
    }
    int i = (int)(d - designators);
    if (i <= *idx)
        return ent_fail(err, errlen, "'%c' is repeated or out of order", c);
    if (has_frac && !(is_time && c == 'S'))
        return ent_fail(err, errlen, "fractions are only allowed on seconds, not on '%c'", c);
    *idx = i;
    *total = sat_add(*total, sat_add(sat_mul(value, unit_ms[i]), frac_ms));
    *pp = p + 1;
    return 0;
}

int ent_duration_parse(const char *text, int64_t *ms, char *err, size_t errlen)
{
    if (!text || !*text)
        return ent_fail(err, errlen, "an empty string is not a duration (e.g. PT1M)");
    const char *p = text;
    while (isspace((unsigned char)*p))
        p++;
    if (*p == '-')
        return ent_fail(err, errlen, "negative durations are not allowed");
    if (toupper((unsigned char)*p) != 'P')
        return ent_fail(err, errlen, "a duration starts with 'P' (e.g. PT1M, P14D)");
    p++;
    int64_t total = 0;
    int components = 0;
    int idx = -1;
    while (*p && toupper((unsigned char)*p) != 'T' && !isspace((unsigned char)*p)) {
        if (parse_component(&p, date_designators, date_unit_ms, &idx, 0, &total, err, errlen))
            return -1;
        components++;
    }
    if (toupper((unsigned char)*p) == 'T') {
        p++;
        idx = -1;
        int time_components = 0;
        while (*p && !isspace((unsigned char)*p)) {
            if (parse_component(&p, time_designators, time_unit_ms, &idx, 1, &total, err, errlen))
                return -1;
            time_components++;
        }
        if (!time_components)
            return ent_fail(err, errlen, "'T' must be followed by hours, minutes or seconds (e.g. PT1M)");
        components += time_components;
    }
    while (isspace((unsigned char)*p))
        p++;
    if (*p)
        return ent_fail(err, errlen, "unexpected '%c' after the duration", *p);
    if (!components)
        return ent_fail(err, errlen, "'P' must be followed by at least one component (e.g. PT1M)");
    *ms = total >= ENT_DURATION_MAXVALUE_MS ? ENT_DURATION_UNLIMITED : total;
    return 0;
}

char *ent_duration_format(int64_t ms, char *buf, size_t buflen)
{
    if (!buf || !buflen)
        return buf;
    if (ms >= ENT_DURATION_MAXVALUE_MS) {
        snprintf(buf, buflen, "%s", ENT_DURATION_MAXVALUE_TEXT);
        return buf;
    }
    /* Work on the magnitude as unsigned so that INT64_MIN is fine too. */
    uint64_t m = ms < 0 ? (uint64_t)0 - (uint64_t)ms : (uint64_t)ms;
    uint64_t days = m / ENT_DURATION_MS_PER_DAY;
    m %= ENT_DURATION_MS_PER_DAY;
    uint64_t hours = m / 3600000, minutes = m / 60000 % 60, secs = m / 1000 % 60, millis = m % 1000;

    char tmp[ENT_DURATION_TEXT_MAX];
    size_t n = 0;
    n += snprintf(tmp + n, sizeof tmp - n, "%sP", ms < 0 ? "-" : "");
    if (days)
        n += snprintf(tmp + n, sizeof tmp - n, "%" PRIu64 "D", days);
    if (hours || minutes || secs || millis || !days) {
        n += snprintf(tmp + n, sizeof tmp - n, "T");
        if (hours)
            n += snprintf(tmp + n, sizeof tmp - n, "%" PRIu64 "H", hours);
        if (minutes)
            n += snprintf(tmp + n, sizeof tmp - n, "%" PRIu64 "M", minutes);
        if (millis) {
            char frac[8];
            snprintf(frac, sizeof frac, "%03" PRIu64, millis);
            for (int i = 2; i > 0 && frac[i] == '0'; i--)
                frac[i] = '\0';
            n += snprintf(tmp + n, sizeof tmp - n, "%" PRIu64 ".%sS", secs, frac);
        } else if (secs || (!hours && !minutes)) {
            n += snprintf(tmp + n, sizeof tmp - n, "%" PRIu64 "S", secs);
        }
    }
    snprintf(buf, buflen, "%s", tmp);
    return buf;
}
