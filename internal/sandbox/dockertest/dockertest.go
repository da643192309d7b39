// Package dockertest starts a throwaway Docker engine for tests: dockerd
// with its data, exec state, pid file and socket in a temporary folder, no
// bridge and no iptables rules (jobs run with network none, so nothing on
// the host changes), its own containerd child, and a skeleton image
// imported from a tar built here (empty folders, the usr-merge links,
// passwd and group; runs bind the host's /usr read-only). It is stopped by
// its process id when the tests end:
//
//	var engine dockertest.Shared
//
//	func TestMain(m *testing.M) { os.Exit(engine.Main(m)) }
//
//	func TestSomething(t *testing.T) {
//		e := engine.Engine(t) // e.Host, e.Image
//	}
//
// When dockerd is not installed or does not start, tests that ask for it
// are skipped with a loud message, except under CI=true, where they fail.
// dockerd needs root.
package dockertest

import (
	"archive/tar"
	"bytes"
	"context"
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Image is the tag of the skeleton image an Engine holds.
const Image = "skills-mcp-skeleton:test"

// Engine is one running dockerd.
type Engine struct {
	// Host is the engine's address for a client, "unix://…/docker.sock".
	Host string
	// Image is the skeleton image's id.
	Image string
	// Driver is the storage driver the engine runs with.
	Driver string

	dir    string
	cmd    *exec.Cmd
	exited chan struct{}
	log    *os.File
}

// Start starts a dockerd, waits until it answers, and imports the skeleton
// image. The storage driver is overlay2, or vfs where overlay2 does not
// work on the temporary folder's file system.
func Start() (*Engine, error) {
	bin, err := exec.LookPath("dockerd")
	if err != nil {
		if _, serr := os.Stat("/usr/sbin/dockerd"); serr != nil {
			return nil, errors.New("dockerd is not installed (Debian: apt-get install docker.io)")
		}
		bin = "/usr/sbin/dockerd"
	}
	if os.Geteuid() != 0 {
		return nil, errors.New("dockerd needs root")
	}
	var errs []error
	for _, driver := range []string{"overlay2", "vfs"} {
		e, err := start(bin, driver)
		if err == nil {
			return e, nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", driver, err))
	}
	return nil, errors.Join(errs...)
}

func start(bin, driver string) (*Engine, error) {
	// A short path: the socket's full name must fit in 107 bytes.
	dir, err := os.MkdirTemp("/tmp", "dockertest-")
	if err != nil {
		return nil, err
	}
	e := &Engine{dir: dir, Host: "unix://" + filepath.Join(dir, "docker.sock"), Driver: driver, exited: make(chan struct{})}
	if err := os.WriteFile(filepath.Join(dir, "daemon.json"), []byte("{}"), 0o600); err != nil {
		return nil, err
	}
	e.log, err = os.Create(filepath.Join(dir, "dockerd.log"))
	if err != nil {
		return nil, err
	}
	e.cmd = exec.Command(bin,
		"--config-file", filepath.Join(dir, "daemon.json"),
		"--data-root", filepath.Join(dir, "data"),
		"--exec-root", filepath.Join(dir, "exec"),
		"--pidfile", filepath.Join(dir, "docker.pid"),
		"-H", e.Host,
		"--bridge=none", "--iptables=false", "--ip-masq=false", "--ip-forward=false",
		"--storage-driver", driver,
		"--cgroup-parent", "/"+filepath.Base(dir),
		"--log-level", "warn",
	)
	e.cmd.Stdout, e.cmd.Stderr = e.log, e.log
	e.cmd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
	// Its own process group, so a terminal's signals reach only the tests.
	e.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := e.cmd.Start(); err != nil {
		e.cleanup()
		return nil, err
	}
	go func() { e.cmd.Wait(); close(e.exited) }()

	if err := e.waitReady(30 * time.Second); err != nil {
		e.Stop()
		return nil, err
	}
	if err := e.importSkeleton(); err != nil {
		e.Stop()
		return nil, fmt.Errorf("importing the skeleton image: %w", err)
	}
	return e, nil
}

func (e *Engine) httpClient() *http.Client {
	sock := strings.TrimPrefix(e.Host, "unix://")
	return &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		},
	}}
}

func (e *Engine) waitReady(wait time.Duration) error {
	c := e.httpClient()
	defer c.CloseIdleConnections()
	deadline := time.Now().Add(wait)
	for {
		resp, err := c.Get("http://docker/_ping")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-e.exited:
			return fmt.Errorf("dockerd exited: %s", e.logTail())
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("dockerd did not answer within %v: %s", wait, e.logTail())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (e *Engine) logTail() string {
	b, _ := os.ReadFile(filepath.Join(e.dir, "dockerd.log"))
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return strings.TrimSpace(string(b))
}

// Skeleton returns the skeleton image's tar: empty folders for the
// mounts, the usr-merge links, and passwd/group naming root and nobody.
func Skeleton() []byte {
	b, err := ImageTar(nil)
	if err != nil {
		panic(err) // no host file is read
	}
	return b
}

// ImageTar returns a root file system tar: the skeleton's, with the host
// programs progs (absolute paths, e.g. /usr/bin/bash) and the shared
// libraries they load copied in, and files (path inside → content) added,
// so that an image runs those programs without the host's /usr bound. The
// host's /bin, /lib, /lib64 and /sbin are taken for /usr's (usr-merge).
func ImageTar(files map[string]string, progs ...string) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	mod := time.Unix(0, 0)
	dirs := map[string]bool{}
	mkdir := func(d string, mode int64) {
		if !dirs[d] {
			dirs[d] = true
			tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: mode, ModTime: mod})
		}
	}
	for _, d := range []string{"usr", "etc", "tmp", "work", "package", "proc", "dev", "sys"} {
		mode := int64(0o755)
		if d == "tmp" {
			mode = 0o1777
		}
		mkdir(d, mode)
	}
	for _, l := range []string{"bin", "lib", "lib64", "sbin"} {
		tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: l, Linkname: "usr/" + l, Mode: 0o777, ModTime: mod})
	}
	all := map[string]string{
		"etc/passwd": "root:x:0:0:root:/root:/usr/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
		"etc/group":  "root:x:0:\nnogroup:x:65534:\n",
	}
	for name, body := range files {
		all[strings.TrimPrefix(path.Clean("/"+name), "/")] = body
	}
	host, err := withLibraries(progs)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(all)+len(host))
	for name := range all {
		names = append(names, name)
	}
	for inside := range host {
		names = append(names, inside)
	}
	slices.Sort(names)
	for _, name := range names {
		var parents []string
		for d := path.Dir(name); d != "."; d = path.Dir(d) {
			parents = append(parents, d)
		}
		for i := len(parents) - 1; i >= 0; i-- {
			mkdir(parents[i], 0o755)
		}
		body, mode := []byte(all[name]), int64(0o644)
		if src, ok := host[name]; ok {
			if body, err = os.ReadFile(src); err != nil {
				return nil, err
			}
			mode = 0o755
		}
		tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Size: int64(len(body)), Mode: mode, ModTime: mod})
		tw.Write(body)
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// withLibraries maps each program, and each shared library it loads
// (its ELF interpreter and needed libraries, found in the host's library
// folders, recursively), from its place inside the image (under usr/) to
// the host file to copy.
func withLibraries(progs []string) (map[string]string, error) {
	out := map[string]string{}
	inside := func(p string) string {
		p = strings.TrimPrefix(path.Clean(p), "/")
		for _, top := range []string{"bin/", "lib/", "lib64/", "sbin/"} {
			if strings.HasPrefix(p, top) {
				return "usr/" + p
			}
		}
		return p
	}
	var libDirs []string
	for _, d := range []string{"/lib", "/usr/lib", "/lib64", "/usr/lib64"} {
		libDirs = append(libDirs, filepath.Join(d, archTriplet()), d)
	}
	var add func(p string) error
	add = func(p string) error {
		if _, done := out[inside(p)]; done {
			return nil
		}
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			return err
		}
		out[inside(p)] = real
		f, err := elf.Open(real)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		defer f.Close()
		for _, prog := range f.Progs {
			if prog.Type == elf.PT_INTERP {
				b, err := io.ReadAll(prog.Open())
				if err != nil {
					return err
				}
				if err := add(strings.TrimRight(string(b), "\x00")); err != nil {
					return err
				}
			}
		}
		needed, err := f.ImportedLibraries()
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		for _, lib := range needed {
			found := ""
			for _, d := range libDirs {
				if _, err := os.Stat(filepath.Join(d, lib)); err == nil {
					found = filepath.Join(d, lib)
					break
				}
			}
			if found == "" {
				return fmt.Errorf("%s needs %s, which is in none of %v", p, lib, libDirs)
			}
			if err := add(found); err != nil {
				return err
			}
		}
		return nil
	}
	for _, p := range progs {
		if err := add(p); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// archTriplet is Debian's multiarch folder name of this machine.
func archTriplet() string {
	if runtime.GOARCH == "arm64" {
		return "aarch64-linux-gnu"
	}
	return "x86_64-linux-gnu"
}

func (e *Engine) importSkeleton() error {
	id, err := e.Import(Skeleton(), Image)
	e.Image = id
	return err
}

// Import makes an image of the root file system tar rootfs (see ImageTar)
// and tags it ref ("name:tag"), moving the tag when another image had it;
// it returns the new image's id. No registry is involved.
func (e *Engine) Import(rootfs []byte, ref string) (string, error) {
	c := e.httpClient()
	defer c.CloseIdleConnections()
	repo, tag, _ := strings.Cut(ref, ":")
	if tag == "" {
		tag = "latest"
	}
	q := url.Values{"fromSrc": {"-"}, "repo": {repo}, "tag": {tag}}
	resp, err := c.Post("http://docker/images/create?"+q.Encode(), "application/x-tar", bytes.NewReader(rootfs))
	if err != nil {
		return "", err
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || bytes.Contains(body, []byte(`"error"`)) {
		return "", fmt.Errorf("importing %s: %s: %s", ref, resp.Status, body)
	}
	resp, err = c.Get("http://docker/images/" + url.PathEscape(repo+":"+tag) + "/json")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var img struct{ Id string }
	if err := json.NewDecoder(resp.Body).Decode(&img); err != nil || img.Id == "" {
		return "", fmt.Errorf("the imported image %s is not there (%v; import said %s)", ref, err, body)
	}
	return img.Id, nil
}

// RemoveImage removes ref, a tag or an image id, even while containers
// use it: a tag is untagged, and its image deleted once no tag is left; an
// id's image is deleted with all its tags. An image or tag that is not
// there is not an error, so a test's cleanup may call it whatever the test
// got to import.
func (e *Engine) RemoveImage(ref string) error {
	c := e.httpClient()
	defer c.CloseIdleConnections()
	req, err := http.NewRequest(http.MethodDelete, "http://docker/images/"+url.PathEscape(ref)+"?force=1", nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("removing image %s: %w", ref, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusNotFound {
		return nil
	}
	body, _ := io.ReadAll(resp.Body)
	return fmt.Errorf("removing image %s: %s: %s", ref, resp.Status, body)
}

// HasImage reports whether the engine has the image ref (a tag or an id).
func (e *Engine) HasImage(ref string) (bool, error) {
	c := e.httpClient()
	defer c.CloseIdleConnections()
	resp, err := c.Get("http://docker/images/" + url.PathEscape(ref) + "/json")
	if err != nil {
		return false, fmt.Errorf("reading image %s: %w", ref, err)
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
		return true, nil
	case http.StatusNotFound:
		return false, nil
	}
	body, _ := io.ReadAll(resp.Body)
	return false, fmt.Errorf("reading image %s: %s: %s", ref, resp.Status, body)
}

// Stop stops dockerd by its pid (SIGTERM, then SIGKILL after 20 s), makes
// sure its containerd child is gone, and removes the temporary folder and
// the engine's cgroup folders.
func (e *Engine) Stop() {
	if e.cmd != nil && e.cmd.Process != nil {
		e.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-e.exited:
		case <-time.After(20 * time.Second):
			e.cmd.Process.Kill()
			<-e.exited
		}
	}
	// dockerd stops the containerd it started; if it could not, do it.
	if b, err := os.ReadFile(filepath.Join(e.dir, "exec", "containerd", "containerd.pid")); err == nil {
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 1 && isContainerd(pid) {
			syscall.Kill(pid, syscall.SIGTERM)
			for deadline := time.Now().Add(10 * time.Second); isContainerd(pid) && time.Now().Before(deadline); {
				time.Sleep(20 * time.Millisecond)
			}
		}
	}
	e.cleanup()
}

func isContainerd(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	return err == nil && strings.TrimSpace(string(b)) == "containerd"
}

func (e *Engine) cleanup() {
	if e.log != nil {
		e.log.Close()
	}
	// Overlay mounts dockerd may have left: unmount before removing.
	if mounts, err := os.ReadFile("/proc/self/mounts"); err == nil && e.dir != "" {
		for _, line := range strings.Split(string(mounts), "\n") {
			if f := strings.Fields(line); len(f) > 1 && strings.HasPrefix(f[1], e.dir+"/") {
				syscall.Unmount(f[1], syscall.MNT_DETACH)
			}
		}
	}
	os.RemoveAll(e.dir)
	for _, ctl := range []string{"memory", "pids", "cpu", "cpuacct", "cpuset", "blkio", "devices", "freezer", "systemd", "hugetlb", "unified"} {
		os.Remove(filepath.Join("/sys/fs/cgroup", ctl, filepath.Base(e.dir)))
	}
}

// Shared is one engine for a test package, started on first use and
// stopped by Main.
type Shared struct {
	once sync.Once
	e    *Engine
	err  error
}

// Main runs the tests and stops the engine if one was started.
func (s *Shared) Main(m *testing.M) int {
	code := m.Run()
	if s.e != nil {
		s.e.Stop()
	}
	return code
}

// Engine returns the package's engine, starting it on first use. Without
// one it skips t loudly, or fails it under CI=true.
func (s *Shared) Engine(t testing.TB) *Engine {
	t.Helper()
	s.once.Do(func() { s.e, s.err = Start() })
	if s.err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the Docker engine is required under CI=true: %v", s.err)
		}
		t.Skipf("SKIPPED LOUDLY: no Docker engine for this test: %v", s.err)
	}
	return s.e
}

// Container is one of the engine's containers, as a test sees it.
type Container struct {
	Name   string // without the leading '/'
	State  string // created, running, exited, …
	Labels map[string]string
}

// Containers lists the engine's containers, stopped ones too.
func (e *Engine) Containers() ([]Container, error) {
	c := e.httpClient()
	defer c.CloseIdleConnections()
	resp, err := c.Get("http://docker/containers/json?all=1")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return nil, fmt.Errorf("listing containers: %s: %s", resp.Status, b)
	}
	var list []struct {
		Names  []string
		State  string
		Labels map[string]string
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		return nil, err
	}
	out := make([]Container, 0, len(list))
	for _, c := range list {
		name := ""
		if len(c.Names) > 0 {
			name = strings.TrimPrefix(c.Names[0], "/")
		}
		out = append(out, Container{Name: name, State: c.State, Labels: c.Labels})
	}
	return out, nil
}
