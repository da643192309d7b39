-- Issue 20 (PostgreSQL): execution profiles, the full jobs table (replacing
-- 00002's stub), job files and their chunks, and the remnants of jobs
-- whose project was deleted. Keep it in step with ../sqlite/00003_jobs.sql.

-- +goose Up
-- One execution profile per installed version, set by an administrator.
-- identity and prepared_at are the prepared state: NULL until Prepare
-- succeeds, cleared by any change of the profile (revision bumps).
CREATE TABLE profiles (
	version_id  BIGINT  PRIMARY KEY REFERENCES versions (id) ON DELETE CASCADE,
	runtime     TEXT    NOT NULL CHECK (runtime IN ('python', 'node', 'bash')),
	image       TEXT    NOT NULL DEFAULT '',
	rootfs      TEXT    NOT NULL DEFAULT '',
	interpreter TEXT    NOT NULL DEFAULT '',
	scripts     TEXT    NOT NULL,
	timeout_s   INTEGER NOT NULL CHECK (timeout_s BETWEEN 1 AND 300),
	network     INTEGER NOT NULL CHECK (network IN (0, 1)),
	enabled     INTEGER NOT NULL CHECK (enabled IN (0, 1)),
	revision    INTEGER NOT NULL CHECK (revision >= 1),
	identity    TEXT,
	prepare_log TEXT    NOT NULL DEFAULT '',
	prepared_at BIGINT,
	updated_at  BIGINT  NOT NULL,
	CHECK ((identity IS NULL) = (prepared_at IS NULL))
);

DROP TABLE jobs;
-- A job refers to the binding it runs under, without cascade, so a binding
-- that still has jobs cannot be removed, by the database itself.
CREATE TABLE jobs (
	id               TEXT    PRIMARY KEY,
	project_id       TEXT    NOT NULL,
	version_id       BIGINT  NOT NULL,
	state            TEXT    NOT NULL CHECK (state IN ('created', 'uploading', 'queued', 'running',
		'succeeded', 'failed', 'timed_out', 'stopped', 'locked')),
	profile_revision INTEGER NOT NULL,
	script           TEXT    NOT NULL DEFAULT '',
	args             TEXT    NOT NULL DEFAULT '[]',
	exit_code        INTEGER,
	reason           TEXT    NOT NULL DEFAULT '',
	stdout           BYTEA   NOT NULL DEFAULT ''::bytea CHECK (length(stdout) <= 1048576),
	stderr           BYTEA   NOT NULL DEFAULT ''::bytea CHECK (length(stderr) <= 1048576),
	stdout_cut       INTEGER NOT NULL DEFAULT 0 CHECK (stdout_cut IN (0, 1)),
	stderr_cut       INTEGER NOT NULL DEFAULT 0 CHECK (stderr_cut IN (0, 1)),
	claimed_by       TEXT,
	stop_requested   INTEGER NOT NULL DEFAULT 0 CHECK (stop_requested IN (0, 1)),
	created_at       BIGINT  NOT NULL,
	queued_at        BIGINT,
	started_at       BIGINT,
	finished_at      BIGINT,
	updated_at       BIGINT  NOT NULL,
	CHECK ((state IN ('running', 'locked')) <= (claimed_by IS NOT NULL)),
	FOREIGN KEY (project_id, version_id) REFERENCES bindings (project_id, version_id)
);
CREATE INDEX jobs_project ON jobs (project_id, state);
CREATE INDEX jobs_binding ON jobs (project_id, version_id);
CREATE INDEX jobs_queue ON jobs (state, queued_at, id);
CREATE INDEX jobs_claimed ON jobs (claimed_by, state);

-- A job's files: its inputs (written only while the job is created or
-- uploading) and its outputs (written with the job's final state). Keyed
-- by the job's id without a foreign key: a deleted project's job files
-- stay, under job_remnants. hash_state is the running sha256 of an input
-- being appended to.
CREATE TABLE job_files (
	job_id     TEXT    NOT NULL,
	kind       TEXT    NOT NULL CHECK (kind IN ('input', 'output')),
	path       TEXT    NOT NULL,
	size       BIGINT  NOT NULL CHECK (size BETWEEN 0 AND 33554432),
	digest     BYTEA   NOT NULL CHECK (length(digest) = 32),
	hash_state BYTEA,
	chunks     INTEGER NOT NULL CHECK (chunks >= 0),
	created_at BIGINT NOT NULL,
	PRIMARY KEY (job_id, kind, path)
);

-- A file's bytes, in pieces of at most 1 MiB at offset off, each with the
-- sha256 of its own bytes, so a ranged read verifies what it reads.
CREATE TABLE job_chunks (
	job_id TEXT    NOT NULL,
	kind   TEXT    NOT NULL,
	path   TEXT    NOT NULL,
	seq    INTEGER NOT NULL CHECK (seq >= 0),
	off    BIGINT  NOT NULL CHECK (off >= 0),
	digest BYTEA   NOT NULL CHECK (length(digest) = 32),
	data   BYTEA   NOT NULL CHECK (length(data) <= 1048576),
	PRIMARY KEY (job_id, kind, path, seq),
	FOREIGN KEY (job_id, kind, path) REFERENCES job_files (job_id, kind, path) ON DELETE CASCADE
);

-- The record of a job removed with its project whose files were kept for
-- the operator's recovery.
CREATE TABLE job_remnants (
	job_id      TEXT    PRIMARY KEY,
	project_id  TEXT    NOT NULL,
	version_id  BIGINT  NOT NULL,
	package     TEXT    NOT NULL,
	tree_digest TEXT    NOT NULL,
	state       TEXT    NOT NULL,
	created_at  BIGINT  NOT NULL,
	deleted_at  BIGINT  NOT NULL
);

-- +goose Down
DROP TABLE job_remnants;
DROP TABLE job_chunks;
DROP TABLE job_files;
DROP TABLE jobs;
CREATE TABLE jobs (
	id         TEXT    PRIMARY KEY,
	project_id TEXT    NOT NULL,
	version_id BIGINT  NOT NULL,
	state      TEXT    NOT NULL,
	created_at BIGINT NOT NULL,
	FOREIGN KEY (project_id, version_id) REFERENCES bindings (project_id, version_id)
);
CREATE INDEX jobs_project ON jobs (project_id, state);
CREATE INDEX jobs_binding ON jobs (project_id, version_id);
DROP TABLE profiles;
