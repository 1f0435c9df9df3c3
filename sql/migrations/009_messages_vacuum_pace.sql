-- Vacuum of messages keeps pace with a steady load. At 10 ms per batch of
-- the default 200 cost units it cleaned about 8 MB of pages a second, while a
-- sender and a receiver at 35k msg/s of 1 KiB leave some 40 MB a second of
-- completed rows: the table grew to 2.2 GB while 1.5M messages went through a
-- queue that never held more than 300k (and shrank back only once the load
-- stopped). Five times the budget per batch, same pause: vacuum now keeps up,
-- and still sleeps between batches so that claims beside it are not starved.
ALTER TABLE messages SET (autovacuum_vacuum_cost_limit = 1000, toast.autovacuum_vacuum_cost_limit = 1000);
