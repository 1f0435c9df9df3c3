-- sbemu schema, version 14: a namespace's own SAS keys, and its deletion
-- after an idle time.
--
-- 1. namespace_keys: a namespace's keys by name. A namespace without a row
--    here takes the emulator's key (--sas-key) under any key name; one with
--    rows takes only its own (entities/ent_namespace.h decides). The default
--    namespace (row 1) is the emulator's and has none. A change NOTIFYs
--    sbemu_entities, as the namespaces table does: every emulator reloads
--    them with the entities.
-- 2. namespaces.auto_delete_on_idle: NULL for never; else the namespace is
--    deleted (its entities, messages, clock and keys with it) once nothing
--    happened in it for that long on its own clock: accessed_at (stamped
--    when it is made and when a client chooses it, which NOTIFYs nobody) and
--    its entities' activity (entity_runtime.accessed_at). The sweep passes the wall clock;
--    each namespace's offset is its sbemu_clock row, the clock the emulators
--    keep (sbemu_namespace_sweep).
-- 3. A namespace made again after it was deleted gets back what Config.json
--    declared for it (its '$declared' snapshot, which outlives it).

CREATE TABLE namespace_keys (
    namespace_id    integer NOT NULL REFERENCES namespaces (id) ON DELETE CASCADE,
    key_name        text NOT NULL,
    key             text NOT NULL,
    PRIMARY KEY (namespace_id, key_name),
    -- ENT_NAMESPACE_KEY_NAME_MAX, ENT_NAMESPACE_KEY_MAX (ent_namespace_key_check)
    CONSTRAINT namespace_keys_key_name_syntax CHECK (key_name ~ '^[A-Za-z0-9._-]+$' AND char_length(key_name) <= 256),
    CONSTRAINT namespace_keys_key_1_to_256_chars CHECK (char_length(key) BETWEEN 1 AND 256),
    CONSTRAINT namespace_keys_not_the_default CHECK (namespace_id <> 1)
);
CREATE TRIGGER namespace_keys_changed AFTER INSERT OR UPDATE OR DELETE ON namespace_keys
    FOR EACH STATEMENT EXECUTE FUNCTION sbemu_entity_changed();

ALTER TABLE namespaces
    ADD COLUMN auto_delete_on_idle interval,    -- NULL: never
    ADD COLUMN accessed_at timestamptz NOT NULL DEFAULT now(),
    -- ENT_NAMESPACE_IDLE_MIN_MS; the default namespace is never deleted
    ADD CONSTRAINT namespaces_auto_delete_on_idle_at_least_1m
        CHECK (sbemu_interval_ms(auto_delete_on_idle) >= 60000),
    ADD CONSTRAINT namespaces_default_never_idle CHECK (id <> 1 OR auto_delete_on_idle IS NULL);

-- accessed_at moves whenever a client chooses a namespace: that must not
-- make every emulator reload its entities, so only the columns that matter
-- to them NOTIFY.
DROP TRIGGER namespaces_changed ON namespaces;
CREATE TRIGGER namespaces_changed AFTER INSERT OR DELETE OR UPDATE OF id, name, auto_delete_on_idle ON namespaces
    FOR EACH STATEMENT EXECUTE FUNCTION sbemu_entity_changed();

-- As in version 13; a namespace made again gets back what Config.json
-- declared for it.
CREATE OR REPLACE FUNCTION sbemu_namespace_ensure(p_name text) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
    v integer;
BEGIN
    SELECT n.id INTO v FROM namespaces n WHERE lower(n.name) = lower(p_name);
    IF v IS NULL THEN
        INSERT INTO namespaces (name) VALUES (p_name) ON CONFLICT DO NOTHING RETURNING id INTO v;
        IF v IS NULL THEN -- made meanwhile by another emulator
            SELECT n.id INTO v FROM namespaces n WHERE lower(n.name) = lower(p_name);
        ELSIF EXISTS (SELECT 1 FROM sbemu_snapshots s WHERE s.namespace = lower(p_name) AND s.name = '$declared'
                       AND s.entities > 0) THEN
            PERFORM sbemu_snapshot_restore(p_name, '$declared', sbemu_ms(now()));
        END IF;
    END IF;
    RETURN v;
END $$;

-- Deletes the namespaces idle past their auto_delete_on_idle at p_wall_ms
-- (the wall clock; each namespace's own clock adds its offset); answers
-- their names.
CREATE FUNCTION sbemu_namespace_sweep(p_wall_ms bigint) RETURNS TABLE (name text) LANGUAGE sql AS $$
    WITH idle AS (
        SELECT n.id FROM namespaces n LEFT JOIN sbemu_clock c ON c.namespace_id = n.id
         WHERE n.auto_delete_on_idle IS NOT NULL AND n.id <> 1
           AND greatest(n.accessed_at, (SELECT max(r.accessed_at) FROM entity_runtime r
                                         WHERE r.entity_id IN (SELECT x.id FROM sbemu_namespace_entities(n.id) x)))
               + n.auto_delete_on_idle <= sbemu_ts(p_wall_ms + coalesce(c.offset_ms, 0))
    )
    DELETE FROM namespaces n WHERE n.id IN (SELECT i.id FROM idle i) RETURNING n.name
$$;

-- Makes namespace p_name, or replaces its idle time (p_idle_ms, NULL: never)
-- and its keys (p_keys: [{"name": ..., "key": ...}], all of them; [] for
-- none: the emulator's key); answers its id and whether this call made it.
-- The emulator checked every value before (ent_namespace.h); the table's
-- checks are the last word.
CREATE FUNCTION sbemu_namespace_put(p_name text, p_idle_ms bigint, p_keys jsonb)
    RETURNS TABLE (id integer, created boolean) LANGUAGE plpgsql AS $$
DECLARE
    v integer;
    made boolean := false;
    idle interval := CASE WHEN p_idle_ms IS NULL THEN NULL ELSE p_idle_ms * interval '1 millisecond' END;
BEGIN
    SELECT n.id INTO v FROM namespaces n WHERE lower(n.name) = lower(p_name);
    IF v IS NULL THEN
        v := sbemu_namespace_ensure(p_name);
        made := true;
    END IF;
    UPDATE namespaces n SET auto_delete_on_idle = idle WHERE n.id = v AND n.auto_delete_on_idle IS DISTINCT FROM idle;
    IF (SELECT coalesce(jsonb_agg(jsonb_build_object('name', k.key_name, 'key', k.key) ORDER BY k.key_name), '[]')
          FROM namespace_keys k WHERE k.namespace_id = v)
       IS DISTINCT FROM (SELECT coalesce(jsonb_agg(jsonb_build_object('name', e ->> 'name', 'key', e ->> 'key')
                                                   ORDER BY e ->> 'name'), '[]')
                           FROM jsonb_array_elements(p_keys) e) THEN
        DELETE FROM namespace_keys k WHERE k.namespace_id = v;
        INSERT INTO namespace_keys (namespace_id, key_name, key)
            SELECT v, e ->> 'name', e ->> 'key' FROM jsonb_array_elements(p_keys) e;
    END IF;
    RETURN QUERY SELECT v, made;
END $$;
