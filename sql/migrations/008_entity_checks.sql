-- sbemu schema, version 8: the entity tables refuse what the emulator refuses.
--
-- A row written with plain SQL takes effect at once (migrations 005 and 006
-- NOTIFY every emulator), so the tables themselves must refuse what Config.json
-- and the management plane refuse: the limits of entities/ent_props.h and
-- entities/ent_rule_props.c, with the same boundaries. Each constraint is named
-- for the rule it guards, so that the error a user sees says which rule
-- (`new row for relation "queues" violates check constraint
-- "queues_lock_duration_5s_to_5m"`). PostgreSQL tests check constraints in
-- the order of their names, which puts `..._not_empty` before
-- `..._path_syntax` and `..._max_..._chars` before both.
--
-- tests/unit/test_store_entity_checks.c inserts at every boundary, computed
-- from the C constants named below, and expects the emulator's validators and
-- these constraints to agree: change a limit in one place and that test fails
-- until the other follows.
--
-- The new constraints are NOT VALID: rows an older version let in stay (and
-- keep working as before), but every row inserted or updated from now on is
-- checked, old rows included when they are updated. The checks of version 1
-- that said the same thing under generated names are renamed.
--
-- Durations are checked as the emulator reads them, through sbemu_interval_ms
-- (a month counts 30 days, a year 365.25), never with interval comparisons,
-- which count a year as 360 days. Lengths count characters in a UTF8 database.

-- ---- Helpers (no subqueries are allowed in a CHECK; functions are) ----------

-- A queue or topic name, or a ForwardTo target, as ent_check_entity_path
-- takes it: '/'-separated segments of ASCII letters, digits, '.', '-', '_' and
-- '~' (so none of ENT_NAME_FORBIDDEN_CHARS "@?#*"), no empty segment, no
-- leading or trailing '/'. The length (ENT_ENTITY_PATH_MAX) is its own check.
CREATE FUNCTION sbemu_is_entity_path(p text) RETURNS boolean
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN p ~ '^[A-Za-z0-9._~-]+(/[A-Za-z0-9._~-]+)*$';

-- Not blank in the sense of C's isspace (entities/ent_rule_props.c, blank()).
CREATE FUNCTION sbemu_is_not_blank(s text) RETURNS boolean
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN s ~ '[^ \t\n\v\f\r]';

-- A subscription's topic, for "ForwardTo may not name its own topic". NULL
-- (the check passes) while the topic is not visible yet, e.g. inserted by the
-- same statement; the foreign key still guards that it exists.
CREATE FUNCTION sbemu_topic_name(p_topic bigint) RETURNS text
    LANGUAGE sql STABLE STRICT PARALLEL SAFE
    RETURN (SELECT name FROM topics WHERE id = p_topic);

-- An object of rule values as sql/store_rule_json.c reads them (@parameters,
-- a correlation filter's Properties): strings, numbers, booleans, null, or
-- {"type": "timestamp" | "timespan" | "guid", "value": text}.
CREATE FUNCTION sbemu_rule_values_ok(o jsonb) RETURNS boolean
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$
    SELECT CASE WHEN jsonb_typeof(o) <> 'object' THEN false ELSE NOT EXISTS (
        SELECT 1 FROM jsonb_each(o) AS e (key, value)
         WHERE jsonb_typeof(e.value) NOT IN ('string', 'number', 'boolean', 'null')
           AND NOT coalesce(jsonb_typeof(e.value) = 'object'
                            AND e.value ->> 'type' IN ('timestamp', 'timespan', 'guid')
                            AND jsonb_typeof(e.value -> 'value') = 'string', false)) END
$$;

-- rules.correlation as store_rule_correlation_parse reads it: an object of the
-- known keys only; the system properties are strings (or null: absent); the
-- user properties, "Properties", an object of rule values with non-empty names.
CREATE FUNCTION sbemu_correlation_ok(c jsonb) RETURNS boolean
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$
    SELECT CASE WHEN jsonb_typeof(c) <> 'object' THEN false ELSE
        c - ARRAY['ContentType', 'CorrelationId', 'Label', 'MessageId', 'ReplyTo', 'ReplyToSessionId',
                  'SessionId', 'To', 'Properties'] = '{}'::jsonb
        AND NOT EXISTS (SELECT 1 FROM jsonb_each(c - 'Properties') AS e (key, value)
                         WHERE jsonb_typeof(e.value) NOT IN ('string', 'null'))
        AND CASE jsonb_typeof(c -> 'Properties')
                WHEN 'object' THEN sbemu_rule_values_ok(c -> 'Properties') AND NOT (c -> 'Properties') ? ''
                WHEN 'null' THEN true
                ELSE c -> 'Properties' IS NULL END
    END
$$;

-- A correlation filter matches on something: a system property or at least
-- one user property (ent_rule_validate, ent_filter_new_correlation).
CREATE FUNCTION sbemu_correlation_has_filter(c jsonb) RETURNS boolean
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$
    SELECT CASE WHEN jsonb_typeof(c) <> 'object' THEN false ELSE
        EXISTS (SELECT 1 FROM jsonb_each(c - 'Properties') AS e (key, value) WHERE jsonb_typeof(e.value) = 'string')
        OR coalesce(jsonb_typeof(c -> 'Properties') = 'object' AND c -> 'Properties' <> '{}'::jsonb, false)
    END
$$;

-- ---- queues --------------------------------------------------------------------

ALTER TABLE queues RENAME CONSTRAINT queues_name_check TO queues_name_not_empty;
ALTER TABLE queues RENAME CONSTRAINT queues_max_delivery_count_check TO queues_max_delivery_count_at_least_1;
ALTER TABLE queues RENAME CONSTRAINT queues_status_check TO queues_status_active_disabled_send_or_receive_disabled;
-- "> 0" becomes the range below
ALTER TABLE queues DROP CONSTRAINT queues_max_size_in_megabytes_check;

ALTER TABLE queues
    -- ENT_ENTITY_PATH_MAX
    ADD CONSTRAINT queues_name_max_260_chars CHECK (char_length(name) <= 260) NOT VALID,
    -- ent_check_entity_path, ENT_NAME_FORBIDDEN_CHARS
    ADD CONSTRAINT queues_name_path_syntax CHECK (sbemu_is_entity_path(name)) NOT VALID,
    -- ENT_LOCK_DURATION_MIN_MS .. ENT_LOCK_DURATION_MAX_MS
    ADD CONSTRAINT queues_lock_duration_5s_to_5m
        CHECK (sbemu_interval_ms(lock_duration) BETWEEN 5000 AND 300000) NOT VALID,
    -- ENT_DEFAULT_TTL_MIN_MS; NULL: unlimited
    ADD CONSTRAINT queues_default_message_time_to_live_at_least_1s
        CHECK (sbemu_interval_ms(default_message_time_to_live) >= 1000) NOT VALID,
    -- ENT_DUP_WINDOW_MIN_MS .. ENT_DUP_WINDOW_MAX_MS
    ADD CONSTRAINT queues_duplicate_detection_history_time_window_20s_to_7d
        CHECK (sbemu_interval_ms(duplicate_detection_history_time_window) BETWEEN 20000 AND 604800000) NOT VALID,
    -- ENT_AUTO_DELETE_ON_IDLE_MIN_MS; NULL: never
    ADD CONSTRAINT queues_auto_delete_on_idle_at_least_5m
        CHECK (sbemu_interval_ms(auto_delete_on_idle) >= 300000) NOT VALID,
    -- ENT_MAX_SIZE_IN_MEGABYTES_MIN .. ENT_MAX_SIZE_IN_MEGABYTES_MAX
    ADD CONSTRAINT queues_max_size_in_megabytes_1_to_81920
        CHECK (max_size_in_megabytes BETWEEN 1 AND 81920) NOT VALID,
    -- ENT_USER_METADATA_MAX
    ADD CONSTRAINT queues_user_metadata_max_1024_chars CHECK (char_length(user_metadata) <= 1024) NOT VALID,
    -- ForwardTo: NULL for none (not ''), a path of at most ENT_ENTITY_PATH_MAX, not the queue itself
    ADD CONSTRAINT queues_forward_to_not_empty CHECK (forward_to <> '') NOT VALID,
    ADD CONSTRAINT queues_forward_to_max_260_chars CHECK (char_length(forward_to) <= 260) NOT VALID,
    ADD CONSTRAINT queues_forward_to_path_syntax CHECK (sbemu_is_entity_path(forward_to)) NOT VALID,
    ADD CONSTRAINT queues_forward_to_not_itself CHECK (lower(forward_to) <> lower(name)) NOT VALID,
    ADD CONSTRAINT queues_forward_dead_lettered_messages_to_not_empty
        CHECK (forward_dead_lettered_messages_to <> '') NOT VALID,
    ADD CONSTRAINT queues_forward_dead_lettered_messages_to_max_260_chars
        CHECK (char_length(forward_dead_lettered_messages_to) <= 260) NOT VALID,
    ADD CONSTRAINT queues_forward_dead_lettered_messages_to_path_syntax
        CHECK (sbemu_is_entity_path(forward_dead_lettered_messages_to)) NOT VALID,
    ADD CONSTRAINT queues_forward_dead_lettered_messages_to_not_itself
        CHECK (lower(forward_dead_lettered_messages_to) <> lower(name)) NOT VALID;

-- ---- topics --------------------------------------------------------------------

ALTER TABLE topics RENAME CONSTRAINT topics_name_check TO topics_name_not_empty;
ALTER TABLE topics RENAME CONSTRAINT topics_status_check TO topics_status_active_disabled_or_send_disabled;
ALTER TABLE topics DROP CONSTRAINT topics_max_size_in_megabytes_check;

-- The constants as for queues: ENT_ENTITY_PATH_MAX, ENT_DEFAULT_TTL_MIN_MS, ENT_DUP_WINDOW_MIN_MS ..
-- ENT_DUP_WINDOW_MAX_MS, ENT_AUTO_DELETE_ON_IDLE_MIN_MS, ENT_MAX_SIZE_IN_MEGABYTES_MIN .. _MAX,
-- ENT_USER_METADATA_MAX.
ALTER TABLE topics
    ADD CONSTRAINT topics_name_max_260_chars CHECK (char_length(name) <= 260) NOT VALID,
    ADD CONSTRAINT topics_name_path_syntax CHECK (sbemu_is_entity_path(name)) NOT VALID,
    ADD CONSTRAINT topics_default_message_time_to_live_at_least_1s
        CHECK (sbemu_interval_ms(default_message_time_to_live) >= 1000) NOT VALID,
    ADD CONSTRAINT topics_duplicate_detection_history_time_window_20s_to_7d
        CHECK (sbemu_interval_ms(duplicate_detection_history_time_window) BETWEEN 20000 AND 604800000) NOT VALID,
    ADD CONSTRAINT topics_auto_delete_on_idle_at_least_5m
        CHECK (sbemu_interval_ms(auto_delete_on_idle) >= 300000) NOT VALID,
    ADD CONSTRAINT topics_max_size_in_megabytes_1_to_81920
        CHECK (max_size_in_megabytes BETWEEN 1 AND 81920) NOT VALID,
    ADD CONSTRAINT topics_user_metadata_max_1024_chars CHECK (char_length(user_metadata) <= 1024) NOT VALID;

-- ---- subscriptions -------------------------------------------------------------

ALTER TABLE subscriptions RENAME CONSTRAINT subscriptions_name_check TO subscriptions_name_not_empty;
ALTER TABLE subscriptions RENAME CONSTRAINT subscriptions_max_delivery_count_check
    TO subscriptions_max_delivery_count_at_least_1;
ALTER TABLE subscriptions RENAME CONSTRAINT subscriptions_status_check
    TO subscriptions_status_active_disabled_or_receive_disabled;

ALTER TABLE subscriptions
    -- ENT_SUBSCRIPTION_NAME_MAX; ent_check_child_name: ENT_CHILD_NAME_FORBIDDEN_CHARS, no control characters
    ADD CONSTRAINT subscriptions_name_max_50_chars CHECK (char_length(name) <= 50) NOT VALID,
    ADD CONSTRAINT subscriptions_name_no_forbidden_chars CHECK (name !~ '[@?#*/\\]') NOT VALID,
    ADD CONSTRAINT subscriptions_name_no_control_chars CHECK (name !~ '[\x01-\x1f\x7f]') NOT VALID,
    -- ENT_LOCK_DURATION_MIN_MS .. ENT_LOCK_DURATION_MAX_MS, ENT_DEFAULT_TTL_MIN_MS,
    -- ENT_AUTO_DELETE_ON_IDLE_MIN_MS, ENT_USER_METADATA_MAX, as for queues
    ADD CONSTRAINT subscriptions_lock_duration_5s_to_5m
        CHECK (sbemu_interval_ms(lock_duration) BETWEEN 5000 AND 300000) NOT VALID,
    ADD CONSTRAINT subscriptions_default_message_time_to_live_at_least_1s
        CHECK (sbemu_interval_ms(default_message_time_to_live) >= 1000) NOT VALID,
    ADD CONSTRAINT subscriptions_auto_delete_on_idle_at_least_5m
        CHECK (sbemu_interval_ms(auto_delete_on_idle) >= 300000) NOT VALID,
    ADD CONSTRAINT subscriptions_user_metadata_max_1024_chars CHECK (char_length(user_metadata) <= 1024) NOT VALID,
    -- ForwardTo as for queues (ENT_ENTITY_PATH_MAX), but a subscription may not forward to its
    -- own topic (a loop): ent_subscription_validate
    ADD CONSTRAINT subscriptions_forward_to_not_empty CHECK (forward_to <> '') NOT VALID,
    ADD CONSTRAINT subscriptions_forward_to_max_260_chars CHECK (char_length(forward_to) <= 260) NOT VALID,
    ADD CONSTRAINT subscriptions_forward_to_path_syntax CHECK (sbemu_is_entity_path(forward_to)) NOT VALID,
    ADD CONSTRAINT subscriptions_forward_to_not_own_topic
        CHECK (lower(forward_to) <> lower(sbemu_topic_name(topic_id))) NOT VALID,
    ADD CONSTRAINT subscriptions_forward_dead_lettered_messages_to_not_empty
        CHECK (forward_dead_lettered_messages_to <> '') NOT VALID,
    ADD CONSTRAINT subscriptions_forward_dead_lettered_messages_to_max_260_chars
        CHECK (char_length(forward_dead_lettered_messages_to) <= 260) NOT VALID,
    ADD CONSTRAINT subscriptions_forward_dead_lettered_messages_to_path_syntax
        CHECK (sbemu_is_entity_path(forward_dead_lettered_messages_to)) NOT VALID,
    ADD CONSTRAINT subscriptions_forward_dead_lettered_messages_to_not_own_topic
        CHECK (lower(forward_dead_lettered_messages_to) <> lower(sbemu_topic_name(topic_id))) NOT VALID;

-- ---- rules -----------------------------------------------------------------------

ALTER TABLE rules RENAME CONSTRAINT rules_name_check TO rules_name_not_empty;
ALTER TABLE rules RENAME CONSTRAINT rules_filter_type_check TO rules_filter_type_sql_correlation_true_or_false;

ALTER TABLE rules
    -- ENT_RULE_NAME_MAX; ent_check_child_name, as for subscriptions
    ADD CONSTRAINT rules_name_max_50_chars CHECK (char_length(name) <= 50) NOT VALID,
    ADD CONSTRAINT rules_name_no_forbidden_chars CHECK (name !~ '[@?#*/\\]') NOT VALID,
    ADD CONSTRAINT rules_name_no_control_chars CHECK (name !~ '[\x01-\x1f\x7f]') NOT VALID,
    -- ent_rule_validate: Sql needs an expression that is not blank; ENT_SQL_EXPRESSION_MAX
    ADD CONSTRAINT rules_sql_filter_needs_sql_expression
        CHECK (filter_type <> 'Sql' OR coalesce(sbemu_is_not_blank(sql_expression), false)) NOT VALID,
    ADD CONSTRAINT rules_sql_expression_max_1024_chars CHECK (char_length(sql_expression) <= 1024) NOT VALID,
    -- a Correlation filter needs at least one system or user property
    ADD CONSTRAINT rules_correlation_filter_needs_a_property
        CHECK (filter_type <> 'Correlation' OR coalesce(sbemu_correlation_has_filter(correlation), false)) NOT VALID,
    ADD CONSTRAINT rules_correlation_known_keys_and_types CHECK (sbemu_correlation_ok(correlation)) NOT VALID,
    -- ENT_SQL_EXPRESSION_MAX; NULL for no action (a blank one is no action: Config.json
    -- stores NULL for it, and $management refuses it)
    ADD CONSTRAINT rules_action_expression_not_blank CHECK (sbemu_is_not_blank(action_expression)) NOT VALID,
    ADD CONSTRAINT rules_action_expression_max_1024_chars CHECK (char_length(action_expression) <= 1024) NOT VALID,
    ADD CONSTRAINT rules_filter_parameters_known_types CHECK (sbemu_rule_values_ok(filter_parameters)) NOT VALID,
    ADD CONSTRAINT rules_action_parameters_known_types CHECK (sbemu_rule_values_ok(action_parameters)) NOT VALID;
