-- sbemu schema, version 3: what the $management operations need.

-- peek-message walks a (sub)queue in sequence order across every state. Active
-- messages come from messages_ready (state 0); this index holds the others
-- (deferred, scheduled), so a peek merges two index walks and costs what it
-- returns, however big the other subqueue or the active backlog is. Plain sends
-- (state 0) never touch it.
CREATE INDEX messages_not_active ON messages (queue_id, subqueue, sequence_number) WHERE state <> 0;
