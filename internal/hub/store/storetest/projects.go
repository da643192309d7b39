package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

// projectTests are the suite's tests of projects, bindings, tokens, the
// audit log and the change feed.
var projectTests = []struct {
	name string
	fn   func(t *testing.T, open Opener)
}{
	{"Projects", testProjects},
	{"ProjectPages", testProjectPages},
	{"Bindings", testBindings},
	{"ConcurrentBindingsSerialise", testConcurrentBindings},
	{"DuplicateAndDeleteProject", testDuplicateDelete},
	{"Tokens", testTokens},
	{"WellKnownIndex", testWellKnown},
	{"Audit", testAudit},
	{"ChangeFeedAcrossStores", testChangeFeed},
	{"ChangeFeedStops", testChangeFeedStops},
}

func mustProject(t *testing.T, s *store.DB, id, name string) {
	t.Helper()
	if err := s.CreateProject(context.Background(), id, name); err != nil {
		t.Fatalf("CreateProject(%s): %v", id, err)
	}
}

func testProjects(t *testing.T, open Opener) {
	ctx := context.Background()
	s := mustOpen(t, open, store.Options{})
	mustProject(t, s, "alpha", "Alpha team")
	p, err := s.GetProject(ctx, "alpha")
	if err != nil || p.ID != "alpha" || p.Name != "Alpha team" || p.Paused || p.Generation != 0 || p.CreatedAt.IsZero() {
		t.Fatalf("GetProject = %+v, %v", p, err)
	}
	if _, err := s.GetProject(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetProject(missing) = %v, want ErrNotFound", err)
	}
	for _, bad := range []string{"", "Upper", "../x", "a/b", "-lead", "sp ace", "a%2Fb", strings.Repeat("a", 64), "é"} {
		if err := s.CreateProject(ctx, bad, "x "+bad); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("CreateProject(%q) = %v, want ErrInvalid", bad, err)
		}
	}
	for _, bad := range []string{"", " padded", "tab\there", strings.Repeat("n", 201)} {
		if err := s.CreateProject(ctx, "ok", bad); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("CreateProject(name %q) = %v, want ErrInvalid", bad, err)
		}
	}
	if err := s.CreateProject(ctx, "alpha", "Other"); !errors.Is(err, store.ErrExists) || !strings.Contains(err.Error(), "id") {
		t.Errorf("CreateProject(taken id) = %v, want ErrExists naming the id", err)
	}
	if err := s.CreateProject(ctx, "beta", "Alpha team"); !errors.Is(err, store.ErrExists) || !strings.Contains(err.Error(), "name") {
		t.Errorf("CreateProject(taken name) = %v, want ErrExists naming the name", err)
	}
	mustProject(t, s, "beta", "Beta")

	r, err := s.RenameProject(ctx, "alpha", "Alpha")
	if err != nil || r.Name != "Alpha" || r.ID != "alpha" {
		t.Fatalf("RenameProject = %+v, %v", r, err)
	}
	if _, err := s.RenameProject(ctx, "alpha", "Beta"); !errors.Is(err, store.ErrExists) {
		t.Errorf("RenameProject(taken) = %v, want ErrExists", err)
	}
	if _, err := s.RenameProject(ctx, "nope", "Nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("RenameProject(missing) = %v, want ErrNotFound", err)
	}
	if p, _ := s.GetProject(ctx, "alpha"); p.Name != "Alpha" {
		t.Errorf("after a refused rename: %q", p.Name)
	}

	for range 2 { // pausing twice is one pause
		p, err = s.PauseProject(ctx, "alpha")
		if err != nil || !p.Paused || p.PausedAt.IsZero() {
			t.Fatalf("PauseProject = %+v, %v", p, err)
		}
	}
	if got, _ := s.GetProject(ctx, "alpha"); !got.Paused || !got.PausedAt.Equal(p.PausedAt) {
		t.Errorf("stored pause = %+v, want %v", got, p.PausedAt)
	}
	p, err = s.ResumeProject(ctx, "alpha")
	if err != nil || p.Paused || !p.PausedAt.IsZero() {
		t.Fatalf("ResumeProject = %+v, %v", p, err)
	}
	if _, err := s.PauseProject(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("PauseProject(missing) = %v", err)
	}
}

func testProjectPages(t *testing.T, open Opener) {
	ctx := context.Background()
	s := mustOpen(t, open, store.Options{})
	// Hyphens and digits sort differently under some collations; the
	// store lists in byte order on both backends.
	ids := []string{"a-b", "ab", "a0", "b", "a-a", "9z", "z9", "a"}
	for _, id := range ids {
		mustProject(t, s, id, "Project "+id)
	}
	slices.Sort(ids)
	var got []string
	after := ""
	for pages := 0; ; pages++ {
		if pages > len(ids) {
			t.Fatal("pagination does not end")
		}
		l, err := s.ListProjects(ctx, store.ProjectPage{After: after, Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Projects) > 3 {
			t.Fatalf("page of %d, limit 3", len(l.Projects))
		}
		for _, p := range l.Projects {
			got = append(got, p.ID)
		}
		if l.Next == "" {
			break
		}
		after = l.Next
	}
	if !slices.Equal(got, ids) {
		t.Errorf("pages = %v, want %v", got, ids)
	}
	all, err := s.ListProjects(ctx, store.ProjectPage{})
	if err != nil || len(all.Projects) != len(ids) || all.Next != "" {
		t.Errorf("one page = %d projects, next %q, %v", len(all.Projects), all.Next, err)
	}
	for _, n := range []int{-1, store.MaxPageSize + 1} {
		if _, err := s.ListProjects(ctx, store.ProjectPage{Limit: n}); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("ListProjects(limit %d) = %v, want ErrInvalid", n, err)
		}
	}
}

func testBindings(t *testing.T, open Opener) {
	ctx := context.Background()
	s := mustOpen(t, open, store.Options{})
	v1 := install(t, s, Version("demo", basic))
	v2 := install(t, s, Version("demo", Tree{"SKILL.md": "v2"}))
	other := install(t, s, Version("another", Tree{"SKILL.md": "another"}))
	mustProject(t, s, "p1", "One")
	mustProject(t, s, "p2", "Two")

	r, err := s.BindVersion(ctx, "p1", v1.ID)
	if err != nil || !r.Changed || r.Generation != 1 {
		t.Fatalf("BindVersion = %+v, %v; want changed, generation 1", r, err)
	}
	r, err = s.BindVersion(ctx, "p1", v1.ID)
	if err != nil || r.Changed || r.Generation != 1 {
		t.Fatalf("BindVersion(again) = %+v, %v; want unchanged, generation 1", r, err)
	}
	// A newer version is a separate binding; one version, many projects.
	for _, b := range []struct {
		p string
		v int64
	}{{"p1", v2.ID}, {"p1", other.ID}, {"p2", v1.ID}} {
		if r, err := s.BindVersion(ctx, b.p, b.v); err != nil || !r.Changed {
			t.Fatalf("BindVersion(%s, %d) = %+v, %v", b.p, b.v, r, err)
		}
	}
	l, err := s.ProjectBindings(ctx, "p1")
	if err != nil || l.Generation != 3 || len(l.Bindings) != 3 {
		t.Fatalf("ProjectBindings = %+v, %v", l, err)
	}
	var order []string
	for _, b := range l.Bindings {
		order = append(order, fmt.Sprintf("%s:%d", b.Version.Package, b.Version.ID))
		if b.BoundAt.IsZero() || b.Version.TreeDigest == "" {
			t.Errorf("binding %+v", b)
		}
	}
	if want := []string{fmt.Sprintf("another:%d", other.ID), fmt.Sprintf("demo:%d", v1.ID), fmt.Sprintf("demo:%d", v2.ID)}; !slices.Equal(order, want) {
		t.Errorf("bindings = %v, want %v", order, want)
	}
	if ps, err := s.Bindings(ctx, v1.ID); err != nil || !slices.Equal(ps, []string{"p1", "p2"}) {
		t.Errorf("Bindings(v1) = %v, %v", ps, err)
	}
	if p, _ := s.GetProject(ctx, "p1"); p.Generation != 3 {
		t.Errorf("project generation = %d, want 3", p.Generation)
	}

	r, err = s.UnbindVersion(ctx, "p1", v2.ID)
	if err != nil || !r.Changed || r.Generation != 4 {
		t.Fatalf("UnbindVersion = %+v, %v", r, err)
	}
	r, err = s.UnbindVersion(ctx, "p1", v2.ID)
	if err != nil || r.Changed || r.Generation != 4 {
		t.Fatalf("UnbindVersion(again) = %+v, %v; want unchanged", r, err)
	}
	if err := s.Unbind(ctx, "p1", v2.ID); err != nil {
		t.Errorf("Unbind(not bound) = %v, want nil", err)
	}

	// Refusals change nothing.
	for name, err := range map[string]error{
		"bind missing version":   func() error { _, err := s.BindVersion(ctx, "p1", other.ID+99); return err }(),
		"bind missing project":   func() error { _, err := s.BindVersion(ctx, "nope", v1.ID); return err }(),
		"unbind missing version": func() error { _, err := s.UnbindVersion(ctx, "p1", other.ID+99); return err }(),
		"unbind missing project": func() error { _, err := s.UnbindVersion(ctx, "nope", v1.ID); return err }(),
		"list missing project":   func() error { _, err := s.ProjectBindings(ctx, "nope"); return err }(),
	} {
		if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s = %v, want ErrNotFound", name, err)
		}
	}
	if l, _ := s.ProjectBindings(ctx, "p1"); l.Generation != 4 || len(l.Bindings) != 2 {
		t.Errorf("after refusals: generation %d, %d bindings", l.Generation, len(l.Bindings))
	}
	// An empty project lists no bindings, not nil.
	mustProject(t, s, "empty", "Empty")
	if l, err := s.ProjectBindings(ctx, "empty"); err != nil || l.Bindings == nil || len(l.Bindings) != 0 || l.Generation != 0 {
		t.Errorf("ProjectBindings(empty) = %+v, %v", l, err)
	}

	// With approval required, an unapproved version is refused.
	sa := mustOpen(t, open, store.Options{RequireApproval: true})
	fresh := install(t, sa, Version("fresh", Tree{"SKILL.md": "fresh"}))
	if _, err := sa.BindVersion(ctx, "p1", fresh.ID); !errors.Is(err, store.ErrNotApproved) {
		t.Errorf("BindVersion(unapproved) = %v, want ErrNotApproved", err)
	}
	if l, _ := s.ProjectBindings(ctx, "p1"); l.Generation != 4 {
		t.Errorf("a refused bind moved the generation to %d", l.Generation)
	}
}

// Binding changes to one project from many stores at once serialise: the
// generation counts exactly the changes reported, and the result is what
// the last change of each binding says.
func testConcurrentBindings(t *testing.T, open Opener) {
	ctx := context.Background()
	const workers, versions = 6, 5
	s := mustOpen(t, open, store.Options{})
	mustProject(t, s, "busy", "Busy")
	var ids []int64
	for i := range versions {
		ids = append(ids, install(t, s, Version(fmt.Sprintf("pkg%d", i), Tree{"SKILL.md": fmt.Sprintf("v%d", i)})).ID)
	}
	stores := make([]*store.DB, workers)
	for i := range stores {
		stores[i] = mustOpen(t, open, store.Options{})
	}
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		changes int64
		gens    = map[int64]bool{}
		errs    []error
	)
	for w := range workers {
		wg.Go(func() {
			for round := range 4 {
				for _, id := range ids {
					var r store.BindResult
					var err error
					if (round+w)%2 == 0 {
						r, err = stores[w].BindVersion(ctx, "busy", id)
					} else {
						r, err = stores[w].UnbindVersion(ctx, "busy", id)
					}
					mu.Lock()
					if err != nil {
						errs = append(errs, err)
					} else if r.Changed {
						changes++
						if gens[r.Generation] {
							errs = append(errs, fmt.Errorf("generation %d reported by two changes", r.Generation))
						}
						gens[r.Generation] = true
					}
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("concurrent binding changes: %v", errs)
	}
	l, err := s.ProjectBindings(ctx, "busy")
	if err != nil {
		t.Fatal(err)
	}
	if l.Generation != changes {
		t.Errorf("generation %d, but %d changes were reported", l.Generation, changes)
	}
	for g := int64(1); g <= changes; g++ {
		if !gens[g] {
			t.Errorf("generation %d was never reported", g)
		}
	}
}

func testDuplicateDelete(t *testing.T, open Opener) {
	ctx := context.Background()
	s := mustOpen(t, open, store.Options{})
	v1 := install(t, s, Version("demo", basic))
	v2 := install(t, s, Version("other", Tree{"SKILL.md": "other"}))
	mustProject(t, s, "src", "Source")
	for _, id := range []int64{v1.ID, v2.ID} {
		if err := s.Bind(ctx, "src", id); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.PauseProject(ctx, "src"); err != nil {
		t.Fatal(err)
	}
	tok, _, err := s.CreateToken(ctx, store.NewToken{Kind: store.ProjectToken, ProjectID: "src"})
	if err != nil {
		t.Fatal(err)
	}
	d, err := s.DuplicateProject(ctx, "src", "copy", "Copy")
	if err != nil || d.ID != "copy" || d.Name != "Copy" || d.Paused || d.Generation != 1 {
		t.Fatalf("DuplicateProject = %+v, %v", d, err)
	}
	l, err := s.ProjectBindings(ctx, "copy")
	if err != nil || len(l.Bindings) != 2 {
		t.Fatalf("copy's bindings = %+v, %v", l, err)
	}
	if ts, _ := s.ListTokens(ctx, store.TokenFilter{ProjectID: "copy"}); len(ts) != 0 {
		t.Errorf("tokens were copied: %+v", ts)
	}
	if _, err := s.DuplicateProject(ctx, "nope", "copy2", "Copy 2"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("DuplicateProject(missing) = %v", err)
	}
	if _, err := s.DuplicateProject(ctx, "src", "copy", "Copy 3"); !errors.Is(err, store.ErrExists) {
		t.Errorf("DuplicateProject(taken id) = %v", err)
	}
	if _, err := s.DuplicateProject(ctx, "src", "copy3", "Copy"); !errors.Is(err, store.ErrExists) {
		t.Errorf("DuplicateProject(taken name) = %v", err)
	}
	mustProject(t, s, "bare", "Bare")
	if d, err := s.DuplicateProject(ctx, "bare", "bare2", "Bare 2"); err != nil || d.Generation != 0 {
		t.Errorf("DuplicateProject(no bindings) = %+v, %v", d, err)
	}

	if err := s.DeleteProject(ctx, "src"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetProject(ctx, "src"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("after delete: %v", err)
	}
	if err := s.DeleteProject(ctx, "src"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("DeleteProject(again) = %v", err)
	}
	if ps, _ := s.Bindings(ctx, v1.ID); !slices.Equal(ps, []string{"copy"}) {
		t.Errorf("v1's projects after deleting src = %v", ps)
	}
	if _, err := s.GetToken(ctx, tok.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the deleted project's token: %v", err)
	}
	// The same id again is a new project: the old tokens do not come back.
	mustProject(t, s, "src", "Source again")
	if p, _ := s.GetProject(ctx, "src"); p.Generation != 0 {
		t.Errorf("recreated project's generation = %d", p.Generation)
	}
}

func testTokens(t *testing.T, open Opener) {
	ctx := context.Background()
	s := mustOpen(t, open, store.Options{})
	mustProject(t, s, "p1", "One")
	mustProject(t, s, "p2", "Two")
	pt, secret, err := s.CreateToken(ctx, store.NewToken{Kind: store.ProjectToken, ProjectID: "p1", Name: "agent"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(secret, "smcp_p_"+pt.ID+"_") || len(secret) < 60 {
		t.Errorf("secret %q does not carry its id %s", secret, pt.ID)
	}
	got, err := s.VerifyToken(ctx, secret)
	if err != nil || got.ID != pt.ID || !got.ForProject("p1") || got.ForProject("p2") || got.Allows(store.ScopeRead) || got.LastUsedAt.IsZero() {
		t.Fatalf("VerifyToken = %+v, %v", got, err)
	}
	at, asecret, err := s.CreateToken(ctx, store.NewToken{Kind: store.AdminToken, Scope: store.ScopeWrite})
	if err != nil || !strings.HasPrefix(asecret, "smcp_a_") {
		t.Fatal(err)
	}
	got, err = s.VerifyToken(ctx, asecret)
	if err != nil || !got.Allows(store.ScopeRead) || !got.Allows(store.ScopeWrite) || got.Allows(store.ScopeAdmin) || got.ForProject("p1") {
		t.Fatalf("admin token = %+v, %v", got, err)
	}
	// Refusals: all ErrTokenInvalid, none repeating the secret.
	flipped := []byte(secret)
	flipped[len(flipped)-2] ^= 1
	if flipped[len(flipped)-2] == '_' || flipped[len(flipped)-2] == '-' {
		flipped[len(flipped)-2] = 'A'
	}
	otherKind := "smcp_a_" + secret[len("smcp_p_"):]
	for name, sec := range map[string]string{
		"empty": "", "garbage": "hello", "wrong secret": string(flipped), "wrong kind": otherKind,
		"unknown id": "smcp_p_0000000000000000_" + secret[len(secret)-43:], "padded": secret + "=",
	} {
		_, err := s.VerifyToken(ctx, sec)
		if !errors.Is(err, store.ErrTokenInvalid) {
			t.Errorf("VerifyToken(%s) = %v, want ErrTokenInvalid", name, err)
		} else if len(sec) > 24 && strings.Contains(err.Error(), sec[24:]) {
			t.Errorf("VerifyToken(%s) repeats the secret: %v", name, err)
		}
	}
	for name, nt := range map[string]store.NewToken{
		"no kind":             {},
		"project no project":  {Kind: store.ProjectToken},
		"project with scope":  {Kind: store.ProjectToken, ProjectID: "p1", Scope: store.ScopeRead},
		"admin no scope":      {Kind: store.AdminToken},
		"admin bad scope":     {Kind: store.AdminToken, Scope: "root"},
		"admin with project":  {Kind: store.AdminToken, Scope: store.ScopeRead, ProjectID: "p1"},
		"expired at creation": {Kind: store.AdminToken, Scope: store.ScopeRead, ExpiresAt: time.Now().Add(-time.Hour)},
	} {
		if _, _, err := s.CreateToken(ctx, nt); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("CreateToken(%s) = %v, want ErrInvalid", name, err)
		}
	}
	if _, _, err := s.CreateToken(ctx, store.NewToken{Kind: store.ProjectToken, ProjectID: "nope"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("CreateToken(missing project) = %v, want ErrNotFound", err)
	}

	ts, err := s.ListTokens(ctx, store.TokenFilter{ProjectID: "p1"})
	if err != nil || len(ts) != 1 || ts[0].ID != pt.ID || ts[0].Name != "agent" {
		t.Errorf("ListTokens(p1) = %+v, %v", ts, err)
	}
	if ts, _ := s.ListTokens(ctx, store.TokenFilter{Kind: store.AdminToken}); len(ts) != 1 || ts[0].ID != at.ID || ts[0].Scope != store.ScopeWrite {
		t.Errorf("ListTokens(admin) = %+v", ts)
	}
	r, err := s.RevokeToken(ctx, pt.ID)
	if err != nil || r.RevokedAt.IsZero() {
		t.Fatalf("RevokeToken = %+v, %v", r, err)
	}
	if r2, err := s.RevokeToken(ctx, pt.ID); err != nil || !r2.RevokedAt.Equal(r.RevokedAt) {
		t.Errorf("RevokeToken(again) = %+v, %v; want the first time kept", r2, err)
	}
	if _, err := s.VerifyToken(ctx, secret); !errors.Is(err, store.ErrTokenInvalid) || !strings.Contains(err.Error(), "revoked") {
		t.Errorf("VerifyToken(revoked) = %v", err)
	}
	if _, err := s.RevokeToken(ctx, "0000000000000000"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("RevokeToken(missing) = %v", err)
	}
	if ts, _ := s.ListTokens(ctx, store.TokenFilter{ProjectID: "p1"}); len(ts) != 0 {
		t.Errorf("revoked tokens listed by default: %+v", ts)
	}
	if ts, _ := s.ListTokens(ctx, store.TokenFilter{ProjectID: "p1", IncludeRevoked: true}); len(ts) != 1 {
		t.Errorf("ListTokens(IncludeRevoked) = %+v", ts)
	}
	// Scopes are ordered read < write < admin.
	for _, c := range []struct {
		have, need store.Scope
		ok         bool
	}{{store.ScopeAdmin, store.ScopeRead, true}, {store.ScopeAdmin, store.ScopeWrite, true}, {store.ScopeRead, store.ScopeWrite, false},
		{store.ScopeWrite, store.ScopeAdmin, false}, {store.ScopeRead, store.ScopeRead, true}, {store.ScopeAdmin, "", false}} {
		if got := c.have.Includes(c.need); got != c.ok {
			t.Errorf("%s includes %q = %v", c.have, c.need, got)
		}
	}
}

// testWellKnown: a project's well-known index is off until turned on, the
// change feed carries it, and its capabilities are tokens of their own
// kind that open that index only, going with the project.
func testWellKnown(t *testing.T, open Opener) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := mustOpen(t, open, store.Options{ChangePoll: time.Hour})
	mustProject(t, s, "p1", "One")
	mustProject(t, s, "p2", "Two")
	if p, _ := s.GetProject(ctx, "p1"); p.WellKnown || !p.WellKnownAt.IsZero() {
		t.Fatalf("a new project's index is on: %+v", p)
	}
	feed := s.Changes(ctx)
	var on store.Project
	for range 2 { // turning it on twice is one change
		p, err := s.SetWellKnown(ctx, "p1", true)
		if err != nil || !p.WellKnown || p.WellKnownAt.IsZero() {
			t.Fatalf("SetWellKnown(on) = %+v, %v", p, err)
		}
		if !on.WellKnownAt.IsZero() && !p.WellKnownAt.Equal(on.WellKnownAt) {
			t.Errorf("turned on again: at %v, want the first time %v kept", p.WellKnownAt, on.WellKnownAt)
		}
		on = p
	}
	if c := next(t, feed); c.Kind != store.ChangeUpdated || c.ProjectID != "p1" || !c.WellKnown {
		t.Fatalf("after turning the index on: %+v", c)
	}
	if got, _ := s.GetProject(ctx, "p1"); !got.WellKnown || !got.WellKnownAt.Equal(on.WellKnownAt) {
		t.Errorf("stored: %+v, want on since %v", got, on.WellKnownAt)
	}
	if pl, _ := s.ListProjects(ctx, store.ProjectPage{}); len(pl.Projects) != 2 || !pl.Projects[0].WellKnown || pl.Projects[1].WellKnown {
		t.Errorf("ListProjects = %+v, want p1 on and p2 off", pl.Projects)
	}
	if _, err := s.SetWellKnown(ctx, "nope", true); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("SetWellKnown(missing) = %v, want ErrNotFound", err)
	}
	// A duplicate starts with its index off.
	if d, err := s.DuplicateProject(ctx, "p1", "copy", "Copy"); err != nil || d.WellKnown {
		t.Errorf("DuplicateProject = %+v, %v; want the index off", d, err)
	}
	if c := next(t, feed); c.Kind != store.ChangeCreated || c.ProjectID != "copy" || c.WellKnown {
		t.Fatalf("after a duplicate: %+v", c)
	}

	// Index tokens: their own prefix, of one project, no scope.
	it, secret, err := s.CreateToken(ctx, store.NewToken{Kind: store.IndexToken, ProjectID: "p1", Name: "installers"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(secret, "smcp_i_"+it.ID+"_") || it.Kind != store.IndexToken || it.ProjectID != "p1" || it.Scope != "" {
		t.Errorf("index token %+v, secret %q", it, secret)
	}
	if strings.Trim(secret, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != "" {
		t.Errorf("secret %q is not one URL path segment", secret)
	}
	got, err := s.VerifyToken(ctx, secret)
	if err != nil || !got.ForIndex("p1") || got.ForIndex("p2") || got.ForProject("p1") || got.Allows(store.ScopeRead) {
		t.Fatalf("VerifyToken(index) = %+v, %v: want the index of p1 and nothing else", got, err)
	}
	pt, psecret, err := s.CreateToken(ctx, store.NewToken{Kind: store.ProjectToken, ProjectID: "p1"})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := s.VerifyToken(ctx, psecret); got.ForIndex("p1") || !got.ForProject("p1") {
		t.Errorf("project token %+v opens the index", got)
	}
	// The endpoint's first filter tells the two kinds apart by prefix.
	if !store.HasIndexTokenPrefix(secret) || store.HasIndexTokenPrefix(psecret) {
		t.Errorf("HasIndexTokenPrefix: index secret %v, project secret %v; want true, false", store.HasIndexTokenPrefix(secret), store.HasIndexTokenPrefix(psecret))
	}
	// A project token's secret under the index prefix is refused.
	if _, err := s.VerifyToken(ctx, "smcp_i_"+psecret[len("smcp_p_"):]); !errors.Is(err, store.ErrTokenInvalid) {
		t.Errorf("VerifyToken(project secret as index) = %v", err)
	}
	for name, nt := range map[string]store.NewToken{
		"no project": {Kind: store.IndexToken},
		"with scope": {Kind: store.IndexToken, ProjectID: "p1", Scope: store.ScopeRead},
	} {
		if _, _, err := s.CreateToken(ctx, nt); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("CreateToken(index %s) = %v, want ErrInvalid", name, err)
		}
	}
	if _, _, err := s.CreateToken(ctx, store.NewToken{Kind: store.IndexToken, ProjectID: "nope"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("CreateToken(index of a missing project) = %v, want ErrNotFound", err)
	}
	if ts, _ := s.ListTokens(ctx, store.TokenFilter{Kind: store.IndexToken, ProjectID: "p1"}); len(ts) != 1 || ts[0].ID != it.ID {
		t.Errorf("ListTokens(index, p1) = %+v", ts)
	}
	if ts, _ := s.ListTokens(ctx, store.TokenFilter{Kind: store.ProjectToken, ProjectID: "p1"}); len(ts) != 1 || ts[0].ID != pt.ID {
		t.Errorf("ListTokens(project, p1) = %+v, want the project token alone", ts)
	}
	// Off, the tokens stay; the index answers nothing (the endpoint's
	// rule), and on again they open it.
	if p, err := s.SetWellKnown(ctx, "p1", false); err != nil || p.WellKnown || !p.WellKnownAt.IsZero() {
		t.Fatalf("SetWellKnown(off) = %+v, %v", p, err)
	}
	if c := next(t, feed); c.Kind != store.ChangeUpdated || c.ProjectID != "p1" || c.WellKnown {
		t.Fatalf("after turning the index off: %+v", c)
	}
	if _, err := s.VerifyToken(ctx, secret); err != nil {
		t.Errorf("an index token after the index was turned off: %v", err)
	}
	if _, err := s.RevokeToken(ctx, it.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.VerifyToken(ctx, secret); !errors.Is(err, store.ErrTokenInvalid) {
		t.Errorf("VerifyToken(revoked index token) = %v", err)
	}
	// The project's tokens of every kind go with it.
	_, secret2, err := s.CreateToken(ctx, store.NewToken{Kind: store.IndexToken, ProjectID: "p2"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteProject(ctx, "p2"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.VerifyToken(ctx, secret2); !errors.Is(err, store.ErrTokenInvalid) {
		t.Errorf("the deleted project's index token: %v", err)
	}
	// The audit log refuses a capability as it refuses any secret.
	if _, err := s.AppendAudit(ctx, store.AuditEntry{Actor: "x", Action: "a", ObjectKind: "k", ObjectID: "/p/p1/i/" + secret, Result: "ok"}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("AppendAudit(capability) = %v, want ErrInvalid", err)
	}
}

func testAudit(t *testing.T, open Opener) {
	ctx := context.Background()
	s := mustOpen(t, open, store.Options{})
	start := time.Now().Add(-time.Second)
	var ids []int64
	for i := range 7 {
		e, err := s.AppendAudit(ctx, store.AuditEntry{
			Actor: fmt.Sprintf("tok%d", i%2), Action: []string{"project.create", "project.bind"}[i%2],
			ObjectKind: "project", ObjectID: fmt.Sprintf("p%d", i%3), Result: []string{store.AuditOK, "not_found"}[i%2],
		})
		if err != nil || e.ID == 0 || e.At.IsZero() {
			t.Fatalf("AppendAudit = %+v, %v", e, err)
		}
		ids = append(ids, e.ID)
	}
	all, err := s.AuditList(ctx, store.AuditFilter{})
	if err != nil || len(all.Entries) != 7 || all.Entries[0].ID != ids[6] || all.Next != 0 {
		t.Fatalf("AuditList = %+v, %v; want 7, newest first", all, err)
	}
	// Pages of 3: 3, 3, 1, newest first, no repeats.
	var seen []int64
	f := store.AuditFilter{Limit: 3}
	for {
		p, err := s.AuditList(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range p.Entries {
			seen = append(seen, e.ID)
		}
		if p.Next == 0 {
			break
		}
		f.Before = p.Next
	}
	want := slices.Clone(ids)
	slices.Reverse(want)
	if !slices.Equal(seen, want) {
		t.Errorf("pages = %v, want %v", seen, want)
	}
	for name, c := range map[string]struct {
		f store.AuditFilter
		n int
	}{
		"actor":  {store.AuditFilter{Actor: "tok1"}, 3},
		"action": {store.AuditFilter{Action: "project.create"}, 4},
		"object": {store.AuditFilter{ObjectKind: "project", ObjectID: "p0"}, 3},
		"since":  {store.AuditFilter{Since: start}, 7},
		"future": {store.AuditFilter{Since: time.Now().Add(time.Hour)}, 0},
		"until":  {store.AuditFilter{Until: start}, 0},
		"mixed":  {store.AuditFilter{Actor: "tok0", ObjectID: "p0"}, 2},
	} {
		p, err := s.AuditList(ctx, c.f)
		if err != nil || len(p.Entries) != c.n {
			t.Errorf("AuditList(%s) = %d entries, %v; want %d", name, len(p.Entries), err, c.n)
		}
	}
	_, secret, err := func() (store.Token, string, error) {
		mustProject(t, s, "p", "P")
		return s.CreateToken(ctx, store.NewToken{Kind: store.ProjectToken, ProjectID: "p"})
	}()
	if err != nil {
		t.Fatal(err)
	}
	for name, e := range map[string]store.AuditEntry{
		"no actor":       {Action: "a", ObjectKind: "k", Result: "ok"},
		"bad action":     {Actor: "x", Action: "Drop Table", ObjectKind: "k", Result: "ok"},
		"no result":      {Actor: "x", Action: "a", ObjectKind: "k"},
		"secret actor":   {Actor: secret, Action: "a", ObjectKind: "k", Result: "ok"},
		"secret object":  {Actor: "x", Action: "a", ObjectKind: "k", ObjectID: "id " + secret, Result: "ok"},
		"control object": {Actor: "x", Action: "a", ObjectKind: "k", ObjectID: "a\nb", Result: "ok"},
	} {
		if _, err := s.AppendAudit(ctx, e); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("AppendAudit(%s) = %v, want ErrInvalid", name, err)
		} else if strings.Contains(err.Error(), secret) {
			t.Errorf("AppendAudit(%s) repeats the secret", name)
		}
	}
	if p, _ := s.AuditList(ctx, store.AuditFilter{}); len(p.Entries) != 7 {
		t.Errorf("refused entries were stored: %d", len(p.Entries))
	}
}

// next waits for the next change, with a generous deadline.
func next(t *testing.T, ch <-chan store.Change) store.Change {
	t.Helper()
	select {
	case c, ok := <-ch:
		if !ok {
			t.Fatal("the change feed closed")
		}
		return c
	case <-time.After(30 * time.Second):
		t.Fatal("no change announced within 30 s")
	}
	panic("unreachable")
}

func testChangeFeed(t *testing.T, open Opener) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// A poll far away: what arrives comes by notification (PostgreSQL) or
	// the in-process broadcast (SQLite).
	a := mustOpen(t, open, store.Options{ChangePoll: time.Hour})
	b := mustOpen(t, open, store.Options{ChangePoll: time.Hour})
	v := install(t, b, Version("demo", basic))
	mustProject(t, b, "before", "Before") // made before the feed: not announced
	feed := a.Changes(ctx)

	mustProject(t, b, "p1", "One")
	if c := next(t, feed); c.Kind != store.ChangeCreated || c.ProjectID != "p1" || c.Name != "One" {
		t.Fatalf("first change = %+v, want p1 created", c)
	}
	start := time.Now()
	if _, err := b.BindVersion(context.Background(), "p1", v.ID); err != nil {
		t.Fatal(err)
	}
	c := next(t, feed)
	if c.Kind != store.ChangeBindings || c.ProjectID != "p1" || c.Generation != 1 {
		t.Fatalf("after a bind: %+v", c)
	}
	t.Logf("a bind through one store reached the other's feed in %v", time.Since(start))
	if time.Since(start) > 5*time.Second {
		t.Errorf("the bind took %v to arrive; notifications should take well under 1 s", time.Since(start))
	}
	// An unchanged binding announces nothing: the next change is the
	// rename after it.
	if r, err := b.BindVersion(context.Background(), "p1", v.ID); err != nil || r.Changed {
		t.Fatal(r, err)
	}
	if _, err := b.RenameProject(context.Background(), "p1", "Uno"); err != nil {
		t.Fatal(err)
	}
	if c := next(t, feed); c.Kind != store.ChangeUpdated || c.Name != "Uno" || c.Generation != 1 {
		t.Fatalf("after an unchanged bind and a rename: %+v, want only the rename", c)
	}
	if _, err := b.PauseProject(context.Background(), "p1"); err != nil {
		t.Fatal(err)
	}
	if c := next(t, feed); c.Kind != store.ChangeUpdated || !c.Paused {
		t.Fatalf("after a pause: %+v", c)
	}
	if _, err := b.DuplicateProject(context.Background(), "p1", "p2", "Two"); err != nil {
		t.Fatal(err)
	}
	if c := next(t, feed); c.Kind != store.ChangeCreated || c.ProjectID != "p2" || c.Generation != 1 {
		t.Fatalf("after a duplicate: %+v", c)
	}
	if err := b.Unbind(context.Background(), "p1", v.ID); err != nil {
		t.Fatal(err)
	}
	if c := next(t, feed); c.Kind != store.ChangeBindings || c.ProjectID != "p1" || c.Generation != 2 {
		t.Fatalf("after an unbind: %+v", c)
	}
	if err := b.DeleteProject(context.Background(), "p2"); err != nil {
		t.Fatal(err)
	}
	if c := next(t, feed); c.Kind != store.ChangeDeleted || c.ProjectID != "p2" {
		t.Fatalf("after a delete: %+v", c)
	}
	// The store's own changes are announced too.
	if err := a.CreateProject(context.Background(), "mine", "Mine"); err != nil {
		t.Fatal(err)
	}
	if c := next(t, feed); c.Kind != store.ChangeCreated || c.ProjectID != "mine" {
		t.Fatalf("after its own create: %+v", c)
	}
}

func testChangeFeedStops(t *testing.T, open Opener) {
	s, err := open(store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	feed := s.Changes(ctx)
	cancel()
	for range feed {
	}
	// Closing the store closes its feeds.
	feed = s.Changes(context.Background())
	done := make(chan struct{})
	go func() {
		for range feed {
		}
		close(done)
	}()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	<-done
	// A closed store's feed is closed at once.
	for range s.Changes(context.Background()) {
	}
}
