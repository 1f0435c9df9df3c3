-- sbemu schema, version 11: snapshots of a namespace, and its reset.
--
-- A snapshot is a copy of a namespace's state under a name: every row of
-- queues, topics, subscriptions, rules and entity_runtime (as JSON, one row
-- each), its messages, sessions and duplicate-detection history (in tables
-- shaped like theirs), and its clock's offset. sbemu_snapshot_restore puts a
-- namespace back to one in a single transaction; a reset is the restore of
-- the snapshot '$declared', which every emulator writes at start from what
-- its Config.json declared (entities and rules only: no messages, the clock
-- at real time). Snapshot names are the emulator's to check
-- (entities/ent_snapshot.h): none a user can give starts with '$'.
--
-- namespace is '' for the default namespace, the only one so far; every
-- function takes it so that namespaces can scope what it touches later. Today
-- every row of the entity and message tables is the default namespace's.
--
-- Rows are copied column by column as the live tables have them, found in the
-- catalog (sbemu_column_list), so a column added to an entity table later is
-- snapshotted with no change here; a column added to messages, sessions or
-- duplicate_detection must be added to its sbemu_snapshot_ table too (the
-- save then fails naming it; tests/unit/test_store_snapshot.c checks that the
-- tables agree).
--
-- What a restore keeps and drops (the C callers rely on it):
--  - entities are matched by id: one that is in the snapshot and still
--    exists keeps its row (updated in place only when it differs), so links
--    attached to it stay attached; the others are deleted or inserted with the
--    snapshot's id (ids come from one sequence and are never reused, so a
--    snapshot's id is free unless it is the same entity);
--  - every current message, session and MessageId is deleted, and the
--    snapshot's inserted; messages come back unlocked (lock_token and
--    locked_until are not saved) with their delivery counts, and messages
--    scheduled in a transaction that had not committed (state 3) are not
--    saved;
--  - sequence numbers never go back: each entity's next_sequence_number is
--    the larger of the snapshot's and the current one, so no number handed
--    out since the snapshot (to a message a client may still hold, by its
--    sequence number or its lock) is handed out again; restored messages keep
--    theirs, all below the snapshot's next number;
--  - size_in_bytes is counted again from the restored messages, accessed_at
--    is the snapshot's (a reset: now, on the reset clock);
--  - the clock's offset is the snapshot's (a reset: 0, real time);
--  - one NOTIFY on sbemu_reset ('<generation> <clock offset ms>') tells every
--    emulator to make what it holds in memory agree (amqp10/broker/
--    broker_reset.c); the entity tables' own triggers NOTIFY sbemu_entities.

CREATE TABLE sbemu_snapshots (
    namespace       text NOT NULL,
    name            text NOT NULL,
    created_at      timestamptz NOT NULL,
    clock_offset_ms bigint NOT NULL DEFAULT 0,
    entities        bigint NOT NULL DEFAULT 0,   -- queues, topics and subscriptions
    messages        bigint NOT NULL DEFAULT 0,
    bytes           bigint NOT NULL DEFAULT 0,   -- message bodies, session states and entity rows
    PRIMARY KEY (namespace, name)
);

-- One row of queues, topics, subscriptions, rules or entity_runtime (kind:
-- the table's name; id: the row's id, or entity_id for entity_runtime).
CREATE TABLE sbemu_snapshot_entities (
    namespace   text NOT NULL,
    snapshot    text NOT NULL,
    kind        text NOT NULL CHECK (kind IN ('queues', 'topics', 'subscriptions', 'rules', 'entity_runtime')),
    id          bigint NOT NULL,
    row         jsonb NOT NULL,
    PRIMARY KEY (namespace, snapshot, kind, id),
    FOREIGN KEY (namespace, snapshot) REFERENCES sbemu_snapshots (namespace, name) ON DELETE CASCADE
);

CREATE TABLE sbemu_snapshot_messages (
    namespace   text NOT NULL,
    snapshot    text NOT NULL,
    LIKE messages,
    PRIMARY KEY (namespace, snapshot, entity_id, sequence_number),
    FOREIGN KEY (namespace, snapshot) REFERENCES sbemu_snapshots (namespace, name) ON DELETE CASCADE
);
-- as messages: bodies stored as sent (compressing them cost more than it saved)
ALTER TABLE sbemu_snapshot_messages ALTER COLUMN message SET STORAGE EXTERNAL;

CREATE TABLE sbemu_snapshot_sessions (
    namespace   text NOT NULL,
    snapshot    text NOT NULL,
    LIKE sessions,
    PRIMARY KEY (namespace, snapshot, entity_id, session_id),
    FOREIGN KEY (namespace, snapshot) REFERENCES sbemu_snapshots (namespace, name) ON DELETE CASCADE
);

CREATE TABLE sbemu_snapshot_duplicates (
    namespace   text NOT NULL,
    snapshot    text NOT NULL,
    LIKE duplicate_detection,
    PRIMARY KEY (namespace, snapshot, entity_id, message_id),
    FOREIGN KEY (namespace, snapshot) REFERENCES sbemu_snapshots (namespace, name) ON DELETE CASCADE
);

-- A table's columns in their order, each as `prefix.column`, or as the
-- expression p_as gives for it ({"lock_token": "NULL"}), without those in
-- p_skip: the lists the dynamic statements below are made of.
CREATE FUNCTION sbemu_column_list(p_table regclass, p_prefix text DEFAULT NULL, p_skip text[] DEFAULT '{}',
                                  p_as jsonb DEFAULT '{}') RETURNS text
    LANGUAGE sql STABLE
    RETURN (SELECT string_agg(coalesce(p_as ->> attname, coalesce(p_prefix || '.', '') || quote_ident(attname)),
                              ', ' ORDER BY attnum)
              FROM pg_attribute
             WHERE attrelid = p_table AND attnum > 0 AND NOT attisdropped AND attname <> ALL (p_skip));

-- Saves (or replaces) snapshot p_name of namespace p_ns, taken at p_created_ms
-- (the wall clock). Answers whether one of that name was replaced and what
-- the new one holds.
CREATE FUNCTION sbemu_snapshot_save(p_ns text, p_name text, p_created_ms bigint)
    RETURNS TABLE (replaced boolean, created_ms bigint, clock_offset_ms bigint, entities bigint, messages bigint,
                   bytes bigint)
    LANGUAGE plpgsql AS $$
DECLARE
    existed boolean;
    t text;
    n_entities bigint;
    n_messages bigint;
    n_bytes bigint;
BEGIN
    -- one save, restore or declaration at a time (they read and write the same rows)
    PERFORM pg_advisory_xact_lock(hashtext('sbemu snapshots'));
    DELETE FROM sbemu_snapshots s WHERE s.namespace = p_ns AND s.name = p_name;
    existed := FOUND;
    INSERT INTO sbemu_snapshots (namespace, name, created_at, clock_offset_ms)
        VALUES (p_ns, p_name, sbemu_ts(p_created_ms), (SELECT c.offset_ms FROM sbemu_clock c));
    FOREACH t IN ARRAY ARRAY['queues', 'topics', 'subscriptions', 'rules'] LOOP
        EXECUTE format('INSERT INTO sbemu_snapshot_entities SELECT $1, $2, %L, x.id, to_jsonb(x) FROM %I x', t, t)
            USING p_ns, p_name;
    END LOOP;
    INSERT INTO sbemu_snapshot_entities
        SELECT p_ns, p_name, 'entity_runtime', r.entity_id, to_jsonb(r) FROM entity_runtime r;
    -- locks are not kept: a restored message or session is free
    EXECUTE format('INSERT INTO sbemu_snapshot_messages (namespace, snapshot, %s) SELECT $1, $2, %s FROM messages m'
                   ' WHERE m.state <> 3',
                   sbemu_column_list('messages'),
                   sbemu_column_list('messages', 'm', '{}', '{"lock_token": "NULL", "locked_until": "NULL"}'))
        USING p_ns, p_name;
    EXECUTE format('INSERT INTO sbemu_snapshot_sessions (namespace, snapshot, %s) SELECT $1, $2, %s FROM sessions s'
                   ' WHERE s.state IS NOT NULL',
                   sbemu_column_list('sessions'),
                   sbemu_column_list('sessions', 's', '{}', '{"lock_token": "NULL", "locked_until": "NULL"}'))
        USING p_ns, p_name;
    EXECUTE format('INSERT INTO sbemu_snapshot_duplicates (namespace, snapshot, %s) SELECT $1, $2, %s'
                   ' FROM duplicate_detection',
                   sbemu_column_list('duplicate_detection'), sbemu_column_list('duplicate_detection'))
        USING p_ns, p_name;
    SELECT count(*) FILTER (WHERE e.kind IN ('queues', 'topics', 'subscriptions')), coalesce(sum(pg_column_size(e.row)), 0)
      INTO n_entities, n_bytes
      FROM sbemu_snapshot_entities e WHERE e.namespace = p_ns AND e.snapshot = p_name;
    SELECT count(*), n_bytes + coalesce(sum(octet_length(m.message)), 0) INTO n_messages, n_bytes
      FROM sbemu_snapshot_messages m WHERE m.namespace = p_ns AND m.snapshot = p_name;
    SELECT n_bytes + coalesce(sum(octet_length(s.state)), 0) INTO n_bytes
      FROM sbemu_snapshot_sessions s WHERE s.namespace = p_ns AND s.snapshot = p_name;
    UPDATE sbemu_snapshots s SET entities = n_entities, messages = n_messages, bytes = n_bytes
     WHERE s.namespace = p_ns AND s.name = p_name;
    RETURN QUERY SELECT existed, p_created_ms, s.clock_offset_ms, n_entities, n_messages, n_bytes
                   FROM sbemu_snapshots s WHERE s.namespace = p_ns AND s.name = p_name;
END $$;

-- Records what a Config.json declared as the snapshot '$declared' of p_ns (a
-- reset's target), in the transaction that upserted it at start: the rows of
-- the declared queues, topics and subscriptions as they are now, and their
-- declared rules: the rules the file names, or, for a subscription it gives
-- none, $Default as a TrueFilter (the rule Service Bus gives it). No
-- messages, no runtime rows (a reset starts each entity empty, active now),
-- the clock at real time. p_declared:
-- {"queues": [name], "topics": [name], "subscriptions": [[topic, name]],
--  "rules": [[topic, subscription, name]]}; names match in any letter case.
CREATE FUNCTION sbemu_snapshot_declare(p_ns text, p_declared jsonb, p_created_ms bigint) RETURNS bigint
    LANGUAGE plpgsql AS $$
DECLARE
    n bigint;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('sbemu snapshots'));
    DELETE FROM sbemu_snapshots s WHERE s.namespace = p_ns AND s.name = '$declared';
    INSERT INTO sbemu_snapshots (namespace, name, created_at, clock_offset_ms)
        VALUES (p_ns, '$declared', sbemu_ts(p_created_ms), 0);
    INSERT INTO sbemu_snapshot_entities
        SELECT p_ns, '$declared', 'queues', q.id, to_jsonb(q) FROM queues q
         WHERE lower(q.name) IN (SELECT lower(v) FROM jsonb_array_elements_text(p_declared -> 'queues') v);
    INSERT INTO sbemu_snapshot_entities
        SELECT p_ns, '$declared', 'topics', t.id, to_jsonb(t) FROM topics t
         WHERE lower(t.name) IN (SELECT lower(v) FROM jsonb_array_elements_text(p_declared -> 'topics') v);
    CREATE TEMP TABLE sbemu_declared_subs ON COMMIT DROP AS
        SELECT s.*, t.name AS topic_name FROM subscriptions s JOIN topics t ON t.id = s.topic_id
         WHERE (lower(t.name), lower(s.name)) IN (SELECT lower(e ->> 0), lower(e ->> 1)
                                                    FROM jsonb_array_elements(p_declared -> 'subscriptions') e);
    INSERT INTO sbemu_snapshot_entities
        SELECT p_ns, '$declared', 'subscriptions', s.id, to_jsonb(s) FROM subscriptions s
         WHERE s.id IN (SELECT d.id FROM sbemu_declared_subs d);
    -- the rules the file names
    INSERT INTO sbemu_snapshot_entities
        SELECT p_ns, '$declared', 'rules', r.id, to_jsonb(r) FROM rules r JOIN sbemu_declared_subs d ON d.id = r.subscription_id
         WHERE (lower(d.topic_name), lower(d.name), lower(r.name)) IN
               (SELECT lower(e ->> 0), lower(e ->> 1), lower(e ->> 2) FROM jsonb_array_elements(p_declared -> 'rules') e);
    -- $Default for the subscriptions it gives none: the row they have (made a
    -- TrueFilter again, should it have been changed), or a new one
    INSERT INTO sbemu_snapshot_entities
        SELECT p_ns, '$declared', 'rules', x.id, x.row FROM (
            SELECT coalesce(r.id, nextval(pg_get_serial_sequence('rules', 'id'))) AS id,
                   coalesce(to_jsonb(r), jsonb_build_object('subscription_id', d.id, 'name', '$Default',
                                                            'created_at', sbemu_ts(p_created_ms)))
                   || jsonb_build_object('filter_type', 'True', 'sql_expression', NULL, 'correlation', NULL,
                                         'action_expression', NULL, 'filter_parameters', NULL,
                                         'action_parameters', NULL) AS row
              FROM sbemu_declared_subs d
              LEFT JOIN rules r ON r.subscription_id = d.id AND r.name = '$Default'
             WHERE NOT EXISTS (SELECT 1 FROM jsonb_array_elements(p_declared -> 'rules') e
                                WHERE lower(e ->> 0) = lower(d.topic_name) AND lower(e ->> 1) = lower(d.name))) x;
    UPDATE sbemu_snapshot_entities e SET row = e.row || jsonb_build_object('id', e.id)
     WHERE e.namespace = p_ns AND e.snapshot = '$declared' AND e.kind = 'rules' AND NOT e.row ? 'id';
    SELECT count(*) INTO n FROM sbemu_snapshot_entities e
     WHERE e.namespace = p_ns AND e.snapshot = '$declared' AND e.kind <> 'rules';
    UPDATE sbemu_snapshots s SET entities = n WHERE s.namespace = p_ns AND s.name = '$declared';
    RETURN n;
END $$;

-- Replaces namespace p_ns's state with snapshot p_name's (see the top of
-- this file), at p_wall_ms (the wall clock). No row when there is no such
-- snapshot (nothing is changed); else the NOTIFY's generation (this
-- transaction's id), the clock offset now in force and what was restored.
CREATE FUNCTION sbemu_snapshot_restore(p_ns text, p_name text, p_wall_ms bigint)
    RETURNS TABLE (generation bigint, clock_offset_ms bigint, entities bigint, messages bigint)
    LANGUAGE plpgsql AS $$
DECLARE
    snap sbemu_snapshots;
    t text;
    now_ts timestamptz;
    n_messages bigint;
    gen bigint;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('sbemu snapshots'));
    SELECT * INTO snap FROM sbemu_snapshots s WHERE s.namespace = p_ns AND s.name = p_name;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    now_ts := sbemu_ts(p_wall_ms + snap.clock_offset_ms);

    -- Rows in the order the message path locks them (a claim or settlement:
    -- messages, then the runtime row; a send: the runtime row, then the
    -- duplicate window), so that a reset beside traffic waits instead of
    -- deadlocking.
    DELETE FROM messages;
    PERFORM 1 FROM entity_runtime ORDER BY entity_id FOR UPDATE;
    DELETE FROM duplicate_detection;
    DELETE FROM sessions;

    -- Entities, by id: those the snapshot lacks go (their runtime rows with
    -- them, by trigger), the snapshot's are updated where they differ or
    -- inserted where missing.
    DELETE FROM subscriptions x WHERE NOT EXISTS (SELECT 1 FROM sbemu_snapshot_entities s
        WHERE s.namespace = p_ns AND s.snapshot = p_name AND s.kind = 'subscriptions' AND s.id = x.id);
    DELETE FROM topics x WHERE NOT EXISTS (SELECT 1 FROM sbemu_snapshot_entities s
        WHERE s.namespace = p_ns AND s.snapshot = p_name AND s.kind = 'topics' AND s.id = x.id);
    DELETE FROM queues x WHERE NOT EXISTS (SELECT 1 FROM sbemu_snapshot_entities s
        WHERE s.namespace = p_ns AND s.snapshot = p_name AND s.kind = 'queues' AND s.id = x.id);
    FOREACH t IN ARRAY ARRAY['topics', 'queues', 'subscriptions'] LOOP
        EXECUTE format('UPDATE %1$I t SET (%2$s) = (SELECT %3$s FROM jsonb_populate_record(NULL::%1$I, s.row) x)'
                       ' FROM sbemu_snapshot_entities s WHERE s.namespace = $1 AND s.snapshot = $2'
                       ' AND s.kind = %1$L AND s.id = t.id AND to_jsonb(t) <> s.row',
                       t, sbemu_column_list(t::regclass, NULL, '{id}'), sbemu_column_list(t::regclass, 'x', '{id}'))
            USING p_ns, p_name;
        EXECUTE format('INSERT INTO %1$I (%2$s) SELECT %3$s FROM sbemu_snapshot_entities s'
                       ' CROSS JOIN LATERAL jsonb_populate_record(NULL::%1$I, s.row) x'
                       ' WHERE s.namespace = $1 AND s.snapshot = $2 AND s.kind = %1$L'
                       ' AND NOT EXISTS (SELECT 1 FROM %1$I t WHERE t.id = s.id)',
                       t, sbemu_column_list(t::regclass), sbemu_column_list(t::regclass, 'x'))
            USING p_ns, p_name;
    END LOOP;
    -- Rules, as one set: left alone when they are the snapshot's already
    -- (a new subscription's trigger-made $Default makes them differ).
    IF (SELECT coalesce(jsonb_agg(to_jsonb(r) ORDER BY r.id), '[]') FROM rules r)
       IS DISTINCT FROM (SELECT coalesce(jsonb_agg(s.row ORDER BY s.id), '[]') FROM sbemu_snapshot_entities s
                          WHERE s.namespace = p_ns AND s.snapshot = p_name AND s.kind = 'rules') THEN
        DELETE FROM rules;
        EXECUTE format('INSERT INTO rules (%s) OVERRIDING SYSTEM VALUE SELECT %s FROM sbemu_snapshot_entities s'
                       ' CROSS JOIN LATERAL jsonb_populate_record(NULL::rules, s.row) x'
                       ' WHERE s.namespace = $1 AND s.snapshot = $2 AND s.kind = ''rules''',
                       sbemu_column_list('rules'), sbemu_column_list('rules', 'x'))
            USING p_ns, p_name;
    END IF;

    -- Runtime: sequence numbers never go back; sizes are counted below.
    UPDATE entity_runtime r SET size_in_bytes = 0,
           next_sequence_number = greatest(r.next_sequence_number, coalesce((s.row ->> 'next_sequence_number')::bigint, 1)),
           accessed_at = coalesce((s.row ->> 'accessed_at')::timestamptz, now_ts)
      FROM entity_runtime r0 LEFT JOIN sbemu_snapshot_entities s ON s.namespace = p_ns AND s.snapshot = p_name
           AND s.kind = 'entity_runtime' AND s.id = r0.entity_id
     WHERE r.entity_id = r0.entity_id;

    EXECUTE format('INSERT INTO messages (%1$s) SELECT %1$s FROM sbemu_snapshot_messages'
                   ' WHERE namespace = $1 AND snapshot = $2', sbemu_column_list('messages'))
        USING p_ns, p_name;
    GET DIAGNOSTICS n_messages = ROW_COUNT;
    EXECUTE format('INSERT INTO sessions (%1$s) SELECT %1$s FROM sbemu_snapshot_sessions'
                   ' WHERE namespace = $1 AND snapshot = $2', sbemu_column_list('sessions'))
        USING p_ns, p_name;
    EXECUTE format('INSERT INTO duplicate_detection (%1$s) SELECT %1$s FROM sbemu_snapshot_duplicates'
                   ' WHERE namespace = $1 AND snapshot = $2', sbemu_column_list('duplicate_detection'))
        USING p_ns, p_name;
    IF n_messages > 0 THEN
        UPDATE entity_runtime r SET size_in_bytes = x.n
          FROM (SELECT m.entity_id, sum(octet_length(m.message)) AS n FROM messages m GROUP BY m.entity_id) x
         WHERE r.entity_id = x.entity_id;
    END IF;

    UPDATE sbemu_clock SET offset_ms = snap.clock_offset_ms;
    gen := txid_current();
    PERFORM pg_notify('sbemu_reset', gen || ' ' || snap.clock_offset_ms);
    RETURN QUERY SELECT gen, snap.clock_offset_ms, snap.entities, n_messages;
END $$;
