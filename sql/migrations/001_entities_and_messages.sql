-- sbemu schema, version 1: entities and messages.
--
-- These tables are a documented interface: users may INSERT a queue with plain
-- SQL and the running emulator uses it at once (entities are read on attach).
-- Durations are intervals; NULL means "unlimited" (Service Bus TimeSpan.MaxValue).
-- Message times are written from the emulator's clock, never from now(), so that
-- TTL, schedules and locks follow the clock tests can move.

-- Millisecond Unix time <-> timestamptz, the only conversions the C code uses.
CREATE FUNCTION sbemu_ts(ms bigint) RETURNS timestamptz
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN to_timestamp(ms / 1000.0);
CREATE FUNCTION sbemu_ms(ts timestamptz) RETURNS bigint
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN floor(extract(epoch FROM ts) * 1000)::bigint;
CREATE FUNCTION sbemu_interval_ms(iv interval) RETURNS bigint
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN floor(extract(epoch FROM iv) * 1000)::bigint;

CREATE TABLE queues (
    id                                      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name                                    text NOT NULL CHECK (name <> ''),
    lock_duration                           interval NOT NULL DEFAULT '1 minute',
    max_delivery_count                      integer NOT NULL DEFAULT 10 CHECK (max_delivery_count >= 1),
    default_message_time_to_live            interval,          -- NULL: unlimited
    dead_lettering_on_message_expiration    boolean NOT NULL DEFAULT false,
    requires_duplicate_detection            boolean NOT NULL DEFAULT false,
    duplicate_detection_history_time_window interval NOT NULL DEFAULT '10 minutes',
    requires_session                        boolean NOT NULL DEFAULT false,
    forward_to                              text,
    forward_dead_lettered_messages_to       text,
    auto_delete_on_idle                     interval,          -- NULL: never
    status                                  text NOT NULL DEFAULT 'Active'
        CHECK (status IN ('Active', 'Disabled', 'SendDisabled', 'ReceiveDisabled')),
    max_size_in_megabytes                   integer NOT NULL DEFAULT 1024 CHECK (max_size_in_megabytes > 0),
    enable_batched_operations               boolean NOT NULL DEFAULT true,
    enable_partitioning                     boolean NOT NULL DEFAULT false,
    user_metadata                           text,
    next_sequence_number                    bigint NOT NULL DEFAULT 1,
    created_at                              timestamptz NOT NULL DEFAULT now(),
    updated_at                              timestamptz NOT NULL DEFAULT now(),
    accessed_at                             timestamptz NOT NULL DEFAULT now()
);
-- Service Bus entity names are case-insensitive.
CREATE UNIQUE INDEX queues_name_key ON queues (lower(name));

-- Topics, subscriptions and rules are kept from Config.json now; routing comes later.
CREATE TABLE topics (
    id                                      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name                                    text NOT NULL CHECK (name <> ''),
    default_message_time_to_live            interval,
    requires_duplicate_detection            boolean NOT NULL DEFAULT false,
    duplicate_detection_history_time_window interval NOT NULL DEFAULT '10 minutes',
    auto_delete_on_idle                     interval,
    status                                  text NOT NULL DEFAULT 'Active'
        CHECK (status IN ('Active', 'Disabled', 'SendDisabled')),
    max_size_in_megabytes                   integer NOT NULL DEFAULT 1024 CHECK (max_size_in_megabytes > 0),
    enable_batched_operations               boolean NOT NULL DEFAULT true,
    enable_partitioning                     boolean NOT NULL DEFAULT false,
    support_ordering                        boolean NOT NULL DEFAULT false,
    user_metadata                           text,
    next_sequence_number                    bigint NOT NULL DEFAULT 1,
    created_at                              timestamptz NOT NULL DEFAULT now(),
    updated_at                              timestamptz NOT NULL DEFAULT now(),
    accessed_at                             timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX topics_name_key ON topics (lower(name));

CREATE TABLE subscriptions (
    id                                      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    topic_id                                bigint NOT NULL REFERENCES topics (id) ON DELETE CASCADE,
    name                                    text NOT NULL CHECK (name <> ''),
    lock_duration                           interval NOT NULL DEFAULT '1 minute',
    max_delivery_count                      integer NOT NULL DEFAULT 10 CHECK (max_delivery_count >= 1),
    default_message_time_to_live            interval,
    dead_lettering_on_message_expiration    boolean NOT NULL DEFAULT false,
    dead_lettering_on_filter_evaluation_exceptions boolean NOT NULL DEFAULT true,
    requires_session                        boolean NOT NULL DEFAULT false,
    forward_to                              text,
    forward_dead_lettered_messages_to       text,
    auto_delete_on_idle                     interval,
    status                                  text NOT NULL DEFAULT 'Active'
        CHECK (status IN ('Active', 'Disabled', 'ReceiveDisabled')),
    enable_batched_operations               boolean NOT NULL DEFAULT true,
    user_metadata                           text,
    created_at                              timestamptz NOT NULL DEFAULT now(),
    updated_at                              timestamptz NOT NULL DEFAULT now(),
    accessed_at                             timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX subscriptions_name_key ON subscriptions (topic_id, lower(name));

CREATE TABLE rules (
    id                  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    subscription_id     bigint NOT NULL REFERENCES subscriptions (id) ON DELETE CASCADE,
    name                text NOT NULL CHECK (name <> ''),
    filter_type         text NOT NULL CHECK (filter_type IN ('Sql', 'Correlation', 'True', 'False')),
    sql_expression      text,       -- the SQL filter, for filter_type Sql
    correlation         jsonb,      -- {"CorrelationId":..., "Properties":{...}} for Correlation
    action_expression   text,       -- SQL rule action, NULL for none
    created_at          timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX rules_name_key ON rules (subscription_id, lower(name));

-- One row per message in a queue or its dead-letter subqueue.
CREATE TABLE messages (
    queue_id                        bigint NOT NULL REFERENCES queues (id) ON DELETE CASCADE,
    sequence_number                 bigint NOT NULL,
    subqueue                        smallint NOT NULL DEFAULT 0,   -- 0: the queue, 1: $DeadLetterQueue
    state                           smallint NOT NULL DEFAULT 0,   -- 0: active, 1: deferred, 2: scheduled
    enqueued_at                     timestamptz NOT NULL,
    available_at                    timestamptz NOT NULL,          -- receivable from (schedule, lock end)
    expires_at                      timestamptz,                   -- NULL: never
    time_to_live_ms                 bigint,                        -- effective TTL, NULL: unlimited
    lock_token                      uuid,
    locked_until                    timestamptz,
    delivery_count                  integer NOT NULL DEFAULT 0,    -- times a lock was granted
    message_id                      text,
    session_id                      text,
    dead_letter_reason              text,
    dead_letter_error_description   text,
    message                         bytea NOT NULL,                -- the bare message as sent
    PRIMARY KEY (queue_id, sequence_number)
);
-- The claim walks this in sequence order, so a receive costs the same whatever the backlog.
CREATE INDEX messages_ready ON messages (queue_id, subqueue, sequence_number) WHERE state = 0;
CREATE INDEX messages_lock_token ON messages (lock_token) WHERE lock_token IS NOT NULL;
CREATE INDEX messages_locked_until ON messages (queue_id, locked_until) WHERE lock_token IS NOT NULL;

-- New or changed entities wake every emulator process on the database.
CREATE FUNCTION sbemu_entity_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('sbemu_entities', TG_TABLE_NAME);
    RETURN NULL;
END $$;
CREATE TRIGGER queues_changed AFTER INSERT OR UPDATE OR DELETE ON queues
    FOR EACH STATEMENT EXECUTE FUNCTION sbemu_entity_changed();
