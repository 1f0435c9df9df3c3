-- sbemu schema, version 16: each message's story (README "Each message's story").
--
-- What happened to messages, as events, written by the statements that make
-- the changes they record, in the same commits (sql/store_story_statements.c):
-- recording costs no statement of its own. A row is one statement's events of
-- one kind in one entity: arrays with one element per message. What each
-- column means for each kind is entities/ent_story.h's. The story is the
-- database's, so every emulator on it answers for all of them; the emulators'
-- sweep prunes rows older than --story-retention (on the emulator's clock).

CREATE TABLE sbemu_story (
    id                  bigint GENERATED ALWAYS AS IDENTITY, -- the order events happened in
    at                  timestamptz NOT NULL,   -- the emulator's clock
    entity_id           bigint NOT NULL,        -- entities.id; no foreign key: the story outlives the entity
    kind                smallint NOT NULL,      -- ENT_STORY_* (entities/ent_story.h)
    subqueue            smallint,               -- 1: the dead-letter subqueue (a receive there)
    connection_id       bigint,                 -- the emulator's connection number (sent, locked, received)
    link_name           text,                   -- the link's name as the client gave it
    locked_until        timestamptz,            -- locked: until when
    other_entity_id     bigint,                 -- routed: the topic; forwarded: from; dead-lettered: to
    sequence_numbers    bigint[] NOT NULL,      -- per message, in this entity
    message_ids         text[] NOT NULL,        -- per message
    notes               text[],                 -- per message: traceparent, rule, rules, reason
    descriptions        text[],                 -- per message: a dead letter's description
    numbers             bigint[],               -- per message: delivery count, scheduled sequence number
    lock_tokens         uuid[],                 -- per message: locked
    -- An entity's latest events, newest first. (No index on id alone: the
    -- planner would walk it backward, filtering by entity, to stop at a LIMIT.)
    PRIMARY KEY (entity_id, id)
);
-- The arrays are stored as they are, never compressed: a row of a large
-- batch is tens of KB of mostly random ids, and compressing it would be CPU
-- spent inside the commit it rides with (message bodies are stored so too,
-- migration 005).
ALTER TABLE sbemu_story ALTER COLUMN sequence_numbers SET STORAGE EXTERNAL,
    ALTER COLUMN message_ids SET STORAGE EXTERNAL, ALTER COLUMN notes SET STORAGE EXTERNAL,
    ALTER COLUMN descriptions SET STORAGE EXTERNAL, ALTER COLUMN numbers SET STORAGE EXTERNAL,
    ALTER COLUMN lock_tokens SET STORAGE EXTERNAL;
-- The sweep prunes from the oldest; a message's story reads from its first event on.
CREATE INDEX sbemu_story_at ON sbemu_story (at);
-- No index on message_ids: a GIN index takes an entry per message per
-- event, and keeping it (its pending list merged as it grows) cost more than
-- a third of the commits the events ride with (measured on the benchmark).
-- A message's story is found from its entity instead (the primary key),
-- then from the time its first event there was written (sbemu_story_at);
-- by MessageId alone it is a scan of what the story keeps.
-- The rows of messageId written since p_since, through sbemu_story_at
-- whatever a generic plan guesses of the range. (A function with SET is
-- never inlined, so the setting holds for its query alone.)
CREATE FUNCTION sbemu_story_since(p_message_id text, p_since timestamptz) RETURNS SETOF sbemu_story
    LANGUAGE sql STABLE SET enable_seqscan = off
    AS $$ SELECT * FROM sbemu_story WHERE at >= p_since AND message_ids @> ARRAY[p_message_id] $$;

-- sbemu_activate (migration 005), answering the message's new sequence number
-- (NULL: it was gone), for the story of a scheduled message that came due.
CREATE FUNCTION sbemu_activate_seq(p_entity bigint, p_seq bigint) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    seq bigint;
BEGIN
    UPDATE entity_runtime SET next_sequence_number = next_sequence_number + 1 WHERE entity_id = p_entity
        RETURNING next_sequence_number - 1 INTO seq;
    UPDATE messages SET sequence_number = seq, state = 0 WHERE entity_id = p_entity AND sequence_number = p_seq;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    RETURN seq;
END $$;
