package main_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// hubServe starts `skills-hub --data data serve` on a free loopback
// port and returns its URL and the log so far (a function). It is stopped
// with SIGINT when the test ends, and must exit 0.
func hubServe(t *testing.T, data string) (string, func() string) {
	t.Helper()
	return hubServeArgs(t, "--data", data, "serve", "--http", "127.0.0.1:0")
}

// hubServeArgs is hubServe with the command line args (a hub serve that
// logs its url= line).
func hubServeArgs(t *testing.T, args ...string) (string, func() string) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = testEnv(t)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var (
		mu  sync.Mutex
		log bytes.Buffer
	)
	urls := make(chan string, 1)
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			mu.Lock()
			log.WriteString(sc.Text() + "\n")
			mu.Unlock()
			if _, after, ok := strings.Cut(sc.Text(), " url="); ok {
				select {
				case urls <- strings.Fields(after)[0]:
				default:
				}
			}
		}
	}()
	logText := func() string { mu.Lock(); defer mu.Unlock(); return log.String() }
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { <-read; done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("hub serve did not exit cleanly: %v\n%s", err, logText())
			}
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Error("hub serve did not stop within 30 s of SIGINT")
		}
	})
	select {
	case u := <-urls:
		return u, logText
	case <-time.After(30 * time.Second):
		t.Fatalf("hub serve printed no url= line:\n%s", logText())
	}
	return "", nil
}

func hubCall(t *testing.T, method, url, token string, body any) (int, []byte) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// TestHubServe runs the real binary: hub serve on a free port, the first
// admin token from the shell, a few routes with it, then revoked.
func TestHubServe(t *testing.T) {
	data := filepath.Join(t.TempDir(), "hub")
	hubRun(t, data, 0, "import", hubZip(t, "pdf.zip", map[string]string{"SKILL.md": hubSkill}))
	var vs []struct{ ID string }
	hubJSON(t, data, &vs, "versions", "pdf-tools")

	base, logText := hubServe(t, data)
	if !strings.Contains(logText(), "hub token create --scope admin") {
		t.Errorf("the first start does not say how to create an admin token:\n%s", logText())
	}
	if code, body := hubCall(t, "GET", base+"/healthz", "", nil); code != 200 {
		t.Fatalf("healthz: %d %s", code, body)
	}
	if code, body := hubCall(t, "GET", base+"/api/projects", "", nil); code != 401 || !bytes.Contains(body, []byte(`"unauthorized"`)) {
		t.Fatalf("no token: %d %s", code, body)
	}

	// The token: its secret alone on stdout.
	stdout, stderr := hubRun(t, data, 0, "token", "create", "--scope", "admin", "--name", "e2e")
	secret := strings.TrimSpace(stdout)
	if strings.Count(stdout, "\n") != 1 || !strings.HasPrefix(secret, "smcp_a_") || strings.Contains(stderr, secret) {
		t.Fatalf("token create: stdout %q stderr %q", stdout, stderr)
	}

	if code, body := hubCall(t, "POST", base+"/api/projects", secret, map[string]string{"id": "support", "name": "Support"}); code != 201 {
		t.Fatalf("create project: %d %s", code, body)
	}
	if code, body := hubCall(t, "PUT", base+"/api/projects/support/skills/"+vs[0].ID, secret, nil); code != 200 || !bytes.Contains(body, []byte(`"changed":true`)) {
		t.Fatalf("bind: %d %s", code, body)
	}
	code, body := hubCall(t, "GET", base+"/api/projects/support/skills", secret, nil)
	if code != 200 || !bytes.Contains(body, []byte(vs[0].ID)) {
		t.Fatalf("project skills: %d %s", code, body)
	}
	code, body = hubCall(t, "GET", base+"/api/audit?object_kind=project", secret, nil)
	if code != 200 || !bytes.Contains(body, []byte(`"project.bind"`)) || bytes.Contains(body, []byte("smcp_")) {
		t.Fatalf("audit: %d %s", code, body)
	}
	if code, body := hubCall(t, "GET", base+"/api/openapi.json", "", nil); code != 200 || !bytes.Contains(body, []byte(`"openapi":"3.1.0"`)) {
		t.Fatalf("document: %d %.200s", code, body)
	}
	if code, body := hubCall(t, "GET", base+"/metrics", secret, nil); code != 200 || !bytes.Contains(body, []byte("skills_hub_http_requests_total")) {
		t.Fatalf("metrics: %d %.300s", code, body)
	}

	// Listed without its secret; revoked from the shell, refused at once.
	stdout, _ = hubRun(t, data, 0, "token", "list")
	if !strings.Contains(stdout, "e2e") || strings.Contains(stdout, "smcp_") {
		t.Fatalf("token list: %s", stdout)
	}
	var toks []struct{ ID, Name string }
	hubJSON(t, data, &toks, "token", "list")
	if len(toks) != 1 {
		t.Fatalf("token list --json: %+v", toks)
	}
	hubRun(t, data, 0, "token", "revoke", toks[0].ID)
	if code, body := hubCall(t, "GET", base+"/api/projects", secret, nil); code != 401 {
		t.Fatalf("revoked token: %d %s", code, body)
	}
	if strings.Contains(logText(), secret) {
		t.Error("the server's log holds the secret")
	}

	// Usage errors.
	hubRun(t, data, 2, "token", "create")
	hubRun(t, data, 2, "token", "create", "--scope", "root")
	hubRun(t, data, 2, "token", "revoke", secret)
	hubRun(t, data, 1, "token", "revoke", "0123456789abcdef")
	hubRun(t, data, 2, "serve", "--http", "not an address")
}
