/* Typed readers of an AMQP map as $management requests carry it (the body
 * of every operation, with string or symbol keys) and as link attach
 * properties carry it (link_session.c reads com.microsoft:timeout with them).
 * Proton only: no link, no request, no store, so that any part of amqp10/ can
 * read a map without depending on the $management node. */
#ifndef MGMT_MAP_H
#define MGMT_MAP_H

#include <proton/codec.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Lock tokens, sequence numbers or messages one request may name. */
#define MGMT_ITEMS_MAX 5000

/* body holds a map at its top: true with body on the value of key, false
 * when the key is absent or its value null. Keys may be strings or symbols. */
bool mgmt_map_find(pn_data_t *body, const char *key);
/* The same for the map d is on (not entered). */
bool mgmt_map_seek(pn_data_t *d, const char *key);
/* The current node, an AMQP integer of any width, as an int64 (a ulong above
 * INT64_MAX saturates). */
int64_t mgmt_get_integer(pn_data_t *d);
/* AMQP's name of a type ("string", "long", "array"), for error descriptions. */
const char *mgmt_type_name(pn_type_t t);

/* Readers of the request body map. Each returns 0 when the key holds a value
 * of the expected type, 1 when the key is absent or null and `required` is
 * false, and -1 otherwise with a description naming the key and the expected
 * type in err. Integers of any width and sign are accepted where one is
 * expected (the SDKs disagree: ubyte, uint, int, long). */
int mgmt_arg_long(pn_data_t *body, const char *key, bool required, int64_t *out, char *err, size_t errlen);
int mgmt_arg_bool(pn_data_t *body, const char *key, bool required, bool *out, char *err, size_t errlen);
int mgmt_arg_timestamp(pn_data_t *body, const char *key, bool required, int64_t *out_ms, char *err, size_t errlen);
/* Strings: truncated past buflen - 1 bytes is an error too (naming the limit). */
int mgmt_arg_string(pn_data_t *body, const char *key, bool required, char *buf, size_t buflen, char *err,
                    size_t errlen);
/* An array or list of 1..MGMT_ITEMS_MAX values under key (required), entered:
 * the caller reads its *count elements with pn_data_next, then exits. The
 * errors name the key, `expected` ("a list of maps") and `items` ("messages"). */
int mgmt_arg_sequence(pn_data_t *body, const char *key, const char *expected, const char *items, size_t *count,
                      char *err, size_t errlen);
/* An array (or list) of integers / of uuids, 1..MGMT_ITEMS_MAX items. *out is
 * malloc'd (the caller frees it). */
int mgmt_arg_long_array(pn_data_t *body, const char *key, int64_t **out, size_t *n, char *err, size_t errlen);
int mgmt_arg_uuid_array(pn_data_t *body, const char *key, uint8_t (**out)[16], size_t *n, char *err, size_t errlen);

#endif
