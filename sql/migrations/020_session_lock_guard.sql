-- sbemu schema, version 20: a session claim's guard finds the session's locked
-- messages by the session.
--
-- A session receiver takes nothing while a message of its session still
-- carries a lock that lapsed (a previous holder's, until the sweep returns it):
-- taking the messages after it first would break the session's order
-- (CLAIM_SESSION_CANDIDATES, sql/store_claim_sql.h). The generic plan answered
-- that guard from messages_held, walking every locked, deferred and scheduled
-- message of the whole entity for each claim: a cost that grew with what every
-- other session had in flight. The session's own messages_session range would
-- grow with its backlog instead. This index holds only the locked messages of
-- sessions, by session: the guard reads the few its session holds.
CREATE INDEX messages_session_locked ON messages (entity_id, session_id)
    WHERE lock_token IS NOT NULL AND session_id IS NOT NULL;
