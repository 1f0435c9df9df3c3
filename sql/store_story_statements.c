/* The story's statements (store_story.h): the twins of the statements that
 * change messages, and the story's own (queries, pruning).
 *
 * A twin is built from its base statement's text by named edits: each edit
 * replaces one anchor, which must occur in the base exactly once, and a twin
 * may wrap the base (a prefix and a suffix). So a twin follows every change
 * of its base, and a change that moves an anchor stops the emulator at its
 * start with the twin and the anchor named (test_store_story checks every
 * twin builds), never a twin that silently records the wrong thing.
 *
 * What a twin adds is one CTE that INSERTs the statement's events, read from
 * what the statement already has (its RETURNING rows, its input arrays), one
 * row per entity and kind; a twin that needs what only C knows (who sent,
 * the traceparent, the rule) takes it as more parameters. Kinds are
 * entities/ent_story.h's numbers; every time is the statement's clock
 * parameter. Events are written in the order they happened within the
 * statement (ORDER BY step), so the identity column orders a story. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ent_alloc.h"
#include "store_claim_sql.h"
#include "store_dash.h"
#include "store_log.h"
#include "store_mgmt.h"
#include "store_story.h"

#define K(kind) STORE_STRINGIFY(ENT_STORY_##kind)

/* ---- the twins' added text ----
 * Each aggregates one sorted input (ORDER BY in a subquery, then
 * array_agg in that order, one sort for all its arrays) rather than
 * ordering each array_agg apart (a sort per array). */

/* The send: its events from keep (what was kept after duplicate detection,
 * with the story's arrays unnested beside the others: $13 connection, $14
 * link, $15 traceparent, $16 the entity the client sent to when ForwardTo
 * took the message on) and s (the first sequence number). Sent (or
 * scheduled) in the entity the client named, forwarded into this one,
 * dead-lettered at once (ForwardingFailed). No join between the statement's
 * own CTEs: a generic plan believes each holds a row or two and would nest
 * its loops (s holds exactly one). */
#define SEND_STORY                                                                                                   \
    ", story AS (INSERT INTO sbemu_story (at, entity_id, kind, connection_id, link_name, other_entity_id,"           \
    "  sequence_numbers, message_ids, notes, descriptions)"                                                          \
    "  SELECT sbemu_ts(max(e.now)), e.ent, e.kind, e.conn, e.link, e.other, array_agg(e.seq), array_agg(e.mid),"    \
    "  array_agg(e.note), array_agg(e.descr) FROM ("                                                                 \
    "  SELECT k, now, gid AS mid, conn, link, 0 AS step, coalesce(via, $1) AS ent,"                                  \
    "   CASE WHEN state IN (2, 3) THEN " K(SCHEDULED) " ELSE " K(SENT) " END AS kind, NULL::int8 AS other,"          \
    "   CASE WHEN via IS NULL THEN s.first_seq + k - 1 END AS seq, trace AS note, NULL::text AS descr"               \
    "   FROM s CROSS JOIN keep"                                                                                      \
    "  UNION ALL SELECT k, now, gid, NULL, NULL, 1, $1, " K(FORWARDED) ", via, s.first_seq + k - 1, NULL, NULL"      \
    "   FROM s CROSS JOIN keep WHERE array_remove($16::int8[], NULL) <> '{}' AND via IS NOT NULL"                   \
    "  UNION ALL SELECT k, now, gid, NULL, NULL, 2, $1, " K(DEAD_LETTERED) ", NULL, s.first_seq + k - 1, reason,"    \
    "   description FROM s CROSS JOIN keep WHERE 1 = ANY($10::int8[]) AND subqueue = 1"                              \
    "  ORDER BY step, ent, kind, conn, link, other, k) e"                                                            \
    "  GROUP BY e.step, e.ent, e.kind, e.conn, e.link, e.other ORDER BY e.step, min(e.k))"

/* The publish: the story's arrays ($21 connection, $22 link, $23
 * traceparent, $24 the rule, or a not-routed row's rules, $26 the rules
 * of a topic log entry's copies, $25 the
 * subscription a forwarded copy left) are unnested with the rest and carried
 * by b, keep and c, so that each event reads one of the statement's CTEs
 * (and s, one row). Sent to the topic (a fresh message, not one routed from
 * rest: keep). Routed, and not routed: ONE row each for the whole statement,
 * in the topic, an element per copy naming its subscription in numbers (rt,
 * in c's order: no sort, whatever the number of subscriptions; the queries
 * find a subscription's among its topic's rows). Forwarded on (a copy of a
 * subscription with ForwardTo: fws numbers them exactly as ins_fw did) and
 * dead-lettered in a subscription: rows per entity (ev). c holds every copy's
 * body: the rare events' scans of it are gated on the input arrays (a slot
 * or a subqueue that some row has), a test made once. */
#define PUBLISH_STORY                                                                                                \
    ", fws AS (SELECT c.*, fw.fbase + row_number() OVER (PARTITION BY c.target ORDER BY c.ord) - 1 AS fseq"        \
    "  FROM c JOIN fw ON fw.entity_id = c.target WHERE -1 = ANY($3::int8[]) AND c.slot = -1),"                      \
    " ev AS (SELECT 0 AS step, keep.ord AS k, $1::int8 AS ent,"                                                      \
    "  CASE WHEN keep.mstate IN (2, 3) THEN " K(SCHEDULED) " ELSE " K(SENT) " END AS kind, keep.conn, keep.link,"    \
    "  NULL::int8 AS other, s.first_seq + keep.base AS seq, keep.gid AS mid, keep.trace AS note, NULL::text AS descr," \
    "  keep.mnow AS now FROM s CROSS JOIN keep WHERE keep.tok IS NULL"                                               \
    "  UNION ALL SELECT 3, fws.ord, fws.target, " K(FORWARDED) ", NULL, NULL, fws.via, fws.fseq, fws.gid, fws.rule,"  \
    "  NULL, fws.now FROM fws"                                                                                       \
    "  UNION ALL SELECT 4, c.ord, c.target, " K(DEAD_LETTERED) ", NULL, NULL, NULL, s.first_seq + c.base + c.slot,"  \
    "  c.gid, c.reason, c.description, c.now FROM s CROSS JOIN c WHERE 1 = ANY($13::int8[]) AND c.slot >= 0"        \
    "  AND c.subqueue = 1 AND c.target <> $1),"                                                                      \
    " rt AS MATERIALIZED (SELECT CASE WHEN c.slot = -2 THEN " K(NOT_ROUTED) " ELSE " K(ROUTED) " END AS kind, c.ord,"\
    "  CASE WHEN c.slot >= 0 THEN s.first_seq + c.base + c.slot WHEN c.slot = -2 THEN s.first_seq + c.base"         \
    "  END AS seq, c.gid, c.rule, CASE WHEN c.slot = -1 THEN c.via ELSE c.target END AS sub, c.now"                 \
    "  FROM s CROSS JOIN c WHERE (c.slot >= 0 AND c.target <> $1) OR (c.slot = -1 AND c.via IS NOT NULL)"           \
    "  OR c.slot = -2"                                                                                               \
    /* a topic log entry's copies: one row of c carries them all (store_log.h) */                                   \
    "  UNION ALL SELECT " K(ROUTED) ", c.ord, s.first_seq + c.base, c.gid, r.rule, r.sub, c.now FROM s CROSS JOIN c" \
    "  CROSS JOIN LATERAL unnest(c.log_subs::int8[], c.log_rules::text[]) AS r(sub, rule)"                          \
    "  WHERE c.log_subs IS NOT NULL),"                                                                               \
    " story AS (INSERT INTO sbemu_story (at, entity_id, kind, connection_id, link_name, other_entity_id,"             \
    "  sequence_numbers, message_ids, notes, descriptions, numbers)"                                                 \
    "  SELECT at, ent, kind, conn, link, other, seqs, mids, notes, descrs, nums FROM ("                              \
    "  SELECT step, min(k) AS firstk, sbemu_ts(max(now)) AS at, ent, kind, conn, link, other, array_agg(seq) AS seqs," \
    "   array_agg(mid) AS mids, array_agg(note) AS notes, array_agg(descr) AS descrs, NULL::int8[] AS nums"          \
    "   FROM (SELECT * FROM ev ORDER BY step, ent, kind, conn, link, other, k) e"                                    \
    "   GROUP BY step, ent, kind, conn, link, other"                                                                 \
    "  UNION ALL SELECT 1, min(ord), sbemu_ts(max(now)), $1, " K(ROUTED) ", NULL, NULL, NULL, array_agg(seq),"        \
    "   array_agg(gid), array_agg(rule), NULL, array_agg(sub) FROM rt WHERE kind = " K(ROUTED) " HAVING count(*) > 0" \
    "  UNION ALL SELECT 2, min(ord), sbemu_ts(max(now)), $1, " K(NOT_ROUTED) ", NULL, NULL, NULL, array_agg(seq),"    \
    "   array_agg(gid), array_agg(rule), NULL, array_agg(sub) FROM rt WHERE -2 = ANY($3::int8[])"                     \
    "   AND kind = " K(NOT_ROUTED) " HAVING count(*) > 0) x"                                                         \
    "  ORDER BY step, firstk)"

/* A lock claim's events from its rows (u), who claimed ($conn, $link). */
#define LOCK_STORY(conn, link)                                                                                      \
    ", story AS (INSERT INTO sbemu_story (at, entity_id, kind, subqueue, connection_id, link_name, locked_until,"   \
    "  sequence_numbers, message_ids, numbers, lock_tokens)"                                                        \
    "  SELECT sbemu_ts($3), $1, " K(LOCKED) ", nullif($2, 0), " conn ", " link ", max(until),"            \
    "  array_agg(seq), array_agg(mid), array_agg(dc::int8), array_agg(tok)"                                        \
    "  FROM (SELECT seq, mid, dc, tok, until FROM u ORDER BY seq) o HAVING count(*) > 0)"

/* A receive-and-delete claim's events from what it deleted (d). */
#define RECEIVED_STORY(now, conn, link)                                                                             \
    " story AS (INSERT INTO sbemu_story (at, entity_id, kind, subqueue, connection_id, link_name,"                 \
    "  sequence_numbers, message_ids)"                                                                              \
    "  SELECT sbemu_ts(" now "), $1, " K(RECEIVED) ", nullif($2, 0), " conn ", " link ","                           \
    "  array_agg(sequence_number), array_agg(message_id)"                                                           \
    "  FROM (SELECT sequence_number, message_id FROM d ORDER BY sequence_number) o HAVING count(*) > 0)"

/* A receive-and-delete claim of a subscription (store_log.h): what it
 * deleted (d) and the log entries it took (lg, live ones). */
#define RECEIVED_LOG_STORY(now, conn, link)                                                                         \
    " story AS (INSERT INTO sbemu_story (at, entity_id, kind, subqueue, connection_id, link_name,"                 \
    "  sequence_numbers, message_ids)"                                                                              \
    "  SELECT sbemu_ts(" now "), $1, " K(RECEIVED) ", nullif($2, 0), " conn ", " link ","                           \
    "  array_agg(sequence_number), array_agg(message_id)"                                                           \
    "  FROM (SELECT sequence_number, message_id FROM d UNION ALL SELECT sequence_number, message_id FROM lg"        \
    "  WHERE live ORDER BY sequence_number) o HAVING count(*) > 0)"

/* Completes: what the DELETE returned, per entity. */
#define COMPLETE_STORY                                                                                              \
    ", story AS (INSERT INTO sbemu_story (at, entity_id, kind, sequence_numbers, message_ids)"                     \
    "  SELECT sbemu_ts(max(now)), entity_id, " K(COMPLETED) ", array_agg(sequence_number), array_agg(message_id)"   \
    "  FROM (SELECT entity_id, ord, now, sequence_number, message_id FROM d ORDER BY entity_id, ord) o"             \
    "  GROUP BY entity_id)"

/* The other settlements (d: each message found under its lock, what it
 * becomes): abandoned, deferred, released, dead-lettered (where to, when
 * ForwardDeadLetteredMessagesTo took it), and an abandon that exhausted
 * MaxDeliveryCount dead-lettered after it. */
#define SETTLE_STORY                                                                                                \
    ", story AS (INSERT INTO sbemu_story (at, entity_id, kind, other_entity_id, sequence_numbers, message_ids,"    \
    "  notes, descriptions, numbers)"                                                                               \
    "  SELECT sbemu_ts(max(e.now)), e.entity_id, e.k, e.other, array_agg(e.sequence_number),"                      \
    "  array_agg(e.message_id), array_agg(e.note), array_agg(e.descr), array_agg(e.dc) FROM ("                     \
    "  SELECT d.now, d.entity_id, d.sequence_number, d.message_id, d.ord, 0 AS step,"                               \
    "   CASE d.kind WHEN 2 THEN " K(DEAD_LETTERED) " WHEN 1 THEN " K(ABANDONED) " WHEN 3 THEN " K(DEFERRED)          \
    "   ELSE " K(RELEASED) " END AS k, CASE WHEN d.kind = 2 AND d.away THEN d.target END AS other,"                  \
    "   CASE WHEN d.kind = 2 THEN d.reason END AS note, CASE WHEN d.kind = 2 THEN d.description END AS descr,"      \
    "   d.delivery_count::int8 AS dc FROM d"                                                                        \
    "  UNION ALL SELECT d.now, d.entity_id, d.sequence_number, d.message_id, d.ord, 1, " K(DEAD_LETTERED) ","       \
    "   CASE WHEN d.away THEN d.target END, d.reason, d.description, d.delivery_count FROM d"                      \
    "   WHERE d.kind = 1 AND d.exhausted ORDER BY step, entity_id, k, other, ord) e"                                \
    "  GROUP BY e.step, e.entity_id, e.k, e.other ORDER BY e.step, min(e.ord))"

/* Where an entity's dead letters go, from the sweep's policy arrays. */
#define DEAD_LETTER_TARGET(from, to)                                                                                \
    "(SELECT f.target FROM unnest(" from "::int8[], " to "::int8[]) AS f(entity, target) WHERE f.entity = x.entity_id)"

/* The sweep's expiries (x): expired, and dead-lettered where the entity says. */
#define EXPIRED_STORY                                                                                               \
    ", story AS (INSERT INTO sbemu_story (at, entity_id, kind, other_entity_id, sequence_numbers, message_ids,"    \
    "  notes, descriptions)"                                                                                        \
    "  SELECT sbemu_ts($1), e.entity_id, e.k, e.other, array_agg(e.sequence_number ORDER BY e.sequence_number),"   \
    "  array_agg(e.message_id ORDER BY e.sequence_number), array_agg(e.note ORDER BY e.sequence_number),"          \
    "  array_agg(e.descr ORDER BY e.sequence_number) FROM ("                                                       \
    "  SELECT x.entity_id, x.sequence_number, x.message_id, 0 AS step, " K(EXPIRED) " AS k, NULL::int8 AS other,"  \
    "   NULL::text AS note, NULL::text AS descr FROM x"                                                             \
    "  UNION ALL SELECT x.entity_id, x.sequence_number, x.message_id, 1, " K(DEAD_LETTERED) ","                     \
    "   " DEAD_LETTER_TARGET("$5", "$6") ", $2, $3 FROM x WHERE x.entity_id = ANY($4)) e"                           \
    "  GROUP BY e.step, e.entity_id, e.k, e.other ORDER BY e.step, e.entity_id)"

/* The sweep's lapsed locks (x): the lock lapsed, and dead-lettered past MaxDeliveryCount. */
#define LAPSED_STORY                                                                                                \
    ", story AS (INSERT INTO sbemu_story (at, entity_id, kind, other_entity_id, sequence_numbers, message_ids,"    \
    "  notes, descriptions, numbers)"                                                                               \
    "  SELECT sbemu_ts($1), e.entity_id, e.k, e.other, array_agg(e.sequence_number ORDER BY e.sequence_number),"   \
    "  array_agg(e.message_id ORDER BY e.sequence_number), array_agg(e.note ORDER BY e.sequence_number),"          \
    "  array_agg(e.descr ORDER BY e.sequence_number), array_agg(e.dc ORDER BY e.sequence_number) FROM ("          \
    "  SELECT x.entity_id, x.sequence_number, x.message_id, 0 AS step, " K(LOCK_LAPSED) " AS k,"                   \
    "   NULL::int8 AS other, NULL::text AS note, NULL::text AS descr, x.delivery_count::int8 AS dc FROM x"         \
    "  UNION ALL SELECT x.entity_id, x.sequence_number, x.message_id, 1, " K(DEAD_LETTERED) ","                     \
    "   " DEAD_LETTER_TARGET("$4", "$5") ", $2, $3, x.delivery_count FROM x WHERE x.exhausted) e"                  \
    "  GROUP BY e.step, e.entity_id, e.k, e.other ORDER BY e.step, e.entity_id)"

/* Due schedules (x): each activated with its new sequence number (a). */
#define ACTIVATED_STORY                                                                                             \
    ", a AS MATERIALIZED (SELECT entity_id, sequence_number, message_id,"                                          \
    "  sbemu_activate_seq(entity_id, sequence_number) AS seq FROM x),"                                              \
    " story AS (INSERT INTO sbemu_story (at, entity_id, kind, sequence_numbers, message_ids, numbers)"             \
    "  SELECT sbemu_ts($1), entity_id, " K(ACTIVATED) ", array_agg(seq ORDER BY seq),"                             \
    "  array_agg(message_id ORDER BY seq), array_agg(sequence_number ORDER BY seq) FROM a"                          \
    "  WHERE seq IS NOT NULL GROUP BY entity_id)"                                                                   \
    " SELECT entity_id FROM a WHERE seq IS NOT NULL"

/* $management's receive of deferred messages under a lock (u; $4 now). */
#define MGMT_LOCK_STORY                                                                                             \
    ", story AS (INSERT INTO sbemu_story (at, entity_id, kind, subqueue, locked_until, sequence_numbers,"         \
    "  message_ids, numbers, lock_tokens)"                                                                          \
    "  SELECT sbemu_ts($4), $1, " K(LOCKED) ", nullif($2, 0), sbemu_ts(max(until)), array_agg(seq ORDER BY seq),"  \
    "  array_agg(mid ORDER BY seq), array_agg(dc ORDER BY seq), array_agg(tok ORDER BY seq) FROM u"               \
    "  HAVING count(*) > 0)"

/* Deletes through $management: what d deleted, as kind, at now. */
#define DELETED_STORY(kind, now, subqueue)                                                                          \
    " story AS (INSERT INTO sbemu_story (at, entity_id, kind, subqueue, sequence_numbers, message_ids)"           \
    "  SELECT sbemu_ts(" now "), $1, " K(kind) ", " subqueue ", array_agg(sequence_number ORDER BY sequence_number)," \
    "  array_agg(message_id ORDER BY sequence_number) FROM d HAVING count(*) > 0)"

/* The dashboard's deletes (d: what they deleted, $2 a subqueue or -1 for
 * both), which take no time parameter: the entity's namespace's clock as the
 * database tells it (sbemu_clock_now, migration 013). */
#define NAMESPACE_NOW "sbemu_clock_now((SELECT namespace_id FROM entities WHERE id = $1))"
#define DASH_DELETED_STORY(kind, now)                                                                               \
    " story AS (INSERT INTO sbemu_story (at, entity_id, kind, subqueue, sequence_numbers, message_ids)"           \
    "  SELECT " now ", $1, " K(kind) ", nullif(sq, 0), array_agg(sequence_number), array_agg(message_id)"          \
    "  FROM (SELECT sq, sequence_number, message_id FROM d ORDER BY sq, sequence_number) o GROUP BY sq)"

/* ---- the twins ---- */

#define TWIN_EDITS_MAX 8
#define TWIN_EXTRA_MAX 6

typedef struct twin_edit {
    const char *anchor, *with;
} twin_edit;

typedef struct twin_def {
    const char *name; /* the twin's */
    const char *base; /* the statement it is made from */
    const char *prefix, *suffix;
    twin_edit edits[TWIN_EDITS_MAX];
    int extra; /* parameters after the base's */
    Oid extra_types[TWIN_EXTRA_MAX];
} twin_def;

static const twin_def twins[] = {
    /* (the generated MessageId is made in keep, where the story reads it, and
     * ins takes it by ordinal from km: a walk of a text array, but only for a
     * message sent without an id) */
    {STMT_SEND_SET_STORY, STMT_SEND_SET, NULL, NULL,
     {{"AS now, octet_length",
       "AS now, unnest($13::int8[]) AS conn, unnest($14::text[]) AS link, unnest($15::text[]) AS trace,"
       " unnest($16::int8[]) AS via, octet_length"},
      {"row_number() OVER (ORDER BY i.ord) AS k FROM i",
       "row_number() OVER (ORDER BY i.ord) AS k, coalesce(i.message_id, replace(gen_random_uuid()::text, '-', ''))"
       " AS gid FROM i"},
      {"AS a FROM i LEFT JOIN keep", "AS a, array_agg(keep.gid ORDER BY i.ord) AS g FROM i LEFT JOIN keep"},
      {"coalesce(b.message_id, replace(gen_random_uuid()::text, '-', ''))", "coalesce(b.message_id, (SELECT g FROM km)[b.ord])"},
      {"> 0 RETURNING 1) SELECT keep.ord", "> 0 RETURNING 1)" SEND_STORY " SELECT keep.ord"}},
     4, {STORE_OID_INT8_ARRAY, STORE_OID_TEXT_ARRAY, STORE_OID_TEXT_ARRAY, STORE_OID_INT8_ARRAY}},
    /* (slot -2 rows are no copies: the base's fw and ins_fw take slot -1 only; no
     * copy is logged, slot -3, while the story is recorded: broker_route.c) */
    {STMT_PUBLISH_SET_STORY, STMT_PUBLISH_SET, NULL, NULL,
     {{"$20::text[]) WITH ORDINALITY AS i(", "$20::text[], $21::int8[], $22::text[], $23::text[], $24::text[],"
                                             " $25::int8[], $26::text[]) WITH ORDINALITY AS i("},
      {"source, log_subs, ord)),", "source, log_subs, conn, link, trace, rule, via, log_rules, ord)),"},
      {"consume AS tok, ord,", "consume AS tok, ord, state AS mstate, conn, link, trace,"},
      {"keep AS MATERIALIZED (SELECT b.k, b.body, b.gid, b.ord, b.width,",
       "keep AS MATERIALIZED (SELECT b.k, b.body, b.gid, b.ord, b.width, b.mnow, b.mstate, b.tok, b.conn, b.link,"
       " b.trace,"},
      {"c AS MATERIALIZED (SELECT n.target, n.slot,",
       "c AS MATERIALIZED (SELECT n.now, n.rule, n.via, n.log_rules, n.target, n.slot,"},
      {" SELECT keep.ord, s.first_seq + keep.base FROM keep, s",
       PUBLISH_STORY " SELECT keep.ord, s.first_seq + keep.base FROM keep, s"}},
     6, {STORE_OID_INT8_ARRAY, STORE_OID_TEXT_ARRAY, STORE_OID_TEXT_ARRAY, STORE_OID_TEXT_ARRAY, STORE_OID_INT8_ARRAY,
         STORE_OID_TEXT_ARRAY}},
    /* (the base's UPDATE is its statement: here it becomes the CTE u the story reads) */
    {STMT_CLAIM_LOCK_STORY, STMT_CLAIM_LOCK, NULL, ")" LOCK_STORY("$7", "$8") " SELECT * FROM u",
     {{") UPDATE messages m SET", "), u" CLAIM_NAMES " AS (UPDATE messages m SET"}}, 2, {STORE_OID_INT8, STORE_OID_TEXT}},
    {STMT_CLAIM_SESSION_LOCK_STORY, STMT_CLAIM_SESSION_LOCK, NULL, ")" LOCK_STORY("$9", "$10") " SELECT * FROM u",
     {{") UPDATE messages m SET", "), u" CLAIM_NAMES " AS (UPDATE messages m SET"}}, 2, {STORE_OID_INT8, STORE_OID_TEXT}},
    {STMT_SESSION_LOCK_CLAIM_STORY, STMT_SESSION_LOCK_CLAIM, NULL, NULL,
     {{" SELECT h.session_id,", LOCK_STORY("$10", "$11") " SELECT h.session_id,"}}, 2, {STORE_OID_INT8, STORE_OID_TEXT}},
    {STMT_CLAIM_DELETE_STORY, STMT_CLAIM_DELETE, NULL, NULL,
     {{"AND EXISTS (SELECT 1 FROM d)) SELECT", "AND EXISTS (SELECT 1 FROM d)), " RECEIVED_STORY("$3", "$6", "$7")
                                               " SELECT"}},
     2, {STORE_OID_INT8, STORE_OID_TEXT}},
    /* a subscription's claims from its topic's log (store_log.c) */
    {STMT_CLAIM_LOCK_LOG_STORY, STMT_CLAIM_LOCK_LOG, NULL, NULL,
     {{" SELECT * FROM old UNION ALL SELECT * FROM ins",
       ", u AS (SELECT * FROM old UNION ALL SELECT * FROM ins)" LOCK_STORY("$7", "$8")
       " SELECT * FROM u"}},
     2, {STORE_OID_INT8, STORE_OID_TEXT}},
    {STMT_CLAIM_DELETE_LOG_STORY, STMT_CLAIM_DELETE_LOG, NULL, NULL,
     {{"EXISTS (SELECT 1 FROM lg WHERE live))) SELECT",
       "EXISTS (SELECT 1 FROM lg WHERE live))), " RECEIVED_LOG_STORY("$3", "$6", "$7") " SELECT"}},
     2, {STORE_OID_INT8, STORE_OID_TEXT}},
    {STMT_CLAIM_SESSION_DELETE_STORY, STMT_CLAIM_SESSION_DELETE, NULL, NULL,
     {{"AND EXISTS (SELECT 1 FROM d)) SELECT", "AND EXISTS (SELECT 1 FROM d)), " RECEIVED_STORY("$3", "$9", "$10")
                                               " SELECT"}},
     2, {STORE_OID_INT8, STORE_OID_TEXT}},
    {STMT_COMPLETE_SET_STORY, STMT_COMPLETE_SET, NULL, NULL,
     {{"RETURNING m.entity_id, t.ord, " MESSAGE_BYTES("m") " AS n)",
       "RETURNING m.entity_id, t.ord, " MESSAGE_BYTES("m") " AS n, m.sequence_number, m.message_id, t.now)"},
      {" SELECT ord FROM d", COMPLETE_STORY " SELECT ord FROM d"}},
     0, {0}},
    {STMT_SETTLE_SET_STORY, STMT_SETTLE_SET, NULL, NULL,
     {{"m AS MATERIALIZED (SELECT t.*, x.entity_id, x.sequence_number,",
       "m AS MATERIALIZED (SELECT t.*, x.entity_id, x.sequence_number, x.message_id, x.delivery_count,"},
      {" SELECT ord, exhausted FROM here UNION ALL", SETTLE_STORY " SELECT ord, exhausted FROM here UNION ALL"}},
     0, {0}},
    {"sb_sweep_expired_story", STMT_SWEEP_EXPIRED, NULL, NULL,
     {{"WITH x AS MATERIALIZED (SELECT entity_id, sequence_number FROM messages WHERE expires_at",
       "WITH x AS MATERIALIZED (SELECT entity_id, sequence_number, message_id FROM messages WHERE expires_at"},
      {" SELECT entity_id, entity_id = ANY($4) FROM x", EXPIRED_STORY " SELECT entity_id, entity_id = ANY($4) FROM x"}},
     0, {0}},
    {"sb_sweep_lapsed_story", STMT_SWEEP_LAPSED, NULL, NULL,
     {{" x AS MATERIALIZED (SELECT m.entity_id, m.sequence_number,",
       " x AS MATERIALIZED (SELECT m.entity_id, m.sequence_number, m.message_id, m.delivery_count,"},
      {" SELECT entity_id, exhausted FROM x WHERE CASE", LAPSED_STORY " SELECT entity_id, exhausted FROM x WHERE CASE"}},
     0, {0}},
    {"sb_sweep_scheduled_story", STMT_SWEEP_SCHEDULED, NULL, NULL,
     {{"WITH x AS MATERIALIZED (SELECT entity_id, sequence_number FROM messages WHERE state = 2",
       "WITH x AS MATERIALIZED (SELECT entity_id, sequence_number, message_id FROM messages WHERE state = 2"},
      {" SELECT entity_id FROM x WHERE sbemu_activate(entity_id, sequence_number)", ACTIVATED_STORY}},
     0, {0}},
    {"sb_mgmt_deferred_lock_story", STMT_MGMT_DEFERRED_LOCK, NULL, NULL,
     {{" SELECT * FROM u", MGMT_LOCK_STORY " SELECT * FROM u"}},
     0, {0}},
    {"sb_mgmt_deferred_delete_story", STMT_MGMT_DEFERRED_DELETE, NULL, NULL,
     {{" SELECT sequence_number, sbemu_ms(enqueued_at), 0::int8",
       ", " RECEIVED_STORY("$4", "NULL::int8", "NULL::text") " SELECT sequence_number, sbemu_ms(enqueued_at), 0::int8"}},
     0, {0}},
    {"sb_mgmt_cancel_story", STMT_MGMT_CANCEL, NULL, NULL,
     {{"RETURNING octet_length(message) AS n) UPDATE entity_runtime",
       "RETURNING octet_length(message) AS n, sequence_number, message_id), " DELETED_STORY(CANCELLED, "$3", "NULL")
       " UPDATE entity_runtime"}},
     0, {0}},
    {"sb_mgmt_batch_delete_story", STMT_MGMT_BATCH_DELETE, NULL, NULL,
     {{"RETURNING octet_length(m.message) AS n),",
       "RETURNING octet_length(m.message) AS n, m.sequence_number, m.message_id),"},
      {" SELECT count(*) FROM d", ", " DELETED_STORY(PURGED, "$5", "nullif($2, 0)") " SELECT count(*) FROM d"}},
     0, {0}},
    {"sb_dash_delete_story", STMT_DASH_DELETE, NULL, NULL,
     {{"RETURNING octet_length(message) AS n),",
       "RETURNING octet_length(message) AS n, sequence_number, message_id, subqueue AS sq),"},
      {" SELECT count(*) FROM d", ", " DASH_DELETED_STORY(DELETED, "sbemu_ts($5)") " SELECT count(*) FROM d"}},
     0, {0}},
    {"sb_dash_purge_story", STMT_DASH_PURGE, NULL, NULL,
     {{"RETURNING octet_length(message) AS n),",
       "RETURNING octet_length(message) AS n, sequence_number, message_id, subqueue AS sq),"},
      {" SELECT count(*) FROM d", ", " DASH_DELETED_STORY(PURGED, NAMESPACE_NOW) " SELECT count(*) FROM d"}},
     0, {0}},
};
#define NTWINS (sizeof twins / sizeof twins[0])

/* ---- the story's own statements ---- */

/* The columns of every query (store_story.c parses them in this order): the
 * event's row, and its message's elements (u). */
#define STORY_COLUMNS                                                                                               \
    " s.id, u.ord, sbemu_ms(s.at), s.kind::int8, s.entity_id, coalesce(s.subqueue, 0)::int8, u.seq, u.mid,"      \
    " u.note, u.descr, u.num, u.tok, coalesce(s.connection_id, 0), s.link_name,"                                   \
    " coalesce(sbemu_ms(s.locked_until), 0), coalesce(s.other_entity_id, 0)"
#define STORY_ELEMENTS(from)                                                                                        \
    " FROM " from " s CROSS JOIN LATERAL unnest(s.sequence_numbers, s.message_ids, s.notes, s.descriptions,"          \
    " s.numbers, s.lock_tokens) WITH ORDINALITY AS u(seq, mid, note, descr, num, tok, ord)"
/* A message's rows (r): those of MessageId mid written since the first
 * event of it that entity $1 holds, or its topic (topic: a subscription's
 * copies are told in their topic's rows: 0 for none) (their primary key,
 * then sbemu_story_at, through sbemu_story_since: migration 016). A
 * message's events elsewhere before it reached that entity (a topic's
 * scheduled message resting there) are left out; asked by MessageId alone,
 * they are in. */
/* (An event's time is the latest of its row's messages: events of one commit
 * written to other rows may be a little earlier. A commit takes
 * milliseconds; this is room enough.) */
#define STORY_SINCE_SLACK "'10 seconds'"
#define MESSAGE_ROWS_FROM_ENTITY(mid, topic)                                                                        \
    "t AS MATERIALIZED (SELECT min(at) - interval " STORY_SINCE_SLACK " AS t0 FROM sbemu_story"                    \
    " WHERE entity_id = ANY(ARRAY[$1, " topic "]) AND message_ids @> ARRAY[" mid "]),"                             \
    " r AS MATERIALIZED (SELECT * FROM sbemu_story_since(" mid ", (SELECT t0 FROM t)))"
/* A subscription's events written in its topic's rows (routed, not routed:
 * the element's number names the subscription). */
#define K_IN_TOPIC_ROWS "(" K(ROUTED) ", " K(NOT_ROUTED) ")"

static const stmt_def own_defs[] = {
    /* $1 MessageId, $2 most events: a scan of the whole story (no index
     * holds MessageIds: migration 016), the one statement that may. */
    {STMT_STORY_OF_MESSAGE,
     "SELECT" STORY_COLUMNS STORY_ELEMENTS("sbemu_story") " WHERE s.message_ids @> ARRAY[$1::text] AND u.mid = $1"
     " ORDER BY s.id, u.ord LIMIT $2",
     2, {STORE_OID_TEXT, STORE_OID_INT8}},
    /* $1 entity, $2 MessageId, $3 most events, $4 the entity's topic (0: none). */
    {STMT_STORY_OF_MESSAGE_IN,
     "WITH " MESSAGE_ROWS_FROM_ENTITY("$2::text", "$4") " SELECT" STORY_COLUMNS STORY_ELEMENTS("r") " WHERE u.mid = $2"
     " ORDER BY s.id, u.ord LIMIT $3",
     4, {STORE_OID_INT8, STORE_OID_TEXT, STORE_OID_INT8, STORE_OID_INT8}},
    /* $1 entity, $2 sequence number, $3 most events, $4 its topic (0: none):
     * the MessageId the entity's latest event of that number names (or its
     * topic's latest copy to it), then its story. */
    {STMT_STORY_OF_SEQUENCE,
     "WITH f AS MATERIALIZED (SELECT mid FROM ("
     "(SELECT s.id, u.mid FROM sbemu_story s CROSS JOIN LATERAL unnest(s.sequence_numbers, s.message_ids)"
     " AS u(seq, mid) WHERE s.entity_id = $1 AND s.sequence_numbers @> ARRAY[$2::int8] AND u.seq = $2"
     " ORDER BY s.id DESC LIMIT 1)"
     " UNION ALL (SELECT s.id, u.mid FROM sbemu_story s CROSS JOIN LATERAL unnest(s.sequence_numbers, s.message_ids,"
     " s.numbers) AS u(seq, mid, num) WHERE s.entity_id = $4 AND s.kind = " K(ROUTED)
     " AND s.sequence_numbers @> ARRAY[$2::int8] AND u.seq = $2 AND u.num = $1 ORDER BY s.id DESC LIMIT 1)"
     ") x ORDER BY id DESC LIMIT 1), " MESSAGE_ROWS_FROM_ENTITY("(SELECT mid FROM f)", "$4")
     " SELECT" STORY_COLUMNS STORY_ELEMENTS("r") " WHERE u.mid = (SELECT mid FROM f) ORDER BY s.id, u.ord LIMIT $3",
     4, {STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8}},
    /* $1 entity, below ($2 row, $3 element), $4 most events, $5 its topic (0:
     * none); newest first: its own rows (the primary key, (entity_id, id),
     * gives the order) and its copies in its topic's rows, each limited. */
    {STMT_STORY_OF_ENTITY,
     "SELECT * FROM ("
     "(SELECT" STORY_COLUMNS STORY_ELEMENTS("sbemu_story") " WHERE s.entity_id = $1 AND s.id <= $2"
     " AND (s.id < $2 OR u.ord < $3) ORDER BY s.id DESC, u.ord DESC LIMIT $4)"
     " UNION ALL (SELECT" STORY_COLUMNS STORY_ELEMENTS("sbemu_story") " WHERE s.entity_id = $5"
     " AND s.kind IN " K_IN_TOPIC_ROWS " AND u.num = $1 AND s.id <= $2 AND (s.id < $2 OR u.ord < $3)"
     " ORDER BY s.id DESC, u.ord DESC LIMIT $4)"
     ") x ORDER BY 1 DESC, 2 DESC LIMIT $4",
     5, {STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8}},
    /* $1 before: the oldest rows first, a sweep's batch at most, of the
     * sweep's entities ($2, $3: SWEEP_SCOPE, since each namespace keeps its
     * story on its own clock). */
    {STMT_STORY_PRUNE,
     "DELETE FROM sbemu_story WHERE ctid = ANY(ARRAY(SELECT ctid FROM sbemu_story WHERE at < sbemu_ts($1)"
     SWEEP_SCOPE("entity_id", "2", "3") " ORDER BY at LIMIT " STORE_SWEEP_BATCH_SQL "))",
     3, {STORE_OID_INT8, STORE_OID_INT8_ARRAY, STORE_OID_TEXT}},
};
#define NOWN (sizeof own_defs / sizeof own_defs[0])

/* ---- building ---- */

static stmt_def built_defs[NTWINS + NOWN];
static char *built_sql[NTWINS];
static char build_error[512];

static const stmt_def *find_base(const char *name)
{
    size_t n[4];
    const stmt_def *tables[4] = {store_statement_defs(&n[0]), store_mgmt_statement_defs(&n[1]),
                                 store_dash_statement_defs(&n[2]), store_log_statement_defs(&n[3])};
    for (int t = 0; t < 4; t++)
        for (size_t i = 0; i < n[t]; i++)
            if (!strcmp(tables[t][i].name, name))
                return &tables[t][i];
    return NULL;
}

static size_t count_of(const char *text, const char *anchor)
{
    size_t n = 0;
    for (const char *at = text; (at = strstr(at, anchor)) != NULL; at += strlen(anchor))
        n++;
    return n;
}

/* The twin's text (ent_malloc'd), or NULL with build_error saying why. */
static char *build_twin(const twin_def *t, const stmt_def *base)
{
    size_t cap = strlen(base->sql) + (t->prefix ? strlen(t->prefix) : 0) + (t->suffix ? strlen(t->suffix) : 0) + 1;
    for (int e = 0; e < TWIN_EDITS_MAX && t->edits[e].anchor; e++)
        cap += strlen(t->edits[e].with);
    char *text = ent_malloc(cap), *work = ent_malloc(cap);
    if (!text || !work) {
        ent_free(text);
        ent_free(work);
        snprintf(build_error, sizeof build_error, "out of memory");
        return NULL;
    }
    snprintf(text, cap, "%s", base->sql);
    for (int e = 0; e < TWIN_EDITS_MAX && t->edits[e].anchor; e++) {
        const char *anchor = t->edits[e].anchor;
        size_t found = count_of(text, anchor);
        if (found != 1) {
            snprintf(build_error, sizeof build_error,
                     "the story twin %s of %s: its edit's anchor \"%s\" is in %s %zu times, not once (the statement"
                     " changed: change the twin in sql/store_story_statements.c with it)",
                     t->name, base->name, anchor, base->name, found);
            ent_free(text);
            ent_free(work);
            return NULL;
        }
        const char *at = strstr(text, anchor);
        snprintf(work, cap, "%.*s%s%s", (int)(at - text), text, t->edits[e].with, at + strlen(anchor));
        snprintf(text, cap, "%s", work);
    }
    snprintf(work, cap, "%s%s%s", t->prefix ? t->prefix : "", text, t->suffix ? t->suffix : "");
    ent_free(text);
    return work;
}

static bool build_failed;

static void build_all(void)
{
    for (size_t i = 0; i < NTWINS && !build_failed; i++) {
        const twin_def *t = &twins[i];
        const stmt_def *base = find_base(t->base);
        if (!base || base->nparams + t->extra > STORE_MAX_PARAMS) {
            snprintf(build_error, sizeof build_error, "the story twin %s: %s", t->name,
                     base ? "takes more parameters than STORE_MAX_PARAMS" : "its base statement is gone");
            build_failed = true;
            break;
        }
        if (!(built_sql[i] = build_twin(t, base))) {
            build_failed = true;
            break;
        }
        stmt_def *d = &built_defs[i];
        d->name = t->name;
        d->sql = built_sql[i];
        d->nparams = base->nparams + t->extra;
        memcpy(d->types, base->types, sizeof base->types);
        for (int k = 0; k < t->extra; k++)
            d->types[base->nparams + k] = t->extra_types[k];
    }
    for (size_t i = 0; i < NOWN; i++)
        built_defs[NTWINS + i] = own_defs[i];
}

static const stmt_def *built(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, build_all);
    return build_failed ? NULL : built_defs;
}

const stmt_def *store_story_statement_defs(size_t *n)
{
    const stmt_def *d = built();
    *n = d ? NTWINS + NOWN : 0;
    return d;
}

const char *store_story_build_error(void)
{
    built();
    return build_error;
}

int store_story_statements_prepare(PGconn *conn, char *err, size_t errlen)
{
    const stmt_def *d = built();
    if (!d) {
        snprintf(err, errlen, "%s", build_error);
        return -1;
    }
    return store_prepare_all(conn, d, NTWINS + NOWN, err, errlen);
}

const char *store_story_twin(const char *prepared)
{
    if (!store_story_on())
        return prepared;
    for (size_t i = 0; i < NTWINS; i++)
        if (!twins[i].extra && !strcmp(twins[i].base, prepared))
            return twins[i].name;
    return prepared;
}

void store_story_configure(bool on)
{
    store_story_set_on(on);
    store_set_statement_twin(on ? store_story_twin : NULL);
}
