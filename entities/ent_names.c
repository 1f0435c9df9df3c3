/* What entity properties are made of (ent_props.h): the values handed to
 * the setters, UTF-8 lengths, and the checks of entity paths
 * and child names (subscriptions, rules). */
#include "ent_props.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- Small helpers ------------------------------------------------------ */

ent_value ent_value_null(void) { return (ent_value){.type = ENT_VALUE_NULL}; }
ent_value ent_value_bool(int b) { return (ent_value){.type = ENT_VALUE_BOOL, .u.b = !!b}; }
ent_value ent_value_int(int64_t i) { return (ent_value){.type = ENT_VALUE_INT, .u.i = i}; }
ent_value ent_value_double(double d) { return (ent_value){.type = ENT_VALUE_DOUBLE, .u.d = d}; }
ent_value ent_value_string(const char *s)
{
    return s ? (ent_value){.type = ENT_VALUE_STRING, .u.s = s} : ent_value_null();
}

const char *ent_value_type_name(ent_value_type t)
{
    switch (t) {
    case ENT_VALUE_NULL: return "null";
    case ENT_VALUE_BOOL: return "a boolean";
    case ENT_VALUE_INT: return "an integer";
    case ENT_VALUE_DOUBLE: return "a number";
    case ENT_VALUE_STRING: return "a string";
    case ENT_VALUE_STRUCTURED: return "an object or array";
    }
    return "an unknown type";
}

long ent_utf8_length(const char *s) { return ent_utf8_length_n(s, strlen(s)); }

long ent_utf8_length_n(const char *s, size_t len)
{
    long n = 0;
    const unsigned char *p = (const unsigned char *)s, *end = p + len;
    while (p < end) {
        int extra;
        if (*p < 0x80)
            extra = 0;
        else if ((*p & 0xE0) == 0xC0 && *p >= 0xC2)
            extra = 1;
        else if ((*p & 0xF0) == 0xE0)
            extra = 2;
        else if ((*p & 0xF8) == 0xF0 && *p <= 0xF4)
            extra = 3;
        else
            return -1;
        p++;
        if (end - p < extra)
            return -1;
        for (int i = 0; i < extra; i++, p++)
            if ((*p & 0xC0) != 0x80)
                return -1;
        n++;
    }
    return n;
}

int ent_utf8_prefix(const char *s, size_t max_chars)
{
    size_t i = 0;
    for (size_t n = 0; s[i] && n < max_chars; n++)
        do
            i++;
        while (((unsigned char)s[i] & 0xc0) == 0x80);
    return (int)i;
}

/* Copies src into a fixed buffer of dstsize bytes; the callers have checked
 * the length in characters, which bounds the bytes. */

/* ---- Names -------------------------------------------------------------- */

static int path_char_ok(unsigned char c)
{
    return isalnum(c) || c == '.' || c == '-' || c == '_' || c == '~';
}

sb_status ent_check_entity_path(const char *kind, const char *name, char *err, size_t errlen)
{
    if (!name || !*name)
        return ent_fail_status(SB_ERR_ARGUMENT, err, errlen, "%s is empty", kind);
    long chars = ent_utf8_length(name);
    if (chars < 0)
        return ent_fail_status(SB_ERR_ARGUMENT, err, errlen, "%s is not valid UTF-8", kind);
    if (chars > ENT_ENTITY_PATH_MAX)
        return ent_fail_status(SB_ERR_ARGUMENT_RANGE, err, errlen,
                               "%s \"%.40s...\" is %ld characters, above the maximum %d", kind, name, chars,
                               ENT_ENTITY_PATH_MAX);
    size_t len = strlen(name);
    if (name[0] == '/' || name[len - 1] == '/')
        return ent_fail_status(SB_ERR_ARGUMENT, err, errlen, "%s \"%s\" cannot start or end with '/'", kind, name);
    if (strstr(name, "//"))
        return ent_fail_status(SB_ERR_ARGUMENT, err, errlen, "%s \"%s\" has an empty segment (\"//\")", kind, name);
    for (const char *p = name; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c == '/' || path_char_ok(c))
            continue;
        if (strchr(ENT_NAME_FORBIDDEN_CHARS, c))
            return ent_fail_status(SB_ERR_ARGUMENT, err, errlen,
                                   "%s \"%s\" contains '%c', which Service Bus does not allow", kind, name, c);
        if (c < 0x20 || c == 0x7f || c >= 0x80)
            return ent_fail_status(SB_ERR_ARGUMENT, err, errlen, "%s \"%s\" contains the byte 0x%02x"
                                   " (allowed: letters, digits, '.', '-', '_', '~' and '/')", kind, name, c);
        return ent_fail_status(SB_ERR_ARGUMENT, err, errlen,
                               "%s \"%s\" contains '%c' (allowed: letters, digits, '.', '-', '_', '~' and '/')", kind,
                               name, c);
    }
    return SB_OK;
}

sb_status ent_check_child_name(const char *kind, const char *name, size_t max_chars, char *err, size_t errlen)
{
    if (!name || !*name)
        return ent_fail_status(SB_ERR_ARGUMENT, err, errlen, "%s is empty", kind);
    long chars = ent_utf8_length(name);
    if (chars < 0)
        return ent_fail_status(SB_ERR_ARGUMENT, err, errlen, "%s is not valid UTF-8", kind);
    if ((size_t)chars > max_chars)
        return ent_fail_status(SB_ERR_ARGUMENT_RANGE, err, errlen, "%s \"%s\" is %ld characters, above the maximum %zu",
                               kind, name, chars, max_chars);
    for (const char *p = name; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (strchr(ENT_CHILD_NAME_FORBIDDEN_CHARS, c))
            return ent_fail_status(SB_ERR_ARGUMENT, err, errlen,
                                   "%s \"%s\" contains '%c', which Service Bus does not allow", kind, name, c);
        if (c < 0x20 || c == 0x7f)
            return ent_fail_status(SB_ERR_ARGUMENT, err, errlen, "%s \"%s\" contains the control character 0x%02x",
                                   kind, name, c);
    }
    return SB_OK;
}
