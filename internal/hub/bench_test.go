package hub_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/hub"
	"github.com/skills-mcp/skills-mcp/internal/hub/pkgtree"
	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

// benchZip is a package of n files of size bytes of prose each, which
// deflates about 3:1, plus a SKILL.md whose description carries salt, so
// that each salt is another tree.
func benchZip(b testing.TB, n, size int, salt string) []byte {
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"skill", "package", "form", "field", "merge", "the", "a", "of", "to", "PDF", "script", "value", "chain", "reference"}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.Create("SKILL.md")
	fmt.Fprintf(w, "---\nname: bench\ndescription: A benchmark package %s.\n---\n# Bench\n", salt)
	text := make([]byte, 0, size+32)
	for i := 1; i < n; i++ {
		text = text[:0]
		for len(text) < size {
			text = append(text, words[rng.IntN(len(words))]...)
			text = append(text, ' ')
			if rng.IntN(12) == 0 {
				text = fmt.Appendf(text, "%d\n", rng.Uint64())
			}
		}
		w, err := zw.Create(fmt.Sprintf("references/part%02d/doc%04d.md", i%20, i))
		if err != nil {
			b.Fatal(err)
		}
		w.Write(text[:size])
	}
	if err := zw.Close(); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

// benchBackends runs f on a hub on SQLite and one on PostgreSQL.
func benchBackends(b *testing.B, f func(b *testing.B, h *testHub)) {
	b.Run("sqlite", func(b *testing.B) {
		f(b, benchHub(b, store.Options{Dir: filepath.Join(b.TempDir(), "data")}))
	})
	b.Run("postgres", func(b *testing.B) {
		f(b, benchHub(b, store.Options{Database: pg.Database(b)}))
	})
}

// benchHub opens a store and a hub over it, both closed with b.
func benchHub(b *testing.B, o store.Options) *testHub {
	db, err := store.Open(context.Background(), o)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	return &testHub{Hub: hub.New(db, nil), db: db}
}

// BenchmarkInstallZip installs a new 1,000-file, 20 MB package from a ZIP
// per iteration, as `hub install --zip` does: read and digest, hash the
// upload, inspect, store (issue 18: ≤ 1 s). Every iteration's files but
// SKILL.md are those of the last, so after the first only one blob is new.
func BenchmarkInstallZip(b *testing.B) {
	benchBackends(b, func(b *testing.B, h *testHub) {
		ctx := context.Background()
		b.SetBytes(20 << 20)
		i := 0
		for b.Loop() {
			b.StopTimer()
			data := benchZip(b, 1000, 20<<10, fmt.Sprint(i))
			i++
			b.StartTimer()
			inst, err := h.InstallZip(ctx, hub.ZipInstall{R: bytes.NewReader(data), Size: int64(len(data)), FileName: "bench.zip"})
			if err != nil || !inst.Created {
				b.Fatal(inst, err)
			}
		}
	})
}

// BenchmarkInstallZipFresh installs the package into an empty hub, so
// every blob is written.
func BenchmarkInstallZipFresh(b *testing.B) {
	data := benchZip(b, 1000, 20<<10, "fresh")
	ctx := context.Background()
	b.SetBytes(20 << 20)
	for b.Loop() {
		b.StopTimer()
		db, err := store.Open(ctx, store.Options{Dir: filepath.Join(b.TempDir(), "data")})
		if err != nil {
			b.Fatal(err)
		}
		h := hub.New(db, nil)
		b.StartTimer()
		if _, err := h.InstallZip(ctx, hub.ZipInstall{R: bytes.NewReader(data), Size: int64(len(data)), FileName: "bench.zip"}); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		db.Close()
		b.StartTimer()
	}
}

// BenchmarkInstallZipAgain installs a package the hub holds: one digest
// pass over the files and one lookup, nothing inspected or written.
func BenchmarkInstallZipAgain(b *testing.B) {
	data := benchZip(b, 1000, 20<<10, "again")
	benchBackends(b, func(b *testing.B, h *testHub) {
		ctx := context.Background()
		if _, err := h.InstallZip(ctx, hub.ZipInstall{R: bytes.NewReader(data), Size: int64(len(data)), FileName: "bench.zip"}); err != nil {
			b.Fatal(err)
		}
		before, _ := h.Store().Stats(ctx)
		b.SetBytes(20 << 20)
		for b.Loop() {
			inst, err := h.InstallZip(ctx, hub.ZipInstall{R: bytes.NewReader(data), Size: int64(len(data)), FileName: "bench.zip"})
			if err != nil || inst.Created {
				b.Fatal(inst, err)
			}
		}
		if after, _ := h.Store().Stats(ctx); after != before {
			b.Fatalf("installing again changed the store: %+v → %+v", before, after)
		}
	})
}

// BenchmarkOpenAndList opens a hub holding 10,000 versions (1,000 packages
// of 10) and lists its packages, as `hub list` does (issue 18: ≤ 200 ms).
func BenchmarkOpenAndList(b *testing.B) {
	for _, backend := range []string{"sqlite", "postgres"} {
		b.Run(backend, func(b *testing.B) {
			ctx := context.Background()
			opts := store.Options{Dir: filepath.Join(b.TempDir(), "data")}
			if backend == "postgres" {
				opts = store.Options{Database: pg.Database(b)}
			}
			db, err := store.Open(ctx, opts)
			if err != nil {
				b.Fatal(err)
			}
			seed(b, db, 1000, 10)
			db.Close()
			for b.Loop() {
				db, err := store.Open(ctx, opts)
				if err != nil {
					b.Fatal(err)
				}
				pkgs, err := hub.New(db, nil).List(ctx)
				if err != nil || len(pkgs) != 1000 {
					b.Fatal(len(pkgs), err)
				}
				db.Close()
			}
		})
	}
}

// seed installs packages×versions one-file versions, four at a time.
func seed(b *testing.B, s *store.DB, packages, versions int) {
	b.Helper()
	jobs := make(chan int)
	errs := make(chan error, 4)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for i := range jobs {
				pkg := fmt.Sprintf("skill-%04d", i/versions)
				body := []byte(fmt.Sprintf("---\nname: %s\ndescription: Version %d.\n---\n", pkg, i%versions))
				tree, err := pkgtree.New([]pkgtree.File{{Path: "SKILL.md", Data: body}}, pkgtree.Limits{})
				if err != nil {
					errs <- err
					return
				}
				f := tree.Files[0]
				_, _, err = s.Install(context.Background(), store.NewVersion{
					Package: pkg, TreeDigest: tree.Digest(),
					Frontmatter: json.RawMessage(`{"name":"` + pkg + `"}`),
					Origin:      json.RawMessage(`{"kind":"zip","file_name":"seed.zip"}`),
					Inspection:  json.RawMessage(`{"findings":[]}`),
					Files:       []store.NewFile{{Path: f.Path, Mode: f.Mode, Size: f.Size, Digest: f.Digest, Data: f.Data}},
				})
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	for i := range packages * versions {
		select {
		case jobs <- i:
		case err := <-errs:
			close(jobs)
			wg.Wait()
			b.Fatal(err)
		}
	}
	close(jobs)
	wg.Wait()
	select {
	case err := <-errs:
		b.Fatal(err)
	default:
	}
}
