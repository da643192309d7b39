package endpoint_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/hub/endpoint"
	"github.com/skills-mcp/skills-mcp/internal/hub/store"
	"github.com/skills-mcp/skills-mcp/internal/hub/store/storetest"
)

// BenchmarkThousandProjects: 1,000 projects of 10 bindings each over 200
// versions in one process, every project listed once (RSS reported), then
// skills/get from 32 concurrent clients spread over the projects (p50 and
// p99 reported). Run with -benchtime=Nx for N requests;
// ENDPOINT_BENCH_HEAPPROFILE=FILE writes the heap profile after the
// listings.
func BenchmarkThousandProjects(b *testing.B) {
	ctx := context.Background()
	db, err := store.Open(ctx, store.Options{Dir: filepath.Join(b.TempDir(), "data")})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	const nProjects, nVersions, perProject = 1000, 200, 10
	versions := make([]store.Version, nVersions)
	for i := range versions {
		name := fmt.Sprintf("skill-%03d", i)
		v, _, err := db.Install(ctx, storetest.Version(name, storetest.Tree{
			"SKILL.md":            skillMD(name, fmt.Sprintf("Use for task number %d and its kin.", i)),
			"references/guide.md": strings.Repeat("Some guidance for the task.\n", 40),
			"scripts/run.py":      "x:#!/usr/bin/env python3\nprint('hi')\n",
			"assets/template.txt": "template\n",
		}))
		if err != nil {
			b.Fatal(err)
		}
		versions[i] = v
	}
	tokens := make([]string, nProjects)
	uris := make([][]string, nProjects)
	for p := range nProjects {
		id := fmt.Sprintf("p%04d", p)
		if err := db.CreateProject(ctx, id, id); err != nil {
			b.Fatal(err)
		}
		for k := range perProject {
			v := versions[(p*7+k*13)%nVersions]
			if _, err := db.BindVersion(ctx, id, v.ID); err != nil {
				b.Fatal(err)
			}
			uris[p] = append(uris[p], "skill://"+strings.TrimPrefix(v.TreeDigest, "sha256:")[:12]+"/"+v.Package+"/SKILL.md")
		}
		_, tokens[p], _ = db.CreateToken(ctx, store.NewToken{Kind: store.ProjectToken, ProjectID: id})
	}
	h := startHub(b, db, endpoint.Options{})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	post := func(p int, method, params string) (int, error) {
		req, _ := http.NewRequest(http.MethodPost, h.url(fmt.Sprintf("p%04d", p)), strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":`+params+`}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		req.Header.Set("Authorization", "Bearer "+tokens[p])
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	start := time.Now()
	for p := range nProjects {
		if st, err := post(p, "skills/list", "{}"); err != nil || st != 200 {
			b.Fatalf("skills/list p%04d: %d %v", p, st, err)
		}
	}
	b.Logf("listed %d projects in %v", nProjects, time.Since(start))
	runtime.GC()
	b.Logf("RSS after listing every project: %.0f MiB", rssMiB())
	if path := os.Getenv("ENDPOINT_BENCH_HEAPPROFILE"); path != "" {
		// The heap as it is after the listings (-memprofile is written
		// after the hub is gone).
		f, err := os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		pprof.Lookup("heap").WriteTo(f, 0)
		f.Close()
	}

	b.ResetTimer()
	var mu sync.Mutex
	var lat []time.Duration
	var wg sync.WaitGroup
	per := max(b.N/32, 1)
	for c := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			local := make([]time.Duration, 0, per)
			for i := range per {
				p := (c*per + i*31) % nProjects
				t0 := time.Now()
				st, err := post(p, "skills/get", `{"uri":"`+uris[p][i%perProject]+`"}`)
				if err != nil || st != 200 {
					b.Errorf("skills/get: %d %v", st, err)
					return
				}
				local = append(local, time.Since(t0))
			}
			mu.Lock()
			lat = append(lat, local...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	b.StopTimer()
	slices.Sort(lat)
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	}
	b.ReportMetric(rssMiB(), "RSS-after-MiB")
}

// rssMiB is the process's resident size.
func rssMiB() float64 {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(raw), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			var kb float64
			fmt.Sscan(f[1], &kb)
			return kb / 1024
		}
	}
	return -1
}
