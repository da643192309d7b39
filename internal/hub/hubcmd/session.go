package hubcmd

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/skills-mcp/skills-mcp/internal/cmdline"
	"github.com/skills-mcp/skills-mcp/internal/hub"
	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

// session is one run of the command line: its streams, the flags every
// command takes, and the hub's store and the hub's rules over it, opened
// at most once, on a command's first use, and closed by the tree when the
// command returns.
type session struct {
	Streams
	global *cmdline.Table
	// What the global flags and their variables give.
	data, database  string
	requireApproval bool

	db  *store.DB
	hub *hub.Hub
}

func newSession(st Streams) *session {
	s := &session{Streams: st}
	t := cmdline.NewTable("global")
	t.String(&s.data, "data", "SKILLS_HUB_DATA", "", "the hub's data `DIR` (default $XDG_DATA_HOME/skills-mcp/hub or ~/.local/share/skills-mcp/hub)")
	t.String(&s.database, "database", "SKILLS_HUB_DATABASE", "", "a PostgreSQL `URL` (postgres://…) to keep the hub in, instead of SQLite in the data directory")
	t.Bool(&s.requireApproval, "require-approval", "SKILLS_HUB_REQUIRE_APPROVAL", "versions must be approved before a project may use them")
	t.Var("XDG_DATA_HOME", "the data directory's parent when --data is not given (an absolute path)")
	t.Var("HOME", "the data directory's home when --data and XDG_DATA_HOME are not given")
	s.global = t
	return s
}

// options are the store's options as the global flags and their
// variables give them, with the default data directory.
func (s *session) options() (store.Options, error) {
	data := s.data
	if s.database == "" && data == "" {
		dir, err := s.defaultData()
		if err != nil {
			return store.Options{}, err
		}
		data = dir
	}
	// Warnings only: a stored catalog passed over, say; not the migrations.
	logger := slog.New(slog.NewTextHandler(s.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	return store.Options{Dir: data, Database: s.database, RequireApproval: s.requireApproval, Logger: logger}, nil
}

// defaultData is the user's data directory for the hub.
func (s *session) defaultData() (string, error) {
	if v, ok := s.Env("XDG_DATA_HOME"); ok && filepath.IsAbs(v) {
		return filepath.Join(v, "skills-mcp", "hub"), nil
	}
	if v, ok := s.Env("HOME"); ok && v != "" {
		return filepath.Join(v, ".local", "share", "skills-mcp", "hub"), nil
	}
	return "", cmdline.Usagef("", "no data directory: give --data DIR or set SKILLS_HUB_DATA (HOME is not set)")
}

// open opens the store with the session's options and the hub's rules
// over it, which read repositories on this machine's disk (the command
// line's; hub serve's API does not), changed by adjust if not nil, the
// first time it is called; later calls return the same hub.
func (s *session) open(ctx context.Context, adjust func(*hub.Options)) (*hub.Hub, error) {
	if s.hub != nil {
		return s.hub, nil
	}
	opts, err := s.options()
	if err != nil {
		return nil, err
	}
	ho := hub.Options{LocalRepositories: true, Logger: opts.Logger}
	if adjust != nil {
		adjust(&ho)
	}
	return s.openWith(ctx, opts, ho)
}

// openWith opens the store as opts says and the hub's rules over it as ho
// says.
func (s *session) openWith(ctx context.Context, opts store.Options, ho hub.Options) (*hub.Hub, error) {
	db, err := store.Open(ctx, opts)
	if err != nil {
		return nil, err
	}
	s.db, s.hub = db, hub.New(db, &ho)
	return s.hub, nil
}

// close closes the store, if a command opened it.
func (s *session) close() error {
	if s.db == nil {
		return nil
	}
	err := s.db.Close()
	s.db, s.hub = nil, nil
	if err != nil {
		return fmt.Errorf("closing the hub's database: %w", err)
	}
	return nil
}
