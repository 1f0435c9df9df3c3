-- sbemu schema, version 6: topics, subscriptions and rules at runtime.
--
-- 1. Rules keep their @parameters. Values are JSON: strings, integers,
--    doubles, booleans and null as themselves; other Service Bus types as
--    {"type": "timestamp" | "timespan" | "guid", "value": "<text form>"}
--    (sql/store_rule_json.h reads and writes them). rules.correlation holds
--    {"CorrelationId", "MessageId", "To", "ReplyTo", "Label", "SessionId",
--    "ReplyToSessionId", "ContentType": text, "Properties": {name: value}}.
-- 2. Topics, subscriptions and rules wake every emulator when they change,
--    as queues do: a rule inserted with plain SQL applies to the next send.
-- 3. One view, `entities`, of everything that holds or routes messages, with
--    the columns the statements act on. A subscription is named by its path
--    (`topic/Subscriptions/sub`) and takes its topic's size limit; a topic
--    never holds a lock, so its delivery columns are the defaults.
-- 4. A message at rest in a topic (scheduled, or forwarded there by the
--    database) is routed by the emulator (entities/ent_topic.c), not here.
-- 5. messages.entity_id loses its foreign key: checked per row, it cost a
--    fifth of every insert (a topic publish stores a row per subscription).
--    The statements that insert lock their entities' entity_runtime rows once
--    per statement instead (FOR UPDATE / FOR KEY SHARE, as the key check did
--    per row), and deleting an entity deletes its messages in the trigger
--    that deletes its entity_runtime row.

ALTER TABLE rules ADD COLUMN filter_parameters jsonb, ADD COLUMN action_parameters jsonb;

CREATE TRIGGER topics_changed AFTER INSERT OR UPDATE OR DELETE ON topics
    FOR EACH STATEMENT EXECUTE FUNCTION sbemu_entity_changed();
CREATE TRIGGER subscriptions_changed AFTER INSERT OR UPDATE OR DELETE ON subscriptions
    FOR EACH STATEMENT EXECUTE FUNCTION sbemu_entity_changed();
CREATE TRIGGER rules_changed AFTER INSERT OR UPDATE OR DELETE ON rules
    FOR EACH STATEMENT EXECUTE FUNCTION sbemu_entity_changed();

-- A subscription is created with the $Default rule (TrueFilter), whoever
-- creates it: plain SQL, Config.json or the management plane. Whoever wants
-- other rules replaces it in the same transaction or later.
-- Its created_at is on the namespace's movable clock, as the management plane
-- writes rules (enumerate-rules lists rules in created order).
CREATE FUNCTION sbemu_clock_now() RETURNS timestamptz LANGUAGE sql STABLE
    RETURN now() + (SELECT offset_ms FROM sbemu_clock) * interval '1 millisecond';
CREATE FUNCTION sbemu_default_rule() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO rules (subscription_id, name, filter_type, created_at)
        SELECT id, '$Default', 'True', sbemu_clock_now() FROM added
        ON CONFLICT DO NOTHING;
    RETURN NULL;
END $$;
CREATE TRIGGER subscriptions_default_rule AFTER INSERT ON subscriptions REFERENCING NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION sbemu_default_rule();

ALTER TABLE messages DROP CONSTRAINT messages_entity_id_fkey;
CREATE OR REPLACE FUNCTION sbemu_runtime_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM entity_runtime WHERE entity_id IN (SELECT id FROM removed);
    -- after the runtime row: a send holding it (FOR UPDATE) has committed by now,
    -- and this statement's snapshot sees its messages
    DELETE FROM messages WHERE entity_id IN (SELECT id FROM removed);
    RETURN NULL;
END $$;

CREATE VIEW entities AS
    SELECT id, 'queue'::text AS kind, name AS path, NULL::bigint AS topic_id, status, requires_session,
           lock_duration, max_delivery_count, default_message_time_to_live, dead_lettering_on_message_expiration,
           false AS dead_lettering_on_filter_evaluation_exceptions, requires_duplicate_detection,
           duplicate_detection_history_time_window, max_size_in_megabytes, forward_to,
           forward_dead_lettered_messages_to, auto_delete_on_idle
      FROM queues
    UNION ALL
    SELECT id, 'topic', name, NULL, status, false, interval '1 minute', 10, default_message_time_to_live, false,
           false, requires_duplicate_detection, duplicate_detection_history_time_window, max_size_in_megabytes,
           NULL, NULL, auto_delete_on_idle
      FROM topics
    UNION ALL
    SELECT s.id, 'subscription', t.name || '/Subscriptions/' || s.name, s.topic_id, s.status, s.requires_session,
           s.lock_duration, s.max_delivery_count, s.default_message_time_to_live,
           s.dead_lettering_on_message_expiration, s.dead_lettering_on_filter_evaluation_exceptions, false,
           interval '10 minutes', t.max_size_in_megabytes, s.forward_to, s.forward_dead_lettered_messages_to,
           s.auto_delete_on_idle
      FROM subscriptions s JOIN topics t ON t.id = s.topic_id;

-- As in version 5, with DeadLetterSource named from any entity.
CREATE OR REPLACE FUNCTION sbemu_dead_letter(p_entity bigint, p_seq bigint, p_target bigint, p_reason text,
                                  p_description text, p_now timestamptz) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
    seq bigint;
    bytes bigint;
BEGIN
    IF p_target IS NOT NULL AND p_target <> p_entity THEN
        UPDATE entity_runtime SET next_sequence_number = next_sequence_number + 1 WHERE entity_id = p_target
            RETURNING next_sequence_number - 1 INTO seq;
    END IF;
    IF seq IS NULL THEN
        UPDATE messages SET subqueue = 1, state = 0, lock_token = NULL, locked_until = NULL, available_at = p_now,
               dead_letter_reason = p_reason, dead_letter_error_description = p_description
         WHERE entity_id = p_entity AND sequence_number = p_seq;
        RETURN FOUND;
    END IF;
    UPDATE messages SET entity_id = p_target, sequence_number = seq, subqueue = 0, state = 0, lock_token = NULL,
           locked_until = NULL, available_at = p_now, expires_at = NULL, dead_letter_reason = p_reason,
           dead_letter_error_description = p_description,
           dead_letter_source = (SELECT path FROM entities WHERE id = p_entity)
     WHERE entity_id = p_entity AND sequence_number = p_seq
     RETURNING octet_length(message) INTO bytes;
    UPDATE entity_runtime SET size_in_bytes = size_in_bytes - bytes WHERE entity_id = p_entity;
    UPDATE entity_runtime SET size_in_bytes = size_in_bytes + bytes WHERE entity_id = p_target;
    RETURN bytes IS NOT NULL;
END $$;
