-- sbemu schema, version 29: a subscription's peek-lock writes one index entry
-- fewer.
--
-- The row a subscription's claim inserts without its body (migration 028)
-- went into three indexes: messages_pkey, messages_ready and
-- messages_bodiless. A queue's claim is a HOT update and writes none.
-- Measured with pg_stat_statements on a messages table grown by 300,000
-- messages sent and drained, 50,000 x 1 KiB peek-locked on one connection,
-- three rounds each (the claim, then the complete):
--
--                          claim                     complete
--   queue                  245-288 ms,  8.2 MB WAL   219-245 ms
--   subscription, before   299-316 ms, 20.6 MB WAL   190-201 ms
--   subscription, now      257-268 ms, 16.8 MB WAL   187-203 ms
--
-- A subscription's claim and complete now cost no more than a queue's.

-- messages_bodiless told the log's cut (sbemu_log_sweep) and sbemu_catch_up
-- where a subscription's rows without a body are. messages_ready tells them
-- too: such a row is always active (state 0) in subqueue 0, locked
-- (messages_body_kept). A claim takes a subscription's rows first and the log
-- only for the rest of its credit, so a walk from the subscription's first
-- active row to its first row without a body passes only rows in flight or
-- given back since, never its backlog (a catch-up moves the backlog into
-- rows and the cursor above it, so a row without a body comes after every
-- row it made). The catch-up's own update walks from that first row on.
-- test_store_plans reads the buffers both walks take past a backlog.

DROP INDEX messages_bodiless;

-- The lowest sequence number of subscription p_sub's rows that take their
-- body from the log, or NULL. The subqueue is a range of one value, so that
-- the order by subqueue first is one only messages_ready gives (as
-- ONE_SUBQUEUE in store_claim_sql.h): EXPLAIN of it as a generic plan.
CREATE FUNCTION sbemu_log_held(p_sub bigint) RETURNS bigint LANGUAGE sql STABLE
    SET enable_seqscan = off
    RETURN (SELECT m.sequence_number FROM messages m
             WHERE m.entity_id = p_sub AND m.subqueue >= 0 AND m.subqueue <= 0 AND m.state = 0
               AND m.message IS NULL
             ORDER BY m.subqueue, m.sequence_number LIMIT 1);

-- As in migration 028; the rows without a body are found from the lowest one.
CREATE OR REPLACE FUNCTION sbemu_catch_up(p_sub bigint) RETURNS bigint LANGUAGE plpgsql
    SET enable_seqscan = off AS $$
DECLARE
    c sbemu_cursors;
    low bigint;
    top bigint;
    n bigint;
BEGIN
    SELECT * INTO c FROM sbemu_cursors WHERE entity_id = p_sub;
    IF NOT FOUND THEN
        RETURN 0;
    END IF;
    low := sbemu_log_held(p_sub);
    IF low IS NOT NULL THEN
        -- (joined to topic_log instead, the generic plan read the topic's
        -- whole log for each row: EXPLAIN with statistics of an empty log)
        UPDATE messages m SET message = sbemu_log_body(m.entity_id, m.sequence_number), body_bytes = NULL
         WHERE m.entity_id = p_sub AND m.subqueue >= 0 AND m.subqueue <= 0 AND m.state = 0
           AND m.sequence_number >= low AND m.message IS NULL;
    END IF;
    SELECT max(sequence_number) INTO top FROM topic_log WHERE topic_id = c.topic_id;
    IF top IS NULL OR top <= c.position THEN
        RETURN 0;
    END IF;
    SELECT * INTO c FROM sbemu_cursors WHERE entity_id = p_sub FOR UPDATE;
    INSERT INTO messages (entity_id, sequence_number, subqueue, state, enqueued_at, available_at, expires_at,
                          time_to_live_ms, message_id, session_id, message)
        SELECT p_sub, l.sequence_number, 0, 0, l.enqueued_at, l.available_at, l.expires_at, l.time_to_live_ms,
               l.message_id, l.session_id, l.message
          FROM topic_log l
         WHERE l.topic_id = c.topic_id AND l.sequence_number > c.position AND l.sequence_number <= top
           AND p_sub = ANY(l.subs);
    GET DIAGNOSTICS n = ROW_COUNT;
    UPDATE sbemu_cursors SET position = top WHERE entity_id = p_sub AND position < top;
    RETURN n;
END $$;

-- As in migration 028; the cut stops below sbemu_log_held of each subscription.
CREATE OR REPLACE FUNCTION sbemu_log_sweep(p_now timestamptz) RETURNS bigint LANGUAGE plpgsql
    SET enable_seqscan = off AS $$
DECLARE
    sub bigint;
    n bigint;
BEGIN
    FOR sub IN SELECT DISTINCT c.entity_id FROM topic_log l JOIN sbemu_cursors c ON c.topic_id = l.topic_id
                AND l.sequence_number > c.position AND c.entity_id = ANY(l.subs)
                WHERE l.expires_at IS NOT NULL AND l.expires_at <= p_now LOOP
        PERFORM sbemu_catch_up(sub);
    END LOOP;
    UPDATE sbemu_cursors c SET position = v.p
      FROM (SELECT c2.entity_id, coalesce(
                   (SELECT l.sequence_number - 1 FROM topic_log l WHERE l.topic_id = c2.topic_id
                       AND l.sequence_number > c2.position AND c2.entity_id = ANY(l.subs)
                     ORDER BY l.topic_id, l.sequence_number LIMIT 1),
                   (SELECT l.sequence_number FROM topic_log l WHERE l.topic_id = c2.topic_id
                     ORDER BY l.topic_id DESC, l.sequence_number DESC LIMIT 1)) AS p
              FROM sbemu_cursors c2) v
     WHERE c.entity_id = v.entity_id AND v.p > c.position;
    DELETE FROM topic_log l
     USING (SELECT c.topic_id, least(min(c.position), min(sbemu_log_held(c.entity_id) - 1)) AS low
              FROM sbemu_cursors c GROUP BY c.topic_id) c
     WHERE l.topic_id = c.topic_id AND l.sequence_number <= c.low;
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END $$;
