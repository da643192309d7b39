-- The hub's first schema (SQLite). Keep it in step with ../postgres/00001_init.sql:
-- the same tables, columns and constraints, in each dialect's types.

-- +goose Up
CREATE TABLE packages (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	name       TEXT    NOT NULL UNIQUE,
	created_at INTEGER NOT NULL
);

-- A blob is one file's content, named by the sha256 of its bytes and stored
-- as chunks of at most 1 MiB in blob_chunks. Versions share blobs.
CREATE TABLE blobs (
	digest BLOB    PRIMARY KEY CHECK (length(digest) = 32),
	size   INTEGER NOT NULL CHECK (size >= 0),
	chunks INTEGER NOT NULL CHECK (chunks >= 0)
);

CREATE TABLE blob_chunks (
	digest BLOB    NOT NULL REFERENCES blobs (digest) ON DELETE CASCADE,
	seq    INTEGER NOT NULL CHECK (seq >= 0),
	data   BLOB    NOT NULL,
	PRIMARY KEY (digest, seq)
);

CREATE TABLE versions (
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	package_id  INTEGER NOT NULL REFERENCES packages (id),
	tree_digest TEXT    NOT NULL UNIQUE,
	frontmatter TEXT    NOT NULL,
	origin      TEXT    NOT NULL,
	inspection  TEXT    NOT NULL,
	file_count  INTEGER NOT NULL,
	total_size  INTEGER NOT NULL,
	created_at  INTEGER NOT NULL
);
CREATE INDEX versions_package ON versions (package_id, id);

-- A version's files refer to their blobs without cascade: a blob still listed
-- here cannot be deleted.
CREATE TABLE version_files (
	version_id INTEGER NOT NULL REFERENCES versions (id) ON DELETE CASCADE,
	path       TEXT    NOT NULL,
	mode       INTEGER NOT NULL CHECK (mode IN (420, 493)),
	size       INTEGER NOT NULL CHECK (size >= 0),
	digest     BLOB    NOT NULL REFERENCES blobs (digest),
	PRIMARY KEY (version_id, path)
);
CREATE INDEX version_files_digest ON version_files (digest);

-- Labels are the only thing about a version that may change after install.
CREATE TABLE version_labels (
	version_id  INTEGER PRIMARY KEY REFERENCES versions (id) ON DELETE CASCADE,
	approved_by TEXT,
	approved_at INTEGER,
	notes       TEXT NOT NULL DEFAULT '',
	CHECK ((approved_by IS NULL) = (approved_at IS NULL))
);

CREATE TABLE projects (
	id         TEXT    PRIMARY KEY,
	name       TEXT    NOT NULL,
	created_at INTEGER NOT NULL
);

-- No ON DELETE on version_id: a bound version cannot be deleted.
CREATE TABLE bindings (
	project_id TEXT    NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
	version_id INTEGER NOT NULL REFERENCES versions (id),
	created_at INTEGER NOT NULL,
	PRIMARY KEY (project_id, version_id)
);
CREATE INDEX bindings_version ON bindings (version_id);

CREATE TABLE index_snapshots (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	raw        BLOB    NOT NULL,
	source     TEXT    NOT NULL,
	created_at INTEGER NOT NULL
);

-- +goose StatementBegin
CREATE TRIGGER versions_immutable BEFORE UPDATE ON versions
BEGIN
	SELECT RAISE(ABORT, 'hub: an installed version is immutable');
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER version_files_immutable BEFORE UPDATE ON version_files
BEGIN
	SELECT RAISE(ABORT, 'hub: an installed version is immutable');
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER blobs_immutable BEFORE UPDATE ON blobs
BEGIN
	SELECT RAISE(ABORT, 'hub: a stored blob is immutable');
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER blob_chunks_immutable BEFORE UPDATE ON blob_chunks
BEGIN
	SELECT RAISE(ABORT, 'hub: a stored blob is immutable');
END;
-- +goose StatementEnd

-- +goose Down
DROP TABLE index_snapshots;
DROP TABLE bindings;
DROP TABLE projects;
DROP TABLE version_labels;
DROP TABLE version_files;
DROP TABLE versions;
DROP TABLE blob_chunks;
DROP TABLE blobs;
DROP TABLE packages;
