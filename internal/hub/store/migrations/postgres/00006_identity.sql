-- Issue 27 (PostgreSQL): the store's identity, made once with the store,
-- which names the sandboxes of its replicas among those of other hubs on
-- a host or a Docker engine; and the Docker image a preparation pinned.
-- Keep it in step with ../sqlite/00006_identity.sql.

-- +goose Up
-- One row: a random id (32 hex digits) and when it was made.
CREATE TABLE store_identity (
	one        INTEGER PRIMARY KEY CHECK (one = 1),
	id         TEXT    NOT NULL CHECK (length(id) = 32),
	created_at BIGINT  NOT NULL
);
INSERT INTO store_identity (one, id, created_at)
	VALUES (1, replace(gen_random_uuid()::text, '-', ''), CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000000 AS BIGINT));

-- The id of the Docker image the last preparation ran on ("sha256:…"),
-- which every run of the profile uses, whatever its tag names since; empty
-- when prepared on another backend, or not prepared.
ALTER TABLE profiles ADD COLUMN image_id TEXT NOT NULL DEFAULT '';
-- The interpreter's path in that image when the preparation ran, which
-- its runs use with it (the default images keep theirs under
-- /usr/local/bin): a hub started since with another --docker-image still
-- runs a prepared profile as prepared.
ALTER TABLE profiles ADD COLUMN image_interpreter TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE profiles DROP COLUMN image_interpreter;
ALTER TABLE profiles DROP COLUMN image_id;
DROP TABLE store_identity;
