/* Reads the official Service Bus emulator's Config.json, unchanged, into an
 * ent_config (entities/ent_config.h), and applies it to PostgreSQL.
 *
 * Schema (reference §1.7): {"UserConfig": {"Namespaces": [{"Name": "sbemulatorns",
 * "Queues": [{"Name", "Properties"}], "Topics": [{"Name", "Properties",
 * "Subscriptions": [{"Name", "Properties", "Rules": [{"Name", "Properties":
 * {"FilterType", "CorrelationFilter", "SqlFilter", "Action"}}]}]}]}],
 * "Logging": {"Type"}, "Faults": [fault rules, README "Faults on demand"]}}.
 *
 * What differs from the official emulator, on purpose:
 *  - // and / * * / comments and trailing commas are accepted (outside strings);
 *  - keys match case-insensitively (as .NET configuration binding does);
 *  - every Service Bus property is accepted, not only the official subset
 *    (AutoDeleteOnIdle, Status, MaxSizeInMegabytes, UserMetadata, ...), with
 *    the cloud's limits, not the official emulator's caps (TTL 1 h, 50
 *    entities, MaxDeliveryCount <= 10);
 *  - a DuplicateDetectionHistoryTimeWindow between the official minimum (PT5S)
 *    and the cloud's (PT20S) is raised to the cloud's minimum with a warning,
 *    so that files written for the official emulator still load;
 *  - unknown properties, namespace names other than "sbemulatorns" and extra
 *    namespaces are warnings (LOG_WARN), not errors; entities of every
 *    namespace are merged;
 *  - a rule without FilterType takes it from the filter object it has.
 * Errors name the entity and the property, e.g.
 *   Config.json: queue "orders": LockDuration "PT2S" is below the minimum PT5S
 * or the position of a JSON syntax error:
 *   Config.json: line 7, column 12: '}' expected near ']' */
#ifndef EMU_CONFIG_JSON_H
#define EMU_CONFIG_JSON_H

#include <stddef.h>

#include "ent_config.h"

/* The official emulator's minimum dup window, accepted for compatibility. */
#define EMU_CONFIG_OFFICIAL_DUP_WINDOW_MIN_MS 5000
/* Refuse files larger than this (Config.json is a few KB). */
#define EMU_CONFIG_MAX_FILE_SIZE (64 * 1024 * 1024)

/* Parses Config.json text (len bytes, need not be NUL-terminated). `source`
 * names it in error texts ("Config.json" when NULL). On success *out holds the
 * entities (free with ent_config_free); on failure returns -1 with err set and
 * *out empty (still safe to ent_config_free). */
int emu_config_parse(const char *text, size_t len, const char *source, ent_config *out, char *err, size_t errlen);

/* Reads and parses the file at path (errors start with the path). */
int emu_config_load(const char *path, ent_config *out, char *err, size_t errlen);

/* Blanks out // and / * * / comments and trailing commas outside strings, keeping
 * every newline so JSON error positions stay right. Returns a malloc'd,
 * NUL-terminated copy (caller frees), or NULL with err set for an unterminated
 * block comment or when out of memory. */
char *emu_config_strip_comments(const char *text, size_t len, char *err, size_t errlen);

/* emu_config_load + store_config_apply (sql/store_config.h) on a start-up
 * connection (sql/store_setup.h), for main.c: 0 or -1 with err set. */
struct pg_conn;
int emu_config_load_and_apply(struct pg_conn *conn, const char *path, char *err, size_t errlen);
/* The same for a Config.json held in memory; source names it (logs, errors). */
int emu_config_parse_and_apply(struct pg_conn *conn, const char *text, const char *source, char *err, size_t errlen);
/* The namespace name of the Config.json this process applied (its first
 * namespace's Name, .NET Aspire's resource name for one), or
 * ENT_CONFIG_DEFAULT_NAMESPACE when none named one: the namespace label of
 * GET /metrics, and the name fault rules may give the default namespace. A
 * static text, set at start. */
const char *emu_config_namespace_name(void);

#endif
