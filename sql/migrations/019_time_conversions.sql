-- sbemu schema, version 19: the time conversions cost what their arithmetic costs.
--
-- Statements convert between the emulator's milliseconds and timestamptz per
-- row: a claim returns three times per message (sbemu_ms), and filters such
-- as `expires_at > sbemu_ts($3)` are evaluated per candidate row on a
-- generic plan.
--
-- sbemu_ms: PostgreSQL inlines a one-expression SQL function into the query
-- calling it only when the expression is as immutable as the function says
-- it is. It read extract(epoch FROM timestamptz), which is STABLE (some of
-- its fields depend on the time zone), so it was called as a function,
-- starting an executor of its own for every value: perf of the backend during
-- receive-and-delete showed fmgr_sql and its executor set-up among its top
-- entries, and 20,000 rows' three conversions took 44 ms instead of 15. The
-- epoch of the difference to the Unix epoch (an interval) is immutable and
-- gives the same milliseconds.
--
-- sbemu_ts: ms / 1000.0 is a numeric division, and numeric becomes float8
-- through its text (strtod). A float8 division gives the same double (both
-- round the exact quotient to the nearest one; bigint -> float8 is exact
-- below 2^53) at half the cost of a filter evaluated per row.
--
-- test_store_plans checks that both stay inlined.
CREATE OR REPLACE FUNCTION sbemu_ms(ts timestamptz) RETURNS bigint
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN floor(extract(epoch FROM ts - timestamptz '1970-01-01 00:00:00+00') * 1000)::bigint;
CREATE OR REPLACE FUNCTION sbemu_ts(ms bigint) RETURNS timestamptz
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN to_timestamp(ms::float8 / 1000);
