-- Issue 19's foundation (SQLite): projects with a binding generation, the
-- jobs table's stub, tokens and the audit log. Keep it in step with
-- ../postgres/00002_projects.sql.

-- +goose Up
ALTER TABLE projects ADD COLUMN paused_at INTEGER;
-- Bumped by one on every real change of the project's bindings.
ALTER TABLE projects ADD COLUMN generation INTEGER NOT NULL DEFAULT 0 CHECK (generation >= 0);
ALTER TABLE projects ADD COLUMN updated_at INTEGER NOT NULL DEFAULT 0;
CREATE UNIQUE INDEX projects_name ON projects (name);

-- The stub of issue 20's jobs: what the project rules need. A job refers to
-- the binding it runs under, without cascade, so a binding that still has
-- jobs cannot be removed, by the database itself.
CREATE TABLE jobs (
	id         TEXT    PRIMARY KEY,
	project_id TEXT    NOT NULL,
	version_id INTEGER NOT NULL,
	state      TEXT    NOT NULL,
	created_at INTEGER NOT NULL,
	FOREIGN KEY (project_id, version_id) REFERENCES bindings (project_id, version_id)
);
CREATE INDEX jobs_project ON jobs (project_id, state);
CREATE INDEX jobs_binding ON jobs (project_id, version_id);

-- Tokens are kept as the sha256 of the secret only. A project token belongs
-- to one project and goes with it; an admin token has a scope.
CREATE TABLE tokens (
	id           TEXT    PRIMARY KEY,
	kind         TEXT    NOT NULL CHECK (kind IN ('project', 'admin')),
	project_id   TEXT    REFERENCES projects (id) ON DELETE CASCADE,
	scope        TEXT    CHECK (scope IN ('read', 'write', 'admin')),
	name         TEXT    NOT NULL,
	hash         BLOB    NOT NULL CHECK (length(hash) = 32),
	created_at   INTEGER NOT NULL,
	expires_at   INTEGER,
	revoked_at   INTEGER,
	last_used_at INTEGER,
	CHECK ((kind = 'project') = (project_id IS NOT NULL)),
	CHECK ((kind = 'admin') = (scope IS NOT NULL))
);
CREATE INDEX tokens_project ON tokens (project_id);

-- Append-only: who (a token id), what, on which object, the result, when.
CREATE TABLE audit (
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	at          INTEGER NOT NULL,
	actor       TEXT    NOT NULL,
	action      TEXT    NOT NULL,
	object_kind TEXT    NOT NULL,
	object_id   TEXT    NOT NULL,
	result      TEXT    NOT NULL
);
CREATE INDEX audit_at ON audit (at);
CREATE INDEX audit_actor ON audit (actor, id);
CREATE INDEX audit_object ON audit (object_kind, object_id, id);

-- +goose StatementBegin
CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
BEGIN
	SELECT RAISE(ABORT, 'hub: the audit log is append-only (immutable)');
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
BEGIN
	SELECT RAISE(ABORT, 'hub: the audit log is append-only (immutable)');
END;
-- +goose StatementEnd

-- +goose Down
DROP TABLE audit;
DROP TABLE tokens;
DROP TABLE jobs;
DROP INDEX projects_name;
ALTER TABLE projects DROP COLUMN updated_at;
ALTER TABLE projects DROP COLUMN generation;
ALTER TABLE projects DROP COLUMN paused_at;
