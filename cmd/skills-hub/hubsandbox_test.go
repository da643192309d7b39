package main_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/sandbox/docker"
	"github.com/skills-mcp/skills-mcp/internal/sandbox/dockertest"
	"github.com/skills-mcp/skills-mcp/internal/sandbox/sandboxtest"
)

// Issue 27's sandbox-side end-to-end tests: Docker images pinned by
// their id at preparation, hubs of two stores sharing one host
// (bubblewrap) or one Docker engine through each other's starts and
// restarts, and the leftovers of settled jobs (cgroup folders,
// containers) removed.

// dockerEngine is the package's Docker engine, started by the first test
// that needs one and stopped by TestMain.
var dockerEngine struct {
	once sync.Once
	e    *dockertest.Engine
	err  error
}

// needDocker starts the package's engine; it skips loudly without one,
// and fails under CI=true.
func needDocker(t *testing.T) *dockertest.Engine {
	t.Helper()
	dockerEngine.once.Do(func() { dockerEngine.e, dockerEngine.err = dockertest.Start() })
	if dockerEngine.err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the Docker engine is required under CI=true: %v", dockerEngine.err)
		}
		t.Skipf("SKIPPED LOUDLY: no Docker engine for this test: %v", dockerEngine.err)
	}
	return dockerEngine.e
}

func stopDocker() {
	if dockerEngine.e != nil {
		dockerEngine.e.Stop()
	}
}

// importImage imports an image of bash and sleep (from the host, with
// their libraries) whose /etc/marker reads marker, tagged ref.
func importImage(t *testing.T, e *dockertest.Engine, ref, marker string) string {
	t.Helper()
	tar, err := dockertest.ImageTar(map[string]string{"etc/marker": marker + "\n"}, "/usr/bin/bash", "/usr/bin/sleep")
	if err != nil {
		t.Fatal(err)
	}
	id, err := e.Import(tar, ref)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// hubContainers lists the engine's containers of the store whose label
// is store ("" for any hub's).
func hubContainers(t *testing.T, e *dockertest.Engine, store string) []dockertest.Container {
	t.Helper()
	all, err := e.Containers()
	if err != nil {
		t.Fatal(err)
	}
	var out []dockertest.Container
	for _, c := range all {
		if s, ok := c.Labels["skills-mcp.store"]; ok && (store == "" || s == store) {
			out = append(out, c)
		}
	}
	return out
}

// showSh writes /etc/marker's line into argv[1] and says it.
const showSh = `read -r m < /etc/marker
echo "$m" > "$1"
echo "marker $m"
`

// waitSh waits for /work/go (which the test makes), then writes argv[1].
const waitSh = `while [ ! -e /work/go ]; do sleep 0.05; done
echo done > "$1"
echo done
`

// runShow runs scripts/show.sh in a new job and returns the marker it read.
func runShow(t *testing.T, base, admin, skill string) string {
	t.Helper()
	id := newJob(t, base, admin, skill)
	code, body := hubCall(t, "POST", base+"/api/projects/p/skill-jobs/"+id+"/run", admin, map[string]any{"script": "scripts/show.sh", "args": []string{"out.txt"}})
	var st jobState
	decodeJSON(t, body, &st)
	if code != 200 || st.Job.State != "succeeded" {
		t.Fatalf("run show.sh: %d %s", code, body)
	}
	_, out := hubCall(t, "GET", base+"/api/projects/p/skill-jobs/"+id+"/file?path=out.txt", admin, nil)
	return strings.TrimSpace(string(out))
}

// TestHubDockerImagePinned runs the real binary on a real Docker engine: a
// bash profile that names no image runs on the runtime's default image,
// debian:bookworm-slim; absent from the engine, its preparation fails
// naming it; present, the preparation pins its id; the tag then moves to
// another image, and the next job still runs on the pinned one, until the
// version is prepared again. No container of a settled job is left.
//
// The engine is the package's, kept across runs in one process (-count=2):
// the runtime's default tag is this test's own, and it leaves the engine
// without it and without the images it imported, as it found it.
func TestHubDockerImagePinned(t *testing.T) {
	e := needDocker(t)
	const tag = "debian:bookworm-slim"
	var imported []string
	t.Cleanup(func() {
		// The tag first (it deletes the image it names), then the image
		// it named before.
		for _, ref := range append([]string{tag}, imported...) {
			if err := e.RemoveImage(ref); err != nil {
				t.Errorf("leaving the engine as found: %v", err)
			}
		}
	})
	if has, err := e.HasImage(tag); err != nil || has {
		t.Fatalf("the engine already has %s (%v): something before this test left it (an earlier run's cleanup, another test); the test needs it absent", tag, err)
	}
	tmp := reachable(t)
	data := filepath.Join(tmp, "hub")
	hubRun(t, data, 0, "token", "list") // makes the data folder
	admin := strings.TrimSpace(func() string { s, _ := hubRun(t, data, 0, "token", "create", "--scope", "admin"); return s }())
	srv := startServe(t, data, "--sandbox", "docker", "--docker-host", e.Host)
	base := srv.url
	skill := hubSetup(t, base, admin, hubZip(t, "marker.zip", map[string]string{
		"SKILL.md": "---\nname: marker\ndescription: Says its image's marker.\n---\n# marker\n", "scripts/show.sh": showSh,
	}), map[string]any{"runtime": "bash", "scripts": []string{"scripts/show.sh"}, "timeout_seconds": 60, "enabled": true}, false)
	owner := ownerOf(t, srv)

	if code, body := hubCall(t, "POST", base+"/api/skills/"+skill+"/prepare", admin, nil); code != 202 {
		t.Fatalf("prepare: %d %s", code, body)
	}
	var body []byte
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		_, body = hubCall(t, "GET", base+"/api/skills/"+skill+"/prepare", admin, nil)
		if !bytes.Contains(body, []byte(`"running"`)) || time.Now().After(deadline) {
			break
		}
	}
	if !bytes.Contains(body, []byte(`"failed"`)) || !bytes.Contains(body, []byte(tag)) || !bytes.Contains(body, []byte("docker pull")) {
		t.Fatalf("a preparation on an image the engine lacks: %s; want failed, naming %s and how to get it", body, tag)
	}

	idA := importImage(t, e, tag, "A")
	imported = append(imported, idA)
	prepareSkill(t, base, admin, skill, 60*time.Second)
	if _, body := hubCall(t, "GET", base+"/api/skills/"+skill+"/prepare", admin, nil); !bytes.Contains(body, []byte(`"image_id":"`+idA+`"`)) {
		t.Fatalf("the preparation does not name the pinned image %s: %s", idA, body)
	}
	if got := runShow(t, base, admin, skill); got != "A" {
		t.Fatalf("a job of the prepared profile read marker %q; want A", got)
	}
	idB := importImage(t, e, tag, "B")
	imported = append(imported, idB)
	if idB == idA {
		t.Fatalf("the tag did not move: %s", idB)
	}
	if got := runShow(t, base, admin, skill); got != "A" {
		t.Fatalf("after %s moved, a job read marker %q; want the pinned image's, A", tag, got)
	}
	// A restart keeps the pin too.
	srv.stop(t)
	srv = startServe(t, data, "--sandbox", "docker", "--docker-host", e.Host)
	base = srv.url
	if got := runShow(t, base, admin, skill); got != "A" {
		t.Fatalf("after a restart, a job read marker %q; want the pinned image's, A", got)
	}
	prepareSkill(t, base, admin, skill, 60*time.Second)
	if _, body := hubCall(t, "GET", base+"/api/skills/"+skill+"/prepare", admin, nil); !bytes.Contains(body, []byte(`"image_id":"`+idB+`"`)) {
		t.Fatalf("preparing again does not pin the tag's new image %s: %s", idB, body)
	}
	if got := runShow(t, base, admin, skill); got != "B" {
		t.Fatalf("after preparing again, a job read marker %q; want B", got)
	}
	var left []dockertest.Container
	for _, c := range hubContainers(t, e, "") {
		if c.Labels[docker.LabelOwner] == owner {
			left = append(left, c)
		}
	}
	if len(left) != 0 {
		t.Errorf("containers of settled jobs are left: %+v", left)
	}
}

// waitSandboxes waits until n sandboxes of the waiter run: Docker
// containers of hubs on e, or else bubblewrap processes of wait.sh.
func waitSandboxes(t *testing.T, e *dockertest.Engine, n int) {
	t.Helper()
	count := func() int {
		if e == nil {
			// bwrap's own processes name the script too: count bash's.
			n := 0
			for _, pid := range sandboxProcesses("scripts/wait.sh") {
				if b, _ := os.ReadFile(filepath.Join("/proc", pid, "cmdline")); bytes.HasPrefix(b, []byte("/usr/bin/bash\x00")) {
					n++
				}
			}
			return n
		}
		running := 0
		for _, c := range hubContainers(t, e, "") {
			if c.State == "running" {
				running++
			}
		}
		return running
	}
	for deadline := time.Now().Add(60 * time.Second); count() != n; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d sandboxes of the waiter run after 60 s; want %d", count(), n)
		}
	}
}

// ownerRE finds the sandboxes' owner in a hub's start log.
var ownerRE = regexp.MustCompile(`owner: (hub-[0-9a-f]+-[0-9a-f]+)`)

func ownerOf(t *testing.T, s *server) string {
	t.Helper()
	m := ownerRE.FindStringSubmatch(s.logText())
	if m == nil {
		t.Fatalf("the start log names no sandbox owner:\n%s", s.logText())
	}
	return m[1]
}

// TestHubsShareASandboxHost runs two hubs of two stores side by side, on
// bubblewrap and on one Docker engine. While a job of the first runs, the
// second hub runs a job, is killed and restarts (its recovery settles its
// own job), a hub on the first's folders that cannot bind its port and one
// that can are refused, and a hub of the second store fails to bind the
// first's port: the first's job runs on and succeeds. The sandboxes'
// owners name each store; the settled jobs leave no cgroup folder or
// container behind, and the stopped hubs no folder of their owners.
func TestHubsShareASandboxHost(t *testing.T) {
	t.Run("bwrap", func(t *testing.T) {
		needBwrap(t)
		shareHost(t, nil, []string{"--sandbox", "bwrap"}, map[string]any{})
	})
	t.Run("docker", func(t *testing.T) {
		e := needDocker(t)
		const ref = "skills-mcp-test/waiter:1"
		importImage(t, e, ref, "waiter")
		shareHost(t, e, []string{"--sandbox", "docker", "--docker-host", e.Host}, map[string]any{"image": ref})
	})
}

func shareHost(t *testing.T, e *dockertest.Engine, args []string, profile map[string]any) {
	tmp := reachable(t)
	type hub struct {
		data, admin, skill string
		srv                *server
	}
	hubs := map[string]*hub{"a": {data: filepath.Join(tmp, "a")}, "b": {data: filepath.Join(tmp, "b")}}
	profile["runtime"], profile["scripts"], profile["timeout_seconds"], profile["enabled"] = "bash", []string{"scripts/wait.sh"}, 300, true
	for _, name := range []string{"a", "b"} {
		h := hubs[name]
		hubRun(t, h.data, 0, "token", "list")
		h.admin = strings.TrimSpace(func() string { s, _ := hubRun(t, h.data, 0, "token", "create", "--scope", "admin"); return s }())
		h.srv = startServe(t, h.data, args...)
		h.skill = hubSetup(t, h.srv.url, h.admin, hubZip(t, "waiter.zip", map[string]string{
			"SKILL.md": "---\nname: waiter\ndescription: Waits for a go.\n---\n# waiter\n", "scripts/wait.sh": waitSh,
		}), profile, true)
	}
	a, b := hubs["a"], hubs["b"]
	ownerA, ownerB := ownerOf(t, a.srv), ownerOf(t, b.srv)
	if ownerA == ownerB || ownerA[:16] == ownerB[:16] {
		t.Fatalf("two stores' hubs share an owner or a store part: %s, %s", ownerA, ownerB)
	}
	wait := map[string]any{"script": "scripts/wait.sh", "args": []string{"out.txt"}}
	jobA := newJob(t, a.srv.url, a.admin, a.skill)
	runAsync(a.srv.url, a.admin, jobA, wait)
	waitJob(t, a.srv.url, a.admin, "p", jobA, 60*time.Second, "running")
	jobB := newJob(t, b.srv.url, b.admin, b.skill)
	runAsync(b.srv.url, b.admin, jobB, wait)
	waitJob(t, b.srv.url, b.admin, "p", jobB, 60*time.Second, "running")
	// Both sandboxes run (a job reads running from its claim on, before
	// its sandbox starts).
	waitSandboxes(t, e, 2)

	// b is killed and restarts: its recovery stops its own job only.
	b.srv.kill9(t)
	b.srv = startServe(t, b.data, args...)
	if got := ownerOf(t, b.srv); got != ownerB {
		t.Errorf("b restarted with the owner %s; want %s", got, ownerB)
	}
	// bubblewrap's sandbox died with its hub; Docker's container ran on
	// until the recovery killed it.
	want := "failed"
	if e != nil {
		want = "stopped"
	}
	if st := waitJob(t, b.srv.url, b.admin, "p", jobB, 60*time.Second, "stopped", "failed"); st.Job.State != want {
		t.Errorf("b's own job after its restart: %+v; want %s", st.Job, want)
	}

	// A second hub on a's folders: refused, whether it can bind a port or
	// not; b's store fails to bind a's port.
	addrA := strings.TrimPrefix(a.srv.url, "http://")
	for _, c := range []struct {
		what, data, http, want string
	}{
		{"a's folders, a's port", a.data, addrA, "listening on"},
		{"a's folders, a free port", a.data, "127.0.0.1:0", "is the replica of the jobs folder"},
		{"b's folders, a's port", b.data, addrA, "listening on"},
	} {
		code, _, stderr := run(t, nil, append([]string{"--data", c.data, "serve", "--http", c.http}, args...)...)
		if code != 1 || !strings.Contains(stderr, c.want) {
			t.Errorf("hub serve on %s: exit %d, %s; want 1 and %q", c.what, code, stderr, c.want)
		}
	}

	if st, ok := getJob(t, a.srv.url, a.admin, "p", jobA); !ok || st.Job.State != "running" {
		t.Fatalf("a's job after b's restart and the refused hubs: %+v (readable %v); want running", st.Job, ok)
	}
	waitSandboxes(t, e, 1)
	if e != nil {
		if c := hubContainers(t, e, ""); len(c) != 1 || !strings.Contains(c[0].Name, ownerA) || c[0].State != "running" {
			t.Errorf("the hub containers after b's recovery: %+v; want a's, running", c)
		}
	}
	if err := os.WriteFile(filepath.Join(a.data, "jobs", "work", jobA, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	st := waitJob(t, a.srv.url, a.admin, "p", jobA, 60*time.Second, "succeeded", "failed", "stopped")
	if st.Job.State != "succeeded" {
		t.Fatalf("a's job: %+v; want succeeded", st.Job)
	}

	// The settled jobs left nothing behind: no cgroup folder of a run, no
	// container.
	seen := 0
	for _, owner := range []string{ownerA, ownerB} {
		if e != nil {
			break
		}
		for _, root := range []string{"/sys/fs/cgroup/skills-mcp", "/sys/fs/cgroup/memory/skills-mcp", "/sys/fs/cgroup/pids/skills-mcp", "/sys/fs/cgroup/cpu/skills-mcp"} {
			ents, err := os.ReadDir(filepath.Join(root, owner))
			if err != nil {
				continue
			}
			seen++
			for _, d := range ents {
				if d.IsDir() {
					t.Errorf("the cgroup folder %s of a settled job is left", filepath.Join(root, owner, d.Name()))
				}
			}
		}
	}
	t.Logf("cgroup folders of the owners checked: %d", seen)
	if e == nil && seen == 0 && strings.Contains(a.srv.logText(), "cgroup v") {
		t.Errorf("the hubs enforce cgroup limits, but no cgroup folder of %s or %s was found", ownerA, ownerB)
	}
	if e != nil {
		if left := hubContainers(t, e, ""); len(left) != 0 {
			t.Errorf("containers of settled jobs are left: %+v", left)
		}
		return
	}
	// Stopped, the hubs leave no folder of their owners in any hierarchy
	// (the name's folder may hold other hubs' of this host).
	a.srv.stop(t)
	b.srv.stop(t)
	for _, owner := range []string{ownerA, ownerB} {
		if left := sandboxtest.CgroupFolders(filepath.Join("skills-mcp", owner)); len(left) > 0 {
			t.Errorf("the stopped hubs left the cgroup folders %v", left)
		}
	}
}

// TestStoppedGVisorHubLeavesNoRunscFolder starts a hub on gVisor (its
// check runs a sandbox, so runsc's folder of the owner is made), stops
// it, and finds no folder of its owner in runsc's state root.
func TestStoppedGVisorHubLeavesNoRunscFolder(t *testing.T) {
	if _, err := exec.LookPath("runsc"); err != nil || os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("gVisor needs runsc and root (.ci/run installs runsc)")
		}
		t.Skip("SKIPPED LOUDLY: gVisor needs runsc (apt-get install runsc) and root")
	}
	data := filepath.Join(reachable(t), "data")
	hubRun(t, data, 0, "token", "list")
	srv := startServe(t, data, "--sandbox", "gvisor")
	owner := ownerOf(t, srv)
	dir := filepath.Join("/run/skills-mcp-runsc", owner)
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("the hub's gVisor check made no runsc folder %s: %v\n%s", dir, err, srv.logText())
	}
	srv.stop(t)
	if _, err := os.Lstat(dir); !errors.Is(err, fs.ErrNotExist) {
		left, _ := filepath.Glob(filepath.Join(dir, "*", "*"))
		t.Fatalf("the stopped hub left its runsc folder %s (%v): %v", dir, err, left)
	}
}
