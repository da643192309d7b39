package pull

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// entries builds listed entries from skill paths; "path>dep,dep" declares
// required dependencies.
func entries(specs ...string) []*Entry {
	var out []*Entry
	for _, s := range specs {
		p, deps, _ := strings.Cut(s, ">")
		e := &Entry{URI: "skill://" + p + "/SKILL.md", Scheme: "skill", Path: p, Name: p[strings.LastIndexByte(p, '/')+1:]}
		if deps != "" {
			e.Required = strings.Split(deps, ",")
		}
		out = append(out, e)
	}
	return out
}

func paths(es []*Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Path
	}
	return out
}

func TestSelect(t *testing.T) {
	all := entries("acme/billing/refunds", "acme/ops/deploy", "beta/refunds", "deploy-tools", "solo", "ops/solo/x")
	for _, tc := range []struct {
		ref, want string
	}{
		{"acme/billing/refunds", "acme/billing/refunds"},
		{"skill://acme/billing/refunds/SKILL.md", "acme/billing/refunds"},
		{"skill://acme/billing/refunds", "acme/billing/refunds"},
		{"acme/refunds", "acme/billing/refunds"},
		{"beta/refunds", "beta/refunds"}, // a path beats ns/name
		{"deploy", "acme/ops/deploy"},
		{"solo", "solo"},
		{"ops/x", "ops/solo/x"},
		{"/solo/", "solo"},
	} {
		got, err := Select(all, []string{tc.ref})
		if err != nil || len(got) != 1 || got[0].Path != tc.want {
			t.Errorf("Select(%q) = %v, %v; want %s", tc.ref, paths(got), err, tc.want)
		}
	}

	got, err := Select(all, []string{"deploy", "acme/ops/deploy", "solo"})
	if err != nil || !slices.Equal(paths(got), []string{"acme/ops/deploy", "solo"}) {
		t.Errorf("repeats: %v, %v", paths(got), err)
	}

	_, err = Select(all, []string{"refunds"})
	var se *SelectError
	if !errors.As(err, &se) || !se.Ambiguous || !slices.Equal(se.Candidates, []string{"acme/billing/refunds", "beta/refunds"}) {
		t.Errorf("ambiguous: %v", err)
	}
	if want := `"refunds" is ambiguous: it names acme/billing/refunds, beta/refunds; give the skill path`; err.Error() != want {
		t.Errorf("message = %q\nwant      %q", err, want)
	}

	_, err = Select(all, []string{"deploi"})
	if !errors.As(err, &se) || se.Ambiguous || len(se.Candidates) != 6 {
		t.Errorf("absent: %v", err)
	}
	_, err = Select(all, []string{"ops/deploy-x"})
	if !errors.As(err, &se) || se.Ambiguous || !strings.Contains(err.Error(), "listed skills include") {
		t.Errorf("absent: %v", err)
	}
	_, err = Select(all, []string{"skill://nope/SKILL.md"})
	if err == nil || !strings.Contains(err.Error(), `no skill "skill://nope/SKILL.md" is listed`) {
		t.Errorf("absent URI: %v", err)
	}
	_, err = Select(nil, []string{"x"})
	if err == nil || !strings.Contains(err.Error(), "the server lists no skill") {
		t.Errorf("empty listing: %v", err)
	}
	many := entries()
	for _, p := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n"} {
		many = append(many, entries("lib"+p+"/dup")...)
	}
	_, err = Select(many, []string{"dup"})
	if err == nil || !strings.HasSuffix(err.Error(), "and 2 more; give the skill path") {
		t.Errorf("many candidates: %v", err)
	}
}

func TestClosure(t *testing.T) {
	all := entries(
		"acme/billing/refunds>ledger,audit",
		"acme/billing/ledger>currency",
		"acme/shared/currency",
		"acme/audit",
		"beta/audit",
		"beta/ledger",
		"code-review>git-workflow",
		"git-workflow>code-review", // a cycle
		"acme/broken>nope,beta/ledger",
		"acme/x/amb>dup",
		"acme/x/a/dup",
		"acme/x/b/dup",
		"acme/y/dir>dup",
		"acme/y/dup",
		"acme/y/deep/dup",
	)
	get := func(p string) *Entry {
		for _, e := range all {
			if e.Path == p {
				return e
			}
		}
		t.Fatalf("no %s", p)
		return nil
	}
	out, deps, err := Closure(all, []*Entry{get("acme/billing/refunds")})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"acme/billing/refunds", "acme/billing/ledger", "acme/audit", "acme/shared/currency"}; !slices.Equal(paths(out), want) {
		t.Errorf("closure = %v, want %v", paths(out), want)
	}
	if len(deps) != 3 || deps[0] != (Dep{From: "acme/billing/refunds", Name: "ledger", Path: "acme/billing/ledger"}) {
		t.Errorf("deps = %+v", deps)
	}

	out, _, err = Closure(all, []*Entry{get("code-review")})
	if err != nil || !slices.Equal(paths(out), []string{"code-review", "git-workflow"}) {
		t.Errorf("cycle: %v, %v", paths(out), err)
	}

	_, _, err = Closure(all, []*Entry{get("acme/broken")})
	var me *MissingDepError
	if !errors.As(err, &me) || len(me.Missing) != 1 || !strings.HasPrefix(me.Missing[0], "acme/broken → nope (not listed)") {
		t.Errorf("missing: %v", err)
	}

	_, _, err = Closure(all, []*Entry{get("acme/x/amb")})
	if !errors.As(err, &me) || !strings.Contains(err.Error(), "ambiguous: acme/x/a/dup, acme/x/b/dup") {
		t.Errorf("ambiguous: %v", err)
	}
	// Several at one level, one of them directly at <level>/<name>.
	out, _, err = Closure(all, []*Entry{get("acme/y/dir")})
	if err != nil || !slices.Equal(paths(out), []string{"acme/y/dir", "acme/y/dup"}) {
		t.Errorf("direct: %v, %v", paths(out), err)
	}
}
