package hubcmd

import (
	"context"
	"strings"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

// An operator turns a project's index on, issues a capability, sees it
// listed (never its secret) and turns the index off, each step audited.
func TestHubWellKnown(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	db, err := store.Open(ctx, store.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.CreateProject(ctx, "p1", "P1"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	environ := map[string]string{"SKILLS_HUB_DATA": dir}

	if stdout, stderr, err := runHub(t, environ, "well-known", "on", "p1"); err != nil || !strings.Contains(stdout, "is on") {
		t.Fatalf("well-known on: %v %q %q", err, stdout, stderr)
	}
	secret, stderr, err := runHub(t, environ, "token", "create", "--index", "p1", "--name", "ci")
	secret = strings.TrimSpace(secret)
	if err != nil || !strings.HasPrefix(secret, "smcp_i_") || !strings.Contains(stderr, "/p/p1/i/SECRET") || strings.Contains(stderr, secret) {
		t.Fatalf("token create --index: %v %q %q", err, secret, stderr)
	}
	list, _, err := runHub(t, environ, "token", "list", "--project", "p1")
	if err != nil || !strings.Contains(list, "project p1's index") || strings.Contains(list, secret) {
		t.Errorf("token list --project p1: %v\n%s", err, list)
	}
	if stdout, _, err := runHub(t, environ, "well-known", "off", "p1"); err != nil || !strings.Contains(stdout, "is off") {
		t.Errorf("well-known off: %v %q", err, stdout)
	}
	if _, _, err := runHub(t, environ, "well-known", "on", "nope"); err == nil || isUsage(err) {
		t.Errorf("well-known on an unknown project: %v; want a runtime error", err)
	}
	for _, args := range [][]string{{"well-known", "up", "p1"}, {"well-known", "on"}, {"token", "create", "--index", "p1", "--project", "p1"}} {
		if _, _, err := runHub(t, environ, args...); !isUsage(err) {
			t.Errorf("%v: %v; want a usage error", args, err)
		}
	}

	db, err = store.Open(ctx, store.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	page, err := db.AuditList(ctx, store.AuditFilter{Actor: CLIActor})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range page.Entries {
		got = append(got, e.Action+" "+e.Result)
	}
	joined := strings.Join(got, ", ")
	for _, want := range []string{"well_known.on ok", "well_known.issue ok", "well_known.off ok", "well_known.on not_found"} {
		if !strings.Contains(joined, want) {
			t.Errorf("the audit log lacks %q: %s", want, joined)
		}
	}
	if strings.Contains(joined, secret) {
		t.Errorf("the audit log holds the secret")
	}
}
