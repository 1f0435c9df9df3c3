-- sbemu schema, version 2: what queue semantics need beyond storing messages.

-- Claims take active (0) and scheduled (2) messages whose available_at has come;
-- deferred (1) ones are reachable only by sequence number.
DROP INDEX messages_ready;
CREATE INDEX messages_ready ON messages (queue_id, subqueue, sequence_number) WHERE state <> 1;

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
