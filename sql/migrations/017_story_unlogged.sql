-- sbemu schema, version 17: each message's story is unlogged.
--
-- A story row is written by each statement that changes messages, whatever
-- the number of messages it carries: for the few a small commit holds, that
-- row's WAL (its heap and index records, and the full-page images a
-- checkpoint brings) was half of what the story cost the commit (pgbench of
-- a one-message send: +75 us logged, +37 us unlogged). An unlogged table
-- writes none. What it gives up: a crash of PostgreSQL (not of sbemu) empties
-- the story, and a standby of the database has none. Messages are not
-- affected; the story is diagnostics, kept for --story-retention.
ALTER TABLE sbemu_story SET UNLOGGED;
-- Rows are written once and deleted once by the prune: vacuum has nothing to
-- do for inserts alone, and ANALYZE would read a sample of rows whose arrays
-- hold thousands of elements, on the cores the commits need, for statistics
-- no story statement uses (their plans are fixed by their indexes:
-- test_store_plans checks them with none). Deletes still bring vacuum.
ALTER TABLE sbemu_story SET (autovacuum_vacuum_insert_threshold = -1, autovacuum_analyze_threshold = 2147483647,
    toast.autovacuum_vacuum_insert_threshold = -1);
