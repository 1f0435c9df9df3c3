-- sbemu schema, version 18: a topic stores a plain message once.
--
-- Until now every copy of a published message was a messages row of its own:
-- a topic with 5 matching subscriptions wrote 5 rows, each with its index
-- entries and its body's WAL, and fan-out cost grew with the subscriptions.
-- Now the copies that differ in nothing but their subscription (no rule
-- action changed them, no session is required, not forwarded nor dead-
-- lettered, not scheduled: entities/ent_topic.c decides) are ONE topic_log
-- row, with the subscriptions it was routed to in `subs`.
--
-- Each subscription keeps a cursor (sbemu_cursors.position): every log entry
-- at or below it is no longer the subscription's. Entries above it that name
-- the subscription are its messages, not yet taken:
--   - a peek-lock claim moves them into messages, locked, in the statement
--     that locks them (sql/store_statements.c, the *_LOG claims);
--   - a receive-and-delete claim reads them and moves the cursor: nothing is
--     written per message;
--   - anything else that reads a subscription's messages (peek, the
--     dashboard, purge, snapshots) first moves them all into messages as
--     ready rows (sbemu_catch_up), so those statements need not know the log;
--   - counts add sbemu_log_pending.
-- Copies are still counted in each subscription's size_in_bytes at publish,
-- so quotas and sizes do not change.
--
-- Why a cursor is safe: publishers of one topic hold its entity_runtime row
-- (FOR UPDATE) from reserving their sequence numbers until they commit, so
-- log entries become visible in sequence order: a snapshot that sees entry N
-- sees every entry below it. A claim that read the log up to N can move the
-- cursor to N without skipping anything that commits later.
--
-- The log is cut below the lowest cursor of its topic by the sweep
-- (sbemu_log_sweep), which also moves expired entries into messages where the
-- sweep's expiry (dead-lettering or deleting them) applies as before.

CREATE TABLE topic_log (
    topic_id            bigint NOT NULL,
    sequence_number     bigint NOT NULL,        -- the topic's, as every copy's
    subs                bigint[] NOT NULL,      -- the subscriptions it was routed to
    enqueued_at         timestamptz NOT NULL,
    available_at        timestamptz NOT NULL,
    expires_at          timestamptz,            -- every copy's (copies that would differ are not logged)
    time_to_live_ms     bigint,
    message_id          text,
    session_id          text,
    message             bytea NOT NULL,
    PRIMARY KEY (topic_id, sequence_number)
);
CREATE INDEX topic_log_expiry ON topic_log (expires_at) WHERE expires_at IS NOT NULL;

CREATE TABLE sbemu_cursors (
    entity_id   bigint PRIMARY KEY,             -- the subscription
    topic_id    bigint NOT NULL,                -- its subscription's topic (which never changes), so a claim reads one row
    position    bigint NOT NULL                 -- the highest log entry no longer pending for it
);
CREATE INDEX sbemu_cursors_topic ON sbemu_cursors (topic_id, position);

INSERT INTO sbemu_cursors (entity_id, topic_id, position)
    SELECT s.id, s.topic_id, r.next_sequence_number - 1 FROM subscriptions s JOIN entity_runtime r ON r.entity_id = s.topic_id;

-- A new subscription starts at its topic's end: what was published before it
-- existed is not its own.
CREATE FUNCTION sbemu_cursor_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO sbemu_cursors (entity_id, topic_id, position)
        SELECT a.id, a.topic_id, coalesce(r.next_sequence_number - 1, 0)
          FROM added a LEFT JOIN entity_runtime r ON r.entity_id = a.topic_id;
    RETURN NULL;
END $$;
CREATE TRIGGER subscriptions_cursor_added AFTER INSERT ON subscriptions REFERENCING NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION sbemu_cursor_added();

-- A subscription deleted takes its cursor; a topic left without any takes its
-- log (a topic deleted deletes its subscriptions first, by cascade).
CREATE FUNCTION sbemu_cursor_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM sbemu_cursors WHERE entity_id IN (SELECT id FROM removed);
    DELETE FROM topic_log l WHERE l.topic_id IN (SELECT DISTINCT topic_id FROM removed)
       AND NOT EXISTS (SELECT 1 FROM sbemu_cursors c WHERE c.topic_id = l.topic_id);
    RETURN NULL;
END $$;
CREATE TRIGGER subscriptions_cursor_removed AFTER DELETE ON subscriptions REFERENCING OLD TABLE AS removed
    FOR EACH STATEMENT EXECUTE FUNCTION sbemu_cursor_removed();

-- Moves every log entry pending for subscription p_sub into messages, as
-- ready rows, and its cursor past them. Returns how many. Cheap when none is
-- pending (two index probes): every statement that reads a subscription's
-- messages other than the claims runs it first (store_op_set_catch_up).
CREATE FUNCTION sbemu_catch_up(p_sub bigint) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    c sbemu_cursors;
    top bigint;
    n bigint;
BEGIN
    SELECT * INTO c FROM sbemu_cursors WHERE entity_id = p_sub;
    IF NOT FOUND THEN
        RETURN 0;
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

-- Every subscription of namespace p_ns caught up (a snapshot reads messages).
CREATE FUNCTION sbemu_catch_up_namespace(p_ns text) RETURNS bigint LANGUAGE sql AS $$
    SELECT coalesce(sum(sbemu_catch_up(c.entity_id)), 0)::bigint FROM sbemu_cursors c
     WHERE c.entity_id IN (SELECT x.id FROM sbemu_namespace_entities(sbemu_namespace_id(p_ns)) x);
$$;

-- How many log entries are pending for p_entity, up to p_cap (0 for anything
-- but a subscription). Counted in sequence order from the cursor.
CREATE FUNCTION sbemu_log_pending(p_entity bigint, p_cap bigint) RETURNS bigint LANGUAGE sql STABLE AS $$
    SELECT count(*) FROM (SELECT 1 FROM sbemu_cursors c JOIN topic_log l ON l.topic_id = c.topic_id
      AND l.sequence_number > c.position WHERE c.entity_id = p_entity AND p_entity = ANY(l.subs)
      ORDER BY l.sequence_number LIMIT p_cap) x;
$$;

-- The sweep's share: subscriptions with expired entries pending are caught up
-- (the sweep's expiry then dead-letters or deletes them, as any message's),
-- and each topic's log is cut below its lowest cursor. Returns the entries cut.
CREATE FUNCTION sbemu_log_sweep(p_now timestamptz) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    sub bigint;
    n bigint;
BEGIN
    FOR sub IN SELECT DISTINCT c.entity_id FROM topic_log l JOIN sbemu_cursors c ON c.topic_id = l.topic_id
                AND l.sequence_number > c.position AND c.entity_id = ANY(l.subs)
                WHERE l.expires_at IS NOT NULL AND l.expires_at <= p_now LOOP
        PERFORM sbemu_catch_up(sub);
    END LOOP;
    -- A cursor moves up to the first entry that names its subscription (or
    -- the log's end): one whose filters match nothing, or whose copies are
    -- all rows of their own (a rule action), would otherwise hold its topic's
    -- log forever. The walk stops at that entry, so a subscription with
    -- copies pending costs one index probe.
    UPDATE sbemu_cursors c SET position = v.p
      FROM (SELECT c2.entity_id, coalesce(
                   (SELECT l.sequence_number - 1 FROM topic_log l WHERE l.topic_id = c2.topic_id
                       AND l.sequence_number > c2.position AND c2.entity_id = ANY(l.subs)
                     ORDER BY l.topic_id, l.sequence_number LIMIT 1),
                   (SELECT l.sequence_number FROM topic_log l WHERE l.topic_id = c2.topic_id
                     ORDER BY l.topic_id DESC, l.sequence_number DESC LIMIT 1)) AS p
              FROM sbemu_cursors c2) v
     WHERE c.entity_id = v.entity_id AND v.p > c.position;
    DELETE FROM topic_log l USING (SELECT topic_id, min(position) AS low FROM sbemu_cursors GROUP BY topic_id) c
     WHERE l.topic_id = c.topic_id AND l.sequence_number <= c.low;
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END $$;

-- Snapshots read and replace messages: a save first moves the namespace's
-- pending log entries into messages; a restore (and so a reset) forgets its
-- topics' log along with their messages, only when there is such a snapshot.
CREATE FUNCTION sbemu_snapshot_save_logged(p_ns text, p_name text, p_wall bigint)
    RETURNS TABLE (replaced boolean, created_ms bigint, clock_offset_ms bigint, entities bigint, messages bigint,
                   bytes bigint) LANGUAGE plpgsql AS $$
BEGIN
    PERFORM sbemu_catch_up_namespace(p_ns);
    RETURN QUERY SELECT * FROM sbemu_snapshot_save(p_ns, p_name, p_wall);
END $$;
CREATE FUNCTION sbemu_snapshot_restore_logged(p_ns text, p_name text, p_wall bigint)
    RETURNS TABLE (generation bigint, clock_offset_ms bigint, entities bigint, messages bigint)
    LANGUAGE plpgsql AS $$
BEGIN
    -- (a reset, '$declared', always restores: see sbemu_snapshot_restore)
    IF p_name = '$declared' OR EXISTS (SELECT 1 FROM sbemu_snapshots s WHERE s.namespace = lower(p_ns)
                                       AND s.name = p_name) THEN
        DELETE FROM topic_log l
         WHERE l.topic_id IN (SELECT x.id FROM sbemu_namespace_entities(sbemu_namespace_id(p_ns)) x);
    END IF;
    RETURN QUERY SELECT * FROM sbemu_snapshot_restore(p_ns, p_name, p_wall);
END $$;
