-- sbemu schema, version 24: a lock token names its message.
--
-- A lock token's first 8 bytes are its message's sequence number (big-endian,
-- as int8send writes it) and its last 8 are random. Every statement that takes
-- a token also knows the entity it was received from, so it finds the message
-- by its primary key (entity_id, sequence_number) and then checks the whole
-- token. The random half tells one lock of a message from the next: a token
-- from before an abandon, a lapse or a released session never matches the
-- lock that followed it.
--
-- That makes messages_lock_token unneeded, and it cost every claim: a claim
-- is an UPDATE of the message's row that adds an entry to each index whose
-- key or predicate it changes, and vacuum later removes each. Without it,
-- claims of 50,000 read 637k buffers instead of 779k; in an A/B of five
-- alternating pairs of six rounds on one queue, 1 KiB peek-lock averaged
-- +10 % on one connection and +15 % on ten. Settlements find rows by primary
-- key instead (sql/store_token_sql.h).
--
-- A message locked before this migration keeps a random token that names
-- no sequence number: its settlement finds nothing (lock lost), and the
-- message is delivered again when its lock lapses, as after any lost lock.
CREATE FUNCTION sbemu_lock_token(seq bigint) RETURNS uuid
    LANGUAGE sql VOLATILE STRICT PARALLEL SAFE
    RETURN encode(int8send(seq) || substr(uuid_send(gen_random_uuid()), 9), 'hex')::uuid;
-- The sequence number a token names (its first 16 hex digits).
CREATE FUNCTION sbemu_token_seq(token uuid) RETURNS bigint
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN ('x' || translate(left(token::text, 18), '-', ''))::bit(64)::bigint;

DROP INDEX messages_lock_token;
