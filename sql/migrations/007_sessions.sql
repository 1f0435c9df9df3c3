-- sbemu schema, version 7: message sessions.
--
-- 1. A session is a row in `sessions` only while someone holds its lock or it
--    has a state: 10,000 sessions with one message each cost 10,000 messages,
--    not 10,000 more rows. The lock lives here, not in the emulator's memory,
--    so replicas on one database never hand one session to two receivers.
-- 2. A message received in a session is locked like any other (its own lock
--    token, the delivery tag), until the session's lock lapses: renewing the
--    session renews them, and the sweep returns them when it lapses.
-- 3. Session messages get one index of their own, partial, so queues without
--    sessions pay nothing for it; a session's claim, renewal, release and
--    peek walk only that session's messages.
-- 4. A message scheduled inside a transaction is stored at once with state 3
--    (invisible to everyone) so that its sequence number can be answered;
--    the commit makes it state 2 (scheduled), a rollback deletes it, and the
--    sweep deletes those whose transaction never ended, after locked_until.

CREATE TABLE sessions (
    entity_id       bigint NOT NULL REFERENCES entity_runtime (entity_id) ON DELETE CASCADE,
    session_id      text NOT NULL,
    state           bytea,                 -- set-session-state; NULL: none
    lock_token      uuid,                  -- the receiver holding it; NULL: free
    locked_until    timestamptz,
    updated_at      timestamptz NOT NULL,  -- last state change: get-message-sessions
    PRIMARY KEY (entity_id, session_id)
);

CREATE INDEX messages_session ON messages (entity_id, session_id, sequence_number)
    WHERE session_id IS NOT NULL;

CREATE INDEX messages_txn_pending ON messages (entity_id, sequence_number) WHERE state = 3;
