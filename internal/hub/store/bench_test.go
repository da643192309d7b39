package store_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/hub/store"
	"github.com/skills-mcp/skills-mcp/internal/hub/store/storetest"
)

// bigPackage is a 1,000-file, 20 MB package with distinct files.
func bigPackage(b *testing.B) store.NewVersion {
	b.Helper()
	tree := storetest.Tree{"SKILL.md": "---\nname: big\ndescription: bench\n---\n"}
	block := make([]byte, 20_000)
	for i := range 999 {
		for j := range block {
			block[j] = byte(i*31 + j*7)
		}
		copy(block, fmt.Sprintf("file %d\n", i))
		tree[fmt.Sprintf("assets/%03d/f%d.bin", i%50, i)] = string(block)
	}
	return storetest.Version("big", tree)
}

func backends(b *testing.B) map[string]func(*testing.B) storetest.Opener {
	return map[string]func(*testing.B) storetest.Opener{
		"sqlite": func(b *testing.B) storetest.Opener {
			dir := b.TempDir()
			return func(opts store.Options) (*store.DB, error) {
				opts.Dir = dir
				return store.Open(context.Background(), opts)
			}
		},
		"postgres": func(b *testing.B) storetest.Opener {
			url := pg.Database(b)
			return func(opts store.Options) (*store.DB, error) {
				opts.Database = url
				return store.Open(context.Background(), opts)
			}
		},
	}
}

// BenchmarkInstall1000Files installs a 1,000-file 20 MB package into an
// empty store (the store's side: the tree is already read and digested).
func BenchmarkInstall1000Files(b *testing.B) {
	nv := bigPackage(b)
	for name, newDB := range backends(b) {
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			b.SetBytes(20_000_000)
			for b.Loop() {
				b.StopTimer()
				s, err := newDB(b)(store.Options{})
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if _, created, err := s.Install(ctx, nv); err != nil || !created {
					b.Fatal(created, err)
				}
				b.StopTimer()
				s.Close()
				b.StartTimer()
			}
		})
	}
}

// BenchmarkInstallAgain installs the same package a second time: no blob
// is written.
func BenchmarkInstallAgain(b *testing.B) {
	nv := bigPackage(b)
	for name, newDB := range backends(b) {
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			s, err := newDB(b)(store.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			if _, _, err := s.Install(ctx, nv); err != nil {
				b.Fatal(err)
			}
			before, _ := s.Stats(ctx)
			for b.Loop() {
				if _, created, err := s.Install(ctx, nv); err != nil || created {
					b.Fatal(created, err)
				}
			}
			if after, _ := s.Stats(ctx); after != before {
				b.Fatalf("installing again wrote: %+v -> %+v", before, after)
			}
		})
	}
}

// BenchmarkOpenAndList opens a store holding 10,000 versions (1,000
// packages of 10) and lists its packages, as `hub list` does.
func BenchmarkOpenAndList(b *testing.B) {
	for name, newDB := range backends(b) {
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			open := newDB(b)
			s, err := open(store.Options{})
			if err != nil {
				b.Fatal(err)
			}
			seed(b, s, 1000, 10)
			s.Close()
			for b.Loop() {
				s, err := open(store.Options{})
				if err != nil {
					b.Fatal(err)
				}
				pkgs, err := s.ListPackages(ctx)
				if err != nil || len(pkgs) != 1000 {
					b.Fatal(len(pkgs), err)
				}
				s.Close()
			}
		})
	}
}

func seed(b *testing.B, s *store.DB, packages, versions int) {
	b.Helper()
	jobs := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for range 4 {
		wg.Go(func() {
			for i := range jobs {
				pkg := fmt.Sprintf("skill-%04d", i/versions)
				body := fmt.Sprintf("---\nname: %s\n---\nversion %d\n", pkg, i%versions)
				d := sha256.Sum256([]byte(body))
				h := sha256.Sum256(fmt.Appendf(nil, "SKILL.md\x00644\x00%s\n", hex.EncodeToString(d[:])))
				nv := store.NewVersion{
					Package: pkg, TreeDigest: "sha256:" + hex.EncodeToString(h[:]),
					Frontmatter: json.RawMessage(`{"name":"` + pkg + `"}`),
					Origin:      json.RawMessage(`{"kind":"zip"}`),
					Inspection:  json.RawMessage(`{"findings":[]}`),
					Files:       []store.NewFile{{Path: "SKILL.md", Mode: 0o644, Size: int64(len(body)), Digest: d, Data: []byte(body)}},
				}
				if _, _, err := s.Install(context.Background(), nv); err != nil {
					mu.Lock()
					firstErr = err
					mu.Unlock()
				}
			}
		})
	}
	for i := range packages * versions {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	if firstErr != nil {
		b.Fatal(firstErr)
	}
}
