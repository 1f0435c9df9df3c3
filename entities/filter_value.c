/* Values of the rule language: constructors, comparison with C# promotion,
 * and the text forms of doubles, timestamps, timespans and guids. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ent_duration.h"
#include "filter_internal.h"

/* Significant digits that make every double round-trip. */
#define DOUBLE_MAX_DIGITS 17
/* .NET (Core 3.0+) prints a double in exponent form when it has more integer
 * digits than max(its significant digits, 15), or from 1E-05 down. */
#define DOUBLE_SCI_HIGH_EXP 15
#define DOUBLE_SCI_LOW_EXP (-4)
#define MS_PER_SECOND 1000
#define MS_PER_DAY INT64_C(86400000)

ent_filter_value ent_fv_cstr(const char *s) { return ent_fv_string(s, s ? strlen(s) : 0); }

ent_filter_value ent_fv_uuid(const unsigned char bytes[16])
{
    ent_filter_value v = {.type = ENT_FV_UUID};
    memcpy(v.u.uuid, bytes, 16);
    return v;
}

const char *ent_fv_type_name(ent_fv_type t)
{
    static const char *const names[] = {
        [ENT_FV_NULL] = "null",     [ENT_FV_BOOL] = "bool",           [ENT_FV_INT] = "int64",
        [ENT_FV_DOUBLE] = "double", [ENT_FV_STRING] = "string",       [ENT_FV_TIME] = "timestamp",
        [ENT_FV_DURATION] = "timespan", [ENT_FV_UUID] = "guid",
    };
    if ((unsigned)t < sizeof names / sizeof names[0])
        return names[t];
    return "?";
}

/* ---- comparison ------------------------------------------------------------------ */

static int is_number(const ent_filter_value *v) { return v->type == ENT_FV_INT || v->type == ENT_FV_DOUBLE; }

static fcmp cmp_i64(int64_t a, int64_t b) { return a < b ? FCMP_LT : a > b ? FCMP_GT : FCMP_EQ; }

static fcmp cmp_bytes(const void *a, size_t alen, const void *b, size_t blen)
{
    size_t n = alen < blen ? alen : blen;
    int c = n ? memcmp(a, b, n) : 0;
    if (c)
        return c < 0 ? FCMP_LT : FCMP_GT;
    return cmp_i64((int64_t)alen, (int64_t)blen);
}

fcmp fv_compare(const ent_filter_value *a, const ent_filter_value *b)
{
    if (is_number(a) && is_number(b)) {
        if (a->type == ENT_FV_INT && b->type == ENT_FV_INT)
            return cmp_i64(a->u.i, b->u.i);
        double x = a->type == ENT_FV_INT ? (double)a->u.i : a->u.d;
        double y = b->type == ENT_FV_INT ? (double)b->u.i : b->u.d;
        if (isnan(x) || isnan(y))
            return FCMP_UNORDERED;
        return x < y ? FCMP_LT : x > y ? FCMP_GT : FCMP_EQ;
    }
    if (a->type == ENT_FV_UUID && b->type == ENT_FV_STRING) {
        unsigned char u[16];
        if (ent_fv_parse_uuid(b->u.s.ptr, b->u.s.len, u) != 0)
            return FCMP_INCOMPATIBLE;
        return cmp_bytes(a->u.uuid, 16, u, 16);
    }
    if (a->type == ENT_FV_STRING && b->type == ENT_FV_UUID) {
        fcmp c = fv_compare(b, a);
        return c == FCMP_LT ? FCMP_GT : c == FCMP_GT ? FCMP_LT : c;
    }
    if (a->type != b->type)
        return FCMP_INCOMPATIBLE;
    switch (a->type) {
    case ENT_FV_BOOL: return cmp_i64(a->u.b, b->u.b);
    case ENT_FV_STRING: return cmp_bytes(a->u.s.ptr, a->u.s.len, b->u.s.ptr, b->u.s.len);
    case ENT_FV_TIME:
    case ENT_FV_DURATION: return cmp_i64(a->u.i, b->u.i);
    case ENT_FV_UUID: return cmp_bytes(a->u.uuid, 16, b->u.uuid, 16);
    default: return FCMP_INCOMPATIBLE;
    }
}

int fv_equal(const ent_filter_value *a, const ent_filter_value *b)
{
    if (a->type == ENT_FV_NULL || b->type == ENT_FV_NULL)
        return a->type == b->type;
    return fv_compare(a, b) == FCMP_EQ;
}

/* ---- guids ------------------------------------------------------------------------ */

size_t ent_fv_format_uuid(const unsigned char u[16], char *buf, size_t cap)
{
    return (size_t)snprintf(buf, cap, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
                            u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14],
                            u[15]);
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int ent_fv_parse_uuid(const char *s, size_t len, unsigned char out[16])
{
    if (len >= 2 && s[0] == '{' && s[len - 1] == '}') {
        s++;
        len -= 2;
    }
    int hyphens = len == 36;
    if (!hyphens && len != 32)
        return -1;
    size_t i = 0;
    for (int byte = 0; byte < 16; byte++) {
        if (hyphens && (i == 8 || i == 13 || i == 18 || i == 23)) {
            if (s[i] != '-')
                return -1;
            i++;
        }
        int hi = hexval(s[i]), lo = hexval(s[i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        out[byte] = (unsigned char)(hi << 4 | lo);
        i += 2;
    }
    return 0;
}

/* ---- timestamps (proleptic Gregorian, days_from_civil / civil_from_days) ---- */

static int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

static int64_t days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = floor_div(y, 400);
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
    z += 719468;
    int64_t era = floor_div(z, 146097);
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

size_t ent_fv_format_time(int64_t ms, char *buf, size_t cap)
{
    int64_t days = floor_div(ms, MS_PER_DAY);
    int64_t rest = ms % MS_PER_DAY; /* not ms - days * MS_PER_DAY: that overflows near INT64_MIN */
    if (rest < 0)
        rest += MS_PER_DAY;
    int64_t y;
    int m, d;
    civil_from_days(days, &y, &m, &d);
    int secs = (int)(rest / MS_PER_SECOND);
    return (size_t)snprintf(buf, cap, "%04lld-%02d-%02dT%02d:%02d:%02d.%03dZ", (long long)y, m, d, secs / 3600,
                            secs / 60 % 60, secs % 60, (int)(rest % MS_PER_SECOND));
}

/* Read exactly n digits at s[*i]. */
static int digits(const char *s, size_t len, size_t *i, int n, int *out)
{
    int v = 0;
    for (int k = 0; k < n; k++) {
        if (*i >= len || s[*i] < '0' || s[*i] > '9')
            return -1;
        v = v * 10 + (s[(*i)++] - '0');
    }
    *out = v;
    return 0;
}

static int expect_char(const char *s, size_t len, size_t *i, char c)
{
    if (*i >= len || s[*i] != c)
        return -1;
    (*i)++;
    return 0;
}

int ent_fv_parse_time(const char *s, size_t len, int64_t *ms)
{
    size_t i = 0;
    int y, mo, d, h, mi, sec, frac = 0;
    if (digits(s, len, &i, 4, &y) || expect_char(s, len, &i, '-') || digits(s, len, &i, 2, &mo) ||
        expect_char(s, len, &i, '-') || digits(s, len, &i, 2, &d))
        return -1;
    if (i >= len || (s[i] != 'T' && s[i] != 't' && s[i] != ' '))
        return -1;
    i++;
    if (digits(s, len, &i, 2, &h) || expect_char(s, len, &i, ':') || digits(s, len, &i, 2, &mi) ||
        expect_char(s, len, &i, ':') || digits(s, len, &i, 2, &sec))
        return -1;
    if (i < len && s[i] == '.') {
        int scale = 100, any = 0;
        for (i++; i < len && s[i] >= '0' && s[i] <= '9'; i++, any = 1) {
            frac += (s[i] - '0') * scale;
            scale /= 10;
        }
        if (!any)
            return -1;
    }
    int64_t offset_min = 0;
    if (i < len && (s[i] == 'Z' || s[i] == 'z')) {
        i++;
    } else if (i < len && (s[i] == '+' || s[i] == '-')) {
        int sign = s[i++] == '-' ? -1 : 1, oh, om;
        if (digits(s, len, &i, 2, &oh) || expect_char(s, len, &i, ':') || digits(s, len, &i, 2, &om))
            return -1;
        offset_min = sign * (oh * 60 + om);
    }
    static const int month_days[12] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (i != len || mo < 1 || mo > 12 || d < 1 || d > month_days[mo - 1] || h > 23 || mi > 59 || sec > 59)
        return -1;
    if (mo == 2 && d == 29 && !(y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)))
        return -1;
    int64_t days = days_from_civil(y, mo, d);
    *ms = days * MS_PER_DAY + ((int64_t)h * 3600 + mi * 60 + sec - offset_min * 60) * MS_PER_SECOND + frac;
    return 0;
}

size_t ent_fv_format_duration(int64_t ms, char *buf, size_t cap)
{
    const char *sign = "";
    uint64_t u = (uint64_t)ms;
    if (ms < 0) {
        sign = "-";
        u = 0 - u;
    }
    uint64_t days = u / (uint64_t)MS_PER_DAY, rest = u % (uint64_t)MS_PER_DAY;
    unsigned secs = (unsigned)(rest / MS_PER_SECOND), frac = (unsigned)(rest % MS_PER_SECOND);
    char dpart[32] = "", fpart[16] = "";
    if (days)
        snprintf(dpart, sizeof dpart, "%llu.", (unsigned long long)days);
    if (frac)
        snprintf(fpart, sizeof fpart, ".%07u", frac * ENT_TICKS_PER_MS);
    return (size_t)snprintf(buf, cap, "%s%s%02u:%02u:%02u%s", sign, dpart, secs / 3600, secs / 60 % 60, secs % 60,
                            fpart);
}

/* ---- doubles --------------------------------------------------------------------------- */

size_t ent_fv_format_double(double d, char *buf, size_t cap)
{
    if (isnan(d))
        return (size_t)snprintf(buf, cap, "NaN");
    if (isinf(d))
        return (size_t)snprintf(buf, cap, "%sInfinity", d < 0 ? "-" : "");
    if (d == 0)
        return (size_t)snprintf(buf, cap, "%s0", signbit(d) ? "-" : "");

    /* Shortest digits that read back to the same double. */
    char sci[40];
    for (int prec = 1; prec <= DOUBLE_MAX_DIGITS; prec++) {
        snprintf(sci, sizeof sci, "%.*e", prec - 1, d);
        if (strtod(sci, NULL) == d)
            break;
    }
    /* sci is [-]D[.DDD]e(+|-)XX: split it into sign, digits and exponent. */
    const char *p = sci;
    int neg = *p == '-';
    if (neg)
        p++;
    char dig[DOUBLE_MAX_DIGITS + 1];
    int nd = 0;
    for (; *p && *p != 'e'; p++)
        if (*p != '.')
            dig[nd++] = *p;
    while (nd > 1 && dig[nd - 1] == '0')
        nd--;
    dig[nd] = 0;
    int exp = atoi(p + 1);

    char out[64];
    int n = 0;
    if (neg)
        out[n++] = '-';
    int high = nd > DOUBLE_SCI_HIGH_EXP ? nd : DOUBLE_SCI_HIGH_EXP;
    if (exp >= high || exp < DOUBLE_SCI_LOW_EXP) {
        out[n++] = dig[0];
        if (nd > 1) {
            out[n++] = '.';
            memcpy(out + n, dig + 1, (size_t)nd - 1);
            n += nd - 1;
        }
        n += snprintf(out + n, sizeof out - (size_t)n, "E%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
    } else if (exp < 0) {
        out[n++] = '0';
        out[n++] = '.';
        for (int k = -1; k > exp; k--)
            out[n++] = '0';
        memcpy(out + n, dig, (size_t)nd);
        n += nd;
    } else {
        for (int k = 0; k <= exp || k < nd; k++) {
            if (k == exp + 1)
                out[n++] = '.';
            out[n++] = k < nd ? dig[k] : '0';
        }
    }
    out[n] = 0;
    return (size_t)snprintf(buf, cap, "%s", out);
}
