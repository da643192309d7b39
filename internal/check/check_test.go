package check_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skills-mcp/skills-mcp/internal/adversarial"
	"github.com/skills-mcp/skills-mcp/internal/catalog"
	"github.com/skills-mcp/skills-mcp/internal/check"
	"github.com/skills-mcp/skills-mcp/internal/server"
)

const testLibrary = "../../testdata/library"

// libraryServer returns our server on the test library.
func libraryServer(t testing.TB, opts *server.Options) *mcp.Server {
	t.Helper()
	lib, err := catalog.OpenDirectory("", testLibrary)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lib.Close() })
	snap, err := catalog.Scan(context.Background(), []*catalog.Library{lib}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	return server.New(catalog.NewStore(snap), opts)
}

// inMemory returns a Dialer that connects a new in-memory session of ms.
func inMemory(ms *mcp.Server) check.Dialer {
	return func(ctx context.Context) (mcp.Transport, error) {
		ct, st := mcp.NewInMemoryTransports()
		if _, err := ms.Connect(ctx, st, nil); err != nil {
			return nil, err
		}
		return ct, nil
	}
}

// overHTTP serves ms over stateless Streamable HTTP, as serve does, and
// returns a Dialer for it bounded to maxBytes per message.
func overHTTP(t testing.TB, ms *mcp.Server, maxBytes int64) check.Dialer {
	t.Helper()
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return ms }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(ts.Close)
	d, err := check.HTTP(ts.URL, maxBytes)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func text(rep *check.Report) string {
	var b bytes.Buffer
	rep.WriteText(&b)
	return b.String()
}

// results returns the results of check id with status st.
func results(rep *check.Report, id string, st check.Status) []check.Result {
	var out []check.Result
	for _, r := range rep.Results {
		if r.ID == id && r.Status == st {
			out = append(out, r)
		}
	}
	return out
}

// TestOurServerPasses is the first half of the proof: our server passes
// every check, in memory and over stateless HTTP, at both revisions, with
// the default page size, with pages of one entry, and with the legacy
// index on.
func TestOurServerPasses(t *testing.T) {
	configs := map[string]*server.Options{
		"default":      nil,
		"page-size-1":  {PageSize: 1},
		"legacy-index": {LegacyIndex: true, PageSize: 3},
	}
	for name, opts := range configs {
		for _, tr := range []string{"memory", "http"} {
			t.Run(name+"/"+tr, func(t *testing.T) {
				ms := libraryServer(t, opts)
				dial := inMemory(ms)
				if tr == "http" {
					dial = overHTTP(t, ms, 0)
				}
				rep := check.Run(context.Background(), dial, &check.Options{PageSizeProbe: true, Timeout: ample})
				out := text(rep)
				if rep.Failed() || rep.Count(check.Warn) > 0 {
					t.Fatalf("our server does not pass:\n%s", out)
				}
				if !slices.Equal(rep.Versions, []string{"2026-07-28", "2025-11-25"}) {
					t.Errorf("versions = %v", rep.Versions)
				}
				legacy := opts != nil && opts.LegacyIndex
				for _, ch := range check.Checks() {
					isLegacy := strings.HasPrefix(ch.ID, "legacy-")
					passed := len(results(rep, ch.ID, check.Pass)) > 0
					switch {
					case isLegacy && !legacy:
						if len(results(rep, ch.ID, check.Skip)) == 0 {
							t.Errorf("%s: want a SKIP without the legacy index", ch.ID)
						}
					case !passed:
						t.Errorf("%s never passed:\n%s", ch.ID, out)
					}
				}
				if rep.Count(check.Skip) > 0 && legacy {
					t.Errorf("unexpected SKIP lines:\n%s", out)
				}
				// Both revisions' cache rules were checked.
				for _, v := range rep.Versions {
					if !slices.ContainsFunc(results(rep, "cache-fields", check.Pass), func(r check.Result) bool { return r.Version == v }) {
						t.Errorf("cache-fields did not pass at %s", v)
					}
				}
				if len(rep.Fixtures) != 0 {
					t.Errorf("our server carries fixtures: %v", rep.Fixtures)
				}
			})
		}
	}
}

// TestAdversarialProfile is the second half: against the research profile
// check reports every fixture it can see as documented, and lists the
// others as host-only with their reason.
func TestAdversarialProfile(t *testing.T) {
	for _, tr := range []string{"memory", "http"} {
		t.Run(tr, func(t *testing.T) {
			ms := adversarial.New(nil)
			dial := inMemory(ms)
			if tr == "http" {
				dial = overHTTP(t, ms, 0)
			}
			rep := check.Run(context.Background(), dial, &check.Options{MaxPages: 25, Timeout: ample})
			if !rep.Failed() {
				t.Fatalf("the adversarial profile passes:\n%s", text(rep))
			}
			got := map[string]check.Oracle{}
			for _, o := range rep.Fixtures {
				got[o.ID] = o
			}
			for _, f := range adversarial.Fixtures() {
				o, ok := got[f.ID]
				switch {
				case !ok:
					t.Errorf("%s: not offered by the server", f.ID)
				case f.DetectableByCheck && o.Verdict != check.Detected:
					t.Errorf("%s: verdict %q, want %s %s about %s\n%s", f.ID, o.Verdict, f.Expect, f.Check, f.URI, text(rep))
				case !f.DetectableByCheck && (o.Verdict != check.HostOnly || o.HostOnlyReason == ""):
					t.Errorf("%s: verdict %q (reason %q), want host-only with a reason", f.ID, o.Verdict, o.HostOnlyReason)
				case o.Clause != f.Clause || o.Action != f.Action:
					t.Errorf("%s: oracle %q/%q differs from the table", f.ID, o.Clause, o.Action)
				}
			}
			if len(got) != len(adversarial.Fixtures()) {
				t.Errorf("%d fixtures offered, the table has %d", len(got), len(adversarial.Fixtures()))
			}
			var b bytes.Buffer
			if err := rep.WriteOracle(&b); err != nil || !strings.Contains(b.String(), "25 fixtures: 22 detected by check, 3 host-only, 0 not detected") {
				t.Errorf("oracle:\n%s", b.String())
			}
		})
	}
}

// TestConcurrentTesters: two checks of one adversarial server at once
// each see the rotation from their own first read.
func TestConcurrentTesters(t *testing.T) {
	ms := adversarial.New(nil)
	dial := overHTTP(t, ms, 0)
	reps := make([]*check.Report, 4)
	done := make(chan int)
	for i := range reps {
		go func() {
			reps[i] = check.Run(context.Background(), dial, &check.Options{MaxPages: 3, Timeout: ample, Versions: []string{"2026-07-28", "2026-07-28"}})
			done <- i
		}()
	}
	for range reps {
		<-done
	}
	for i, rep := range reps {
		// Every run's first read of the rotating SKILL.md was honest, so
		// read-files passed for it, and its re-read was rotated.
		for _, r := range results(rep, "read-files", check.Fail) {
			if strings.Contains(r.Subject, "adv-content-rotation") {
				t.Errorf("run %d: its first read was already rotated: %s", i, r.Message)
			}
		}
		if !slices.ContainsFunc(results(rep, "read-stable", check.Fail), func(r check.Result) bool { return strings.Contains(r.Subject, "adv-content-rotation") }) {
			t.Errorf("run %d did not see the rotation:\n%s", i, text(rep))
		}
	}
}

func TestChecksCatalog(t *testing.T) {
	seen := map[string]bool{}
	for _, ch := range check.Checks() {
		if ch.ID == "" || ch.Clause == "" || ch.Title == "" || seen[ch.ID] {
			t.Errorf("bad catalog entry %+v", ch)
		}
		seen[ch.ID] = true
	}
	// Every fixture names a check that exists.
	for _, f := range adversarial.Fixtures() {
		if f.DetectableByCheck && !seen[f.Check] {
			t.Errorf("%s names unknown check %q", f.ID, f.Check)
		}
	}
}
