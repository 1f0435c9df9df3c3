-- sbemu schema, version 19: sbemu_ms is inlined into the statements that call it.
--
-- PostgreSQL inlines a one-expression SQL function into the query calling it
-- only when the expression is as immutable as the function says it is.
-- sbemu_ms read extract(epoch FROM timestamptz), which is STABLE (some of its
-- fields depend on the time zone): so it was called as a function, starting an
-- executor of its own for every value. A claim returns three such values per
-- message; perf of the backend during receive-and-delete showed fmgr_sql and
-- its executor set-up among its top entries. The epoch of the difference to
-- the Unix epoch (an interval) is immutable and gives the same milliseconds.
-- test_store_plans checks that the time conversions stay inlined.
CREATE OR REPLACE FUNCTION sbemu_ms(ts timestamptz) RETURNS bigint
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN floor(extract(epoch FROM ts - timestamptz '1970-01-01 00:00:00+00') * 1000)::bigint;
