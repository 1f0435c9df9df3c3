-- Vacuum of messages gets five times the budget per pause. At 10 ms per
-- batch of the default 200 cost units it cleaned about 8 MB of pages a second,
-- while a sender and a receiver at 25-30k msg/s of 1 KiB leave some 30 MB a
-- second of completed rows. Measured (800k sent at 27-29k msg/s, 400k received
-- at once): the table ended at 829 MB with the old budget, at 580 MB (what the
-- 400k left in the queue take) with this one; claims beside it did not slow
-- in the benchmark. It still sleeps between batches, so that claims are not
-- starved; at full speed with a growing backlog (41k msg/s in) vacuum still
-- falls behind, and the space comes back once the load eases.
ALTER TABLE messages SET (autovacuum_vacuum_cost_limit = 1000, toast.autovacuum_vacuum_cost_limit = 1000);
