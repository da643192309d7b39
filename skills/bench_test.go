package skills_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/fstest"
	"time"

	"github.com/skills-mcp/skills-mcp/skills"
)

// rssKiB reads the resident size of the process (Linux; 0 elsewhere).
func rssKiB() int {
	data, _ := os.ReadFile("/proc/self/status")
	for line := range strings.SplitSeq(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return n
		}
	}
	return 0
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkThousandCatalogs serves 1,000 catalogs over 50 distinct
// libraries of 100 skills (20 catalogs each) behind one handler, selected
// per request by a header: it reports the resident size and live heap once
// every catalog was listed, the p50, p99 and rate of skills/get at 32 concurrent
// clients, and what opening one more catalog over a loaded library costs.
// Run it with -benchtime=8000x or more: b.N is the number of skills/get.
func BenchmarkThousandCatalogs(b *testing.B) {
	const libsN, perLib, skillsN, clients = 50, 20, 100, 32
	libs := make([]*fstest.MapFS, libsN)
	for i := range libs {
		m := fstest.MapFS{}
		for j := range skillsN {
			name := fmt.Sprintf("l%02d-skill-%03d", i, j)
			m[name+"/SKILL.md"] = &fstest.MapFile{Data: []byte(skillMD(name, "Use for task "+name+" and nothing else.") + strings.Repeat("Step by step.\n", 40))}
			m[name+"/references/guide.md"] = &fstest.MapFile{Data: []byte(strings.Repeat("Reference text.\n", 60))}
		}
		libs[i] = &m // a pointer compares by identity, so catalogs share it
	}
	cats := make([]*skills.Catalog, 0, libsN*perLib)
	for i := range libsN * perLib {
		c, err := skills.Open(context.Background(), []skills.Library{{FS: libs[i%libsN]}}, &skills.Options{NoLint: false})
		if err != nil {
			b.Fatal(err)
		}
		cats = append(cats, c)
	}
	defer func() {
		for _, c := range cats {
			c.Close()
		}
	}()
	h, err := skills.NewHandler(skills.HandlerOptions{Select: func(r *http.Request) (*skills.Catalog, error) {
		i, err := strconv.Atoi(r.Header.Get("X-Catalog"))
		if err != nil || i < 0 || i >= len(cats) {
			return nil, fmt.Errorf("no such catalog")
		}
		return cats[i], nil
	}})
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
	call := func(cat int, body string) (time.Duration, error) {
		req, _ := http.NewRequest("POST", srv.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		req.Header.Set("X-Catalog", strconv.Itoa(cat))
		start := time.Now()
		res, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		data, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || !strings.Contains(string(data), `"result"`) {
			return 0, fmt.Errorf("%d %s", res.StatusCode, data)
		}
		return time.Since(start), nil
	}
	list := `{"jsonrpc":"2.0","id":1,"method":"skills/list","params":{}}`
	for i := range cats {
		if _, err := call(i, list); err != nil {
			b.Fatal(err)
		}
	}
	runtime.GC()
	rss := rssKiB()
	// The resident size holds the peak of the scans too, as far as the
	// runtime has not returned it yet; the live heap is the steady cost.
	var mem runtime.MemStats
	runtime.ReadMemStats(&mem)

	b.ResetTimer()
	began, cpuBegan := time.Now(), cpuTime()
	var mu sync.Mutex
	var lat []time.Duration
	var wg sync.WaitGroup
	per := max(b.N, 2000) / clients
	for w := range clients {
		wg.Go(func() {
			for k := range per {
				cat := (w*per + k) % len(cats)
				uri := fmt.Sprintf("skill://l%02d-skill-%03d/SKILL.md", cat%libsN, k%skillsN)
				d, err := call(cat, `{"jsonrpc":"2.0","id":2,"method":"skills/get","params":{"uri":"`+uri+`"}}`)
				if err != nil {
					b.Error(err)
					return
				}
				mu.Lock()
				lat = append(lat, d)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	elapsed, cpu := time.Since(began), cpuTime()-cpuBegan
	b.StopTimer()
	slices.Sort(lat)
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "get-p50-ms")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "get-p99-ms")
		b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "get/s")
		// CPU per request, the clients' included: on a shared machine
		// the latencies follow the load, this does far less.
		b.ReportMetric(float64(cpu.Microseconds())/float64(len(lat)), "cpu-µs/get")
	}

	start := time.Now()
	const more = 100
	for i := range more {
		c, err := skills.Open(context.Background(), []skills.Library{{FS: libs[i%libsN]}}, nil)
		if err != nil {
			b.Fatal(err)
		}
		cats = append(cats, c)
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/more/1000, "open-one-more-ms")
	b.ReportMetric(float64(rss)/1024, "RSS-MiB")
	b.ReportMetric(float64(mem.HeapInuse)/(1<<20), "heap-MiB")
}

// BenchmarkHandlerGet is the handler's own cost of one skills/get, with
// and without the front end: no network, one catalog of 100 skills.
func BenchmarkHandlerGet(b *testing.B) {
	m := fstest.MapFS{}
	for j := range 100 {
		name := fmt.Sprintf("skill-%03d", j)
		m[name+"/SKILL.md"] = &fstest.MapFile{Data: []byte(skillMD(name, "Use for task "+name+" and nothing else."))}
	}
	c, err := skills.Open(context.Background(), []skills.Library{{FS: m}}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	for _, mode := range []struct {
		name string
		off  bool
	}{{"front", false}, {"sdk", true}} {
		b.Run(mode.name, func(b *testing.B) {
			h, err := skills.NewHandler(skills.HandlerOptions{NoFastPath: mode.off, Select: func(*http.Request) (*skills.Catalog, error) { return c, nil }})
			if err != nil {
				b.Fatal(err)
			}
			body := `{"jsonrpc":"2.0","id":2,"method":"skills/get","params":{"uri":"skill://skill-042/SKILL.md"}}`
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequest("POST", "/mcp", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != 200 {
					b.Fatal(w.Code, w.Body.String())
				}
			}
		})
	}
}
