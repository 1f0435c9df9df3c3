/* PostgreSQL array literals for the statements that take a text-format array
 * parameter ("{1,2,3}", "{uuid,uuid}"): the sweep's policy, a transaction's
 * lock tokens and schedules, $management's sequence numbers, a topic log
 * entry's subscriptions and the rules that took them there. */
#ifndef STORE_ARRAYS_H
#define STORE_ARRAYS_H

#include <stddef.h>
#include <stdint.h>

/* A malloc'd literal (the caller frees it), or NULL when out of memory. */
char *store_int8_array_text(const int64_t *v, size_t n);
char *store_uuid_array_text(const uint8_t (*v)[16], size_t n);
/* Each element double-quoted and escaped (a NULL pointer is SQL NULL). */
char *store_text_array_text(const char *const *v, size_t n);

#endif
