package main_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// server is one `hub serve` process of a test.
type server struct {
	cmd  *exec.Cmd
	url  string
	mu   sync.Mutex
	log  bytes.Buffer
	read chan struct{}
	done bool
}

func (s *server) logText() string { s.mu.Lock(); defer s.mu.Unlock(); return s.log.String() }

// startServe starts `skills-hub --data data serve` with args on a
// free loopback port. Unless the test kills it, it is stopped with SIGINT
// when the test ends and must exit 0.
func startServe(t *testing.T, data string, args ...string) *server {
	t.Helper()
	return startHub(t, []string{"--data", data}, args...)
}

// startHub is startServe with the hub's global flags (--data, --database)
// given.
func startHub(t *testing.T, global []string, args ...string) *server {
	t.Helper()
	argv := append(append(append([]string{}, global...), "serve", "--http", "127.0.0.1:0"), args...)
	cmd := exec.Command(binary, argv...)
	cmd.Env = testEnv(t)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &server{cmd: cmd, read: make(chan struct{})}
	urls := make(chan string, 1)
	go func() {
		defer close(s.read)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			s.mu.Lock()
			s.log.WriteString(sc.Text() + "\n")
			s.mu.Unlock()
			if _, after, ok := strings.Cut(sc.Text(), " url="); ok {
				select {
				case urls <- strings.Fields(after)[0]:
				default:
				}
			}
		}
	}()
	t.Cleanup(func() {
		if s.done {
			return
		}
		cmd.Process.Signal(os.Interrupt)
		exited := make(chan error, 1)
		go func() { <-s.read; exited <- cmd.Wait() }()
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("hub serve did not exit cleanly: %v\n%s", err, s.logText())
			}
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Error("hub serve did not stop within 30 s of SIGINT")
		}
	})
	select {
	case s.url = <-urls:
		return s
	case <-time.After(30 * time.Second):
		t.Fatalf("hub serve printed no url= line:\n%s", s.logText())
	}
	return nil
}

// stop stops the server with SIGINT; it must exit 0.
func (s *server) stop(t *testing.T) {
	t.Helper()
	s.done = true
	s.cmd.Process.Signal(os.Interrupt)
	<-s.read
	if err := s.cmd.Wait(); err != nil {
		t.Fatalf("hub serve did not exit cleanly: %v\n%s", err, s.logText())
	}
}

// kill9 kills the server with SIGKILL and waits for it.
func (s *server) kill9(t *testing.T) {
	t.Helper()
	s.done = true
	s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.read
	s.cmd.Wait()
}

// uploadFile posts one file to a job as multipart/form-data.
func uploadFile(t *testing.T, url, token, path string, data []byte) (int, []byte) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	mw.WriteField("path", path)
	fw, _ := mw.CreateFormFile("file", filepath.Base(path))
	fw.Write(data)
	mw.Close()
	req, _ := http.NewRequest("POST", url, &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

const copyPy = `import sys
with open(sys.argv[1], 'rb') as f:
    data = f.read()
with open(sys.argv[2], 'wb') as f:
    f.write(data[::-1])
print('copied', len(data))
`

// daemonPy double-forks a daemon that appends to /work/marker forever,
// and waits itself.
const daemonPy = `import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        while True:
            with open('/work/marker', 'a') as f:
                f.write('x')
            time.sleep(0.05)
    os._exit(0)
time.sleep(300)
`

// sandboxProcesses lists the host's processes running a script of the
// package (their command line names /package/scripts/).
func sandboxProcesses(script string) []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(b, []byte("/package/"+script)) {
			out = append(out, e.Name())
		}
	}
	return out
}

func decodeJSON(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("decoding %s: %v", b, err)
	}
}

type jobView struct {
	Job struct {
		ID       string `json:"id"`
		State    string `json:"state"`
		Reason   string `json:"reason"`
		ExitCode *int   `json:"exit_code"`
	} `json:"job"`
	Stdout  string `json:"stdout"`
	Outputs []struct {
		Path   string `json:"path"`
		Size   int64  `json:"size"`
		SHA256 string `json:"sha256"`
	} `json:"outputs"`
}

// TestHubJobsBwrap runs the real binary with bubblewrap: a skill with
// Python scripts imported, its profile set and prepared, a job created,
// uploaded to, run and downloaded over the API; then a run whose daemon
// outlives nothing: hub serve is killed with SIGKILL mid-run, the sandbox
// is gone, and the restarted hub marks the job failed, never runs it
// again, and serves its inputs.
func TestHubJobsBwrap(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("bubblewrap is not installed (.ci/run installs it)")
		}
		t.Skip("SKIPPED LOUDLY: bubblewrap is not installed; install it (apt-get install bubblewrap) to run the job end-to-end test")
	}
	tmp := t.TempDir()
	// The sandbox runs as an unprivileged uid, which must be able to walk
	// to the job folders.
	for _, d := range []string{tmp, filepath.Dir(tmp)} {
		if err := os.Chmod(d, 0o711); err != nil {
			t.Fatal(err)
		}
	}
	data := filepath.Join(tmp, "hub")
	hubRun(t, data, 0, "import", hubZip(t, "copier.zip", map[string]string{
		"SKILL.md":        "---\nname: copier\ndescription: Copies files backwards.\n---\n# Copier\n",
		"scripts/copy.py": copyPy, "scripts/daemon.py": daemonPy,
	}))
	var vs []struct{ ID string }
	hubJSON(t, data, &vs, "versions", "copier")
	id := vs[0].ID
	token := strings.TrimSpace(func() string { s, _ := hubRun(t, data, 0, "token", "create", "--scope", "admin"); return s }())

	jobsDir := filepath.Join(tmp, "jobs")
	// A new data folder is traversable (0711, hub.db 0600), so the jobs'
	// default folder inside it works. One an operator closed (0700) is
	// refused as the jobs' folder, saying how to fix it; skills are still
	// served.
	if fi, err := os.Stat(data); err != nil || fi.Mode().Perm() != 0o711 {
		t.Fatalf("a new data folder: %v, mode %v, want 0711", err, fi.Mode())
	}
	if fi, err := os.Stat(filepath.Join(data, "hub.db")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("a new hub.db: %v, mode %v, want 0600", err, fi.Mode())
	}
	if err := os.Chmod(data, 0o700); err != nil {
		t.Fatal(err)
	}
	refused := startServe(t, data, "--sandbox", "bwrap")
	if l := refused.logText(); !strings.Contains(l, "cannot reach the jobs folder") || !strings.Contains(l, "--jobs") {
		t.Fatalf("an unreachable jobs folder is not refused with its fix:\n%s", l)
	}
	code, body := hubCall(t, "POST", refused.url+"/api/skills/"+id+"/prepare", token, nil)
	if code != 404 && code != 503 {
		t.Fatalf("prepare without a usable sandbox: %d %s", code, body)
	}
	refused.stop(t)

	srv := startServe(t, data, "--sandbox", "bwrap", "--jobs", jobsDir)
	if l := srv.logText(); !strings.Contains(l, "backend=bwrap") || !strings.Contains(l, "enforced=") || strings.Contains(l, "cannot reach") {
		t.Fatalf("the start log does not say which backend and limits:\n%s", l)
	}
	base := srv.url + "/api"
	code, body = hubCall(t, "GET", base+"/skills/runtime", token, nil)
	if code != 200 || !bytes.Contains(body, []byte(`"chosen":"bwrap"`)) {
		t.Fatalf("runtime: %d %s", code, body)
	}
	code, body = hubCall(t, "PUT", base+"/skills/"+id+"/profile", token, map[string]any{
		"runtime": "python", "scripts": []string{"scripts/copy.py", "scripts/daemon.py"}, "timeout_seconds": 300, "enabled": true})
	if code != 200 {
		t.Fatalf("profile: %d %s", code, body)
	}
	if code, body := hubCall(t, "POST", base+"/skills/"+id+"/prepare", token, nil); code != 202 {
		t.Fatalf("prepare: %d %s", code, body)
	}
	var prep struct{ State, Identity, Log string }
	for deadline := time.Now().Add(60 * time.Second); ; {
		_, body := hubCall(t, "GET", base+"/skills/"+id+"/prepare", token, nil)
		decodeJSON(t, body, &prep)
		if prep.State != "running" || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if prep.State != "prepared" || prep.Identity == "" {
		t.Fatalf("preparation: %+v", prep)
	}
	hubCall(t, "POST", base+"/projects", token, map[string]string{"id": "p", "name": "P"})
	if code, body := hubCall(t, "PUT", base+"/projects/p/skills/"+id, token, nil); code != 200 {
		t.Fatalf("bind: %d %s", code, body)
	}

	// A job: create, upload (multipart), run, download, verify.
	var j struct{ ID string }
	code, body = hubCall(t, "POST", base+"/projects/p/skill-jobs", token, map[string]string{"skill_id": id})
	if code != 201 {
		t.Fatalf("create job: %d %s", code, body)
	}
	decodeJSON(t, body, &j)
	jp := base + "/projects/p/skill-jobs/" + j.ID
	input := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB: two pieces
	input = append(input, "tail"...)
	if code, body := uploadFile(t, jp+"/files", token, "in/data.bin", input); code != 200 {
		t.Fatalf("upload: %d %s", code, body)
	}
	code, body = hubCall(t, "POST", jp+"/run", token, map[string]any{"script": "scripts/copy.py", "args": []string{"in/data.bin", "out.bin"}})
	var st jobView
	decodeJSON(t, body, &st)
	if code != 200 || st.Job.State != "succeeded" || st.Job.ExitCode == nil || *st.Job.ExitCode != 0 || len(st.Outputs) != 1 {
		t.Fatalf("run: %d %s", code, body)
	}
	req, _ := http.NewRequest("GET", jp+"/file?path=out.bin", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	want := make([]byte, len(input))
	for i, b := range input {
		want[len(input)-1-i] = b
	}
	sum := sha256.Sum256(out)
	if resp.StatusCode != 200 || !bytes.Equal(out, want) || resp.Header.Get("X-Content-Digest") != "sha256:"+hex.EncodeToString(sum[:]) ||
		st.Outputs[0].SHA256 != hex.EncodeToString(sum[:]) || !strings.HasPrefix(resp.Header.Get("Content-Disposition"), "attachment") {
		t.Fatalf("download: %d, %d bytes, headers %v", resp.StatusCode, len(out), resp.Header)
	}
	if code, _ := hubCall(t, "GET", jp+"/file?path=out.bin", "", nil); code != 401 {
		t.Fatalf("a download without a token: %d", code)
	}

	// The kill -9 recovery run.
	code, body = hubCall(t, "POST", base+"/projects/p/skill-jobs", token, map[string]string{"skill_id": id})
	if code != 201 {
		t.Fatalf("create job: %d %s", code, body)
	}
	decodeJSON(t, body, &j)
	kp := base + "/projects/p/skill-jobs/" + j.ID
	if code, body := uploadFile(t, kp+"/files", token, "note.txt", []byte("kept")); code != 200 {
		t.Fatalf("upload: %d %s", code, body)
	}
	go func() {
		// Held open until the server dies: a client that went away would
		// stop the job itself.
		b, _ := json.Marshal(map[string]any{"script": "scripts/daemon.py"})
		req, _ := http.NewRequest("POST", kp+"/run", bytes.NewReader(b))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	marker := filepath.Join(jobsDir, "work", j.ID, "marker")
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if fi, err := os.Stat(marker); err == nil && fi.Size() >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the daemon never wrote its marker:\n%s", srv.logText())
		}
	}
	if len(sandboxProcesses("scripts/daemon.py")) < 2 {
		t.Fatalf("the script and its daemon are not both running: %v", sandboxProcesses("scripts/daemon.py"))
	}
	srv.kill9(t)
	// bwrap dies with its server (--die-with-parent), and the pid
	// namespace with it: the daemon too.
	for deadline := time.Now().Add(20 * time.Second); len(sandboxProcesses("scripts/daemon.py")) > 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the sandbox outlived its server: %v", sandboxProcesses("scripts/daemon.py"))
		}
	}
	grown, _ := os.Stat(marker)

	srv2 := startServe(t, data, "--sandbox", "bwrap", "--jobs", jobsDir)
	if l := srv2.logText(); !strings.Contains(l, "failed="+j.ID) {
		t.Fatalf("the recovery report does not name the job:\n%s", l)
	}
	for _, l := range strings.Split(srv2.logText(), "\n") {
		if strings.Contains(l, "recovery") {
			t.Log(l)
		}
	}
	base = srv2.url + "/api"
	kp = base + "/projects/p/skill-jobs/" + j.ID
	code, body = hubCall(t, "GET", kp, token, nil)
	decodeJSON(t, body, &st)
	if code != 200 || st.Job.State != "failed" || st.Job.Reason == "" {
		t.Fatalf("the job after recovery: %d %s", code, body)
	}
	if code, body := hubCall(t, "POST", kp+"/run", token, map[string]any{"script": "scripts/daemon.py"}); code != 409 || !bytes.Contains(body, []byte(`"job_state"`)) {
		t.Fatalf("a second run: %d %s", code, body)
	}
	if code, body := hubCall(t, "GET", kp+"/file?path=note.txt", token, nil); code != 200 || string(body) != "kept" {
		t.Fatalf("the input of a recovered job: %d %s", code, body)
	}
	if n := len(sandboxProcesses("scripts/daemon.py")); n != 0 {
		t.Fatalf("the job ran again: %d processes", n)
	}
	if now, err := os.Stat(marker); err == nil && grown != nil && now.Size() != grown.Size() {
		t.Fatalf("the daemon's marker still grows: %d, then %d", grown.Size(), now.Size())
	}
	// The project's jobs keep it bound; deleting them frees it.
	if code, body := hubCall(t, "DELETE", base+"/projects/p/skills/"+id, token, nil); code != 409 || !bytes.Contains(body, []byte(j.ID)) {
		t.Fatalf("unbind with jobs kept: %d %s", code, body)
	}
}
