-- Issue 32 (PostgreSQL): a project's well-known index (npx skills add),
-- which an administrator turns on, and the capabilities that open it:
-- tokens of a third kind, 'index', each of one project, that open nothing
-- else. Keep it in step with ../sqlite/00005_well_known.sql.

-- +goose Up
-- When the project's well-known index was turned on; NULL while it is off.
ALTER TABLE projects ADD COLUMN well_known_at BIGINT;

-- The CHECKs on kind were made unnamed in 00002: drop them by what they
-- read, whatever names the server gave them, and add them again, named.
-- +goose StatementBegin
DO $$
DECLARE c record;
BEGIN
	FOR c IN SELECT conname FROM pg_constraint
		WHERE conrelid = 'tokens'::regclass AND contype = 'c' AND pg_get_constraintdef(oid) LIKE '%kind%'
	LOOP
		EXECUTE format('ALTER TABLE tokens DROP CONSTRAINT %I', c.conname);
	END LOOP;
END
$$;
-- +goose StatementEnd
ALTER TABLE tokens ADD CONSTRAINT tokens_kind CHECK (kind IN ('project', 'admin', 'index'));
ALTER TABLE tokens ADD CONSTRAINT tokens_kind_project CHECK ((kind IN ('project', 'index')) = (project_id IS NOT NULL));
ALTER TABLE tokens ADD CONSTRAINT tokens_kind_scope CHECK ((kind = 'admin') = (scope IS NOT NULL));

-- +goose Down
DELETE FROM tokens WHERE kind = 'index';
ALTER TABLE tokens DROP CONSTRAINT tokens_kind_scope;
ALTER TABLE tokens DROP CONSTRAINT tokens_kind_project;
ALTER TABLE tokens DROP CONSTRAINT tokens_kind;
ALTER TABLE tokens ADD CONSTRAINT tokens_kind CHECK (kind IN ('project', 'admin'));
ALTER TABLE tokens ADD CONSTRAINT tokens_kind_project CHECK ((kind = 'project') = (project_id IS NOT NULL));
ALTER TABLE tokens ADD CONSTRAINT tokens_kind_scope CHECK ((kind = 'admin') = (scope IS NOT NULL));
ALTER TABLE projects DROP COLUMN well_known_at;
