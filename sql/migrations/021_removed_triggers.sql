-- sbemu schema, version 21: removing no entity costs nothing.
--
-- The idle sweep (auto-delete-on-idle) deletes from queues, topics and
-- subscriptions every second, almost always no row at all. A statement-level
-- trigger fires all the same, and the one that removes an entity's messages
-- was planned against a transition table of unknown size: a hash join over a
-- sequential scan of the whole messages table, three times a second (7 ms
-- each with 30,000 messages queued, found with pg_stat_statements; a backlog
-- of a million is a gigabyte read every time). Now an empty transition table
-- costs nothing, and the messages of each removed entity are found by the
-- primary key.

CREATE OR REPLACE FUNCTION sbemu_runtime_removed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    gone record;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM removed) THEN
        RETURN NULL;
    END IF;
    DELETE FROM entity_runtime WHERE entity_id IN (SELECT id FROM removed);
    -- after the runtime row: a send holding it (FOR UPDATE) has committed by now,
    -- and each statement's snapshot below sees its messages
    FOR gone IN SELECT id FROM removed LOOP
        DELETE FROM messages WHERE entity_id = gone.id;
    END LOOP;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION sbemu_cursor_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM removed) THEN
        RETURN NULL;
    END IF;
    DELETE FROM sbemu_cursors WHERE entity_id IN (SELECT id FROM removed);
    DELETE FROM topic_log l WHERE l.topic_id IN (SELECT DISTINCT topic_id FROM removed)
       AND NOT EXISTS (SELECT 1 FROM sbemu_cursors c WHERE c.topic_id = l.topic_id);
    RETURN NULL;
END $$;
