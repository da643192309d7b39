package catalogbuild

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// genRepos writes n bare repositories of per packages each (SKILL.md and
// four files of 1–8 KiB, a few nested), the performance case:
// 30 repositories, 1,200 packages.
func genRepos(b *testing.B, n, per int) []Repository {
	var repos []Repository
	for r := range n {
		tr := newTestRepo(b, true)
		files := map[string]string{"LICENSE": "MIT License\n", "README.md": "# generated"}
		for p := range per {
			dir := fmt.Sprintf("skills/s%03d", p)
			if p%10 == 9 {
				dir = fmt.Sprintf("skills/s%03d/nested", p-1)
			}
			name := fmt.Sprintf("r%02d-s%03d", r, p)
			files[dir+"/SKILL.md"] = skillMD(name, "Generated skill "+name+" for the builder's benchmark.")
			for f := range 4 {
				files[fmt.Sprintf("%s/ref/f%d.md", dir, f)] = strings.Repeat(fmt.Sprintf("%s line %d\n", name, f), 64*(1+f*2))
			}
		}
		tr.commit(time.Date(2026, 1, 1, 0, r, 0, 0, time.UTC), files)
		repos = append(repos, Repository{URL: fmt.Sprintf("https://github.com/bench/r%02d", r), Local: tr.dir, Category: "bench"})
	}
	return repos
}

// peakRSS returns the process's peak resident set (VmHWM) in bytes, and
// resets it where Linux allows; 0 elsewhere.
func peakRSS(reset bool) int64 {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	var kb int64
	for line := range strings.Lines(string(raw)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ = strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
		}
	}
	if reset {
		os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
	}
	return kb << 10
}

// BenchmarkBuild30Repos: the target is 30 repositories with 1,200
// packages on 2 cores in 30 s or less, memory bounded.
//
//	go test ./internal/catalogbuild -run XXX -bench Build30Repos -benchtime 3x
func BenchmarkBuild30Repos(b *testing.B) {
	repos := genRepos(b, 30, 40)
	peakRSS(true)
	b.ResetTimer()
	for b.Loop() {
		snap, _, err := Build(context.Background(), Options{Repositories: repos, Parallel: 2})
		if err != nil {
			b.Fatal(err)
		}
		if len(snap.Items) != 1200 {
			b.Fatalf("%d items", len(snap.Items))
		}
	}
	b.ReportMetric(float64(peakRSS(false))/(1<<20), "peak-RSS-MiB")
}
