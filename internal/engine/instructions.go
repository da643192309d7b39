package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"unicode/utf8"

	"github.com/skills-mcp/skills-mcp/internal/atomicfile"
	"github.com/skills-mcp/skills-mcp/internal/catalog"
	"github.com/skills-mcp/skills-mcp/internal/regfile"
)

// Instructions kept between starts: a host keeps the instructions of
// initialize for the whole session, and initialize is answered before the
// first scan ends, so a server sends those of the last catalog it served
// with the same configuration (server.Options.PendingInstructions) and
// keeps the new ones once the catalog is installed.

// InstructionsFile is where the instructions of the last catalog served
// with the configuration key are kept below cacheDir; key is rendered with
// %#v, so two keys that print alike share the file. "" when cacheDir is "".
func InstructionsFile(cacheDir string, key any) string {
	if cacheDir == "" {
		return ""
	}
	sum := sha256.Sum256(fmt.Appendf(nil, "%#v", key))
	return filepath.Join(cacheDir, "instructions", hex.EncodeToString(sum[:16])+".txt")
}

// maxInstructionsBytes bounds the instructions file read back.
const maxInstructionsBytes = 16 << 10

// ReadInstructions returns the instructions kept in file, or "" when there
// are none, or the file is not a regular file, is too large or not UTF-8.
func ReadInstructions(file string) string {
	if file == "" {
		return ""
	}
	f, err := regfile.Open(file)
	if err != nil {
		return ""
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxInstructionsBytes+1))
	if err != nil || len(data) > maxInstructionsBytes || !utf8.Valid(data) {
		return ""
	}
	return string(data)
}

// WriteInstructions keeps text in file for the next start, replacing the
// file atomically; failing only costs the next start its figures, so it
// is logged at debug.
func WriteInstructions(file, text string, log *slog.Logger) {
	if file == "" || text == "" || ReadInstructions(file) == text {
		return
	}
	err := os.MkdirAll(filepath.Dir(file), 0o700)
	if err == nil {
		err = atomicfile.Write(file, 0o600, false, func(w io.Writer) error {
			_, err := io.WriteString(w, text)
			return err
		})
	}
	if err != nil && log != nil {
		log.Debug("instructions not kept for the next start", "err", err)
	}
}

// Notifier is what a server tells its sessions about the catalog
// (server.Notifier is one).
type Notifier interface {
	// Instructions are the instructions initialize answers now.
	Instructions() string
	// CatalogReady lets the requests held for the first scan through.
	CatalogReady()
	// CatalogChanged tells the sessions that what they see changed.
	CatalogChanged()
}

// NotifyHooks returns the Installed and Swapped hooks that tell n of the
// first scan and of every change, and keep n's instructions in file
// (InstructionsFile) for the next start: before the first request is let
// through, so that a host that got an answer may count on the next start
// sending these.
func NotifyHooks(n Notifier, file string, log *slog.Logger) Hooks {
	return Hooks{
		Installed: func(*catalog.Snapshot) {
			WriteInstructions(file, n.Instructions(), log)
			n.CatalogReady()
		},
		Swapped: func(_, _ *catalog.Snapshot, changed bool) {
			if changed {
				n.CatalogChanged()
				WriteInstructions(file, n.Instructions(), log)
			}
		},
	}
}
