-- sbemu schema, version 12: faults on demand (README "Faults on demand").
-- One row per rule, written by PUT /$sbemu/faults/<name> (or Config.json's
-- UserConfig.Faults) on any emulator; every emulator on the database holds
-- the rules in memory and reloads them on the trigger's NOTIFY, as it does
-- entities. What each column means is entities/ent_fault.h's: the columns
-- hold the API's JSON values as text and numbers, and the loader reads them
-- through the same checks as the API, so a row written by hand that names
-- nothing known is skipped with a warning rather than half-obeyed.
CREATE SEQUENCE sbemu_faults_generation;
CREATE TABLE sbemu_faults (
    name        text PRIMARY KEY,
    namespace   text NOT NULL DEFAULT '',           -- '' or 'default': the default namespace
    entity      text NOT NULL DEFAULT '*',          -- a glob: '*' any run, '?' one character
    operation   text NOT NULL,                      -- 'send', 'com.microsoft:peek-message', ...
    effect      text NOT NULL,                      -- 'error', 'delay', 'never', 'detach', 'close', 'lose-lock'
    error       text,                               -- the condition of error, detach and close
    description text,
    delay_ms    bigint,
    after_ms    bigint,
    times       bigint,                             -- the next N times (NULL: every time)
    remaining   bigint,                             -- what is left of them: every replica's firings count
    probability double precision NOT NULL DEFAULT 1,
    seed        bigint NOT NULL DEFAULT 0,
    until       timestamptz,                        -- on the emulator's clock (a parameter, never now())
    fired       bigint NOT NULL DEFAULT 0,
    -- a PUT makes a new generation: its counts and its draws start again
    generation  bigint NOT NULL DEFAULT nextval('sbemu_faults_generation')
);
-- Rule names are case-insensitive, as the entities' are.
CREATE UNIQUE INDEX sbemu_faults_lower_name ON sbemu_faults (lower(name));
-- A change of a rule (not a firing, which only moves remaining and fired)
-- reloads the rules of every emulator: the entities' channel, with the table
-- name as its payload.
CREATE TRIGGER sbemu_faults_changed
    AFTER INSERT OR DELETE OR UPDATE OF name, namespace, entity, operation, effect, error, description, delay_ms,
        after_ms, times, probability, seed, until, generation
    ON sbemu_faults FOR EACH STATEMENT EXECUTE FUNCTION sbemu_entity_changed();
CREATE TRIGGER sbemu_faults_truncated AFTER TRUNCATE ON sbemu_faults
    FOR EACH STATEMENT EXECUTE FUNCTION sbemu_entity_changed();
