-- Issue 19's foundation (PostgreSQL): projects with a binding generation,
-- the jobs table's stub, tokens and the audit log. Keep it in step with
-- ../sqlite/00002_projects.sql.

-- +goose Up
ALTER TABLE projects ADD COLUMN paused_at BIGINT;
ALTER TABLE projects ADD COLUMN generation BIGINT NOT NULL DEFAULT 0 CHECK (generation >= 0);
ALTER TABLE projects ADD COLUMN updated_at BIGINT NOT NULL DEFAULT 0;
CREATE UNIQUE INDEX projects_name ON projects (name);
-- Projects are listed in byte order whatever the database's collation.
CREATE INDEX projects_id_bytes ON projects (id COLLATE "C");

CREATE TABLE jobs (
	id         TEXT   PRIMARY KEY,
	project_id TEXT   NOT NULL,
	version_id BIGINT NOT NULL,
	state      TEXT   NOT NULL,
	created_at BIGINT NOT NULL,
	FOREIGN KEY (project_id, version_id) REFERENCES bindings (project_id, version_id)
);
CREATE INDEX jobs_project ON jobs (project_id, state);
CREATE INDEX jobs_binding ON jobs (project_id, version_id);

CREATE TABLE tokens (
	id           TEXT   PRIMARY KEY,
	kind         TEXT   NOT NULL CHECK (kind IN ('project', 'admin')),
	project_id   TEXT   REFERENCES projects (id) ON DELETE CASCADE,
	scope        TEXT   CHECK (scope IN ('read', 'write', 'admin')),
	name         TEXT   NOT NULL,
	hash         BYTEA  NOT NULL CHECK (length(hash) = 32),
	created_at   BIGINT NOT NULL,
	expires_at   BIGINT,
	revoked_at   BIGINT,
	last_used_at BIGINT,
	CHECK ((kind = 'project') = (project_id IS NOT NULL)),
	CHECK ((kind = 'admin') = (scope IS NOT NULL))
);
CREATE INDEX tokens_project ON tokens (project_id);

CREATE TABLE audit (
	id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	at          BIGINT NOT NULL,
	actor       TEXT   NOT NULL,
	action      TEXT   NOT NULL,
	object_kind TEXT   NOT NULL,
	object_id   TEXT   NOT NULL,
	result      TEXT   NOT NULL
);
CREATE INDEX audit_at ON audit (at);
CREATE INDEX audit_actor ON audit (actor, id);
CREATE INDEX audit_object ON audit (object_kind, object_id, id);

-- hub_refuse_update (00001) raises for any row trigger; TRUNCATE is refused too.
CREATE TRIGGER audit_no_update BEFORE UPDATE OR DELETE ON audit FOR EACH ROW EXECUTE FUNCTION hub_refuse_update();
CREATE TRIGGER audit_no_truncate BEFORE TRUNCATE ON audit FOR EACH STATEMENT EXECUTE FUNCTION hub_refuse_update();

-- +goose Down
DROP TABLE audit;
DROP TABLE tokens;
DROP TABLE jobs;
DROP INDEX projects_name;
ALTER TABLE projects DROP COLUMN updated_at;
ALTER TABLE projects DROP COLUMN generation;
ALTER TABLE projects DROP COLUMN paused_at;
