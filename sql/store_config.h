/* Upserts the entities of a configuration (Config.json) into PostgreSQL.
 *
 * Synchronous libpq, run once at start before the event loop. One transaction,
 * under an advisory lock so that replicas starting together apply in turn.
 * For every queue, topic, subscription and rule: insert it, or update its
 * properties when they differ (unchanged rows are not written). Nothing is
 * ever deleted: entities absent from the file stay, and no message is touched.
 * A subscription that the file gives no rules gets the $Default rule (filter
 * 'True') if it has no rule yet. In the same transaction, what the file
 * declares is recorded as the snapshot a reset restores (store_reset.h): an
 * empty configuration declares nothing.
 *
 * Entity columns are encoded as store_columns.h says (durations are
 * intervals, NULL for unlimited; "" ForwardTo/UserMetadata become NULL;
 * status is the ent_entity_status_name() string); filter_type is the
 * ent_filter_type_name() string; rules.correlation is
 * jsonb with the Config.json keys ContentType, CorrelationId, Label,
 * MessageId, ReplyTo, ReplyToSessionId, SessionId, To (only those set) and
 * "Properties": {name: string | integer | number | boolean} (only if any). */
#ifndef STORE_CONFIG_H
#define STORE_CONFIG_H

#include <stddef.h>

#include "ent_config.h"

/* Any constant works; it only has to be the same in every sbemu process. */
#define STORE_CONFIG_LOCK_KEY 0x5BE4

/* Returns 0, or -1 with err naming the entity and the database's reason; on
 * failure nothing is applied (the transaction is rolled back). */
struct pg_conn;
int store_config_apply(struct pg_conn *conn, const ent_config *cfg, char *err, size_t errlen);

#endif
