/* See mgmt_map.h. */
#include "mgmt_map.h"

#include <stdio.h>
#include <string.h>

#include "ent_alloc.h"

bool mgmt_map_seek(pn_data_t *d, const char *key)
{
    if (pn_data_type(d) != PN_MAP)
        return false;
    pn_data_enter(d);
    size_t klen = strlen(key);
    while (pn_data_next(d)) {
        pn_type_t t = pn_data_type(d);
        bool match = false;
        if (t == PN_STRING || t == PN_SYMBOL) {
            pn_bytes_t k = t == PN_STRING ? pn_data_get_string(d) : pn_data_get_symbol(d);
            match = k.size == klen && !memcmp(k.start, key, klen);
        }
        if (!pn_data_next(d))
            return false;
        if (match)
            return pn_data_type(d) != PN_NULL;
    }
    return false;
}

bool mgmt_map_find(pn_data_t *body, const char *key)
{
    pn_data_rewind(body);
    return pn_data_next(body) && mgmt_map_seek(body, key);
}

static bool is_integer(pn_type_t t)
{
    switch (t) {
    case PN_BYTE: case PN_UBYTE: case PN_SHORT: case PN_USHORT: case PN_INT: case PN_UINT: case PN_LONG:
    case PN_ULONG:
        return true;
    default:
        return false;
    }
}

int64_t mgmt_get_integer(pn_data_t *d)
{
    switch (pn_data_type(d)) {
    case PN_BYTE: return pn_data_get_byte(d);
    case PN_UBYTE: return pn_data_get_ubyte(d);
    case PN_SHORT: return pn_data_get_short(d);
    case PN_USHORT: return pn_data_get_ushort(d);
    case PN_INT: return pn_data_get_int(d);
    case PN_UINT: return pn_data_get_uint(d);
    case PN_ULONG: {
        uint64_t v = pn_data_get_ulong(d);
        return v > INT64_MAX ? INT64_MAX : (int64_t)v;
    }
    default: return pn_data_get_long(d);
    }
}

/* Common prologue: 0 positioned on the value, 1 absent and optional, -1 absent and required. */
static int locate(pn_data_t *body, const char *key, bool required, const char *expected, char *err, size_t errlen)
{
    if (mgmt_map_find(body, key))
        return 0;
    if (!required)
        return 1;
    snprintf(err, errlen, "The request body has no '%s' (expected %s).", key, expected);
    return -1;
}

const char *mgmt_type_name(pn_type_t t)
{
    switch (t) {
    case PN_NULL: return "null";
    case PN_BOOL: return "boolean";
    case PN_UBYTE: return "ubyte";
    case PN_BYTE: return "byte";
    case PN_USHORT: return "ushort";
    case PN_SHORT: return "short";
    case PN_UINT: return "uint";
    case PN_INT: return "int";
    case PN_CHAR: return "char";
    case PN_ULONG: return "ulong";
    case PN_LONG: return "long";
    case PN_TIMESTAMP: return "timestamp";
    case PN_FLOAT: return "float";
    case PN_DOUBLE: return "double";
    case PN_DECIMAL32: return "decimal32";
    case PN_DECIMAL64: return "decimal64";
    case PN_DECIMAL128: return "decimal128";
    case PN_UUID: return "uuid";
    case PN_BINARY: return "binary";
    case PN_STRING: return "string";
    case PN_SYMBOL: return "symbol";
    case PN_DESCRIBED: return "a described value";
    case PN_ARRAY: return "array";
    case PN_LIST: return "list";
    case PN_MAP: return "map";
    default: return "an unknown type";
    }
}

static int wrong_type(pn_data_t *body, const char *key, const char *expected, char *err, size_t errlen)
{
    snprintf(err, errlen, "The request body's '%s' must be %s, not %s.", key, expected,
             mgmt_type_name(pn_data_type(body)));
    return -1;
}

static bool is_bool(pn_type_t t) { return t == PN_BOOL; }
static bool is_string(pn_type_t t) { return t == PN_STRING || t == PN_SYMBOL; }
/* milliseconds as an integer too, for clients that cannot say timestamp */
static bool is_time(pn_type_t t) { return t == PN_TIMESTAMP || is_integer(t); }
static bool is_uuid(pn_type_t t) { return t == PN_UUID; }

/* What every reader does first: 0 with body on a value of a type `accepts`,
 * 1 absent and optional, else -1 with the description in err. */
static int find_typed(pn_data_t *body, const char *key, bool required, const char *expected,
                      bool (*accepts)(pn_type_t), char *err, size_t errlen)
{
    int rc = locate(body, key, required, expected, err, errlen);
    if (rc == 0 && !accepts(pn_data_type(body)))
        rc = wrong_type(body, key, expected, err, errlen);
    return rc;
}

int mgmt_arg_long(pn_data_t *body, const char *key, bool required, int64_t *out, char *err, size_t errlen)
{
    int rc = find_typed(body, key, required, "an integer", is_integer, err, errlen);
    if (rc == 0)
        *out = mgmt_get_integer(body);
    return rc;
}

int mgmt_arg_bool(pn_data_t *body, const char *key, bool required, bool *out, char *err, size_t errlen)
{
    int rc = find_typed(body, key, required, "a boolean", is_bool, err, errlen);
    if (rc == 0)
        *out = pn_data_get_bool(body);
    return rc;
}

int mgmt_arg_timestamp(pn_data_t *body, const char *key, bool required, int64_t *out_ms, char *err, size_t errlen)
{
    int rc = find_typed(body, key, required, "a timestamp", is_time, err, errlen);
    if (rc == 0)
        *out_ms = pn_data_type(body) == PN_TIMESTAMP ? pn_data_get_timestamp(body) : mgmt_get_integer(body);
    return rc;
}

int mgmt_arg_string(pn_data_t *body, const char *key, bool required, char *buf, size_t buflen, char *err,
                    size_t errlen)
{
    int rc = find_typed(body, key, required, "a string", is_string, err, errlen);
    if (rc)
        return rc;
    pn_bytes_t s = pn_data_type(body) == PN_STRING ? pn_data_get_string(body) : pn_data_get_symbol(body);
    if (s.size >= buflen) {
        snprintf(err, errlen, "The request body's '%s' is %zu bytes long; the limit is %zu.", key, s.size, buflen - 1);
        return -1;
    }
    memcpy(buf, s.start, s.size);
    buf[s.size] = 0;
    return 0;
}

int mgmt_arg_sequence(pn_data_t *body, const char *key, const char *expected, const char *items, size_t *count,
                      char *err, size_t errlen)
{
    if (locate(body, key, true, expected, err, errlen))
        return -1;
    pn_type_t t = pn_data_type(body);
    if (t == PN_ARRAY)
        *count = pn_data_get_array(body);
    else if (t == PN_LIST)
        *count = pn_data_get_list(body);
    else
        return wrong_type(body, key, expected, err, errlen);
    if (*count == 0 || *count > MGMT_ITEMS_MAX) {
        snprintf(err, errlen, "The request body's '%s' must hold 1 to %d %s, not %zu.", key, MGMT_ITEMS_MAX, items,
                 *count);
        return -1;
    }
    pn_data_enter(body);
    return 0;
}

/* An array of 1..MGMT_ITEMS_MAX elements of `size` bytes each, of a type
 * `accepts`, each stored by `take`; *out malloc'd. */
static int arg_array(pn_data_t *body, const char *key, const char *expected, bool (*accepts)(pn_type_t),
                     void (*take)(pn_data_t *d, void *slot), size_t size, void **out, size_t *n, char *err,
                     size_t errlen)
{
    *out = NULL;
    *n = 0;
    size_t count;
    if (mgmt_arg_sequence(body, key, expected, "items", &count, err, errlen))
        return -1;
    uint8_t *v = ent_malloc(count * size);
    if (!v) {
        snprintf(err, errlen, "out of memory reading '%s'", key);
        return -1;
    }
    size_t i = 0;
    while (i < count && pn_data_next(body)) {
        if (!accepts(pn_data_type(body))) {
            ent_free(v);
            snprintf(err, errlen, "The request body's '%s' must be %s; item %zu is %s.", key, expected, i,
                     mgmt_type_name(pn_data_type(body)));
            return -1;
        }
        take(body, v + size * i++);
    }
    *out = v;
    *n = i;
    return 0;
}

static void take_long(pn_data_t *d, void *slot)
{
    int64_t v = mgmt_get_integer(d);
    memcpy(slot, &v, sizeof v);
}

static void take_uuid(pn_data_t *d, void *slot)
{
    pn_uuid_t u = pn_data_get_uuid(d);
    memcpy(slot, u.bytes, 16);
}

int mgmt_arg_long_array(pn_data_t *body, const char *key, int64_t **out, size_t *n, char *err, size_t errlen)
{
    void *v;
    int rc = arg_array(body, key, "an array of long", is_integer, take_long, sizeof **out, &v, n, err, errlen);
    *out = v;
    return rc;
}

int mgmt_arg_uuid_array(pn_data_t *body, const char *key, uint8_t (**out)[16], size_t *n, char *err, size_t errlen)
{
    void *v;
    int rc = arg_array(body, key, "an array of uuid", is_uuid, take_uuid, sizeof **out, &v, n, err, errlen);
    *out = v;
    return rc;
}
