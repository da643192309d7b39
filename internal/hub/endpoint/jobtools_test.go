package endpoint_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skills-mcp/skills-mcp/internal/hub/endpoint"
	"github.com/skills-mcp/skills-mcp/internal/hub/jobs"
	"github.com/skills-mcp/skills-mcp/internal/hub/store"
	"github.com/skills-mcp/skills-mcp/internal/hub/store/storetest"
	"github.com/skills-mcp/skills-mcp/internal/sandbox"
	"github.com/skills-mcp/skills-mcp/internal/sandbox/bwrap"
	"github.com/skills-mcp/skills-mcp/internal/sandbox/docker"
	"github.com/skills-mcp/skills-mcp/internal/sandbox/dockertest"
	"github.com/skills-mcp/skills-mcp/internal/sandbox/sandboxtest"
)

// testCgroup names this package's bubblewrap cgroup folder, so that a
// service's recovery here never meets another package's runs.
var testCgroup = fmt.Sprintf("skills-mcp-ept-%d", os.Getpid())

// removeTestCgroups removes the folders the runs' cgroups were made in.
func removeTestCgroups() {
	for _, ctl := range []string{"memory", "pids", "cpu"} {
		os.Remove(filepath.Join("/sys/fs/cgroup", ctl, testCgroup))
	}
	os.Remove(filepath.Join("/sys/fs/cgroup", testCgroup))
}

// dockerEngine is the package's Docker engine, started by the first test
// that needs one and stopped by TestMain.
var dockerEngine struct {
	once sync.Once
	e    *dockertest.Engine
	err  error
}

func needDocker(t testing.TB) *dockertest.Engine {
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

func newBwrap(t testing.TB) sandbox.Executor {
	t.Helper()
	_, err := exec.LookPath("bwrap")
	sandboxtest.Need(t, "bubblewrap (bwrap)", err)
	return bwrap.New(&bwrap.Options{CgroupName: testCgroup})
}

func newDocker(t testing.TB) (sandbox.Executor, string) {
	t.Helper()
	e := needDocker(t)
	x, err := docker.New(&docker.Options{Host: e.Host, BindUsr: "/usr", Prefix: "skills-mcp-ept-"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	return x, e.Image
}

// The copier skills, one per runtime: each copies its first argument to
// its second, reading and writing inside /work.
var copiers = map[store.Runtime]struct {
	name, script, body string
}{
	store.RuntimePython: {"py-copy", "scripts/copy.py", "import os, sys, time\nif len(sys.argv) > 3:\n    time.sleep(float(sys.argv[3]))\ndata = open(sys.argv[1], 'rb').read()\nos.makedirs(os.path.dirname(sys.argv[2]) or '.', exist_ok=True)\nopen(sys.argv[2], 'wb').write(data)\nprint('copied', len(data))\n"},
	store.RuntimeNode:   {"node-copy", "scripts/copy.js", "const fs = require('fs');\nconst d = fs.readFileSync(process.argv[2]);\nfs.mkdirSync(require('path').dirname(process.argv[3]), {recursive: true});\nfs.writeFileSync(process.argv[3], d);\nconsole.log('copied', d.length);\n"},
	store.RuntimeBash:   {"sh-copy", "scripts/copy.sh", "set -eu\nmkdir -p \"$(dirname \"$2\")\"\ncp \"$1\" \"$2\"\necho copied\n"},
}

// jobHub is an endpoint with the job tools over a real job service.
type jobHub struct {
	*hub
	db       *store.DB
	svc      *jobs.Service
	dir      string                   // the service's folder
	versions map[store.Runtime]string // version ids, NAME@hex
	vids     map[store.Runtime]int64
}

// traversableDir is a fresh folder the sandbox's unprivileged uid can
// pass through (the folders above a job's mounts must be o+x).
func traversableDir(t testing.TB) string {
	t.Helper()
	d := t.TempDir()
	for _, p := range []string{d, filepath.Dir(d)} {
		if err := os.Chmod(p, 0o711); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(d, "jobs")
}

// startJobHub installs the copiers, binds them to the projects, gives
// each an enabled profile (Docker: image), prepares it, and serves the
// endpoint with the job tools.
func startJobHub(t testing.TB, db *store.DB, x sandbox.Executor, image string, rts []store.Runtime, projects ...string) *jobHub {
	t.Helper()
	ctx := context.Background()
	jh := &jobHub{db: db, dir: traversableDir(t), versions: map[store.Runtime]string{}, vids: map[store.Runtime]int64{}}
	for _, id := range projects {
		if err := db.CreateProject(ctx, id, id); err != nil {
			t.Fatal(err)
		}
	}
	svc, err := jobs.New(jobs.Options{Store: db, Executor: x, Replica: "ept", Dir: jh.dir, RunWait: 60 * time.Second, Workers: 24})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	if _, _, err := svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	jh.svc = svc
	for rt, c := range copiers {
		if rts != nil && !slices.Contains(rts, rt) {
			continue
		}
		v := install(t, db, c.name, "Copies a file ("+string(rt)+").", storetest.Tree{c.script: c.body, "scripts/other.py": "print('never')\n"})
		jh.vids[rt] = v.ID
		for _, id := range projects {
			if err := db.Bind(ctx, id, v.ID); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := svc.SetProfile(ctx, v.ID, store.ProfileSpec{Runtime: rt, Image: image, Scripts: []string{c.script}, TimeoutSeconds: 60, Enabled: true}); err != nil {
			t.Fatal(err)
		}
		if p, err := svc.Prepare(ctx, v.ID); err != nil {
			t.Fatalf("preparing %s: %v\n%s", c.name, err, p.PrepareLog)
		}
	}
	jh.hub = startHub(t, db, endpoint.Options{Jobs: svc})
	return jh
}

// The call helpers fail the test on a protocol error: every refusal of
// a job tool must be a tool error.
func call(t testing.TB, cs *mcp.ClientSession, name string, args map[string]any) map[string]any {
	t.Helper()
	m, isErr := callToolTB(t, cs, name, args)
	if isErr {
		t.Fatalf("%s(%v): tool error %v", name, brief(args), m["error"])
	}
	return m
}

func refused(t testing.TB, cs *mcp.ClientSession, name string, args map[string]any, want ...string) {
	t.Helper()
	m, isErr := callToolTB(t, cs, name, args)
	if !isErr {
		t.Fatalf("%s(%v) = %v; want a tool error", name, brief(args), m)
	}
	msg, _ := m["error"].(string)
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("%s(%v): error %q; want it to say %q", name, brief(args), msg, w)
		}
	}
	if strings.Contains(msg, "/tmp/") {
		t.Errorf("%s: error %q names a host path", name, msg)
	}
}

func callToolTB(t testing.TB, cs *mcp.ClientSession, name string, args map[string]any) (map[string]any, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v", name, err)
	}
	m, _ := res.StructuredContent.(map[string]any)
	if res.IsError {
		m = map[string]any{}
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				m["error"] = tc.Text
			}
		}
	}
	return m, res.IsError
}

func brief(args map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range args {
		if s, ok := v.(string); ok && len(s) > 40 {
			v = s[:40] + "…"
		}
		out[k] = v
	}
	return out
}

func connectTB(t testing.TB, h *hub, project, token string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil)
	tr := &mcp.StreamableClientTransport{Endpoint: h.url(project), HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}}}
	cs, err := c.Connect(context.Background(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// upload sends data in pieces of at most piece bytes.
func upload(t testing.TB, cs *mcp.ClientSession, job, path string, data []byte, piece int) {
	t.Helper()
	for off := 0; off == 0 || off < len(data); off += piece {
		end := min(off+piece, len(data))
		m := call(t, cs, "upload_skill_file", map[string]any{"job_id": job, "path": path, "append": off > 0,
			"content_base64": base64.StdEncoding.EncodeToString(data[off:end])})
		if int(m["size"].(float64)) != end {
			t.Fatalf("upload: size %v after %d bytes", m["size"], end)
		}
	}
}

// download reads a file in chunks of limit bytes and checks its size and
// sha256 against the chunks' own report.
func download(t testing.TB, cs *mcp.ClientSession, job, path string, limit int) []byte {
	t.Helper()
	var got []byte
	var sum string
	for {
		m := call(t, cs, "read_skill_job_file", map[string]any{"job_id": job, "path": path, "offset": len(got), "limit": limit})
		b, err := base64.StdEncoding.DecodeString(m["content_base64"].(string))
		if err != nil || len(b) > limit || len(b) > endpoint.MaxJobReadBytes {
			t.Fatalf("chunk of %d bytes (limit %d), %v", len(b), limit, err)
		}
		got = append(got, b...)
		sum = m["sha256"].(string)
		if m["eof"].(bool) {
			break
		}
		if len(b) == 0 {
			t.Fatal("an empty chunk before eof")
		}
	}
	if d := sha256.Sum256(got); hex.EncodeToString(d[:]) != sum {
		t.Fatalf("%s: the chunks' sha256 is not the file's", path)
	}
	return got
}

// copyJob runs one copier end to end over the endpoint and returns the
// job id: create, upload in (in pieces of piece bytes), run, get, read out
// in chunks, every digest checked.
func copyJob(t testing.TB, cs *mcp.ClientSession, skill string, script string, in []byte, piece, chunk int) string {
	t.Helper()
	job := call(t, cs, "create_skill_job", map[string]any{"skill_id": skill})["job_id"].(string)
	upload(t, cs, job, "in/data.bin", in, piece)
	res := call(t, cs, "run_skill_script", map[string]any{"job_id": job, "script": script, "args": []string{"in/data.bin", "out/copy.bin"}})
	if res["state"] != "succeeded" {
		t.Fatalf("run: %v %v; stderr %v", res["state"], res["reason"], res["stderr"])
	}
	st := call(t, cs, "get_skill_job", map[string]any{"job_id": job})
	outs, _ := st["outputs"].([]any)
	sum := sha256.Sum256(in)
	if len(outs) != 1 || outs[0].(map[string]any)["path"] != "out/copy.bin" || outs[0].(map[string]any)["sha256"] != hex.EncodeToString(sum[:]) ||
		int(outs[0].(map[string]any)["size"].(float64)) != len(in) || st["exit_code"] != float64(0) {
		t.Fatalf("get_skill_job: outputs %v, exit %v", st["outputs"], st["exit_code"])
	}
	if got := download(t, cs, job, "out/copy.bin", chunk); !slices.Equal(got, in) {
		t.Fatal("the downloaded output is not the input")
	}
	return job
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

// Python, Node.js and Bash each run a real script in bubblewrap over the
// MCP endpoint: an input uploaded in appended pieces is read, an output
// written, listed with its sha256 and downloaded in 256 KiB chunks.
func TestJobToolsBwrap(t *testing.T) {
	x := newBwrap(t)
	db := openStore(t, store.Options{Dir: filepath.Join(t.TempDir(), "data")})
	jh := startJobHub(t, db, x, "", nil, "alpha")
	cs := connectTB(t, jh.hub, "alpha", projectToken(t, db, "alpha"))
	in := randomBytes(600 << 10)
	for rt, c := range copiers {
		t.Run(string(rt), func(t *testing.T) {
			copyJob(t, cs, skillID(t, cs, c.name), c.script, in, 250<<10, endpoint.MaxJobReadBytes)
		})
	}
}

// skillID finds a skill's version id with list_skills.
func skillID(t testing.TB, cs *mcp.ClientSession, name string) string {
	t.Helper()
	m := call(t, cs, "list_skills", map[string]any{"limit": 100})
	for _, s := range m["skills"].([]any) {
		if s.(map[string]any)["name"] == name {
			return s.(map[string]any)["id"].(string)
		}
	}
	t.Fatalf("no skill %s listed", name)
	return ""
}

// Every bad input of issue 20 over the endpoint, with bubblewrap: each is
// a tool error (never a protocol error) that says what and why, and
// nothing runs that should not.
func TestJobToolsBadInput(t *testing.T) {
	x := newBwrap(t)
	ctx := context.Background()
	dataDir := filepath.Join(t.TempDir(), "data")
	db := openStore(t, store.Options{Dir: dataDir})
	jh := startJobHub(t, db, x, "", nil, "alpha", "beta")
	cs := connectTB(t, jh.hub, "alpha", projectToken(t, db, "alpha"))
	other := connectTB(t, jh.hub, "beta", projectToken(t, db, "beta"))
	py := copiers[store.RuntimePython]
	skill := skillID(t, cs, py.name)
	newJob := func() string {
		job := call(t, cs, "create_skill_job", map[string]any{"skill_id": skill})["job_id"].(string)
		upload(t, cs, job, "in.txt", []byte("hello"), 1<<20)
		return job
	}

	job := newJob()
	refused(t, cs, "run_skill_script", map[string]any{"job_id": job, "script": "scripts/other.py"}, "not allowed")
	refused(t, cs, "run_skill_script", map[string]any{"job_id": job, "script": "../../etc/passwd"}, "not allowed")
	refused(t, cs, "run_skill_script", map[string]any{"job_id": job, "script": py.script, "args": []any{"in.txt", 2}}, "args")
	refused(t, cs, "run_skill_script", map[string]any{"job_id": job, "script": py.script, "args": "in.txt out.txt"}, "args")
	refused(t, cs, "run_skill_script", map[string]any{"job_id": job, "script": py.script, "args": map[string]any{"a": "b"}}, "args")
	// Traversal, absolute and hidden-parent paths never reach the store.
	for _, p := range []string{"../x", "/etc/passwd", "a/../../x", "a\\..\\x", ".git/config"} {
		refused(t, cs, "upload_skill_file", map[string]any{"job_id": job, "path": p, "content_base64": "eA=="}, "path")
		refused(t, cs, "read_skill_job_file", map[string]any{"job_id": job, "path": p})
	}
	refused(t, cs, "upload_skill_file", map[string]any{"job_id": job, "path": "x", "content_base64": "not base64!"}, "base64")
	refused(t, cs, "upload_skill_file", map[string]any{"job_id": job, "path": "big", "content_base64": base64.StdEncoding.EncodeToString(make([]byte, endpoint.MaxUploadBytes+1))}, "1 MiB", "append")
	// The per-file limit: 31 MiB straight into the service (1 MiB tool
	// calls cost 3 s each under the race detector), then the tools.
	if _, err := jh.svc.Upload(ctx, "alpha", job, "big", make([]byte, store.MaxJobFileSize-endpoint.MaxUploadBytes), false); err != nil {
		t.Fatal(err)
	}
	call(t, cs, "upload_skill_file", map[string]any{"job_id": job, "path": "big", "append": true, "content_base64": base64.StdEncoding.EncodeToString(make([]byte, endpoint.MaxUploadBytes))})
	refused(t, cs, "upload_skill_file", map[string]any{"job_id": job, "path": "big", "append": true, "content_base64": "eA=="}, "32 MiB")
	// Another project's job does not exist for it, whatever the tool.
	refused(t, other, "get_skill_job", map[string]any{"job_id": job}, "no such job")
	refused(t, other, "upload_skill_file", map[string]any{"job_id": job, "path": "x", "content_base64": "eA=="}, "no such job")
	refused(t, other, "run_skill_script", map[string]any{"job_id": job, "script": py.script}, "no such job")
	refused(t, other, "read_skill_job_file", map[string]any{"job_id": job, "path": "in.txt"}, "no such job")
	refused(t, cs, "get_skill_job", map[string]any{"job_id": "j-nonexistent"}, "no such job")

	// The run, then nothing more: no upload, no second run.
	res := call(t, cs, "run_skill_script", map[string]any{"job_id": job, "script": py.script, "args": []string{"in.txt", "out.txt"}})
	if res["state"] != "succeeded" {
		t.Fatalf("run: %v", res)
	}
	refused(t, cs, "upload_skill_file", map[string]any{"job_id": job, "path": "late.txt", "content_base64": "eA=="}, "before its run")
	refused(t, cs, "run_skill_script", map[string]any{"job_id": job, "script": py.script, "args": []string{"in.txt", "out.txt"}}, job)
	refused(t, cs, "read_skill_job_file", map[string]any{"job_id": job, "path": "nothing.txt"}, "no file")
	if got := download(t, cs, job, "out.txt", 2); string(got) != "hello" {
		t.Errorf("output %q", got)
	}

	// A changed profile: a job made before cannot run, and no job can be
	// made until it is prepared again.
	before := newJob()
	if _, err := jh.svc.SetProfile(ctx, jh.vids[store.RuntimePython], store.ProfileSpec{Runtime: store.RuntimePython, Scripts: []string{py.script}, TimeoutSeconds: 61, Enabled: true}); err != nil {
		t.Fatal(err)
	}
	refused(t, cs, "run_skill_script", map[string]any{"job_id": before, "script": py.script, "args": []string{"in.txt", "o"}}, "changed")
	refused(t, cs, "create_skill_job", map[string]any{"skill_id": skill}, "not prepared")
	if _, err := jh.svc.Prepare(ctx, jh.vids[store.RuntimePython]); err != nil {
		t.Fatal(err)
	}
	// A disabled profile: not listed for jobs.
	refused(t, cs, "create_skill_job", map[string]any{"skill_id": "nope@000000000000"}, "no such skill")

	// A package whose stored files no longer match their digests fails
	// its run, saying so, and runs nothing.
	sh := copiers[store.RuntimeBash]
	shJob := call(t, cs, "create_skill_job", map[string]any{"skill_id": skillID(t, cs, sh.name)})["job_id"].(string)
	upload(t, cs, shJob, "in.txt", []byte("x"), 10)
	corruptScript(t, ctx, db, dataDir, jh, store.RuntimeBash)
	res = call(t, cs, "run_skill_script", map[string]any{"job_id": shJob, "script": sh.script, "args": []string{"in.txt", "out.txt"}})
	if res["state"] != "failed" || !strings.Contains(res["reason"].(string), "does not match its digest") || strings.Contains(res["reason"].(string), jh.dir) {
		t.Errorf("run of a corrupt package: %v %q", res["state"], res["reason"])
	}
	if outs := res["outputs"].([]any); len(outs) != 0 {
		t.Errorf("a corrupt package's run left outputs %v", outs)
	}
}

// corruptScript damages the stored bytes of a copier's script and the
// service's laid-out copy of it.
func corruptScript(t *testing.T, ctx context.Context, db *store.DB, dataDir string, jh *jobHub, rt store.Runtime) {
	t.Helper()
	raw, err := sql.Open("sqlite", filepath.Join(dataDir, store.DatabaseFile)+"?_pragma=busy_timeout(20000)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for _, q := range []string{`DROP TRIGGER IF EXISTS blob_chunks_immutable`,
		`UPDATE blob_chunks SET data = X'00' WHERE digest = (SELECT digest FROM version_files WHERE path = '` + copiers[rt].script + `' AND version_id = ` + fmt.Sprint(jh.vids[rt]) + `)`} {
		if _, err := raw.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	cache, err := db.Materialize(ctx, jh.vids[rt], filepath.Join(jh.dir, "packages"))
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(cache, copiers[rt].script)
	os.Chmod(filepath.Dir(f), 0o755)
	os.Chmod(f, 0o644)
	if err := os.WriteFile(f, []byte("echo evil > out.txt\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Without a working backend, the job tools refuse with the reason; no
// script runs by other means.
func TestJobToolsNoBackend(t *testing.T) {
	ctx := context.Background()
	db := openStore(t, store.Options{Dir: filepath.Join(t.TempDir(), "data")})
	if err := db.CreateProject(ctx, "alpha", "alpha"); err != nil {
		t.Fatal(err)
	}
	c := copiers[store.RuntimePython]
	v := install(t, db, c.name, "Copies.", storetest.Tree{c.script: c.body})
	if err := db.Bind(ctx, "alpha", v.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SetProfile(ctx, v.ID, store.ProfileSpec{Runtime: store.RuntimePython, Scripts: []string{c.script}, TimeoutSeconds: 5, Enabled: true}); err != nil {
		t.Fatal(err)
	}
	svc, err := jobs.New(jobs.Options{Store: db, Replica: "none", Dir: traversableDir(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	if _, _, err := svc.Start(ctx); err == nil {
		t.Fatal("Start without a backend succeeded")
	}
	h := startHub(t, db, endpoint.Options{Jobs: svc})
	cs := connectTB(t, h, "alpha", projectToken(t, db, "alpha"))
	refused(t, cs, "create_skill_job", map[string]any{"skill_id": skillID(t, cs, c.name)}, "sandbox", "bubblewrap or Docker")
}

func hasJobTools(names []string) bool { return slices.Contains(names, "create_skill_job") }

// The job tools are listed only while a bound version's profile is
// enabled; enabling, disabling and binding reach that project's sessions
// (tools/list_changed) and no other's, on SQLite and PostgreSQL; get_skill
// shows the profile. No backend is needed to list them.
func TestJobToolsListing(t *testing.T) {
	backends(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		for _, id := range []string{"alpha", "beta"} {
			if err := db.CreateProject(ctx, id, id); err != nil {
				t.Fatal(err)
			}
		}
		c := copiers[store.RuntimePython]
		v := install(t, db, c.name, "Copies.", storetest.Tree{c.script: c.body})
		plain := install(t, db, "plain", "No scripts.", nil)
		for _, b := range []struct {
			p string
			v int64
		}{{"alpha", v.ID}, {"beta", plain.ID}} {
			if err := db.Bind(ctx, b.p, b.v); err != nil {
				t.Fatal(err)
			}
		}
		svc, err := jobs.New(jobs.Options{Store: db, Replica: "list", Dir: traversableDir(t)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { svc.Close() })
		h := startHub(t, db, endpoint.Options{Jobs: svc})
		alpha, aev := h.connect(t, "alpha", projectToken(t, db, "alpha"))
		beta, bev := h.connect(t, "beta", projectToken(t, db, "beta"))
		if hasJobTools(toolNames(t, alpha)) || hasJobTools(toolNames(t, beta)) {
			t.Fatal("job tools listed without an enabled profile")
		}
		id := skillID(t, alpha, c.name)
		refused(t, alpha, "get_skill", map[string]any{"skill": "nothing"}, "no such skill")
		if m := call(t, alpha, "get_skill", map[string]any{"skill": id}); m["profile"] != nil {
			t.Fatalf("profile %v; want null", m["profile"])
		}
		spec := store.ProfileSpec{Runtime: store.RuntimePython, Scripts: []string{c.script}, TimeoutSeconds: 30}
		if _, err := svc.SetProfile(ctx, v.ID, spec); err != nil { // set, not enabled
			t.Fatal(err)
		}
		waitFor(t, "the disabled profile in get_skill", func() bool {
			p, _ := call(t, alpha, "get_skill", map[string]any{"skill": id})["profile"].(map[string]any)
			return p != nil && p["enabled"] == false
		})
		if hasJobTools(toolNames(t, alpha)) {
			t.Fatal("job tools listed for a disabled profile")
		}
		spec.Enabled = true
		if _, err := svc.SetProfile(ctx, v.ID, spec); err != nil {
			t.Fatal(err)
		}
		wait(t, aev.tools, "tools/list_changed after enabling")
		waitFor(t, "the job tools on alpha", func() bool { return hasJobTools(toolNames(t, alpha)) })
		quiet(t, "tools/list_changed on beta", bev.tools)
		if hasJobTools(toolNames(t, beta)) {
			t.Fatal("beta lists job tools for a profile of a version it does not have")
		}
		p, _ := call(t, alpha, "get_skill", map[string]any{"skill": id})["profile"].(map[string]any)
		if p["runtime"] != "python" || p["prepared"] != false || p["timeout_seconds"] != float64(30) || p["network"] != false || !slices.Equal(p["scripts"].([]any), []any{c.script}) {
			t.Errorf("get_skill profile %v", p)
		}
		if _, ok := p["image"]; ok {
			t.Errorf("get_skill shows the image/rootfs: %v", p)
		}
		// Binding the version to beta brings beta the job tools.
		drain(bev.tools)
		if err := db.Bind(ctx, "beta", v.ID); err != nil {
			t.Fatal(err)
		}
		wait(t, bev.tools, "tools/list_changed on beta after the binding")
		waitFor(t, "the job tools on beta", func() bool { return hasJobTools(toolNames(t, beta)) })
		// Disabling withdraws them from both.
		drain(aev.tools)
		drain(bev.tools)
		spec.Enabled = false
		if _, err := svc.SetProfile(ctx, v.ID, spec); err != nil {
			t.Fatal(err)
		}
		wait(t, aev.tools, "tools/list_changed on alpha after disabling")
		wait(t, bev.tools, "tools/list_changed on beta after disabling")
		waitFor(t, "the job tools gone", func() bool { return !hasJobTools(toolNames(t, alpha)) && !hasJobTools(toolNames(t, beta)) })
		if !slices.Contains(toolNames(t, alpha), "list_skills") {
			t.Error("disabling the profile removed the hub's other tools")
		}
	})
}

func drain(ch chan struct{}) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}

// The happy path once on Docker (the skeleton image, the host's /usr
// bound read-only): a Python copy over the endpoint.
func TestJobToolsDocker(t *testing.T) {
	x, image := newDocker(t)
	db := openStore(t, store.Options{Dir: filepath.Join(t.TempDir(), "data")})
	jh := startJobHub(t, db, x, image, []store.Runtime{store.RuntimePython}, "alpha")
	cs := connectTB(t, jh.hub, "alpha", projectToken(t, db, "alpha"))
	py := copiers[store.RuntimePython]
	copyJob(t, cs, skillID(t, cs, py.name), py.script, randomBytes(300<<10), 200<<10, 100<<10)
}

// Twenty jobs at once across twenty projects, each over its own session:
// all complete, and no run waits behind another. Each run sleeps 5 s, so
// run one after another they would take 100 s, and two at a time 50 s;
// run together they take 5 s plus the start of twenty sandboxes. The test
// asserts the span of all of them is under a third of the serial sum, a
// bound far from both, so a loaded machine cannot fail it.
func TestJobToolsParallelProjects(t *testing.T) {
	x := newBwrap(t)
	db := openStore(t, store.Options{Dir: filepath.Join(t.TempDir(), "data")})
	var projects []string
	for i := range 20 {
		projects = append(projects, fmt.Sprintf("p%02d", i))
	}
	jh := startJobHub(t, db, x, "", []store.Runtime{store.RuntimePython}, projects...)
	py := copiers[store.RuntimePython]
	sessions := make([]*mcp.ClientSession, len(projects))
	for i, p := range projects {
		sessions[i] = connectTB(t, jh.hub, p, projectToken(t, db, p))
	}
	skill := skillID(t, sessions[0], py.name)
	spans := make([]struct{ start, end time.Time }, len(projects))
	// Every job is made and given its input first; then the twenty runs
	// are asked for at once.
	jobIDs := make([]string, len(projects))
	var wg sync.WaitGroup
	for i, cs := range sessions {
		wg.Go(func() {
			jobIDs[i] = call(t, cs, "create_skill_job", map[string]any{"skill_id": skill})["job_id"].(string)
			upload(t, cs, jobIDs[i], "in.txt", []byte(projects[i]), 1<<20)
		})
	}
	wg.Wait()
	for i, cs := range sessions {
		job := jobIDs[i]
		wg.Go(func() {
			res := call(t, cs, "run_skill_script", map[string]any{"job_id": job, "script": py.script, "args": []string{"in.txt", "out.txt", "5"}})
			if res["state"] != "succeeded" {
				t.Errorf("%s: %v %v %v", projects[i], res["state"], res["reason"], res["stderr"])
				return
			}
			if got := download(t, cs, job, "out.txt", 1024); string(got) != projects[i] {
				t.Errorf("%s: output %q", projects[i], got)
			}
			var sp struct{ start, end time.Time }
			var err error
			if sp.start, err = time.Parse(time.RFC3339Nano, res["started_at"].(string)); err == nil {
				sp.end, err = time.Parse(time.RFC3339Nano, res["finished_at"].(string))
			}
			if err != nil {
				t.Error(err)
			}
			spans[i] = sp
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	lastStart, firstEnd, lastEnd := spans[0].start, spans[0].end, spans[0].end
	var serial time.Duration
	for _, sp := range spans {
		lastStart, firstEnd, lastEnd = later(lastStart, sp.start), earlier(firstEnd, sp.end), later(lastEnd, sp.end)
		serial += sp.end.Sub(sp.start)
	}
	span := lastEnd.Sub(firstStart(spans))
	if span >= serial/3 {
		t.Errorf("the 20 runs spanned %v, against %v run one after another: runs waited behind others", span, serial)
	}
	t.Logf("20 runs of %v in all spanned %v (starts spread over %v; overlap of all: %v)", serial, span, lastStart.Sub(firstStart(spans)), firstEnd.Sub(lastStart))
}

func firstStart(spans []struct{ start, end time.Time }) time.Time {
	t := spans[0].start
	for _, sp := range spans {
		t = earlier(t, sp.start)
	}
	return t
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func earlier(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
