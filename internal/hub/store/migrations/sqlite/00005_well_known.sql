-- Issue 32 (SQLite): a project's well-known index (npx skills add), which
-- an administrator turns on, and the capabilities that open it: tokens of
-- a third kind, 'index', each of one project, that open nothing else. Keep
-- it in step with ../postgres/00005_well_known.sql.

-- +goose Up
-- When the project's well-known index was turned on; NULL while it is off.
ALTER TABLE projects ADD COLUMN well_known_at INTEGER;

-- SQLite cannot change a table's CHECK constraints: the table is made
-- again with the new kind, and its rows copied. Nothing refers to tokens.
CREATE TABLE tokens_new (
	id           TEXT    PRIMARY KEY,
	kind         TEXT    NOT NULL CHECK (kind IN ('project', 'admin', 'index')),
	project_id   TEXT    REFERENCES projects (id) ON DELETE CASCADE,
	scope        TEXT    CHECK (scope IN ('read', 'write', 'admin')),
	name         TEXT    NOT NULL,
	hash         BLOB    NOT NULL CHECK (length(hash) = 32),
	created_at   INTEGER NOT NULL,
	expires_at   INTEGER,
	revoked_at   INTEGER,
	last_used_at INTEGER,
	CHECK ((kind IN ('project', 'index')) = (project_id IS NOT NULL)),
	CHECK ((kind = 'admin') = (scope IS NOT NULL))
);
INSERT INTO tokens_new (id, kind, project_id, scope, name, hash, created_at, expires_at, revoked_at, last_used_at)
	SELECT id, kind, project_id, scope, name, hash, created_at, expires_at, revoked_at, last_used_at FROM tokens;
DROP TABLE tokens;
ALTER TABLE tokens_new RENAME TO tokens;
CREATE INDEX tokens_project ON tokens (project_id);

-- +goose Down
DELETE FROM tokens WHERE kind = 'index';
CREATE TABLE tokens_old (
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
INSERT INTO tokens_old (id, kind, project_id, scope, name, hash, created_at, expires_at, revoked_at, last_used_at)
	SELECT id, kind, project_id, scope, name, hash, created_at, expires_at, revoked_at, last_used_at FROM tokens;
DROP TABLE tokens;
ALTER TABLE tokens_old RENAME TO tokens;
CREATE INDEX tokens_project ON tokens (project_id);
ALTER TABLE projects DROP COLUMN well_known_at;
