package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skills-mcp/skills-mcp/internal/catalog"
	goldenfile "github.com/skills-mcp/skills-mcp/internal/golden"
	"github.com/skills-mcp/skills-mcp/internal/server"
	"github.com/skills-mcp/skills-mcp/internal/vault"
)

var updateVault = flag.Bool("update-vault", false, "rewrite the golden vault outputs in testdata/vault")

// fixtureVault is the repository's test vault (testdata/vault), opened as
// the command line opens a vault root.
const fixtureVault = "../../testdata/vault"

// vaultLibrary opens the fixture vault as library ns.
func vaultLibrary(t *testing.T, ns, dir string) *catalog.Library {
	t.Helper()
	root, err := catalog.OpenDirectory(ns, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	lib, err := catalog.OpenDirectory(ns, filepath.Join(dir, vault.SkillsDir))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lib.Close() })
	lib.Vault, lib.VaultSkills = root, vault.SkillsDir
	return lib
}

// serveVault serves libs with the vault surface and returns the client
// session, the store and the notifier.
func serveVault(t *testing.T, libs []*catalog.Library, opts *catalog.Options) (*mcp.ClientSession, *catalog.Store, *server.Notifier, *listChanges) {
	return serveVaultAt(t, "2025-11-25", libs, opts)
}

// serveVaultAt is serveVault at protocol revision v.
func serveVaultAt(t *testing.T, v string, libs []*catalog.Library, opts *catalog.Options) (*mcp.ClientSession, *catalog.Store, *server.Notifier, *listChanges) {
	t.Helper()
	snap, err := catalog.Scan(context.Background(), libs, 1, opts)
	if err != nil {
		t.Fatal(err)
	}
	store := catalog.NewStore(snap)
	n := new(server.Notifier)
	changed := &listChanges{tools: make(chan struct{}, 1), prompts: make(chan struct{}, 1)}
	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler:   func(context.Context, *mcp.ToolListChangedRequest) { signal(changed.tools) },
		PromptListChangedHandler: func(context.Context, *mcp.PromptListChangedRequest) { signal(changed.prompts) },
	})
	return session(t, server.New(store, &server.Options{Name: "bob", Notifier: n}), c, v), store, n, changed
}

// listChanges holds one pending signal per kind of list_changed the client
// received. A signal says "look again", never what changed: the SDK
// debounces each kind on its own timer, so one swap can send a kind more
// than once, and a notification of the swap before can arrive after the
// next one began.
type listChanges struct {
	tools, prompts chan struct{}
}

// signal leaves a pending signal on ch unless one is pending already, so
// the client's handler never blocks.
func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

func promptNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListPrompts(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range res.Prompts {
		names = append(names, p.Name)
	}
	return names
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names
}

// golden compares got, indented JSON, with testdata/vault/name.json.
func golden(t *testing.T, name string, got any) {
	t.Helper()
	data, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	goldenfile.Check(t, filepath.Join("testdata", "vault", name+".json"), append(data, '\n'), *updateVault, "update-vault")
}

func TestVaultTools(t *testing.T) {
	cs, _, _, _ := serveVault(t, []*catalog.Library{vaultLibrary(t, "bob", fixtureVault)}, nil)
	names := toolNames(t, cs)
	for _, n := range []string{"bob_list_playbooks", "bob_get_playbook", "bob_list_value_chains", "bob_get_value_chain"} {
		if !slices.Contains(names, n) {
			t.Errorf("tool %s not listed: %v", n, names)
		}
	}

	list, text, isErr := callTool(t, cs, "bob_list_playbooks", nil)
	if isErr || !strings.Contains(text, "not instructions from the user") {
		t.Fatalf("list_playbooks: %s", text)
	}
	golden(t, "list_playbooks", list)

	for _, name := range []string{"CRO improvement loop", "bob/Monthly Close", "playbook://bob/Phased%20rollout", "misplaced"} {
		out, text, isErr := callTool(t, cs, "bob_get_playbook", map[string]any{"name": name})
		if isErr {
			t.Fatalf("get_playbook %q: %s", name, text)
		}
		for _, leak := range []string{"testdata", "/work", "../"} {
			if strings.Contains(text, leak) {
				t.Errorf("get_playbook %q leaks %q", name, leak)
			}
		}
		delete(out, "text") // the note itself; its digest is in the attachments
		golden(t, "get_playbook_"+strings.ToLower(strings.NewReplacer(" ", "_", "/", "_", ":", "", "%20", "_").Replace(name)), out)
	}

	chains, _, _ := callTool(t, cs, "bob_list_value_chains", nil)
	golden(t, "list_value_chains", chains)
	for _, id := range []string{"lead-to-cash", "bob/infrastructure", "ghost-chain"} {
		out, text, isErr := callTool(t, cs, "bob_get_value_chain", map[string]any{"id": id})
		if isErr {
			t.Fatalf("get_value_chain %q: %s", id, text)
		}
		golden(t, "get_value_chain_"+strings.ReplaceAll(id, "/", "_"), out)
	}

	for _, tc := range []struct{ tool, arg, val, want string }{
		{"bob_get_playbook", "name", "Draft idea", "no playbook"},
		{"bob_get_playbook", "name", "Private process", "no playbook"},
		{"bob_get_playbook", "name", "Old loop", "no playbook"},
		{"bob_get_value_chain", "id", "fake-chain", "no value chain"},
		{"bob_list_playbooks", "library", "nope", "no library"},
	} {
		_, text, isErr := callTool(t, cs, tc.tool, map[string]any{tc.arg: tc.val})
		if !isErr || !strings.Contains(text, tc.want) {
			t.Errorf("%s %s=%q: isError=%v %q", tc.tool, tc.arg, tc.val, isErr, text)
		}
	}

	// Filters.
	out, _, _ := callTool(t, cs, "bob_list_playbooks", map[string]any{"value_chain": "lead-to-cash", "stage": "close"})
	if got := out["total"]; got != 2.0 { // CRO improvement loop and Phased rollout
		t.Errorf("value_chain+stage filter: total %v", got)
	}
	out, _, _ = callTool(t, cs, "bob_list_playbooks", map[string]any{"skill": "cro"})
	if got := out["total"].(float64); got < 1 {
		t.Errorf("skill filter: total %v", got)
	}
	out, _, _ = callTool(t, cs, "bob_list_playbooks", map[string]any{"query": "monthly close books"})
	if pbs := out["playbooks"].([]any); len(pbs) == 0 || pbs[0].(map[string]any)["name"] != "Monthly Close" {
		t.Errorf("query ranking: %v", pbs)
	}
	out, _, _ = callTool(t, cs, "bob_list_playbooks", map[string]any{"limit": 2})
	cursor, _ := out["nextCursor"].(string)
	if cursor == "" {
		t.Fatal("no nextCursor with limit 2")
	}
	next, _, _ := callTool(t, cs, "bob_list_playbooks", map[string]any{"limit": 2, "cursor": cursor})
	if first, second := out["playbooks"].([]any), next["playbooks"].([]any); len(second) == 0 || first[0].(map[string]any)["name"] == second[0].(map[string]any)["name"] {
		t.Errorf("second page repeats the first: %v / %v", first, second)
	}

	libs, _, _ := callTool(t, cs, "bob_list_libraries", nil)
	golden(t, "list_libraries", libs)
}

func TestVaultResourcesAndPrompt(t *testing.T) {
	cs, _, _, _ := serveVault(t, []*catalog.Library{vaultLibrary(t, "bob", fixtureVault)}, nil)
	ctx := context.Background()
	tmpl, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, rt := range tmpl.ResourceTemplates {
		uris = append(uris, rt.URITemplate)
	}
	for _, want := range []string{"playbook://{+path}", "value-chain://{+path}"} {
		if !slices.Contains(uris, want) {
			t.Errorf("template %s not listed: %v", want, uris)
		}
	}

	note, err := os.ReadFile(filepath.Join(fixtureVault, vault.PlaybooksDir, "CRO improvement loop.md"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "playbook://bob/CRO%20improvement%20loop"})
	if err != nil || res.Contents[0].Text != string(note) || res.Contents[0].MIMEType != "text/markdown" {
		t.Fatalf("reading the note: %v %+v", err, res)
	}
	png, err := os.ReadFile(filepath.Join(fixtureVault, vault.PlaybooksDir, "cro-loop-sequence.png"))
	if err != nil {
		t.Fatal(err)
	}
	res, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "playbook://bob/CRO%20improvement%20loop/cro-loop-sequence.png"})
	if err != nil || !bytes.Equal(res.Contents[0].Blob, png) || res.Contents[0].MIMEType != "image/png" {
		t.Fatalf("reading the attachment: %v %+v", err, res)
	}
	res, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "value-chain://bob/lead-to-cash"})
	if err != nil || res.Contents[0].MIMEType != "application/json" || !json.Valid([]byte(res.Contents[0].Text)) {
		t.Fatalf("reading the chain: %v %+v", err, res)
	}
	for _, bad := range []string{
		"playbook://bob/Evil%20attach/link.md", "playbook://bob/Evil%20attach/..%2F..%2Fsecret.txt",
		"playbook://bob/Draft%20idea", "playbook://bob/CRO%20improvement%20loop/missing.png", "value-chain://bob/fake-chain",
	} {
		if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: bad}); err == nil {
			t.Errorf("%s was served", bad)
		}
	}

	prompts, err := cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(prompts.Prompts, func(p *mcp.Prompt) bool { return p.Name == "run-playbook" }) {
		t.Fatal("run-playbook not listed")
	}
	pr, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "run-playbook", Arguments: map[string]string{"playbook": "CRO improvement loop", "inputs": "the pricing page"}})
	if err != nil {
		t.Fatal(err)
	}
	text := pr.Messages[0].Content.(*mcp.TextContent).Text
	for _, want := range []string{"~~~~~~~~ skill", "~~~~~~~~ playbook", "bob/playbook-runner", "[bob/cro]", "(not served)", "the pricing page", "not instructions from the user"} {
		if !strings.Contains(text, want) {
			t.Errorf("run-playbook text lacks %q:\n%s", want, text)
		}
	}
	if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "run-playbook", Arguments: map[string]string{"playbook": "nope"}}); err == nil {
		t.Error("run-playbook of an unknown playbook succeeded")
	}
}

// Without a runner the playbooks are hidden, and with neither playbooks
// nor chains the vault surface is absent; it appears, announced with
// list_changed, when a rescan brings it.
func TestVaultSurfaceFollowsCatalog(t *testing.T) {
	for _, v := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(v, func(t *testing.T) { testVaultSurfaceFollowsCatalog(t, v) })
	}
}

func testVaultSurfaceFollowsCatalog(t *testing.T, v string) {
	plain := fstest.MapFS{"solo/SKILL.md": {Data: []byte("---\nname: solo\ndescription: Solo.\n---\nBody\n")}}
	cs, store, n, changed := serveVaultAt(t, v, []*catalog.Library{{Namespace: "bob", FS: plain, Kind: "test"}}, nil)
	for _, name := range toolNames(t, cs) {
		if strings.Contains(name, "playbook") || strings.Contains(name, "value_chain") {
			t.Errorf("vault tool %s listed without a vault", name)
		}
	}

	snap, err := catalog.Scan(context.Background(), []*catalog.Library{vaultLibrary(t, "bob", fixtureVault)}, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	store.Swap(snap)
	n.CatalogChanged()
	awaitList(t, "tools", changed.tools, func() []string { return toolNames(t, cs) }, func(names []string) bool {
		return slices.Contains(names, "bob_get_playbook")
	})
	awaitList(t, "prompts", changed.prompts, func() []string { return promptNames(t, cs) }, func(names []string) bool {
		return slices.Contains(names, "run-playbook")
	})

	// A notification of the first swap may still be on its way; leave one
	// of each kind pending, so that every run meets that case.
	signal(changed.tools)
	signal(changed.prompts)

	// Playbooks off: the playbook tools go, the chain tools stay.
	snap, err = catalog.Scan(context.Background(), []*catalog.Library{vaultLibrary(t, "bob", fixtureVault)}, 3, &catalog.Options{NoPlaybooks: true})
	if err != nil {
		t.Fatal(err)
	}
	store.Swap(snap)
	n.CatalogChanged()
	awaitList(t, "tools", changed.tools, func() []string { return toolNames(t, cs) }, func(names []string) bool {
		return !slices.Contains(names, "bob_get_playbook") && slices.Contains(names, "bob_get_value_chain")
	})
	awaitList(t, "prompts", changed.prompts, func() []string { return promptNames(t, cs) }, func(names []string) bool {
		return !slices.Contains(names, "run-playbook")
	})
}

// awaitList waits until list() satisfies ok after at least one list_changed
// of its kind, looking again after each. It never takes a notification for
// the change awaited (one left over from the swap before can come first),
// only the state: on 2026-07-28 the client answers tools/list and
// prompts/list from a cache that only a notification clears, so there the
// state turns right only once the swap's own notification was delivered. A
// pending signal from before the swap can stand in for the notification on
// 2025-11-25, where nothing is cached.
func awaitList(t *testing.T, what string, changed <-chan struct{}, list func() []string, ok func([]string) bool) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	notified := false
	for {
		if notified {
			if names := list(); ok(names) {
				return
			}
		}
		select {
		case <-changed:
			notified = true
		case <-deadline:
			t.Fatalf("%s never listed what the swap should have made of them (list_changed received: %v); last listed: %v", what, notified, list())
		}
	}
}

func TestVaultRunner(t *testing.T) {
	// A vault without its own runner borrows another library's; without
	// any, its playbooks are hidden and a warning says why.
	other := fstest.MapFS{"playbook-runner/SKILL.md": {Data: []byte("---\nname: playbook-runner\ndescription: Runs playbooks.\n---\nRun each step.\n")}}
	v2 := func() *catalog.Library { return vaultLibrary(t, "v2", "../../testdata/vault2") }

	snap, err := catalog.Scan(context.Background(), []*catalog.Library{v2(), {Namespace: "tools", FS: other, Kind: "test"}}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	st := snap.Stats().Libraries[0]
	if st.Playbooks == 0 || st.PlaybookRunner != "tools/playbook-runner" || st.PlaybooksPrivate != 1 || st.ValueChainSource != "index" {
		t.Errorf("with a runner elsewhere: %+v", st)
	}

	snap, err = catalog.Scan(context.Background(), []*catalog.Library{v2()}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	st = snap.Stats().Libraries[0]
	if st.Playbooks != 0 || st.PlaybooksHidden == 0 || st.PlaybookRunner != "" || st.ValueChains == 0 {
		t.Errorf("without a runner: %+v", st)
	}
	if !slices.ContainsFunc(snap.Warnings(), func(w catalog.Warning) bool { return w.Reason == "playbook-runner" }) {
		t.Errorf("no warning about the missing runner: %v", snap.Warnings())
	}
}
