-- sbemu schema, version 2: what queue semantics need beyond storing messages.

-- Scheduled messages (state 2) wait here until the sweep activates them: as on
-- Service Bus they then get a new sequence number and become active (state 0).
CREATE INDEX messages_scheduled ON messages (available_at) WHERE state = 2;

-- The expiry sweep walks this from the oldest deadline, so an idle emulator
-- costs one index probe per sweep however many queues and messages it holds.
CREATE INDEX messages_expiry ON messages (expires_at) WHERE expires_at IS NOT NULL AND subqueue = 0;

-- Bytes held by a queue (both subqueues), kept by the statements that add and
-- remove messages, so MaxSizeInMegabytes costs nothing to check.
ALTER TABLE queues ADD COLUMN size_in_bytes bigint NOT NULL DEFAULT 0;

-- MessageIds seen within a queue's DuplicateDetectionHistoryTimeWindow.
CREATE TABLE duplicate_detection (
    queue_id    bigint NOT NULL REFERENCES queues (id) ON DELETE CASCADE,
    message_id  text NOT NULL,
    seen_at     timestamptz NOT NULL,
    PRIMARY KEY (queue_id, message_id)
);
CREATE INDEX duplicate_detection_seen ON duplicate_detection (seen_at);

-- Lock lapses are found from the oldest, across queues, by the background sweep.
CREATE INDEX messages_lock_expiry ON messages (locked_until) WHERE lock_token IS NOT NULL;

-- Where an auto-forwarded dead letter came from (x-opt-deadletter-source).
ALTER TABLE messages ADD COLUMN dead_letter_source text;

-- Store errors that are Service Bus answers, not failures: raised with an
-- SQLSTATE of class 'SB' that the store maps to its status (sql/store.c).
CREATE FUNCTION sbemu_raise(code text, message text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION USING ERRCODE = code, MESSAGE = message;
END $$;

-- Moves one message to its queue's dead-letter subqueue, or, when the queue has
-- ForwardDeadLetteredMessagesTo, to the end of that queue (new sequence number,
-- DeadLetterSource set). The reasons are the caller's (entities/ decides them).
CREATE FUNCTION sbemu_dead_letter(p_queue bigint, p_seq bigint, p_reason text, p_description text,
                                  p_now timestamptz) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
    target bigint;
    source_name text;
    seq bigint;
    bytes bigint;
BEGIN
    SELECT t.id, q.name INTO target, source_name
      FROM queues q JOIN queues t ON lower(t.name) = lower(q.forward_dead_lettered_messages_to)
     WHERE q.id = p_queue AND t.id <> p_queue;
    IF target IS NULL THEN
        UPDATE messages SET subqueue = 1, state = 0, lock_token = NULL, locked_until = NULL, available_at = p_now,
               dead_letter_reason = p_reason, dead_letter_error_description = p_description
         WHERE queue_id = p_queue AND sequence_number = p_seq;
        RETURN FOUND;
    END IF;
    UPDATE queues SET next_sequence_number = next_sequence_number + 1 WHERE id = target
        RETURNING next_sequence_number - 1 INTO seq;
    UPDATE messages SET queue_id = target, sequence_number = seq, subqueue = 0, state = 0, lock_token = NULL,
           locked_until = NULL, available_at = p_now, expires_at = NULL, dead_letter_reason = p_reason,
           dead_letter_error_description = p_description, dead_letter_source = source_name
     WHERE queue_id = p_queue AND sequence_number = p_seq
     RETURNING octet_length(message) INTO bytes;
    UPDATE queues SET size_in_bytes = size_in_bytes - bytes WHERE id = p_queue;
    UPDATE queues SET size_in_bytes = size_in_bytes + bytes WHERE id = target;
    RETURN bytes IS NOT NULL;
END $$;

-- Deletes one message and gives its bytes back to the queue's size.
CREATE FUNCTION sbemu_delete_message(p_queue bigint, p_seq bigint) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
    bytes bigint;
BEGIN
    DELETE FROM messages WHERE queue_id = p_queue AND sequence_number = p_seq RETURNING octet_length(message) INTO bytes;
    UPDATE queues SET size_in_bytes = size_in_bytes - bytes WHERE id = p_queue AND bytes IS NOT NULL;
    RETURN bytes IS NOT NULL;
END $$;

-- An expired message: dead-lettered when its queue says so, else dropped.
CREATE FUNCTION sbemu_expire(p_queue bigint, p_seq bigint, p_reason text, p_description text,
                             p_now timestamptz) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    IF (SELECT dead_lettering_on_message_expiration FROM queues WHERE id = p_queue) THEN
        RETURN sbemu_dead_letter(p_queue, p_seq, p_reason, p_description, p_now);
    END IF;
    RETURN sbemu_delete_message(p_queue, p_seq);
END $$;

-- Unlocks one message (abandon): back to the queue, ready at once.
CREATE FUNCTION sbemu_unlock(p_queue bigint, p_seq bigint, p_now timestamptz) RETURNS boolean
    LANGUAGE plpgsql AS $$
BEGIN
    UPDATE messages SET lock_token = NULL, locked_until = NULL, available_at = p_now
     WHERE queue_id = p_queue AND sequence_number = p_seq;
    RETURN FOUND;
END $$;

-- Activates one due scheduled message: the next sequence number of its queue, state active.
CREATE FUNCTION sbemu_activate(p_queue bigint, p_seq bigint) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
    seq bigint;
BEGIN
    UPDATE queues SET next_sequence_number = next_sequence_number + 1 WHERE id = p_queue
        RETURNING next_sequence_number - 1 INTO seq;
    UPDATE messages SET sequence_number = seq, state = 0 WHERE queue_id = p_queue AND sequence_number = p_seq;
    RETURN FOUND;
END $$;
