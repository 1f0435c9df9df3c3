-- sbemu schema, version 5: what the set-based store needs.
--
-- 1. One id space. Queues, topics and subscriptions take their ids from one
--    sequence, so messages, sequence numbers, sizes and wake-ups speak of an
--    "entity id" whatever the entity is (queues and subscriptions hold
--    messages; topics only route, but own sequence numbers and a duplicate
--    window).
-- 2. Runtime state apart from definitions. next_sequence_number, size_in_bytes
--    and accessed_at move from the entity tables to entity_runtime, one row per
--    entity, updated once per entity per commit. The entity tables keep their
--    change trigger (sbemu_entities) for what users and the management plane
--    change; message traffic never touches them, so it fires no trigger.
-- 3. The claimable set apart from the in-flight set. messages_ready holds only
--    active messages nobody holds a lock on, so a claim never steps over locked
--    ones; messages_held holds the rest (locked, deferred, scheduled), and a
--    peek merges the two.

CREATE SEQUENCE entity_ids;
SELECT setval('entity_ids', greatest((SELECT max(id) FROM queues), 0) + 1, false);

-- Topics and subscriptions hold no messages before this version: renumber them
-- into the shared space (rules and subscriptions follow through ON UPDATE CASCADE).
ALTER TABLE subscriptions DROP CONSTRAINT subscriptions_topic_id_fkey,
    ADD CONSTRAINT subscriptions_topic_id_fkey FOREIGN KEY (topic_id) REFERENCES topics (id)
        ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE rules DROP CONSTRAINT rules_subscription_id_fkey,
    ADD CONSTRAINT rules_subscription_id_fkey FOREIGN KEY (subscription_id) REFERENCES subscriptions (id)
        ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE queues ALTER COLUMN id DROP IDENTITY;
ALTER TABLE topics ALTER COLUMN id DROP IDENTITY;
ALTER TABLE subscriptions ALTER COLUMN id DROP IDENTITY;
UPDATE topics SET id = nextval('entity_ids');
UPDATE subscriptions SET id = nextval('entity_ids');
ALTER TABLE queues ALTER COLUMN id SET DEFAULT nextval('entity_ids');
ALTER TABLE topics ALTER COLUMN id SET DEFAULT nextval('entity_ids');
ALTER TABLE subscriptions ALTER COLUMN id SET DEFAULT nextval('entity_ids');
ALTER SEQUENCE entity_ids OWNED BY NONE;

-- The runtime state of every entity. Rows come and go with their entity.
CREATE TABLE entity_runtime (
    entity_id               bigint PRIMARY KEY,
    next_sequence_number    bigint NOT NULL DEFAULT 1,
    size_in_bytes           bigint NOT NULL DEFAULT 0,   -- bytes held (both subqueues): MaxSizeInMegabytes
    accessed_at             timestamptz NOT NULL DEFAULT now()  -- last send or receive: AutoDeleteOnIdle
);
INSERT INTO entity_runtime SELECT id, next_sequence_number, size_in_bytes, accessed_at FROM queues;
INSERT INTO entity_runtime SELECT id, next_sequence_number, 0, accessed_at FROM topics;
INSERT INTO entity_runtime SELECT id, 1, 0, accessed_at FROM subscriptions;
ALTER TABLE queues DROP COLUMN next_sequence_number, DROP COLUMN size_in_bytes, DROP COLUMN accessed_at;
ALTER TABLE topics DROP COLUMN next_sequence_number, DROP COLUMN accessed_at;
ALTER TABLE subscriptions DROP COLUMN accessed_at;

CREATE FUNCTION sbemu_runtime_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO entity_runtime (entity_id) SELECT id FROM added;
    RETURN NULL;
END $$;
CREATE FUNCTION sbemu_runtime_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM entity_runtime WHERE entity_id IN (SELECT id FROM removed);
    RETURN NULL;
END $$;
CREATE TRIGGER queues_runtime_added AFTER INSERT ON queues REFERENCING NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION sbemu_runtime_added();
CREATE TRIGGER queues_runtime_removed AFTER DELETE ON queues REFERENCING OLD TABLE AS removed
    FOR EACH STATEMENT EXECUTE FUNCTION sbemu_runtime_removed();
CREATE TRIGGER topics_runtime_added AFTER INSERT ON topics REFERENCING NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION sbemu_runtime_added();
CREATE TRIGGER topics_runtime_removed AFTER DELETE ON topics REFERENCING OLD TABLE AS removed
    FOR EACH STATEMENT EXECUTE FUNCTION sbemu_runtime_removed();
CREATE TRIGGER subscriptions_runtime_added AFTER INSERT ON subscriptions REFERENCING NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION sbemu_runtime_added();
CREATE TRIGGER subscriptions_runtime_removed AFTER DELETE ON subscriptions REFERENCING OLD TABLE AS removed
    FOR EACH STATEMENT EXECUTE FUNCTION sbemu_runtime_removed();
-- A subscription deleted with its topic goes through the cascade, which fires
-- the subscriptions trigger too.

-- Messages and MessageIds belong to an entity's runtime row: deleting the
-- entity deletes them.
ALTER TABLE messages RENAME COLUMN queue_id TO entity_id;
ALTER TABLE messages DROP CONSTRAINT messages_queue_id_fkey,
    ADD CONSTRAINT messages_entity_id_fkey FOREIGN KEY (entity_id) REFERENCES entity_runtime (entity_id)
        ON DELETE CASCADE;
ALTER TABLE duplicate_detection RENAME COLUMN queue_id TO entity_id;
ALTER TABLE duplicate_detection DROP CONSTRAINT duplicate_detection_queue_id_fkey,
    ADD CONSTRAINT duplicate_detection_entity_id_fkey FOREIGN KEY (entity_id) REFERENCES entity_runtime (entity_id)
        ON DELETE CASCADE;

-- Messages are inserted and deleted all day. Vacuum once a twentieth of the
-- table is dead (not the default fifth: a 1M backlog would wait for 200k
-- completes before its space is reused), and never for inserts alone: a queue
-- gains nothing from the visibility map, and a vacuum of a large backlog
-- running beside the receivers slowed claims three to eight times (measured:
-- every 5000 completes or 20000 sends was far too often).
-- And it goes gently (10 ms per cost batch, five times the default): at the
-- default, claims beside it ran at a fifth of their speed; with no vacuum at
-- all, they did not slow down. (Truncation stays on: a drained queue's table
-- vacuumed without it keeps its pages with no rows counted, and the planner
-- then believes a burst of sends is an empty table; test_store_plans shows
-- the claim leaving messages_ready for the primary key.)
ALTER TABLE messages SET (autovacuum_vacuum_scale_factor = 0.05, autovacuum_vacuum_threshold = 10000,
    autovacuum_vacuum_insert_threshold = -1, autovacuum_analyze_scale_factor = 0.05,
    autovacuum_vacuum_cost_delay = 10,
    -- large bodies live in the TOAST table, which has settings of its own
    toast.autovacuum_vacuum_insert_threshold = -1, toast.autovacuum_vacuum_cost_delay = 10);
-- Message bodies are stored as sent, never compressed: trying to compress a
-- large body (PostgreSQL tries past ~2 KB) cost more than the rest of its
-- insert (64 KiB sends ran 2.6 times slower), and reading it back paid again.
ALTER TABLE messages ALTER COLUMN message SET STORAGE EXTERNAL;
-- One row per entity, rewritten once per entity per commit: room on its page
-- keeps those updates HOT, and frequent vacuum keeps the page small.
ALTER TABLE entity_runtime SET (fillfactor = 50, autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 1000, autovacuum_vacuum_cost_delay = 0);

-- The claimable set and everything else, as two disjoint index ranges.
DROP INDEX messages_ready;
CREATE INDEX messages_ready ON messages (entity_id, subqueue, sequence_number)
    WHERE state = 0 AND lock_token IS NULL;
DROP INDEX messages_not_active;
CREATE INDEX messages_held ON messages (entity_id, subqueue, sequence_number)
    WHERE state <> 0 OR lock_token IS NOT NULL;
-- Lapsed locks are found from the oldest through messages_lock_expiry.
DROP INDEX messages_locked_until;
-- A lock token names one message. Saying so lets the planner know that a
-- settlement touches one row whatever the statistics (none, right after a
-- bulk send), so it never trades the index for a scan of the table.
DROP INDEX messages_lock_token;
CREATE UNIQUE INDEX messages_lock_token ON messages (lock_token) WHERE lock_token IS NOT NULL;

-- The row moves of version 2, on entity_runtime. A lapsed or released lock
-- clears lock_token, which puts an active message back into messages_ready.
DROP FUNCTION sbemu_dead_letter(bigint, bigint, text, text, timestamptz);
-- Whether an expired message dead-letters is decided in C (the sweep passes it).
DROP FUNCTION sbemu_expire(bigint, bigint, text, text, timestamptz);
DROP FUNCTION sbemu_delete_message(bigint, bigint);
DROP FUNCTION sbemu_unlock(bigint, bigint, timestamptz);
DROP FUNCTION sbemu_activate(bigint, bigint);
-- p_target: where the caller (entities/, ForwardDeadLetteredMessagesTo)
-- decided the dead letter goes; NULL: p_entity's own dead-letter subqueue. A
-- forwarded dead letter is an active message at the end of p_target, with a new
-- sequence number and DeadLetterSource. A target deleted meanwhile falls back
-- to the entity's own subqueue.
CREATE FUNCTION sbemu_dead_letter(p_entity bigint, p_seq bigint, p_target bigint, p_reason text,
                                  p_description text, p_now timestamptz) RETURNS boolean LANGUAGE plpgsql AS $$
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
               dead_letter_reason = p_reason, dead_letter_error_description = p_description
         WHERE entity_id = p_entity AND sequence_number = p_seq;
        RETURN FOUND;
    END IF;
    UPDATE messages SET entity_id = p_target, sequence_number = seq, subqueue = 0, state = 0, lock_token = NULL,
           locked_until = NULL, available_at = p_now, expires_at = NULL, dead_letter_reason = p_reason,
           dead_letter_error_description = p_description,
           dead_letter_source = (SELECT name FROM queues WHERE id = p_entity)
     WHERE entity_id = p_entity AND sequence_number = p_seq
     RETURNING octet_length(message) INTO bytes;
    UPDATE entity_runtime SET size_in_bytes = size_in_bytes - bytes WHERE entity_id = p_entity;
    UPDATE entity_runtime SET size_in_bytes = size_in_bytes + bytes WHERE entity_id = p_target;
    RETURN bytes IS NOT NULL;
END $$;

CREATE FUNCTION sbemu_delete_message(p_entity bigint, p_seq bigint) RETURNS boolean
    LANGUAGE plpgsql AS $$
DECLARE
    bytes bigint;
BEGIN
    DELETE FROM messages WHERE entity_id = p_entity AND sequence_number = p_seq
        RETURNING octet_length(message) INTO bytes;
    UPDATE entity_runtime SET size_in_bytes = size_in_bytes - bytes WHERE entity_id = p_entity AND bytes IS NOT NULL;
    RETURN bytes IS NOT NULL;
END $$;

CREATE FUNCTION sbemu_unlock(p_entity bigint, p_seq bigint, p_now timestamptz) RETURNS boolean
    LANGUAGE plpgsql AS $$
BEGIN
    UPDATE messages SET lock_token = NULL, locked_until = NULL, available_at = p_now
     WHERE entity_id = p_entity AND sequence_number = p_seq;
    RETURN FOUND;
END $$;

CREATE FUNCTION sbemu_activate(p_entity bigint, p_seq bigint) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
    seq bigint;
BEGIN
    UPDATE entity_runtime SET next_sequence_number = next_sequence_number + 1 WHERE entity_id = p_entity
        RETURNING next_sequence_number - 1 INTO seq;
    UPDATE messages SET sequence_number = seq, state = 0 WHERE entity_id = p_entity AND sequence_number = p_seq;
    RETURN FOUND;
END $$;

-- One settlement that is not a complete (those are one DELETE): the caller
-- found the message under its lock and says what to do; MaxDeliveryCount is
-- the guard that decides whether an abandon dead-letters (p_exhausted);
-- p_target is where dead letters go (see sbemu_dead_letter).
-- p_kind: 1 abandon, 2 dead-letter, 3 defer, 4 release (store_queue.h).
CREATE FUNCTION sbemu_settle(p_kind bigint, p_entity bigint, p_seq bigint, p_exhausted boolean, p_target bigint,
                             p_reason text, p_description text, p_now timestamptz) RETURNS boolean
    LANGUAGE plpgsql AS $$
BEGIN
    IF p_kind = 2 OR (p_kind = 1 AND p_exhausted) THEN
        RETURN sbemu_dead_letter(p_entity, p_seq, p_target, p_reason, p_description, p_now);
    ELSIF p_kind = 1 THEN
        RETURN sbemu_unlock(p_entity, p_seq, p_now);
    ELSIF p_kind = 3 THEN
        UPDATE messages SET state = 1, lock_token = NULL, locked_until = NULL, available_at = p_now
         WHERE entity_id = p_entity AND sequence_number = p_seq;
        RETURN FOUND;
    ELSIF p_kind = 4 THEN
        -- back as if never delivered: no delivery-count increment
        UPDATE messages SET lock_token = NULL, locked_until = NULL, available_at = p_now,
               delivery_count = greatest(delivery_count - 1, 0)
         WHERE entity_id = p_entity AND sequence_number = p_seq;
        RETURN FOUND;
    END IF;
    RAISE EXCEPTION 'sbemu_settle: unknown kind %', p_kind;
END $$;
