package dockertest_test

import (
	"os"
	"strings"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/sandbox/dockertest"
)

var engine dockertest.Shared

func TestMain(m *testing.M) { os.Exit(engine.Main(m)) }

func TestEngineStarts(t *testing.T) {
	e := engine.Engine(t)
	if e.Image == "" || e.Host == "" {
		t.Fatalf("engine %+v", e)
	}
	t.Logf("dockerd on %s, driver %s, image %s", e.Host, e.Driver, e.Image)
}

// TestImport: a root file system tar becomes an image, tagged and named
// by its id, which the engine runs; a broken tar is refused. The hub never
// imports images (an operator pulls, loads or builds them), so this is
// the tests' way to have images without a registry.
func TestImport(t *testing.T) {
	e := engine.Engine(t)
	id, err := e.Import(dockertest.Skeleton(), "skills-mcp-test/import:1")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(id, "sha256:") {
		t.Fatalf("image id %q", id)
	}
	if _, err := e.Import([]byte("not a tar"), "skills-mcp-test/import:bad"); err == nil {
		t.Error("a broken tar was imported")
	}
}

// TestRemoveImage, as a test that moves a tag cleans up: removing the
// tag deletes the image it names last, removing the id of the image it
// named before deletes that one, and removing what is not there is no
// error.
func TestRemoveImage(t *testing.T) {
	e := engine.Engine(t)
	const ref = "skills-mcp-test/remove:1"
	ids := map[string]string{}
	for _, v := range []string{"A", "B"} {
		tar, err := dockertest.ImageTar(map[string]string{"etc/marker": v + "\n"})
		if err != nil {
			t.Fatal(err)
		}
		if ids[v], err = e.Import(tar, ref); err != nil {
			t.Fatal(err)
		}
	}
	has := func(ref string) bool {
		t.Helper()
		ok, err := e.HasImage(ref)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !has(ref) || !has(ids["A"]) || !has(ids["B"]) {
		t.Fatalf("after two imports under %s: tag %v, A %v, B %v; want all there", ref, has(ref), has(ids["A"]), has(ids["B"]))
	}
	if err := e.RemoveImage(ref); err != nil {
		t.Fatal(err)
	}
	if has(ref) || has(ids["B"]) || !has(ids["A"]) {
		t.Errorf("after removing %s: tag %v, B %v, A %v; want false, false, true", ref, has(ref), has(ids["B"]), has(ids["A"]))
	}
	if err := e.RemoveImage(ids["A"]); err != nil {
		t.Fatal(err)
	}
	if has(ids["A"]) {
		t.Errorf("image A %s is still there after its removal", ids["A"])
	}
	for _, r := range []string{ids["A"], ref, "skills-mcp-test/absent:1"} {
		if err := e.RemoveImage(r); err != nil {
			t.Errorf("removing %s, which is not there: %v", r, err)
		}
	}
}
