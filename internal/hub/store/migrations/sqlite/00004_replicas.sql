-- Issue 27 (SQLite): replicas' leases, who asked for a run, preparations
-- visible to every replica, interrupted uploads, prepared layers kept in
-- the database, and the replica that wrote an audit entry. Keep it in step
-- with ../postgres/00004_replicas.sql.

-- +goose Up
-- A replica's lease, renewed by its heartbeat in the database's time. Once
-- it lapses, any other replica settles the jobs and preparations the
-- replica left.
CREATE TABLE replicas (
	id           TEXT    PRIMARY KEY,
	started_at   INTEGER NOT NULL,
	heartbeat_at INTEGER NOT NULL,
	lease_until  INTEGER NOT NULL
);

-- Who asked for the run (a token id, or a name such as cli), for the
-- audit entry of its end.
ALTER TABLE jobs ADD COLUMN run_by TEXT NOT NULL DEFAULT '';

-- An input whose upload was cut off: the job does not run on it until it
-- is uploaded again.
ALTER TABLE job_files ADD COLUMN incomplete INTEGER NOT NULL DEFAULT 0 CHECK (incomplete IN (0, 1));

-- A preparation running on a replica, and why the last one failed.
ALTER TABLE profiles ADD COLUMN preparing_by TEXT;
ALTER TABLE profiles ADD COLUMN preparing_since INTEGER;
ALTER TABLE profiles ADD COLUMN prepare_error TEXT NOT NULL DEFAULT '';

ALTER TABLE audit ADD COLUMN replica TEXT NOT NULL DEFAULT '';

-- A prepared environment, named by its content digest (the profile's
-- identity without "sha256:"), so that every replica can lay it out.
CREATE TABLE layers (
	digest     TEXT    PRIMARY KEY,
	files      INTEGER NOT NULL CHECK (files >= 0),
	size       INTEGER NOT NULL CHECK (size >= 0),
	created_at INTEGER NOT NULL
);
-- Its entries: folders (d), files (f, their content a blob shared with
-- versions and other layers) and links (l).
CREATE TABLE layer_files (
	layer  TEXT    NOT NULL REFERENCES layers (digest) ON DELETE CASCADE,
	path   TEXT    NOT NULL,
	kind   TEXT    NOT NULL CHECK (kind IN ('d', 'f', 'l')),
	exec   INTEGER NOT NULL DEFAULT 0 CHECK (exec IN (0, 1)),
	target TEXT    NOT NULL DEFAULT '',
	size   INTEGER NOT NULL DEFAULT 0 CHECK (size >= 0),
	digest BLOB    REFERENCES blobs (digest),
	PRIMARY KEY (layer, path),
	CHECK ((kind = 'f') = (digest IS NOT NULL))
);
CREATE INDEX layer_files_digest ON layer_files (digest);

-- +goose Down
DROP TABLE layer_files;
DROP TABLE layers;
ALTER TABLE audit DROP COLUMN replica;
ALTER TABLE profiles DROP COLUMN prepare_error;
ALTER TABLE profiles DROP COLUMN preparing_since;
ALTER TABLE profiles DROP COLUMN preparing_by;
ALTER TABLE job_files DROP COLUMN incomplete;
ALTER TABLE jobs DROP COLUMN run_by;
DROP TABLE replicas;
