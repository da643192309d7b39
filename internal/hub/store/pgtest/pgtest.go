// Package pgtest starts a throwaway PostgreSQL server for tests: initdb into
// a temporary folder, the server listening only on a unix socket in that
// folder, stopped by its process id when the tests end. Any hub package's
// tests can use it:
//
//	var pg pgtest.Shared
//
//	func TestMain(m *testing.M) { os.Exit(pg.Main(m)) }
//
//	func TestSomething(t *testing.T) {
//		url := pg.Database(t) // a new, empty database on the shared server
//	}
//
// When PostgreSQL is not installed or does not start, tests that ask for
// it are skipped with a loud message, except under CI=true, where they
// fail. The binaries are found on PATH, in $PG_BIN, or in Debian's
// /usr/lib/postgresql/<version>/bin. initdb refuses to run as root, so as
// root the server runs as the "postgres" user the Debian package creates.
package pgtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers "pgx"
)

// Server is one running PostgreSQL.
type Server struct {
	bin  string // folder of initdb, postgres, pg_dump
	dir  string // temporary folder: data/, the socket, the log
	cred *syscall.Credential
	uid  int
	gid  int

	mu  sync.Mutex
	cmd *exec.Cmd
	// exited is closed when cmd's process has been waited for.
	exited chan struct{}

	dbs atomic.Int64
}

// Start initialises a cluster in a new temporary folder and starts it.
func Start() (*Server, error) {
	bin, err := findBin()
	if err != nil {
		return nil, err
	}
	s := &Server{bin: bin, uid: -1, gid: -1}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("running as root and there is no postgres user to run PostgreSQL as (initdb refuses root): %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		s.uid, s.gid = uid, gid
		s.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	// A short path: the socket's full name must fit in 107 bytes.
	s.dir, err = os.MkdirTemp("/tmp", "pgtest-")
	if err != nil {
		return nil, err
	}
	if s.cred != nil {
		if err := os.Chown(s.dir, s.uid, s.gid); err != nil {
			s.removeDir()
			return nil, err
		}
	}
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", s.dataDir(), "-U", "postgres",
		"--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		s.removeDir()
		return nil, fmt.Errorf("initdb: %v\n%s", err, out)
	}
	if err := s.Restart(); err != nil {
		s.removeDir()
		return nil, err
	}
	return s, nil
}

func (s *Server) dataDir() string { return filepath.Join(s.dir, "data") }

// Restart starts the server again after Stop, on the same data.
func (s *Server) Restart() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return errors.New("pgtest: the server is running")
	}
	logf, err := os.OpenFile(filepath.Join(s.dir, "server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o666)
	if err != nil {
		return err
	}
	defer logf.Close()
	if s.cred != nil {
		os.Chown(logf.Name(), s.uid, s.gid)
	}
	// fsync is off (the data is throwaway) but commits stay synchronous,
	// so a committed transaction survives Stop, as on a real server.
	// The server is our child; should the test binary die, the kernel
	// sends it SIGKILL (Pdeathsig), so no server outlives its tests.
	cmd := exec.Command(filepath.Join(s.bin, "postgres"), "-D", s.dataDir(),
		"-k", s.dir, "-c", "listen_addresses=", "-c", "fsync=off",
		"-c", "full_page_writes=off", "-c", "max_connections=200")
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred, Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting postgres: %w", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	s.cmd, s.exited = cmd, exited

	db, err := sql.Open("pgx", s.URL("postgres"))
	if err != nil {
		s.stopLocked()
		return err
	}
	defer db.Close()
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err = db.PingContext(ctx)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-exited:
			log, _ := os.ReadFile(filepath.Join(s.dir, "server.log"))
			s.cmd = nil
			return fmt.Errorf("postgres exited at start: %s", log)
		default:
		}
		if time.Now().After(deadline) {
			s.stopLocked()
			return fmt.Errorf("postgres did not accept connections within 60 s: %w", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// URL is the connection URL of database db on this server.
func (s *Server) URL(db string) string {
	return "postgres://postgres@/" + db + "?host=" + s.dir + "&sslmode=disable"
}

// Bin is the folder of the server's programs (pg_dump, pg_restore, …).
func (s *Server) Bin() string { return s.bin }

// Credential is who the server's programs must run as (nil: as we are).
func (s *Server) Credential() *syscall.Credential { return s.cred }

// CreateDatabase creates a new, empty database and returns its URL.
func (s *Server) CreateDatabase(ctx context.Context) (string, error) {
	name := fmt.Sprintf("t%d_%d", os.Getpid(), s.dbs.Add(1))
	db, err := sql.Open("pgx", s.URL("postgres"))
	if err != nil {
		return "", err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `CREATE DATABASE `+name+` TEMPLATE template0`); err != nil {
		return "", fmt.Errorf("creating database %s: %w", name, err)
	}
	return s.URL(name), nil
}

// Stop stops the server at once (SIGQUIT, PostgreSQL's immediate
// shutdown), then kills it if it has not exited within 10 s. The data
// stays; Restart brings the server back.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopLocked()
}

func (s *Server) stopLocked() {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
		// The whole process group: the postmaster and its backends.
		syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.exited
	}
	s.cmd = nil
}

// Close stops the server and removes its folder.
func (s *Server) Close() {
	s.Stop()
	s.removeDir()
}

func (s *Server) removeDir() { os.RemoveAll(s.dir) }

// findBin finds the folder holding initdb and postgres.
func findBin() (string, error) {
	if d := os.Getenv("PG_BIN"); d != "" {
		return d, nil
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		// Debian links some programs onto PATH; the folder that has them
		// all is where the link points.
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		return filepath.Dir(p), nil
	}
	// Debian: /usr/lib/postgresql/<major>/bin, newest first.
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	sort.Slice(matches, func(i, j int) bool { return versionOf(matches[i]) > versionOf(matches[j]) })
	if len(matches) > 0 {
		return filepath.Dir(matches[0]), nil
	}
	return "", errors.New("PostgreSQL is not installed (no initdb on PATH, in $PG_BIN or under /usr/lib/postgresql); install it with `apt-get install postgresql`")
}

func versionOf(initdb string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(initdb))))
	return v
}

// Shared is one server for a test binary, started by Main.
type Shared struct {
	srv *Server
	err error
}

// Main starts the server, runs the tests, stops the server and returns
// the exit code for os.Exit.
func (sh *Shared) Main(m *testing.M) int {
	sh.srv, sh.err = Start()
	if sh.err != nil {
		fmt.Fprintf(os.Stderr, "\n*** pgtest: PostgreSQL could not be started; its tests will be %s ***\n*** %v ***\n\n",
			map[bool]string{true: "FAILED (CI=true)", false: "SKIPPED"}[onCI()], sh.err)
	}
	code := m.Run()
	if sh.srv != nil {
		sh.srv.Close()
	}
	return code
}

// Server returns the shared server, or skips the test (fails it on CI)
// when there is none.
func (sh *Shared) Server(t testing.TB) *Server {
	t.Helper()
	if sh.srv == nil {
		err := sh.err
		if err == nil {
			err = errors.New("pgtest.Shared.Main was not called from TestMain")
		}
		if onCI() {
			t.Fatalf("PostgreSQL is required on CI: %v", err)
		}
		t.Skipf("SKIPPING: PostgreSQL unavailable: %v", err)
	}
	return sh.srv
}

// Database returns the URL of a new, empty database on the shared server.
func (sh *Shared) Database(t testing.TB) string {
	t.Helper()
	url, err := sh.Server(t).CreateDatabase(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return url
}

func onCI() bool { return strings.EqualFold(os.Getenv("CI"), "true") }
