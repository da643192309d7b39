package library

import (
	"archive/zip"
	"context"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// benchZip writes a library archive of skills × 6 files of about 8 KB of
// poorly compressible text each, the shape of a large real library.
func benchZip(b *testing.B, skills int) string {
	b.Helper()
	zp := filepath.Join(b.TempDir(), "lib.zip")
	f, err := os.Create(zp)
	if err != nil {
		b.Fatal(err)
	}
	zw := zip.NewWriter(f)
	r := rand.New(rand.NewPCG(1, 2))
	raw := make([]byte, 6400)
	for s := range skills {
		for _, name := range []string{"SKILL.md", "references/guide.md", "references/api.md", "scripts/run.py", "assets/template.txt", "examples/example.md"} {
			w, err := zw.Create(fmt.Sprintf("library/cat%02d/skill-%04d/%s", s%40, s, name))
			if err != nil {
				b.Fatal(err)
			}
			for i := range raw {
				raw[i] = byte(r.Uint32())
			}
			w.Write([]byte(base64.StdEncoding.EncodeToString(raw)))
		}
	}
	if err := zw.Close(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return zp
}

// BenchmarkExtract measures a 200-skill library (1,200 files, 8 MB zipped):
// a first extraction, a new process's first use of a cached extraction
// (which re-hashes the tree), and a repeated use in the same process. For
// the 50 MB measurement, raise the skill count to 1300.
func BenchmarkExtract(b *testing.B) {
	zp := benchZip(b, 200)
	info, _ := os.Stat(zp)
	ctx := context.Background()
	b.Run("cold", func(b *testing.B) {
		b.SetBytes(info.Size())
		for b.Loop() {
			c := &Cache{Dir: b.TempDir()}
			if _, _, err := c.Extract(ctx, zp); err != nil {
				b.Fatal(err)
			}
			c.Close()
		}
	})
	dir := b.TempDir()
	c := &Cache{Dir: dir}
	if _, _, err := c.Extract(ctx, zp); err != nil {
		b.Fatal(err)
	}
	c.Close()
	b.Run("warm-new-process", func(b *testing.B) {
		b.SetBytes(info.Size())
		for b.Loop() {
			c := &Cache{Dir: dir}
			if _, _, err := c.Extract(ctx, zp); err != nil {
				b.Fatal(err)
			}
			c.Close()
		}
	})
	b.Run("same-process", func(b *testing.B) {
		c := &Cache{Dir: dir}
		defer c.Close()
		if _, _, err := c.Extract(ctx, zp); err != nil { // the first use, kept
			b.Fatal(err)
		}
		for b.Loop() {
			_, digest, err := c.Extract(ctx, zp)
			if err != nil {
				b.Fatal(err)
			}
			c.Prune(digest) // ends this use only
		}
	})
}
