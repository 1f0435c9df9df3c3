/* The columns of the entity tables, one table per kind: which column holds
 * which field of the C struct, and how it is encoded. Every statement that
 * reads or writes entity properties is built from these tables at start (the
 * cache's load, the management API's gets, puts and lists, the Config.json
 * upsert), and every row is read and every parameter list made by the two
 * functions below, so adding a property is one row here (and its column in a
 * migration).
 *
 * Encodings (sql/migrations/001): durations are intervals, NULL for
 * unlimited; a "" ForwardTo/UserMetadata is NULL; status is the
 * ent_entity_status_name() text. Results are read in binary (store_binary.h). */
#ifndef STORE_COLUMNS_H
#define STORE_COLUMNS_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>

#include "store.h"
#include "store_binary.h"

typedef enum store_col_type {
    STORE_COL_TEXT,     /* char[size]; NULL reads as "" */
    STORE_COL_TEXT_OPT, /* char[size]; "" is written as NULL */
    STORE_COL_BOOL,     /* int or bool, by size */
    STORE_COL_INT,      /* int32_t or int64_t by size; an integer column (read as int8) */
    STORE_COL_MS,       /* int64_t milliseconds; an interval column that is never NULL */
    STORE_COL_MS_OR_UNLIMITED, /* the same, NULL being ENT_DURATION_UNLIMITED */
    STORE_COL_MS_OR_NONE,      /* the same, NULL read as -1 (the entity cache's "none"; read only) */
    STORE_COL_STATUS,   /* ent_entity_status, as its name */
    STORE_COL_KIND,     /* ent_kind, from the entities view's kind text (read only) */
} store_col_type;

/* The row is matched by it: written by an insert, never SET by an update. */
#define STORE_COL_KEY 1u
/* An existing entity keeps it through the management API (Service Bus
 * refuses to change RequiresSession): its update leaves it out and guards it. */
#define STORE_COL_FIXED 2u

typedef struct store_column {
    const char *name; /* the column (or view column) */
    store_col_type type;
    size_t offset, size; /* the field in the struct */
    unsigned flags;
} store_column;

/* The most columns one table has (and so one statement's property parameters). */
#define STORE_COLUMNS_MAX 17

typedef struct store_columns {
    const char *table;
    const store_column *cols;
    int n;
} store_columns;

/* ent_queue_props, ent_topic_props, ent_subscription_props (its topic is the
 * statements' business: a name or an id, never a column of its own), and
 * the `entities` view as the cache's ent_entity holds it. */
extern const store_columns store_queue_columns, store_topic_columns, store_subscription_columns,
    store_entity_view_columns;

/* Reads a row's columns, from result column `first` on, into the struct at out. */
void store_columns_read(const store_columns *c, const PGresult *r, int row, int first, void *out);

/* The columns' values of the struct at in, as parameters in table order:
 * text for text, flags and statuses; 8-byte binary integers and milliseconds
 * (NULL for unlimited). Values point into in and into ints (one per column),
 * which must outlive the parameters. Returns c->n. */
int store_columns_params(const store_columns *c, const void *in, store_param *out, int8_param *ints);
/* Their types, as the statements are prepared with. */
void store_columns_types(const store_columns *c, Oid *types);

/* ---- SQL text, appended to a fixed buffer ---- */

typedef struct store_sql {
    char *buf;
    size_t cap, len;
    bool overflow; /* something did not fit: the text is cut */
} store_sql;

void store_sql_init(store_sql *s, char *buf, size_t cap);
void store_sql_add(store_sql *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Columns whose flags hold none of `skip`. Each fragment is a list separated
 * by ", " with no leading or trailing separator. */
/* Read expressions (what store_columns_read takes), alias.column. */
void store_sql_select(store_sql *s, const store_columns *c, const char *alias, unsigned skip);
/* Names: "prefix" + column ("", "q.", "EXCLUDED."). */
void store_sql_names(store_sql *s, const store_columns *c, const char *prefix, unsigned skip);
/* The value expressions of the parameters from $first on, cast to the columns' types. */
void store_sql_values(store_sql *s, const store_columns *c, int first, unsigned skip);
/* One column's value expression, from parameter $param. */
void store_sql_value(store_sql *s, const store_column *k, int param);
/* column = value: from the parameters ($first for the table's first column),
 * or, with first 0, from EXCLUDED (an upsert). */
void store_sql_set(store_sql *s, const store_columns *c, int first, unsigned skip);
/* The parameter number of a column when the table's first column is $first. */
int store_columns_param(const store_columns *c, const char *name, int first);

#endif
