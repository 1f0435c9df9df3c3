-- sbemu schema, version 25: a claim is a HOT update.
--
-- A peek-lock claim sets a message's lock_token, locked_until and
-- delivery_count. While any index read one of those columns (in its key or its
-- predicate), every claim wrote a whole new row version on another page, with
-- an entry in each index, and logged the 1 KiB body again; vacuum later
-- removed all of it. Measured in SQL on this machine (50,000 rows of 1 KiB
-- claimed in batches of 1,000): 521-620 ms and 73 MB of WAL as before, 220-344
-- ms and 8-24 MB of WAL as a HOT update. On a fresh emulator, 1 KiB peek-lock
-- on one connection went from 38-55k to 73-88k msg/s.
--
-- So no index of messages reads a lock column any more, and nothing that
-- locks a message changes available_at (read by messages_scheduled). The
-- lock is judged on the row: a claim walks messages_ready (every active
-- message) and skips those locked, from where this emulator's claims of the
-- entity last ended (amqp_hint.h), so it does not walk messages in flight.
--
-- A HOT update needs room on the row's own page for the new version, and a
-- claim locks every row of a page at once: fillfactor 50 leaves that room for
-- bodies up to about 1 KiB (one row per half page), and the old versions are
-- pruned on the page once the claim's transaction is over.
DROP INDEX messages_ready, messages_held, messages_session_ready, messages_lock_expiry, messages_session_locked;
CREATE INDEX messages_ready ON messages (entity_id, subqueue, sequence_number) WHERE state = 0;
CREATE INDEX messages_held ON messages (entity_id, subqueue, sequence_number) WHERE state <> 0;
CREATE INDEX messages_session_ready ON messages (entity_id, sequence_number)
    WHERE state = 0 AND subqueue = 0 AND session_id IS NOT NULL;
ALTER TABLE messages SET (fillfactor = 50);
-- Half-empty pages are twice the pages per message, and new rows only go
-- where vacuum has recorded free space. Paced at 2 ms per 1,000 cost units
-- (migration 023), vacuum fell behind a soak of 22,500 msg/s at once: it
-- was busy 83-96 % of the time, and the table grew from 1.6 to 4.8 GB in
-- 7 minutes, each pass longer than the last. Set to run unpaced in the
-- same soak, the next pass truncated the table to 290 MB, and vacuum was
-- busy 6 % of the time from then on.
ALTER TABLE messages SET (autovacuum_vacuum_cost_delay = 0, toast.autovacuum_vacuum_cost_delay = 0);

-- Without messages_lock_expiry, lapsed locks are found through what gave
-- them: one row per batch of locks given together (a claim, a renewal, a
-- receive of deferred messages), written by the statement that locks, and
-- read by the sweep once its time has passed. The sweep looks each message up
-- by primary key and acts only on a lock that is still there and has lapsed
-- (a message completed, abandoned, renewed or locked again since is left
-- alone), then removes the row. A session's batches name the session, so
-- that its release and renewal find the messages it holds without walking
-- the session's backlog, and a claim in the session can tell whether a
-- previous holder's locks are still waiting for the sweep.
CREATE TABLE lock_batches (
    entity_id        bigint NOT NULL,
    session_id       text,
    locked_until     timestamptz NOT NULL,
    sequence_numbers bigint[] NOT NULL
);
-- Stored as they are: a claim's 500 sequence numbers are 4 KB, which
-- PostgreSQL would otherwise compress (0.3-0.6 ms a claim, more than its 500
-- row updates); a row holds at most STORE_LOCK_BATCH_SPAN of them
-- (sql/store_claim_sql.h), so it fits a page.
ALTER TABLE lock_batches ALTER COLUMN sequence_numbers SET STORAGE PLAIN;
CREATE INDEX lock_batches_due ON lock_batches (locked_until);
CREATE INDEX lock_batches_session ON lock_batches (entity_id, session_id) WHERE session_id IS NOT NULL;
-- Written and removed at the claims' pace, a row per batch: vacuumed often.
ALTER TABLE lock_batches SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000,
    autovacuum_vacuum_cost_delay = 0);

-- The locks held when this migration runs.
INSERT INTO lock_batches (entity_id, session_id, locked_until, sequence_numbers)
    SELECT entity_id, session_id, locked_until, array_agg(sequence_number ORDER BY sequence_number) FROM messages
     WHERE lock_token IS NOT NULL AND locked_until IS NOT NULL AND state <> 3
     GROUP BY entity_id, session_id, locked_until, sequence_number / 900; -- STORE_LOCK_BATCH_SPAN

-- A lapsed lock goes back without touching available_at (the sweep calls
-- sbemu_unlock for each lapsed lock it returns: STMT_SWEEP_LAPSED), so that
-- its row update stays HOT too.
CREATE OR REPLACE FUNCTION sbemu_unlock(p_entity bigint, p_seq bigint, p_now timestamptz) RETURNS boolean
    LANGUAGE plpgsql AS $$
BEGIN
    UPDATE messages SET lock_token = NULL, locked_until = NULL
     WHERE entity_id = p_entity AND sequence_number = p_seq;
    RETURN FOUND;
END $$;
