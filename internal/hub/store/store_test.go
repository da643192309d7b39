package store_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/hub/store"
	"github.com/skills-mcp/skills-mcp/internal/hub/store/pgtest"
	"github.com/skills-mcp/skills-mcp/internal/hub/store/storetest"
)

var pg pgtest.Shared

func TestMain(m *testing.M) { os.Exit(pg.Main(m)) }

func sqliteDB(t *testing.T) storetest.Opener {
	dir := filepath.Join(t.TempDir(), "data")
	return func(opts store.Options) (*store.DB, error) {
		opts.Dir = dir
		return store.Open(context.Background(), opts)
	}
}

func postgresDB(t *testing.T) storetest.Opener {
	url := pg.Database(t)
	return func(opts store.Options) (*store.DB, error) {
		opts.Database = url
		return store.Open(context.Background(), opts)
	}
}

func TestConformanceSQLite(t *testing.T)   { storetest.Run(t, sqliteDB) }
func TestConformancePostgres(t *testing.T) { storetest.Run(t, postgresDB) }

func open(t *testing.T, opts store.Options) *store.DB {
	t.Helper()
	s, err := store.Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

var skill = storetest.Tree{"SKILL.md": "---\nname: demo\n---\n", "scripts/a.sh": "x:echo a\n"}

func TestNotASQLiteDatabase(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, store.DatabaseFile), bytes.Repeat([]byte("not sqlite "), 1000), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := store.Open(context.Background(), store.Options{Dir: dir})
	if err == nil || !strings.Contains(err.Error(), "is not a SQLite database") || !strings.Contains(err.Error(), "restore") {
		t.Fatalf("Open(garbage) = %v; want an error saying it is not a SQLite database, and what to do", err)
	}
}

func TestPostgresURLRefused(t *testing.T) {
	_, err := store.Open(context.Background(), store.Options{Database: "mysql://u:secret@h/db"})
	if err == nil || strings.Contains(err.Error(), "secret") {
		t.Fatalf("Open(mysql) = %v; want a refusal without the password", err)
	}
}

func TestPostgresUnreachable(t *testing.T) {
	_, err := store.Open(context.Background(), store.Options{Database: "postgres://u:secret@/db?host=" + t.TempDir() + "&connect_timeout=2"})
	if !errors.Is(err, store.ErrUnavailable) || strings.Contains(err.Error(), "secret") {
		t.Fatalf("Open(unreachable) = %v; want ErrUnavailable without the password", err)
	}
}

// A full disk, simulated with a page limit: the install fails with
// ErrStorageFull, nothing of it is visible, and the store keeps working.
func TestSQLiteFull(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	open(t, store.Options{Dir: dir}).Close()
	s := open(t, store.WithPragmas(store.Options{Dir: dir}, "max_page_count(200)"))
	v1, _, err := s.Install(ctx, storetest.Version("small", skill))
	if err != nil {
		t.Fatal(err)
	}
	before, _ := s.Stats(ctx)
	big := storetest.Tree{"SKILL.md": "---\nname: big\n---\n", "assets/big.bin": strings.Repeat("0123456789abcdef", 1<<16)}
	_, _, err = s.Install(ctx, storetest.Version("big", big))
	if !errors.Is(err, store.ErrStorageFull) || !strings.Contains(err.Error(), "rolled back") {
		t.Fatalf("Install(too big) = %v; want ErrStorageFull, rolled back", err)
	}
	if after, _ := s.Stats(ctx); after != before {
		t.Errorf("a failed install left %+v (before %+v)", after, before)
	}
	if _, err := s.ReadFile(ctx, v1.ID, "scripts/a.sh"); err != nil {
		t.Errorf("previous state after a full disk: %v", err)
	}
	if _, _, err := s.Install(ctx, storetest.Version("small2", storetest.Tree{"SKILL.md": "tiny"})); err != nil {
		t.Errorf("a small install after a full disk: %v", err)
	}
}

// The database refuses, on its own, to delete a bound version or to
// change an installed one.
func TestDatabaseEnforces(t *testing.T) {
	for name, newDB := range map[string]func(*testing.T) storetest.Opener{"sqlite": sqliteDB, "postgres": postgresDB} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s, err := newDB(t)(store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			v, _, err := s.Install(ctx, storetest.Version("demo", skill))
			if err != nil {
				t.Fatal(err)
			}
			if err := s.CreateProject(ctx, "p", "p"); err != nil {
				t.Fatal(err)
			}
			if err := s.Bind(ctx, "p", v.ID); err != nil {
				t.Fatal(err)
			}
			db := store.RawDB(s)
			ph := "?"
			if name == "postgres" {
				ph = "$1"
			}
			if _, err := db.ExecContext(ctx, "DELETE FROM versions WHERE id = "+ph, v.ID); err == nil {
				t.Error("the database let a bound version be deleted")
			}
			for _, q := range []string{
				"UPDATE versions SET tree_digest = 'x' WHERE id = " + ph,
				"UPDATE version_files SET size = 1 WHERE version_id = " + ph,
			} {
				if _, err := db.ExecContext(ctx, q, v.ID); err == nil || !strings.Contains(err.Error(), "immutable") {
					t.Errorf("%s: %v; want refused as immutable", q, err)
				}
			}
			// A lost chunk is found when the file is read.
			if _, err := db.ExecContext(ctx, "DELETE FROM blob_chunks WHERE digest IN (SELECT digest FROM version_files WHERE path = 'SKILL.md')"); err != nil {
				t.Fatal(err)
			}
			var ce *store.CorruptError
			if _, err := s.ReadFile(ctx, v.ID, "SKILL.md"); !errors.As(err, &ce) {
				t.Errorf("ReadFile(damaged) = %v, want CorruptError", err)
			}
			if _, err := s.Materialize(ctx, v.ID, t.TempDir()); !errors.As(err, &ce) {
				t.Errorf("Materialize(damaged) = %v, want CorruptError", err)
			}
		})
	}
}

// PostgreSQL stops in the middle of an install: the install fails saying
// so, nothing of it is visible once the server is back, and the store
// works again without being reopened.
func TestPostgresGoesAwayMidInstall(t *testing.T) {
	pg.Server(t) // skips (or fails on CI) without PostgreSQL
	srv, err := pgtest.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx := context.Background()
	url, err := srv.CreateDatabase(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s := open(t, store.Options{Database: url})
	v1, _, err := s.Install(ctx, storetest.Version("one", skill))
	if err != nil {
		t.Fatal(err)
	}
	store.SetBeforeCommit(s, srv.Stop)
	_, _, err = s.Install(ctx, storetest.Version("two", storetest.Tree{"SKILL.md": "two", "b.md": "b"}))
	if !errors.Is(err, store.ErrUnavailable) || !strings.Contains(err.Error(), "rolled back") {
		t.Fatalf("Install while the server stops = %v; want ErrUnavailable, rolled back", err)
	}
	store.SetBeforeCommit(s, nil)
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	st, err := s.Stats(ctx)
	if err != nil {
		t.Fatalf("Stats after the server returned: %v", err)
	}
	if st.Versions != 1 || st.Blobs != 2 {
		t.Errorf("after the failed install: %+v; want only version one", st)
	}
	if _, err := s.ReadFile(ctx, v1.ID, "SKILL.md"); err != nil {
		t.Error(err)
	}
	if _, created, err := s.Install(ctx, storetest.Version("two", storetest.Tree{"SKILL.md": "two", "b.md": "b"})); err != nil || !created {
		t.Errorf("retrying the install = %v, %v", created, err)
	}
}

func TestBackupRestoreSQLite(t *testing.T) {
	ctx := context.Background()
	src := t.TempDir()
	s := open(t, store.Options{Dir: src})
	v, _, err := s.Install(ctx, storetest.Version("demo", skill))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Approve(ctx, v.ID, "admin"); err != nil {
		t.Fatal(err)
	}
	if err := s.PutIndexSnapshot(ctx, []byte(`{"schema_version":1,"items":[]}`), "https://example.invalid/index.json"); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := s.Backup(ctx, &buf); err != nil {
		t.Fatal(err)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(src, ".backup-*")); len(leftovers) > 0 {
		t.Errorf("backup left %v", leftovers)
	}
	dst := filepath.Join(t.TempDir(), "restored")
	if err := store.Restore(ctx, bytes.NewReader(buf.Bytes()), dst); err != nil {
		t.Fatal(err)
	}
	r := open(t, store.Options{Dir: dst})
	got, err := r.GetVersion(ctx, v.ID)
	if err != nil || got.TreeDigest != v.TreeDigest || got.Labels.ApprovedBy != "admin" {
		t.Fatalf("restored version = %+v, %v", got, err)
	}
	if data, err := r.ReadFile(ctx, v.ID, "scripts/a.sh"); err != nil || string(data) != "echo a\n" {
		t.Errorf("restored file = %q, %v", data, err)
	}
	if _, src, _ := r.LatestIndexSnapshot(ctx); src != "https://example.invalid/index.json" {
		t.Errorf("restored snapshot source = %q", src)
	}
	if a, b := mustStats(t, s), mustStats(t, r); a != b {
		t.Errorf("stats differ: %+v vs %+v", a, b)
	}

	// Refused: a non-empty directory, and files that are not hub backups.
	if err := store.Restore(ctx, bytes.NewReader(buf.Bytes()), dst); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("Restore into a used directory = %v", err)
	}
	for name, data := range map[string][]byte{"garbage": bytes.Repeat([]byte("x"), 8192), "truncated": buf.Bytes()[:buf.Len()/2]} {
		d := filepath.Join(t.TempDir(), name)
		if err := store.Restore(ctx, bytes.NewReader(data), d); err == nil {
			t.Errorf("Restore(%s) succeeded", name)
		}
		if entries, _ := os.ReadDir(d); len(entries) != 0 {
			t.Errorf("Restore(%s) left %v", name, entries)
		}
	}
}

func mustStats(t *testing.T, s *store.DB) store.Stats {
	t.Helper()
	st, err := s.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// The documented PostgreSQL backup: pg_dump -Fc, then pg_restore into an
// empty database.
func TestBackupRestorePostgres(t *testing.T) {
	srv := pg.Server(t)
	ctx := context.Background()
	url := pg.Database(t)
	s := open(t, store.Options{Database: url})
	v, _, err := s.Install(ctx, storetest.Version("demo", skill))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Backup(ctx, &bytes.Buffer{}); !errors.Is(err, store.ErrBackupUnsupported) {
		t.Errorf("Backup on PostgreSQL = %v, want ErrBackupUnsupported", err)
	}
	dump := filepath.Join(t.TempDir(), "hub.dump")
	if out, err := exec.Command(filepath.Join(srv.Bin(), "pg_dump"), "-Fc", "-f", dump, "-d", url).CombinedOutput(); err != nil {
		t.Fatalf("pg_dump: %v\n%s", err, out)
	}
	url2 := pg.Database(t)
	if out, err := exec.Command(filepath.Join(srv.Bin(), "pg_restore"), "--no-owner", "-d", url2, dump).CombinedOutput(); err != nil {
		t.Fatalf("pg_restore: %v\n%s", err, out)
	}
	r := open(t, store.Options{Database: url2})
	if data, err := r.ReadFile(ctx, v.ID, "scripts/a.sh"); err != nil || string(data) != "echo a\n" {
		t.Errorf("restored file = %q, %v", data, err)
	}
	if a, b := mustStats(t, s), mustStats(t, r); a != b {
		t.Errorf("stats differ: %+v vs %+v", a, b)
	}
	// The restored database's identities continue after the restored rows.
	v2, _, err := r.Install(ctx, storetest.Version("next", storetest.Tree{"SKILL.md": "next"}))
	if err != nil || v2.ID <= v.ID {
		t.Errorf("install after restore = %+v, %v", v2, err)
	}
}

// Migration 5 makes the tokens table again on SQLite (a CHECK cannot be
// changed there) and replaces its CHECKs on PostgreSQL: the tokens it finds
// still verify, the database still refuses a kind it does not know or a
// project token without a project, and the way down drops the index tokens
// and keeps the others.
func TestWellKnownMigration(t *testing.T) {
	for name, newDB := range map[string]func(*testing.T) storetest.Opener{"sqlite": sqliteDB, "postgres": postgresDB} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s, err := newDB(t)(store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := store.MigrateTo(ctx, s, 4); err != nil {
				t.Fatalf("down to 4: %v", err)
			}
			// Tokens made before the migration, in the table 00002 made.
			if _, err := store.RawDB(s).ExecContext(ctx, `INSERT INTO projects (id, name, created_at, updated_at) VALUES ('p', 'P', 1, 1)`); err != nil {
				t.Fatal(err)
			}
			_, psecret, err := s.CreateToken(ctx, store.NewToken{Kind: store.ProjectToken, ProjectID: "p"})
			if err != nil {
				t.Fatal(err)
			}
			_, asecret, err := s.CreateToken(ctx, store.NewToken{Kind: store.AdminToken, Scope: store.ScopeRead})
			if err != nil {
				t.Fatal(err)
			}
			if err := store.MigrateTo(ctx, s, 5); err != nil {
				t.Fatalf("up to 5: %v", err)
			}
			for _, sec := range []string{psecret, asecret} {
				if _, err := s.VerifyToken(ctx, sec); err != nil {
					t.Errorf("a token made before the migration: %v", err)
				}
			}
			_, isecret, err := s.CreateToken(ctx, store.NewToken{Kind: store.IndexToken, ProjectID: "p"})
			if err != nil {
				t.Fatal(err)
			}
			if p, err := s.SetWellKnown(ctx, "p", true); err != nil || !p.WellKnown {
				t.Fatalf("SetWellKnown = %+v, %v", p, err)
			}
			ph := func(q string) string {
				if name == "postgres" {
					for i := 1; strings.Contains(q, "?"); i++ {
						q = strings.Replace(q, "?", "$"+string(rune('0'+i)), 1)
					}
				}
				return q
			}
			for what, row := range map[string][]any{
				"an unknown kind":              {"0000000000000001", "root", "p", nil},
				"an index token of no project": {"0000000000000002", "index", nil, nil},
				"an index token with a scope":  {"0000000000000003", "index", "p", "read"},
				"a project token of none":      {"0000000000000004", "project", nil, nil},
			} {
				_, err := store.RawDB(s).ExecContext(ctx, ph(`INSERT INTO tokens (id, kind, project_id, scope, name, hash, created_at) VALUES (?, ?, ?, ?, '', ?, 1)`),
					append(row, bytes.Repeat([]byte{1}, 32))...)
				if err == nil {
					t.Errorf("the database took %s", what)
				}
			}
			if err := store.MigrateTo(ctx, s, 4); err != nil {
				t.Fatalf("down to 4 with an index token: %v", err)
			}
			if _, err := s.VerifyToken(ctx, isecret); !errors.Is(err, store.ErrTokenInvalid) {
				t.Errorf("an index token after the way down: %v", err)
			}
			for _, sec := range []string{psecret, asecret} {
				if _, err := s.VerifyToken(ctx, sec); err != nil {
					t.Errorf("a token after the way down: %v", err)
				}
			}
			if err := store.MigrateTo(ctx, s, 5); err != nil {
				t.Fatal(err)
			}
			if p, err := s.GetProject(ctx, "p"); err != nil || p.WellKnown {
				t.Errorf("after down and up: %+v, %v; want the index off", p, err)
			}
		})
	}
}

func TestRedactSecrets(t *testing.T) {
	const sec = "smcp_i_0123456789abcdef_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
	for in, want := range map[string]string{
		"/p/alpha/i/" + sec + "/.well-known/x":         "/p/alpha/i/smcp_i_0123456789abcdef_…/.well-known/x",
		"a " + sec + " and smcp_p_0123456789abcdef_BB": "a smcp_i_0123456789abcdef_… and smcp_p_0123456789abcdef_…",
		"smcp_x_0123456789abcdef_AAAA":                 "smcp_x_0123456789abcdef_AAAA", // not a kind
		"smcp_i_0123456789ABCDEF_AAAA":                 "smcp_i_0123456789ABCDEF_AAAA", // not an id
		"/p/alpha/i/hello":                             "/p/alpha/i/hello",
		"":                                             "",
	} {
		if got := store.RedactSecrets(in); got != want {
			t.Errorf("RedactSecrets(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestStoreIdentity: a store is given a random id when it is made, the
// same for every process that opens it (and for a restored backup), and
// another store's differs.
func TestStoreIdentity(t *testing.T) {
	ctx := context.Background()
	hex32 := regexp.MustCompile(`^[0-9a-f]{32}$`)
	check := func(what string, first, again, other *store.DB) {
		t.Helper()
		if !hex32.MatchString(first.Identity()) {
			t.Errorf("%s: identity %q; want 32 hex digits", what, first.Identity())
		}
		if again.Identity() != first.Identity() {
			t.Errorf("%s: reopened, the identity is %q; want %q", what, again.Identity(), first.Identity())
		}
		if other.Identity() == first.Identity() {
			t.Errorf("%s: two stores share the identity %q", what, first.Identity())
		}
	}
	dir := t.TempDir()
	a := open(t, store.Options{Dir: dir})
	check("SQLite", a, open(t, store.Options{Dir: dir}), open(t, store.Options{Dir: t.TempDir()}))
	var buf bytes.Buffer
	if err := a.Backup(ctx, &buf); err != nil {
		t.Fatal(err)
	}
	restored := filepath.Join(t.TempDir(), "restored")
	if err := store.Restore(ctx, &buf, restored); err != nil {
		t.Fatal(err)
	}
	if got := open(t, store.Options{Dir: restored}).Identity(); got != a.Identity() {
		t.Errorf("a restored backup's identity is %q; want the store's, %q", got, a.Identity())
	}
	url := pg.Database(t)
	p := open(t, store.Options{Database: url})
	check("PostgreSQL", p, open(t, store.Options{Database: url}), open(t, store.Options{Database: pg.Database(t)}))
}
