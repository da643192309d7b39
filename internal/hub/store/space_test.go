package store_test

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/hub/store"
	"github.com/skills-mcp/skills-mcp/internal/hub/store/storetest"
)

// fileSize is the SQLite database's size on disk: the file and its WAL.
func fileSize(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	for _, name := range []string{store.DatabaseFile, store.DatabaseFile + "-wal"} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// fillJobs makes n finished jobs of project p, each with an output of
// size bytes.
func fillJobs(t *testing.T, s *store.DB, version int64, n, size int) []string {
	t.Helper()
	ctx := context.Background()
	// Random bytes: PostgreSQL compresses what it can (TOAST), and the
	// test measures room, not compression.
	rnd := rand.New(rand.NewPCG(uint64(n), uint64(size)))
	out := make([]byte, size)
	var ids []string
	for range n {
		for k := range out {
			out[k] = byte(rnd.Uint32())
		}
		j, err := s.CreateJob(ctx, "p", version)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.QueueJob(ctx, j.ID, "scripts/a.sh", nil, "tester"); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.ClaimJob(ctx, "r"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.FinishJob(ctx, j.ID, "r", store.JobResult{State: store.JobSucceeded}, []store.NewJobFile{{Path: "out.bin", Data: out}}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, j.ID)
	}
	return ids
}

func jobStore(t *testing.T, opts store.Options) (*store.DB, int64) {
	t.Helper()
	ctx := context.Background()
	s := open(t, opts)
	v, _, err := s.Install(ctx, storetest.Version("demo", skill))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateProject(ctx, "p", "P"); err != nil {
		t.Fatal(err)
	}
	if err := s.Bind(ctx, "p", v.ID); err != nil {
		t.Fatal(err)
	}
	p, err := s.SetProfile(ctx, v.ID, store.ProfileSpec{Runtime: store.RuntimeBash, Scripts: []string{"scripts/a.sh"}, TimeoutSeconds: 10, Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetPrepared(ctx, v.ID, p.Revision, "none", ""); err != nil {
		t.Fatal(err)
	}
	return s, v.ID
}

// Deleting jobs gives their space back to the file system: the SQLite
// file and its WAL shrink (issue 27: a 32 MiB output left 36 MB + 36 MB
// WAL). 100 jobs of 1 MiB output each, deleted one by one.
func TestDeletedJobsGiveSpaceBack(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "data")
	s, v := jobStore(t, store.Options{Dir: dir})
	base := fileSize(t, dir)
	ids := fillJobs(t, s, v, 100, 1<<20)
	full := fileSize(t, dir)
	for _, id := range ids {
		if err := s.DeleteJob(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	after := fileSize(t, dir)
	if sz, err := s.DiskSize(ctx); err == nil {
		t.Logf("after: file %d KiB (free %d KiB), WAL %d KiB", sz.Bytes>>10, sz.Free>>10, sz.WAL>>10)
	}
	t.Logf("SQLite: %d KiB empty, %d KiB with 100 jobs of 1 MiB output, %d KiB after deleting them: %d KiB given back",
		base>>10, full>>10, after>>10, (full-after)>>10)
	if full-after < 90<<20 {
		t.Errorf("deleting 100 MiB of outputs gave back %d KiB", (full-after)>>10)
	}
	sz, err := s.DiskSize(ctx)
	if err != nil || sz.Free > 1<<20 {
		t.Errorf("DiskSize = %+v, %v; want few free pages left", sz, err)
	}
}

// A database made before freed pages could be given back is turned to
// incremental vacuum when opened, once.
func TestOldDatabaseTurnedToIncrementalVacuum(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "data")
	s := open(t, store.Options{Dir: dir})
	db := store.RawDB(s)
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// As before: auto_vacuum off.
	if _, err := conn.ExecContext(ctx, `PRAGMA auto_vacuum = 0`); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, `VACUUM`); err != nil {
		t.Fatal(err)
	}
	var mode int
	conn.QueryRowContext(ctx, `PRAGMA auto_vacuum`).Scan(&mode)
	conn.Close()
	s.Close()
	if mode != 0 {
		t.Fatalf("could not make an old-style database (auto_vacuum %d)", mode)
	}
	s = open(t, store.Options{Dir: dir})
	if err := store.RawDB(s).QueryRowContext(ctx, `PRAGMA auto_vacuum`).Scan(&mode); err != nil || mode != 2 {
		t.Fatalf("auto_vacuum after the open = %d, %v; want 2 (incremental)", mode, err)
	}
}

// PostgreSQL keeps the space of deleted rows for its own reuse
// (autovacuum): 100 jobs deleted and 100 made again grow the database by
// far less than 100 MiB.
func TestPostgresReusesDeletedJobsSpace(t *testing.T) {
	ctx := context.Background()
	url := pg.Database(t)
	s, v := jobStore(t, store.Options{Database: url})
	base, _ := s.DiskSize(ctx)
	ids := fillJobs(t, s, v, 100, 1<<20)
	full, _ := s.DiskSize(ctx)
	for _, id := range ids {
		if err := s.DeleteJob(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	// What autovacuum does in its time, now.
	if _, err := store.RawDB(s).ExecContext(ctx, `VACUUM job_chunks, job_files, jobs`); err != nil {
		t.Fatal(err)
	}
	fillJobs(t, s, v, 100, 1<<20)
	again, _ := s.DiskSize(ctx)
	t.Logf("PostgreSQL: %d KiB empty, %d KiB with 100 jobs of 1 MiB, %d KiB after deleting them and making 100 more (%d KiB reused)",
		base.Bytes>>10, full.Bytes>>10, again.Bytes>>10, (2*full.Bytes-base.Bytes-again.Bytes)>>10)
	if again.Bytes-full.Bytes > 20<<20 {
		t.Errorf("the second 100 MiB grew the database by %d KiB: the first's space was not reused", (again.Bytes-full.Bytes)>>10)
	}
}

// Every form of database credential is masked in what the store prints:
// the URL's userinfo, a password query parameter (any key naming a
// password), a keyword DSN's password=; and the driver's errors, which
// may quote the address, are scrubbed of them.
func TestDatabaseCredentialsMasked(t *testing.T) {
	for _, raw := range []string{
		"postgres://hub:s3cretpw@127.0.0.1:1/hub",
		"postgres://127.0.0.1:1/hub?user=hub&password=s3cretpw&sslmode=disable",
		"postgresql://127.0.0.1:1/hub?sslpassword=s3cretpw",
		"postgres://hub:s3cret%40pw@127.0.0.1:1/hub?password=s3cretpw",
		"host=127.0.0.1 port=1 user=hub password=s3cretpw dbname=hub",
		"host=127.0.0.1 port=1 password='s3cret pw' dbname=hub",
	} {
		got := store.RedactDatabase(raw)
		if strings.Contains(got, "s3cret") {
			t.Errorf("RedactDatabase(%q) = %q", raw, got)
		}
		// No server there (a closed loopback port): the error must not
		// carry the secret.
		_, err := store.Open(context.Background(), store.Options{Database: raw})
		if err == nil {
			t.Errorf("Open(%q) succeeded", got)
			continue
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("Open(%q) = %v: the error holds the password", got, err)
		}
	}
	// A malformed URL whose parse error quotes it.
	_, err := store.Open(context.Background(), store.Options{Database: "postgres://hub@127.0.0.1:notaport/hub?password=s3cretpw"})
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("Open(malformed) = %v", err)
	}
}
