-- sbemu schema, version 28: a subscription's peek-lock leaves the body in its
-- topic's log.
--
-- A peek-lock claim of a subscription moves what it takes from the topic log
-- into messages (migration 018): one INSERT per message, where a queue's
-- claim is one HOT update. The INSERT copied the body, so every message
-- received from a subscription wrote its body twice (publish, then claim):
-- measured on one connection, 20,000 x 1 KiB, the log's claim took 11.8 us
-- a message against 6.2 for a queue's, with 1.4 KB of WAL against 0.17, and
-- a subscription received at 0.67-0.80 of a queue's rate.
--
-- Now the row a claim inserts has no body (message NULL) and says how large
-- it is (body_bytes): the claim hands the log's body to the receiver, and a
-- complete deletes a narrow row. Such a row is always locked, first delivery:
-- whatever takes its lock away fetches the body from the log first
-- (sbemu_log_body), in the same statement:
--   - an abandon, defer, dead-letter or release (STMT_SETTLE_SET,
--     sbemu_dead_letter, sbemu_unlock: the sweep's lapsed locks and expiry
--     too);
--   - properties-to-modify reads and rewrites it (STMT_MGMT_READ_LOCKED,
--     STMT_MGMT_REPLACE_LOCKED);
--   - anything else that reads a subscription's messages catches it up first
--     (sbemu_catch_up, below, for peek, purge, the dashboard, snapshots).
-- messages_body_kept guards it: a row without its body must be locked, so a
-- path that forgot fails with that constraint's name instead of losing a
-- body.
--
-- The log keeps an entry while a row without a body names it: the sweep's cut
-- stops below the lowest such row of each subscription (messages_bodiless,
-- which holds only rows in flight from a log, is how it finds them).

ALTER TABLE messages ALTER COLUMN message DROP NOT NULL;
ALTER TABLE messages ADD COLUMN body_bytes integer;  -- a row without its body: the body's size
ALTER TABLE messages ADD CONSTRAINT messages_body_kept
    CHECK (message IS NOT NULL OR (lock_token IS NOT NULL AND body_bytes IS NOT NULL));
CREATE INDEX messages_bodiless ON messages (entity_id, sequence_number) WHERE message IS NULL;
-- a snapshot keeps every column of messages (migration 011; a save catches
-- its subscriptions up first, so what it keeps has its bodies)
ALTER TABLE sbemu_snapshot_messages ALTER COLUMN message DROP NOT NULL;
ALTER TABLE sbemu_snapshot_messages ADD COLUMN body_bytes integer;

-- The functions below that look for rows without a body, or for log entries,
-- run with enable_seqscan off: with the statistics of a drained messages
-- table (no live row on many pages: migration 026), or of a log that was
-- nearly empty, a generic plan scanned the whole table for what
-- messages_bodiless or a primary key finds at once (EXPLAIN of their
-- statements as generic plans).

-- The body of subscription p_sub's message p_seq, from its topic's log; raises
-- (SBB01) when the log no longer holds it, which the cut above must prevent.
CREATE FUNCTION sbemu_log_body(p_sub bigint, p_seq bigint) RETURNS bytea LANGUAGE plpgsql STABLE
    SET enable_seqscan = off AS $$
DECLARE
    body bytea;
BEGIN
    SELECT l.message INTO body FROM sbemu_cursors c JOIN topic_log l ON l.topic_id = c.topic_id
     WHERE c.entity_id = p_sub AND l.sequence_number = p_seq;
    IF body IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'SBB01',
            MESSAGE = format('The body of message %s of entity %s is gone from its topic''s log.', p_seq, p_sub);
    END IF;
    RETURN body;
END $$;

CREATE OR REPLACE FUNCTION sbemu_unlock(p_entity bigint, p_seq bigint, p_now timestamptz) RETURNS boolean
    LANGUAGE plpgsql AS $$
BEGIN
    UPDATE messages SET lock_token = NULL, locked_until = NULL,
           message = coalesce(message, sbemu_log_body(entity_id, sequence_number)), body_bytes = NULL
     WHERE entity_id = p_entity AND sequence_number = p_seq;
    RETURN FOUND;
END $$;

-- sbemu_settle (migration 005) settled one row per call; STMT_SETTLE_SET
-- does every settlement of a commit in one statement and nothing calls it
-- any more: dropped rather than taught about rows without a body.
DROP FUNCTION sbemu_settle(bigint, bigint, bigint, boolean, bigint, text, text, timestamptz);

CREATE OR REPLACE FUNCTION sbemu_dead_letter(p_entity bigint, p_seq bigint, p_target bigint, p_reason text,
                                             p_description text, p_now timestamptz) RETURNS boolean
    LANGUAGE plpgsql AS $$
DECLARE
    seq bigint;
    bytes bigint;
BEGIN
    IF p_target IS NOT NULL AND p_target <> p_entity THEN
        UPDATE entity_runtime SET next_sequence_number = next_sequence_number + 1 WHERE entity_id = p_target
            RETURNING next_sequence_number - 1 INTO seq;
    END IF;
    IF seq IS NULL THEN
        UPDATE messages SET subqueue = 1, state = 0, lock_token = NULL, locked_until = NULL, available_at = p_now,
               dead_letter_reason = p_reason, dead_letter_error_description = p_description,
               message = coalesce(message, sbemu_log_body(entity_id, sequence_number)), body_bytes = NULL
         WHERE entity_id = p_entity AND sequence_number = p_seq;
        RETURN FOUND;
    END IF;
    -- (SET reads the row as it was: the body comes from the source's log)
    UPDATE messages SET entity_id = p_target, sequence_number = seq, subqueue = 0, state = 0, lock_token = NULL,
           locked_until = NULL, available_at = p_now, expires_at = NULL, dead_letter_reason = p_reason,
           dead_letter_error_description = p_description,
           dead_letter_source = (SELECT path FROM entities WHERE id = p_entity),
           message = coalesce(message, sbemu_log_body(entity_id, sequence_number)), body_bytes = NULL
     WHERE entity_id = p_entity AND sequence_number = p_seq
     RETURNING octet_length(message) INTO bytes;
    UPDATE entity_runtime SET size_in_bytes = size_in_bytes - bytes WHERE entity_id = p_entity;
    UPDATE entity_runtime SET size_in_bytes = size_in_bytes + bytes WHERE entity_id = p_target;
    RETURN bytes IS NOT NULL;
END $$;

CREATE OR REPLACE FUNCTION sbemu_delete_message(p_entity bigint, p_seq bigint) RETURNS boolean
    LANGUAGE plpgsql AS $$
DECLARE
    bytes bigint;
BEGIN
    DELETE FROM messages WHERE entity_id = p_entity AND sequence_number = p_seq
        RETURNING coalesce(octet_length(message), body_bytes) INTO bytes;
    UPDATE entity_runtime SET size_in_bytes = size_in_bytes - bytes WHERE entity_id = p_entity AND bytes IS NOT NULL;
    RETURN bytes IS NOT NULL;
END $$;

-- As in migration 018, and first the bodies of the subscription's rows in
-- flight: whoever reads its messages next (peek, a snapshot, the dashboard)
-- reads rows, not the log. Two index probes when none is.
CREATE OR REPLACE FUNCTION sbemu_catch_up(p_sub bigint) RETURNS bigint LANGUAGE plpgsql
    SET enable_seqscan = off AS $$
DECLARE
    c sbemu_cursors;
    top bigint;
    n bigint;
BEGIN
    SELECT * INTO c FROM sbemu_cursors WHERE entity_id = p_sub;
    IF NOT FOUND THEN
        RETURN 0;
    END IF;
    UPDATE messages m SET message = l.message, body_bytes = NULL FROM topic_log l
     WHERE m.entity_id = p_sub AND m.message IS NULL AND l.topic_id = c.topic_id
       AND l.sequence_number = m.sequence_number;
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

-- As in migration 018, but the cut stops below the lowest row of each
-- subscription that still takes its body from the log.
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
     USING (SELECT c.topic_id, least(min(c.position), min(h.held)) AS low FROM sbemu_cursors c
              LEFT JOIN LATERAL (SELECT min(m.sequence_number) - 1 AS held FROM messages m
                                  WHERE m.entity_id = c.entity_id AND m.message IS NULL) h ON true
             GROUP BY c.topic_id) c
     WHERE l.topic_id = c.topic_id AND l.sequence_number <= c.low;
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END $$;
