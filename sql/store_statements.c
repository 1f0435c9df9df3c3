/* Every statement the running store uses. Times arrive as millisecond
 * parameters from the emulator's clock (never now()), and every claim walks the
 * messages_ready index in sequence order, so its cost does not grow with the
 * backlog. */
#include "store_statements.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "store_claim_sql.h"
#include "store_token_sql.h"
#include "store_columns.h"
#include "store_setup.h" /* STORE_NOTIFY_CHANNEL, STORE_CLOCK_CHANNEL */


/* A send's columns as STMT_SEND_SET reads them twice, each unnested in a
 * select list (the statement says why); $3 (now) and $9 (the bodies) are
 * added where each reading needs them. */
#define SEND_ROW_COLUMNS                                                                                          \
    "unnest($2::int8[]) AS state, unnest($4::int8[]) AS avail, unnest($5::int8[]) AS expires,"                    \
    " unnest($6::int8[]) AS ttl, unnest($7::text[]) AS message_id, unnest($8::text[]) AS session_id,"             \
    " unnest($10::int8[]) AS subqueue, unnest($11::text[]) AS reason, unnest($12::text[]) AS description"

/* A batch's own settings (store.c, send_batch), each written once:
 * lazy: the transaction's commit does not wait for its WAL to reach the disk
 * (set_config(..., true) lasts until the implicit transaction's commit, which
 * reads it; SET LOCAL would warn outside an explicit block);
 * mark: $1 the batch's id, lasting past the transaction only if it commits. */
#define BATCH_LAZY_SQL "set_config('synchronous_commit', 'off', true)"
#define BATCH_MARK_SQL "set_config('" STORE_BATCH_SETTING "', $1, false)"
/* whether the batch wrote (took a transaction id), last in both marks: a
 * batch that only read has nothing on its way to disk, so it needs no flush
 * and flushes nothing (store_flusher.h) */
#define BATCH_WROTE_SQL "pg_current_xact_id_if_assigned() IS NOT NULL"

static stmt_def stmt_defs[] = {
    /* Every queue, topic and subscription, for the in-process entity cache
     * (entities/ent_cache.h), which resolves ForwardTo chains itself. Its
     * columns are the entities view's column table (store_columns.c): built
     * at the first prepare (build_generated). */
    {STMT_LOAD_ENTITIES, NULL, 0, {0}},
    /* Every rule, in the order each subscription's were created (the cache
     * compiles them). */
    {STMT_LOAD_RULES,
     "SELECT subscription_id, name, filter_type, sql_expression, correlation::text, action_expression,"
     " filter_parameters::text, action_parameters::text FROM rules ORDER BY subscription_id, created_at, id",
     0, {0}},
    /* Every namespace (migration 013), in id order, with its clock's offset. */
    {STMT_LOAD_NAMESPACES,
     "SELECT n.id, n.name, coalesce(c.offset_ms, 0), coalesce(sbemu_interval_ms(n.auto_delete_on_idle), 0)"
     " FROM namespaces n LEFT JOIN sbemu_clock c ON c.namespace_id = n.id ORDER BY n.id",
     0, {0}},
    /* Every namespace's own keys (migration 014). */
    {STMT_LOAD_NAMESPACE_KEYS, "SELECT namespace_id, key_name, key FROM namespace_keys ORDER BY namespace_id, key_name",
     0, {0}},
    /* Every send of a commit to one entity, as one statement (a merged
     * statement: $1 the entity, then one array per column, see store_merge_def in store.h).
     * One sequence reservation and one size/activity update for all of them.
     * A MessageId seen inside the duplicate window, or earlier in the same
     * commit, is dropped (and still acknowledged). A full entity raises SBQ01,
     * which fails the commit; the store then retries each send alone, so the
     * verdict is the one each send would get on its own. Returns (ordinal,
     * sequence number) per message stored. Where a forwarded message goes
     * when its destination refuses it is decided in C (ent_forward_diverts). */
    {STMT_SEND_SET,
     /* The bodies ($9) are read as a stream twice, never held: i keeps
      * only their lengths, and the INSERT unnests the arrays again beside
      * them. Both unnest in the select list (a ProjectSet, which passes each
      * element on as it comes); unnest in FROM fills a tuplestore first, and
      * a CTE that carried the bodies copied each into one (64 KiB sends
      * spent a sixth of PostgreSQL's time moving bytes between those). Nor
      * is a body taken by its ordinal: `bodies[ord]` walks the array from
      * its start for every element of variable width, a cost that grew with
      * the square of the batch (an eighth of PostgreSQL's time in 1 KiB sends
      * of 1,000). Only km, the kept rows' numbers by ordinal (int8 without
      * NULLs, whose subscript is an offset), is read by subscript. */
     "WITH i AS (SELECT " SEND_ROW_COLUMNS ", unnest($3::int8[]) AS now, octet_length(unnest($9::bytea[])) AS len,"
     "  generate_subscripts($2::int8[], 1)::int8 AS ord),"
     " e AS (SELECT q.requires_duplicate_detection AS dd, q.duplicate_detection_history_time_window AS win,"
     "  q.max_size_in_megabytes::bigint * 1048576 AS max_bytes, r.size_in_bytes"
     "  FROM entities q JOIN entity_runtime r ON r.entity_id = q.id WHERE q.id = $1 FOR UPDATE OF r),"
     " chk AS (SELECT CASE WHEN NOT EXISTS (SELECT 1 FROM e)"
     "  THEN sbemu_raise('SBN01', 'The messaging entity was deleted.')"
     "  WHEN (SELECT size_in_bytes FROM e) + (SELECT sum(len) FROM i) > (SELECT max_bytes FROM e)"
     "  THEN sbemu_raise('SBQ01', 'The maximum entity size has been reached or exceeded (MaxSizeInMegabytes).')"
     "  ELSE true END AS ok),"
     " first AS (SELECT DISTINCT ON (message_id) message_id, now, ord FROM i"
     "  WHERE message_id IS NOT NULL AND (SELECT dd FROM e) ORDER BY message_id, ord),"
     " dup AS (INSERT INTO duplicate_detection (entity_id, message_id, seen_at)"
     "  SELECT $1, f.message_id, sbemu_ts(f.now) FROM first f, chk WHERE chk.ok"
     "  ON CONFLICT (entity_id, message_id) DO UPDATE SET seen_at = EXCLUDED.seen_at"
     "  WHERE duplicate_detection.seen_at <= EXCLUDED.seen_at - (SELECT win FROM e) RETURNING message_id),"
     " keep AS (SELECT i.*, row_number() OVER (ORDER BY i.ord) AS k FROM i"
     "  WHERE NOT (SELECT dd FROM e) OR i.message_id IS NULL"
     "  OR i.ord IN (SELECT f.ord FROM first f JOIN dup d ON d.message_id = f.message_id)),"
     " s AS (UPDATE entity_runtime SET next_sequence_number = next_sequence_number + (SELECT count(*) FROM keep),"
     "  size_in_bytes = size_in_bytes + (SELECT coalesce(sum(len), 0) FROM keep),"
     "  accessed_at = greatest(accessed_at, (SELECT sbemu_ts(max(now)) FROM i))"
     "  WHERE entity_id = $1 AND (SELECT ok FROM chk)"
     "  RETURNING next_sequence_number - (SELECT count(*) FROM keep) AS first_seq),"
     /* each row's k by its ordinal, 0 for a row not kept */
     " km AS (SELECT array_agg(coalesce(keep.k, 0) ORDER BY i.ord) AS a FROM i LEFT JOIN keep ON keep.ord = i.ord),"
     " ins AS (INSERT INTO messages (entity_id, sequence_number, subqueue, state, enqueued_at, available_at,"
     "  expires_at, time_to_live_ms, message_id, session_id, dead_letter_reason, dead_letter_error_description,"
     "  message)"
     "  SELECT $1, s.first_seq + (SELECT a FROM km)[b.ord] - 1, b.subqueue, b.state, sbemu_ts(b.avail),"
     "  sbemu_ts(b.avail), sbemu_ts(b.expires), b.ttl,"
     /* Service Bus stamps a MessageId on messages sent without one */
     "  coalesce(b.message_id, replace(gen_random_uuid()::text, '-', '')), b.session_id, b.reason, b.description,"
     "  b.body FROM s, (SELECT " SEND_ROW_COLUMNS ", unnest($9::bytea[]) AS body,"
     "  generate_subscripts($2::int8[], 1) AS ord) b WHERE (SELECT a FROM km)[b.ord] > 0 RETURNING 1)"
     " SELECT keep.ord, s.first_seq + keep.k - 1 FROM s, keep WHERE (SELECT count(*) FROM ins) >= 0",
     12, {STORE_OID_INT8, STORE_OID_INT8_ARRAY, STORE_OID_INT8_ARRAY, STORE_OID_INT8_ARRAY, STORE_OID_INT8_ARRAY, STORE_OID_INT8_ARRAY, STORE_OID_TEXT_ARRAY, STORE_OID_TEXT_ARRAY, STORE_OID_BYTEA_ARRAY, STORE_OID_INT8_ARRAY, STORE_OID_TEXT_ARRAY, STORE_OID_TEXT_ARRAY}},
    /* Every publish of a commit to one topic, as one statement (merged: $1
     * the topic, then one array per column; store_topic.h says what a row
     * is). The copies were decided in C (entities/ent_topic.c); this checks
     * the topic's size limit (every subscription's bytes) and its duplicate
     * window, reserves the topic's sequence numbers once, stores every copy
     * (a copy without a body of its own shares its message's), counts the
     * bytes per entity once, and deletes the messages at rest in the topic
     * that were routed (consume: their lock tokens). A copy forwarded to
     * another queue or topic takes that entity's next sequence number. The
     * copies logged (STORE_COPY_LOGGED) are one topic_log row per message. */
    {STMT_PUBLISH_SET,
     "WITH i AS (SELECT * FROM unnest($2::int8[], $3::int8[], $4::int8[], $5::int8[], $6::int8[], $7::int8[],"
     "  $8::int8[], $9::int8[], $10::text[], $11::text[], $12::bytea[], $13::int8[], $14::text[], $15::text[],"
     "  $16::uuid[], $17::int8[], $18::int8[], $19::text[], $20::text[]) WITH ORDINALITY AS i(width, slot, target,"
     "  state, now, avail, expires, ttl, message_id, session_id, message, subqueue, reason, description, consume,"
     "  size, back, source, log_subs, ord)),"
     /* k names a message by the ordinal of its first row (back: how far before this row it is) */
     /* subs: log_subs read once (its text is an int8[] literal: rows hold
      * different numbers of subscriptions); OFFSET 0 keeps the planner from
      * copying its cast into every use, each a parse of the text again */
     " n AS MATERIALIZED (SELECT x.*, CASE WHEN x.subs IS NOT NULL THEN"
     /* (what a row holds for its subscriptions: a log entry's first logged
      * copy for all of its, the message's other logged copies for none) */
     "  cardinality(x.subs) * x.size WHEN x.slot = -3 THEN 0 ELSE x.size END AS held"
     "  FROM (SELECT i.*, i.ord - i.back AS k, i.log_subs::int8[] AS subs FROM i OFFSET 0) x),"
     /* b and keep carry a message's body only when some row of the statement
      * has none of its own (a copy sharing its message's: c reads keep.body
      * then). Usually every row carries its own, and the bodies are then not
      * copied through b, keep's sort and its window: with logged copies,
      * those copies were the publish's largest cost after the INSERT itself. */
     " b AS MATERIALIZED (SELECT k, width, CASE WHEN (SELECT array_position($12::bytea[], NULL) IS NOT NULL)"
     "  THEN message END AS body, message_id AS mid, now AS mnow, consume AS tok, ord,"
     /* Service Bus stamps a MessageId on messages sent without one: one per message, every copy the same */
     "  coalesce(message_id, replace(gen_random_uuid()::text, '-', '')) AS gid FROM n WHERE width > 0),"
     " e AS (SELECT t.requires_duplicate_detection AS dd, t.duplicate_detection_history_time_window AS win,"
     "  t.max_size_in_megabytes::bigint * 1048576 AS max_bytes FROM topics t"
     "  JOIN entity_runtime r ON r.entity_id = t.id WHERE t.id = $1 FOR UPDATE OF r),"
     /* the entities that get copies, locked against deletion until the commit
      * (what a foreign key would check per row); a copy for one deleted
      * meanwhile is not stored. The log entries' subscriptions are unnested
      * per distinct set (a topic's entries mostly share one), here and in u,
      * not per entry. */
     " tg AS MATERIALIZED (SELECT entity_id FROM entity_runtime"
     "  WHERE entity_id IN (SELECT target FROM n WHERE target IS NOT NULL"
     "  UNION SELECT unnest(d.subs) FROM (SELECT DISTINCT subs FROM n WHERE subs IS NOT NULL) d) FOR KEY SHARE),"
     " src AS (DELETE FROM messages m USING b WHERE b.tok IS NOT NULL AND" BY_LOCK_TOKEN("m", "$1", "b.tok")
     "  RETURNING b.k, octet_length(m.message) AS bytes),"
     " chk AS (SELECT CASE WHEN NOT EXISTS (SELECT 1 FROM e)"
     "  THEN sbemu_raise('SBN01', 'The messaging entity was deleted.')"
     "  WHEN (SELECT coalesce(sum(held), 0) FROM n WHERE consume IS NULL) > 0"
     "   AND (SELECT coalesce(sum(r.size_in_bytes), 0) FROM subscriptions s JOIN entity_runtime r"
     "   ON r.entity_id = s.id WHERE s.topic_id = $1) + (SELECT coalesce(sum(held), 0) FROM n)"
     "   > (SELECT max_bytes FROM e)"
     "  THEN sbemu_raise('SBQ01', 'The maximum entity size has been reached or exceeded (MaxSizeInMegabytes).')"
     "  ELSE true END AS ok),"
     " first AS (SELECT DISTINCT ON (mid) mid, mnow, k FROM b"
     "  WHERE mid IS NOT NULL AND tok IS NULL AND (SELECT dd FROM e) ORDER BY mid, k),"
     " dup AS (INSERT INTO duplicate_detection (entity_id, message_id, seen_at)"
     "  SELECT $1, f.mid, sbemu_ts(f.mnow) FROM first f, chk WHERE chk.ok"
     "  ON CONFLICT (entity_id, message_id) DO UPDATE SET seen_at = EXCLUDED.seen_at"
     "  WHERE duplicate_detection.seen_at <= EXCLUDED.seen_at - (SELECT win FROM e) RETURNING message_id),"
     " keep AS MATERIALIZED (SELECT b.k, b.body, b.gid, b.ord, b.width,"
     "  coalesce(sum(b.width) OVER (ORDER BY b.k ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS base"
     "  FROM b WHERE CASE WHEN b.tok IS NOT NULL THEN b.k IN (SELECT k FROM src)"
     "  WHEN NOT (SELECT dd FROM e) OR b.mid IS NULL THEN true"
     "  ELSE b.k IN (SELECT f.k FROM first f JOIN dup d ON d.message_id = f.mid) END),"
     " c AS MATERIALIZED (SELECT n.target, n.slot, n.state, n.avail, n.expires, n.ttl, n.session_id, n.subqueue,"
     "  n.reason, n.description, n.source, n.ord, n.size, n.subs AS log_subs, keep.gid, keep.base,"
     /* a logged copy's body is its log entry's, which its first logged copy carries */
     "  CASE WHEN n.slot <> -3 OR n.log_subs IS NOT NULL THEN coalesce(n.message, keep.body) END AS message"
     "  FROM n JOIN keep USING (k) WHERE n.target IN (SELECT entity_id FROM tg) OR n.log_subs IS NOT NULL),"
     /* each entity_runtime row is written by one CTE only (two would race within
      * the statement): the topic by s, subscriptions by u, forward targets by fw */
     " s AS (UPDATE entity_runtime SET"
     "  next_sequence_number = next_sequence_number + (SELECT coalesce(sum(width), 0) FROM keep),"
     "  size_in_bytes = size_in_bytes - (SELECT coalesce(sum(bytes), 0) FROM src)"
     "  + (SELECT coalesce(sum(size), 0) FROM c WHERE target = $1 AND slot >= 0),"
     "  accessed_at = greatest(accessed_at, (SELECT sbemu_ts(max(mnow)) FROM b WHERE tok IS NULL))"
     "  WHERE entity_id = $1 AND (SELECT ok FROM chk)"
     "  RETURNING next_sequence_number - (SELECT coalesce(sum(width), 0) FROM keep) AS first_seq),"
     /* copies in the topic's own sequence: the message's first number plus slot */
     " ins AS (INSERT INTO messages (entity_id, sequence_number, subqueue, state, enqueued_at, available_at,"
     "  expires_at, time_to_live_ms, message_id, session_id, dead_letter_reason, dead_letter_error_description,"
     "  dead_letter_source, message)"
     "  SELECT c.target, s.first_seq + c.base + c.slot, c.subqueue, c.state, sbemu_ts(c.avail), sbemu_ts(c.avail),"
     "  sbemu_ts(c.expires), c.ttl, c.gid, c.session_id, c.reason, c.description, c.source, c.message"
     "  FROM c, s WHERE c.slot >= 0 RETURNING 1),"
     /* the copies logged (slot -3, STORE_COPY_LOGGED): one topic_log entry
      * per message, written from its first logged copy, which carries their
      * subscriptions (log_subs; store_log.h), at the number slot 0 would take */
     " ins_log AS (INSERT INTO topic_log (topic_id, sequence_number, subs, enqueued_at, available_at, expires_at,"
     "  time_to_live_ms, message_id, session_id, message)"
     "  SELECT $1, s.first_seq + c.base, c.log_subs, sbemu_ts(c.avail), sbemu_ts(c.avail),"
     "  sbemu_ts(c.expires), c.ttl, c.gid, c.session_id, c.message FROM c, s WHERE c.log_subs IS NOT NULL"
     "  RETURNING 1),"
     /* copies forwarded out of the topic: their destination's next numbers */
     " fw AS (UPDATE entity_runtime r SET next_sequence_number = r.next_sequence_number + g.cnt,"
     "  size_in_bytes = r.size_in_bytes + g.n FROM (SELECT target, count(*) AS cnt, sum(size) AS n FROM c"
     "  WHERE slot = -1 GROUP BY target) g WHERE r.entity_id = g.target"
     "  RETURNING r.entity_id, r.next_sequence_number - g.cnt AS fbase),"
     " ins_fw AS (INSERT INTO messages (entity_id, sequence_number, subqueue, state, enqueued_at, available_at,"
     "  expires_at, time_to_live_ms, message_id, session_id, dead_letter_reason, dead_letter_error_description,"
     "  dead_letter_source, message)"
     "  SELECT c.target, fw.fbase + row_number() OVER (PARTITION BY c.target ORDER BY c.ord) - 1, c.subqueue,"
     "  c.state, sbemu_ts(c.avail), sbemu_ts(c.avail), sbemu_ts(c.expires), c.ttl, c.gid, c.session_id, c.reason,"
     "  c.description, c.source, c.message FROM c JOIN fw ON fw.entity_id = c.target WHERE c.slot = -1 RETURNING 1),"
     " u AS (UPDATE entity_runtime r SET size_in_bytes = r.size_in_bytes + g.n"
     "  FROM (SELECT target, sum(size) AS n FROM (SELECT target, size FROM c WHERE slot >= 0 AND target <> $1"
     "  UNION ALL SELECT unnest(d.log_subs), d.size FROM (SELECT log_subs, sum(size) AS size FROM c"
     "  WHERE log_subs IS NOT NULL GROUP BY log_subs) d) x GROUP BY target) g"
     "  WHERE r.entity_id = g.target)"
     " SELECT keep.ord, s.first_seq + keep.base FROM keep, s",
     20, {STORE_OID_INT8, STORE_OID_INT8_ARRAY, STORE_OID_INT8_ARRAY, STORE_OID_INT8_ARRAY, STORE_OID_INT8_ARRAY,
          STORE_OID_INT8_ARRAY, STORE_OID_INT8_ARRAY, STORE_OID_INT8_ARRAY, STORE_OID_INT8_ARRAY, STORE_OID_TEXT_ARRAY,
          STORE_OID_TEXT_ARRAY, STORE_OID_BYTEA_ARRAY, STORE_OID_INT8_ARRAY, STORE_OID_TEXT_ARRAY, STORE_OID_TEXT_ARRAY,
          STORE_OID_UUID_ARRAY, STORE_OID_INT8_ARRAY, STORE_OID_INT8_ARRAY, STORE_OID_TEXT_ARRAY, STORE_OID_TEXT_ARRAY}},
    /* Receiving is activity for AutoDeleteOnIdle. $1 queue, $2 now.
     * Skipped while another transaction holds the entity's row: every
     * statement that locks it stamps accessed_at too (sends, completes,
     * receive-and-delete, this), and a stamp is no reason to wait. Waiting
     * made deadlocks between emulators on one database: a batch's stamp
     * waited for the other's, whose session lock waited for the first's
     * (5 in a round of 1,000 sessions received by two emulators, each
     * costing deadlock_timeout and the failed batch). */
    {STMT_TOUCH,
     "UPDATE entity_runtime SET accessed_at = greatest(accessed_at, sbemu_ts($2))"
     " WHERE ctid = (SELECT r.ctid FROM entity_runtime r WHERE r.entity_id = $1 FOR NO KEY UPDATE SKIP LOCKED)",
     2, {STORE_OID_INT8, STORE_OID_INT8}},
    /* $5 locked-until, $6 from */
    {STMT_CLAIM_LOCK,
     "WITH " CLAIM_LOCKING(CLAIM_WHERE("$6")) "," CLAIM_LOCK_BATCH("c", "NULL", "sbemu_ts($5)")
     " UPDATE messages m SET lock_token = sbemu_lock_token(m.sequence_number),"
     " locked_until = sbemu_ts($5), delivery_count = m.delivery_count + 1 WHERE " CLAIM_LOCKED
     " RETURNING" CLAIM_COLUMNS,
     6, {STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8}},
    {STMT_CLAIM_DELETE,
     "WITH d AS (DELETE FROM messages m WHERE " CLAIM_CANDIDATES("$5") " RETURNING m.*),"
                      " u AS (UPDATE entity_runtime SET size_in_bytes = size_in_bytes -"
                      " (SELECT coalesce(sum(octet_length(message)), 0) FROM d), accessed_at ="
                      " greatest(accessed_at, sbemu_ts($3)) WHERE entity_id = $1 AND EXISTS (SELECT 1 FROM d))"
                      " SELECT" CLAIM_COLUMNS " FROM d m",
     5, {STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8}},
    /* The same two in a session ($7 session id, $8 session lock token): the
     * messages are locked until the session's lock lapses ($5, the locked-until
     * of a plain claim, is unused: declared so the parameters line up). The
     * candidates are taken only while the receiver holds the session
     * (CLAIM_SESSION_WHERE), and the session's locked-until is read once.
     * (Joined to sessions instead, the plan probed sessions_pkey for every
     * row it locked: 3 buffers a message.) */
    {STMT_CLAIM_SESSION_LOCK,
     "WITH " CLAIM_LOCKING(CLAIM_SESSION_WHERE("$6")) ","
     CLAIM_LOCK_BATCH("c", "$7", SESSION_LOCKED_UNTIL)
     " UPDATE messages m SET lock_token = sbemu_lock_token(m.sequence_number),"
     " locked_until = " SESSION_LOCKED_UNTIL ", delivery_count = m.delivery_count + 1 WHERE " CLAIM_LOCKED
     " RETURNING" CLAIM_COLUMNS,
     8, {STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8,
         STORE_OID_TEXT, STORE_OID_UUID}},
    /* A peek-lock session receiver's lock and its first claim, as one
     * statement (store_session_lock_claim): $1 entity, $2 subqueue (0), $3
     * now, $4 max, $5 locked-until of the session's lock, $6 where the claim
     * starts, $7 session id (NULL: the next available), $8 the receiver's
     * token, $9 where a pick starts (SESSION_TAKE). One row per message
     * claimed, each with the session id and the picked sequence number first;
     * one row with no message when the session has none to give; none when
     * no session was locked. The messages wait on the link for the client's
     * credit (Proton holds them): nobody else may take a locked session's
     * messages, and the session switch saves a statement and a round trip
     * through the store (a lock, then a claim once the credit came). */
    {STMT_SESSION_LOCK_CLAIM,
     "WITH " SESSION_TAKE("$7", "$8", "$5", "$9") ","
     " c AS MATERIALIZED (SELECT ctid, sequence_number AS seq FROM messages"
     SESSION_CLAIMABLE("$6", "(SELECT h.session_id FROM held h)", "EXISTS (SELECT 1 FROM held)") "),"
     CLAIM_LOCK_BATCH("c", "(SELECT h.session_id FROM held h)", "(SELECT h.locked_until FROM held h)") ","
     " u" CLAIM_NAMES " AS (UPDATE messages m SET lock_token = sbemu_lock_token(m.sequence_number),"
     " locked_until = (SELECT h.locked_until FROM held h), delivery_count = m.delivery_count + 1"
     " WHERE " CLAIM_LOCKED " RETURNING" CLAIM_COLUMNS ")"
     " SELECT h.session_id, coalesce((SELECT f.sequence_number FROM found f), 0), u.* FROM held h LEFT JOIN u ON true",
     9, {STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8,
         STORE_OID_TEXT, STORE_OID_UUID, STORE_OID_INT8}},
    {STMT_CLAIM_SESSION_DELETE,
     "WITH d AS (DELETE FROM messages m WHERE " CLAIM_SESSION_CANDIDATES("$6")
     " RETURNING m.*),"
     " u AS (UPDATE entity_runtime SET size_in_bytes = size_in_bytes -"
     " (SELECT coalesce(sum(octet_length(message)), 0) FROM d), accessed_at ="
     " greatest(accessed_at, sbemu_ts($3)) WHERE entity_id = $1 AND EXISTS (SELECT 1 FROM d))"
     " SELECT" CLAIM_COLUMNS " FROM d m",
     8, {STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8,
         STORE_OID_TEXT, STORE_OID_UUID}},
    /* Every complete of a commit, as one statement (merged: $1 unused, then
     * tokens, entities and times). A token whose lock is gone matches nothing;
     * the ordinals that come back are the completes that took effect, so each
     * delivery is still answered on its own. One size update per entity.
     * Every statement that takes lock tokens finds each message by its
     * primary key, then takes the row by that address (BY_LOCK_TOKEN,
     * store_token_sql.h). (They test the
     * lock's expiry as `(locked_until > ...) IS TRUE`, which
     * no index can answer: once ANALYZE had seen a large table whose rows
     * were nearly all unlocked, a generic plan took messages_lock_expiry for
     * the join and scanned every lock for each token: 500 completes took
     * 105 ms, peek-lock fell to 5-7k msg/s and rounds of the benchmark
     * wandered with autoanalyze.) */
    {STMT_COMPLETE_SET,
     "WITH t AS (SELECT * FROM unnest($2::uuid[], $3::int8[], $4::int8[]) WITH ORDINALITY AS t(token, entity, now, ord)),"
     " d AS (DELETE FROM messages m USING t WHERE" BY_LOCK_TOKEN("m", "t.entity", "t.token")
     "  AND (m.locked_until > sbemu_ts(t.now)) IS TRUE RETURNING m.entity_id, t.ord, " MESSAGE_BYTES("m") " AS n),"
     " u AS (UPDATE entity_runtime r SET size_in_bytes = r.size_in_bytes - g.n"
     "  FROM (SELECT entity_id, sum(n) AS n FROM d GROUP BY entity_id) g WHERE r.entity_id = g.entity_id)"
     " SELECT ord FROM d",
     4, {STORE_OID_INT8, STORE_OID_UUID_ARRAY, STORE_OID_INT8_ARRAY, STORE_OID_INT8_ARRAY}},
    /* Every abandon, dead-letter, defer and release of a commit, as one
     * statement (merged: $1 unused; kinds, tokens, entities, times, reasons,
     * descriptions, where dead letters go). Each message is found under its lock; the ordinals that
     * come back are the settlements that took effect (no row: lock lost), with
     * whether the message had exhausted MaxDeliveryCount (an abandon then dead-letters it).
     * The kind codes are store_settle_kind's (store_queue.h). */
    {STMT_SETTLE_SET,
     "WITH t AS (SELECT * FROM unnest($2::int8[], $3::uuid[], $4::int8[], $5::int8[], $6::text[], $7::text[],"
     "  $8::int8[]) WITH ORDINALITY AS t(kind, token, entity, now, reason, description, target, ord)),"
     /* (locked, a row keeps its address: here takes it by that, tid) */
     " m AS MATERIALIZED (SELECT t.*, x.entity_id, x.sequence_number, x.ctid AS tid,"
     "  x.subqueue = 0 AND x.delivery_count >= " MAX_DELIVERY_COUNT("x") " AS exhausted"
     "  FROM t JOIN messages x ON" BY_LOCK_TOKEN("x", "t.entity", "t.token")
     "  AND (x.locked_until > sbemu_ts(t.now)) IS TRUE FOR UPDATE OF x),"
     /* dl: the settlement dead-letters (asked to, or an abandon past MaxDeliveryCount) */
     " d AS (SELECT m.*, m.kind = 2 OR (m.kind = 1 AND m.exhausted) AS dl,"
     "  m.target IS NOT NULL AND m.target IS DISTINCT FROM m.entity_id AS away FROM m),"
     /* Every one that stays in its entity, as one UPDATE (it was a plpgsql
      * call per row): an abandon or release unlocks (a release as if never
      * delivered), a defer sets it aside, a dead letter moves to the subqueue. */
     " here AS (UPDATE messages x SET lock_token = NULL, locked_until = NULL,"
     "  message = " MESSAGE_BODY("x") ", body_bytes = NULL,"
     "  subqueue = CASE WHEN d.dl THEN 1 ELSE x.subqueue END,"
     "  state = CASE WHEN d.dl THEN 0 WHEN d.kind = 3 THEN 1 ELSE x.state END,"
     "  delivery_count = CASE WHEN d.kind = 4 THEN greatest(x.delivery_count - 1, 0) ELSE x.delivery_count END,"
     "  dead_letter_reason = CASE WHEN d.dl THEN d.reason ELSE x.dead_letter_reason END,"
     "  dead_letter_error_description = CASE WHEN d.dl THEN d.description ELSE x.dead_letter_error_description END"
     "  FROM d WHERE" BY_TID("x", "d") " AND NOT (d.dl AND d.away)"
     "  RETURNING d.ord, d.exhausted)"
     /* Dead letters forwarded elsewhere (ForwardDeadLetteredMessagesTo) take
      * their target's next sequence number: rare, one call each. */
     " SELECT ord, exhausted FROM here UNION ALL SELECT ord, exhausted FROM d WHERE d.dl AND d.away"
     "  AND sbemu_dead_letter(entity_id, sequence_number, target, reason, description, sbemu_ts(now))",
     8, {STORE_OID_INT8, STORE_OID_INT8_ARRAY, STORE_OID_UUID_ARRAY, STORE_OID_INT8_ARRAY, STORE_OID_INT8_ARRAY, STORE_OID_TEXT_ARRAY, STORE_OID_TEXT_ARRAY, STORE_OID_INT8_ARRAY}},
    /* A Service Bus transaction's settlements must all find their locks, or
     * none takes effect: this runs first in the commit and raises SBL01
     * (SB_ERR_LOCK_LOST, failing the whole commit) unless every token of $1
     * (text uuid[]), received from the entity at the same place of $3 (text
     * int8[]), names a message locked past $2, which it then holds. */
    {STMT_TXN_GUARD,
     "SELECT sbemu_raise('SBL01', 'A lock of the transaction was lost: the lock expired, or the message was settled"
     " already.') FROM (SELECT count(*) AS n FROM (SELECT 1 FROM unnest($1::uuid[], $3::int8[]) AS t(token, entity)"
     " JOIN messages m ON" BY_LOCK_TOKEN("m", "t.entity", "t.token")
     " WHERE (m.locked_until > sbemu_ts($2)) IS TRUE FOR UPDATE OF m) x) y"
     " WHERE y.n < cardinality($1::uuid[])",
     3, {STORE_OID_TEXT, STORE_OID_INT8, STORE_OID_TEXT}},
    /* Messages scheduled inside a transaction are stored at once, invisible
     * (state 3, until locked_until: the transaction's timeout), so that the
     * schedule can answer their sequence numbers; the commit makes them
     * scheduled ($1 entity, $2 their sequence numbers as text int8[]), and
     * raises SBL02 if any is gone (the transaction outlived its timeout). */
    {STMT_TXN_PENDING_STAMP,
     "UPDATE messages SET locked_until = sbemu_ts($2) WHERE entity_id = $1 AND state = 3 AND locked_until IS NULL",
     2, {STORE_OID_INT8, STORE_OID_INT8}},
    {STMT_TXN_ACTIVATE,
     "WITH u AS (UPDATE messages m SET state = 2, locked_until = NULL FROM unnest($2) AS s(seq)"
     " WHERE m.entity_id = $1 AND m.sequence_number = s.seq AND m.state = 3 RETURNING 1)"
     " SELECT sbemu_raise('SBL02', 'A message the transaction scheduled is gone: the transaction timed out.')"
     " WHERE (SELECT count(*) FROM u) < cardinality($2)",
     2, {STORE_OID_INT8, STORE_OID_INT8_ARRAY}},
    /* A rolled-back transaction's scheduled messages ($1 entity, $2 sequence numbers). */
    {STMT_TXN_DISCARD,
     "WITH d AS (DELETE FROM messages m USING unnest($2) AS s(seq) WHERE m.entity_id = $1"
     " AND m.sequence_number = s.seq AND m.state = 3 RETURNING octet_length(m.message) AS n)"
     " UPDATE entity_runtime SET size_in_bytes = size_in_bytes - (SELECT coalesce(sum(n), 0) FROM d)"
     " WHERE entity_id = $1",
     2, {STORE_OID_INT8, STORE_OID_INT8_ARRAY}},
    /* ---- the background sweep; $1 now ---- */
    /* Messages scheduled in a transaction that never committed (the
     * emulator that held it ended, or it timed out). */
    {STMT_SWEEP_TXN_PENDING,
     "WITH d AS (DELETE FROM messages WHERE ctid = ANY(ARRAY(SELECT ctid FROM messages WHERE state = 3"
     " AND locked_until <= sbemu_ts($1)" SWEEP_SCOPE("entity_id", "2", "3") " LIMIT " STORE_SWEEP_BATCH_SQL "))"
     " RETURNING entity_id, octet_length(message) AS n)"
     " UPDATE entity_runtime r SET size_in_bytes = r.size_in_bytes - g.n"
     " FROM (SELECT entity_id, sum(n) AS n FROM d GROUP BY entity_id) g WHERE r.entity_id = g.entity_id",
     3, {STORE_OID_INT8, STORE_OID_INT8_ARRAY, STORE_OID_TEXT}},
    /* Expired messages that nobody holds a lock on: dead-lettered or dropped
     * (answers each one's entity, and whether it was dead-lettered). $2 reason, $3 description */
    /* $4 the entities whose expired messages dead-letter
     * (DeadLetteringOnMessageExpiration), $5/$6 where each entity's dead
     * letters go (ForwardDeadLetteredMessagesTo): decided in C, from the
     * entity cache (store_sweep_policy). The rest are dropped. */
    {STMT_SWEEP_EXPIRED,
     "WITH x AS MATERIALIZED (SELECT entity_id, sequence_number FROM messages"
     " WHERE expires_at <= sbemu_ts($1) AND subqueue = 0 AND state NOT IN (1, 3)"
     " AND (lock_token IS NULL OR locked_until <= sbemu_ts($1))" SWEEP_SCOPE("entity_id", "7", "8")
     SWEEP_CLOCK_HOLDS("messages.entity_id", "9")
     " ORDER BY expires_at LIMIT " STORE_SWEEP_BATCH_SQL " FOR UPDATE SKIP LOCKED)"
     " SELECT entity_id, entity_id = ANY($4) FROM x WHERE CASE WHEN entity_id = ANY($4)"
     " THEN sbemu_dead_letter(entity_id, sequence_number, (SELECT f.target FROM unnest($5::int8[], $6::int8[])"
     "  AS f(entity, target) WHERE f.entity = x.entity_id), $2, $3, sbemu_ts($1))"
     " ELSE sbemu_delete_message(entity_id, sequence_number) END",
     9, {STORE_OID_INT8, STORE_OID_TEXT, STORE_OID_TEXT, STORE_OID_INT8_ARRAY, STORE_OID_INT8_ARRAY, STORE_OID_INT8_ARRAY,
         STORE_OID_INT8_ARRAY, STORE_OID_TEXT, STORE_OID_INT8}},
    /* Lapsed locks, across entities, from the oldest batch (lock_batches,
     * migration 025): dead-lettered past MaxDeliveryCount (decided here,
     * under the row lock: the delivery count is the row's, and every
     * emulator delivers), else claimable again (answers each one's entity,
     * and whether it was dead-lettered). $2 reason, $3 description
     * (ent_dead_letter_max_delivery), $4/$5 where each entity's dead letters
     * go (as in STMT_SWEEP_EXPIRED). A batch whose time has passed is
     * removed, and each of its messages looked up by primary key: only a lock
     * still there and lapsed is acted on (a message completed, settled,
     * renewed or locked again since is left alone: a renewal or a new lock
     * wrote a batch of its own). A lapsed lock whose row another statement
     * holds right now is written into a new batch, due at once, for the next
     * sweep (the counts first: the search for which is paid only then). A
     * message in two due batches (locked, abandoned and locked again) is
     * looked at twice and acted on once: x takes row addresses. */
    {STMT_SWEEP_LAPSED,
     "WITH b AS MATERIALIZED (DELETE FROM lock_batches WHERE ctid = ANY(ARRAY(SELECT ctid FROM ("
     "  SELECT ctid, sum(cardinality(sequence_numbers)) OVER (ORDER BY locked_until, ctid)"
     "  - cardinality(sequence_numbers) AS before FROM (SELECT ctid, locked_until, sequence_numbers FROM lock_batches"
     "  WHERE locked_until <= sbemu_ts($1)" SWEEP_SCOPE("entity_id", "6", "7")
     "  ORDER BY locked_until LIMIT " STORE_SWEEP_LOCK_BATCHES_SQL " FOR UPDATE SKIP LOCKED) f) w"
     "  WHERE before < " STORE_SWEEP_LOCKS_SQL "))"
     "  RETURNING entity_id, sequence_numbers),"
     " bk AS MATERIALIZED (SELECT " MESSAGE_TID("b.entity_id", "k.seq") " AS tid"
     "  FROM b CROSS JOIN LATERAL unnest(b.sequence_numbers) AS k(seq)),"
     " c AS MATERIALIZED (SELECT m.ctid AS tid, m.entity_id, m.sequence_number, m.session_id"
     "  FROM messages m WHERE m.ctid = ANY(ARRAY(SELECT tid FROM bk))"
     "  AND m.lock_token IS NOT NULL AND (m.locked_until <= sbemu_ts($1)) IS TRUE AND m.state <> 3),"
     " x AS MATERIALIZED (SELECT m.entity_id, m.sequence_number, m.subqueue = 0"
     "  AND m.delivery_count >= " MAX_DELIVERY_COUNT("m") " AS exhausted FROM messages m"
     "  WHERE m.ctid = ANY(ARRAY(SELECT tid FROM c)) AND m.lock_token IS NOT NULL"
     "  AND (m.locked_until <= sbemu_ts($1)) IS TRUE FOR UPDATE OF m SKIP LOCKED),"
     " again AS (INSERT INTO lock_batches (entity_id, session_id, locked_until, sequence_numbers)"
     "  SELECT c.entity_id, c.session_id, sbemu_ts($1), array_agg(c.sequence_number) FROM c"
     "  WHERE (SELECT count(*) FROM x) < (SELECT count(*) FROM c) AND NOT EXISTS (SELECT 1 FROM x"
     "  WHERE x.entity_id = c.entity_id AND x.sequence_number = c.sequence_number)"
     "  GROUP BY c.entity_id, c.session_id, c.sequence_number / " STORE_STRINGIFY(STORE_LOCK_BATCH_SPAN) ")"
     " SELECT entity_id, exhausted FROM x WHERE CASE WHEN exhausted"
     " THEN sbemu_dead_letter(entity_id, sequence_number, (SELECT f.target FROM unnest($4::int8[], $5::int8[])"
     "  AS f(entity, target) WHERE f.entity = x.entity_id), $2, $3, sbemu_ts($1))"
     " ELSE sbemu_unlock(entity_id, sequence_number, sbemu_ts($1)) END",
     7, {STORE_OID_INT8, STORE_OID_TEXT, STORE_OID_TEXT, STORE_OID_INT8_ARRAY, STORE_OID_INT8_ARRAY,
         STORE_OID_INT8_ARRAY, STORE_OID_TEXT}},
    /* AutoDeleteOnIdle: no activity for that long and no scheduled message
     * pending. Activity is what entity_runtime.accessed_at records: sends and
     * receives for a queue, sends for a topic, receives for a subscription
     * (what counts as activity is decided in C: store_touch_stmt's callers).
     * Which entities qualify is decided here, not in entities/: accessed_at
     * is written by every emulator's sends and receives and the scheduled
     * messages are rows, so only the database, at the moment it deletes, can
     * tell an idle entity from one another emulator has just used. The
     * pending check is a scalar subquery per idle entity, not a NOT EXISTS:
     * as an anti-join, a plan made from the statistics of a drained table
     * walked all of messages_held for it. (Scheduled messages are in the
     * active subqueue: saying so lets messages_held, not the whole primary
     * key range of the entity, answer it.) */
    {STMT_SWEEP_IDLE,
     "WITH idle AS MATERIALIZED (SELECT q.id, q.kind, q.path FROM entities q JOIN entity_runtime r ON r.entity_id = q.id"
     " WHERE q.auto_delete_on_idle IS NOT NULL AND r.accessed_at + q.auto_delete_on_idle <= sbemu_ts($1)"
     SWEEP_SCOPE("q.id", "2", "3") " AND (SELECT count(*) FROM (SELECT 1 FROM messages m WHERE m.entity_id = q.id"
     " AND m.subqueue = 0 AND m.state = 2 AND m.available_at > sbemu_ts($1) LIMIT 1) s) = 0),"
     " dq AS (DELETE FROM queues WHERE id IN (SELECT id FROM idle WHERE kind = 'queue') RETURNING id),"
     " dt AS (DELETE FROM topics WHERE id IN (SELECT id FROM idle WHERE kind = 'topic') RETURNING id),"
     " ds AS (DELETE FROM subscriptions WHERE id IN (SELECT id FROM idle WHERE kind = 'subscription') RETURNING id)"
     " SELECT id, path FROM idle WHERE id IN (SELECT id FROM dq UNION ALL SELECT id FROM dt UNION ALL SELECT id FROM ds)",
     3, {STORE_OID_INT8, STORE_OID_INT8_ARRAY, STORE_OID_TEXT}},
    /* Scheduled messages whose time has come, in schedule order (by time
     * alone: the order messages_scheduled gives; with the sequence number
     * as a second key, a plan made from the statistics of a drained table
     * walked all of messages_held and sorted it instead). A batch activates;
     * delivery then goes by sequence number. */
    {STMT_SWEEP_SCHEDULED,
     "WITH x AS MATERIALIZED (SELECT entity_id, sequence_number FROM messages"
     " WHERE state = 2 AND available_at <= sbemu_ts($1)" SWEEP_SCOPE("entity_id", "2", "3")
     SWEEP_CLOCK_HOLDS("messages.entity_id", "4")
     " ORDER BY available_at LIMIT " STORE_SWEEP_BATCH_SQL " FOR UPDATE SKIP LOCKED)"
     " SELECT entity_id FROM x WHERE sbemu_activate(entity_id, sequence_number)",
     4, {STORE_OID_INT8, STORE_OID_INT8_ARRAY, STORE_OID_TEXT, STORE_OID_INT8}},
    /* A namespace's clock only moves forward; every emulator hears of it.
     * $1 offset, $2 the namespace (text) */
    {STMT_CLOCK_PUBLISH,
     "WITH u AS (UPDATE sbemu_clock SET offset_ms = greatest(offset_ms, $1::bigint) WHERE namespace_id = $2::integer"
     " RETURNING offset_ms, namespace_id)"
     " SELECT pg_notify('" STORE_CLOCK_CHANNEL "', offset_ms || ' ' || namespace_id) FROM u",
     2, {STORE_OID_TEXT, STORE_OID_TEXT}},
    /* $1 the id of the batch sent before (text): this one fails (division
     * by zero) unless that one committed and left it (store.c, send_batch). */
    {STMT_BATCH_GUARD, "SELECT 1 / coalesce(current_setting('" STORE_BATCH_SETTING "', true) = $1, false)::int", 1,
     {STORE_OID_TEXT}},
    {STMT_BATCH_LAZY, "SELECT " BATCH_LAZY_SQL, 0, {0}},
    /* $1 the entities that got messages, comma-separated */
    {STMT_BATCH_NOTIFY, "SELECT pg_notify('" STORE_NOTIFY_CHANNEL "', $1)", 1, {STORE_OID_TEXT}},
    {STMT_BATCH_MARK, "SELECT " BATCH_MARK_SQL ", " BATCH_WROTE_SQL, 1, {STORE_OID_TEXT}},
    /* both: a lazy batch's mark sets its commit lazy too (one statement less) */
    {STMT_BATCH_MARK_LAZY, "SELECT " BATCH_MARK_SQL ", " BATCH_LAZY_SQL ", " BATCH_WROTE_SQL, 1, {STORE_OID_TEXT}},
    /* Forget MessageIds older than their queue's duplicate detection window. */
    {STMT_SWEEP_DUPLICATES,
     "DELETE FROM duplicate_detection WHERE ctid IN (SELECT d.ctid FROM duplicate_detection d"
     " JOIN entities q ON q.id = d.entity_id"
     " WHERE d.seen_at < sbemu_ts($1) - q.duplicate_detection_history_time_window" SWEEP_SCOPE("d.entity_id", "2", "3")
     " ORDER BY d.seen_at LIMIT " STORE_SWEEP_BATCH_SQL ")",
     3, {STORE_OID_INT8, STORE_OID_INT8_ARRAY, STORE_OID_TEXT}},
};

#define NSTMT (sizeof stmt_defs / sizeof stmt_defs[0])

/* Room for the text of the statements built from the column tables. */
#define GENERATED_SQL_MAX 2048
static char load_entities_sql[GENERATED_SQL_MAX];
static bool generated_too_long;

static void build_generated(void)
{
    store_sql s;
    store_sql_init(&s, load_entities_sql, sizeof load_entities_sql);
    store_sql_add(&s, "SELECT ");
    store_sql_select(&s, &store_entity_view_columns, NULL, 0);
    store_sql_add(&s, " FROM %s", store_entity_view_columns.table);
    generated_too_long = s.overflow;
    for (size_t i = 0; i < NSTMT; i++)
        if (!strcmp(stmt_defs[i].name, STMT_LOAD_ENTITIES))
            stmt_defs[i].sql = load_entities_sql;
}

static const stmt_def *built(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, build_generated);
    return stmt_defs;
}

const stmt_def *store_statement_defs(size_t *n)
{
    *n = NSTMT;
    return built();
}

int store_statements_prepare(PGconn *conn, char *err, size_t errlen)
{
    const stmt_def *defs = built();
    if (generated_too_long) {
        snprintf(err, errlen, "cannot prepare %s: its text is longer than GENERATED_SQL_MAX (%d)",
                 STMT_LOAD_ENTITIES, GENERATED_SQL_MAX);
        return -1;
    }
    return store_prepare_all(conn, defs, NSTMT, err, errlen);
}

int store_prepare_all(PGconn *conn, const stmt_def *defs, size_t n, char *err, size_t errlen)
{
    for (size_t i = 0; i < n; i++) {
        PGresult *r = PQprepare(conn, defs[i].name, defs[i].sql, defs[i].nparams, defs[i].types);
        int ok = PQresultStatus(r) == PGRES_COMMAND_OK;
        if (!ok)
            snprintf(err, errlen, "cannot prepare %s: %s", defs[i].name, PQresultErrorMessage(r));
        PQclear(r);
        if (!ok)
            return -1;
    }
    return 0;
}
