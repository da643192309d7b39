package pull

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// The pull command's output: the --list listing, the report lines, a
// progress bar for a terminal, and the tail of a spawned server's log.

// listing is the --list --json document.
type listing struct {
	Server Server        `json:"server"`
	Skills []listedSkill `json:"skills"`
}

type listedSkill struct {
	URI         string   `json:"uri"`
	Path        string   `json:"path,omitempty"`
	Name        string   `json:"name,omitempty"`
	Description string   `json:"description,omitempty"`
	Files       int      `json:"files"`
	Bytes       int64    `json:"bytes"`
	Dynamic     bool     `json:"dynamic,omitempty"`
	Required    []string `json:"required,omitempty"`
	Error       string   `json:"error,omitempty"`
}

// WriteList writes the skills a server lists: as indented JSON on stdout,
// or as one line each on stdout and a count on stderr.
func WriteList(stdout, stderr io.Writer, srv Server, entries []*Entry, asJSON bool) error {
	out := listing{Server: srv, Skills: make([]listedSkill, len(entries))}
	for i, e := range entries {
		s := listedSkill{URI: e.URI, Path: e.Path, Name: e.Name, Description: e.Description,
			Files: len(e.Files), Bytes: e.Bytes(), Dynamic: e.Dynamic, Required: e.Required}
		if e.Err != nil {
			s.Error = e.Err.Error()
		}
		out.Skills[i] = s
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	width := 0
	for _, s := range out.Skills {
		width = max(width, len(s.Path))
	}
	for _, s := range out.Skills {
		switch {
		case s.Error != "":
			fmt.Fprintf(stdout, "%-*s  invalid: %s\n", width, s.URI, s.Error)
		case s.Dynamic:
			fmt.Fprintf(stdout, "%-*s  dynamic          %s\n", width, s.Path, oneLine(s.Description, 80))
		default:
			fmt.Fprintf(stdout, "%-*s  %3d %-5s %9s  %s\n", width, s.Path, s.Files, plural(s.Files, "file"), humanBytes(s.Bytes), oneLine(s.Description, 80))
		}
	}
	_, err := fmt.Fprintf(stderr, "%d %s listed by %s (protocol %s)\n", len(entries), plural(len(entries), "skill"), srv.Name, srv.Protocol)
	return err
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// WriteJSON writes the report as indented JSON.
func (rep *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

// WriteText writes one line per skill and a summary line.
func (rep *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	counts := map[Action]int{}
	for _, s := range rep.Skills {
		counts[s.Action]++
		dir := rep.Dest + "/" + s.Dir
		action := string(s.Action)
		if rep.DryRun {
			action = map[Action]string{Created: "would create", Updated: "would update", Skipped: "would skip"}[s.Action]
			if action == "" {
				action = string(s.Action)
			}
		}
		switch s.Action {
		case Skipped:
			fmt.Fprintf(&b, "%-12s %s → %s  (the folder exists; --sync or --force to update it)\n", action, s.Path, dir)
		case Included:
			fmt.Fprintf(&b, "%-12s %s → %s  (written with the skill that encloses it)\n", action, s.Path, dir)
		default:
			extra := ""
			if s.Dynamic {
				extra = "; dynamic: only the frontmatter was verified"
			}
			if n := len(s.Scripts); n > 0 {
				extra += fmt.Sprintf("; %d %s", n, plural(n, "executable"))
				if s.Withheld {
					extra += " not written (--no-scripts)"
				}
			}
			fmt.Fprintf(&b, "%-12s %s → %s  (%d fetched, %d updated, %d kept, %d deleted; %s%s)\n",
				action, s.Path, dir, s.Fetched, s.Updated, s.Kept, s.Deleted, humanBytes(s.Bytes), extra)
		}
	}
	var parts []string
	for _, a := range []Action{Created, Updated, Unchanged, Skipped, Included} {
		if n := counts[a]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, a))
		}
	}
	fmt.Fprintf(&b, "pull: %d %s from %s (%s): %s; %d %s, %s read in %s",
		len(rep.Skills), plural(len(rep.Skills), "skill"), rep.Server.Name, rep.Server.Protocol, strings.Join(parts, ", "),
		rep.Files, plural(rep.Files, "file"), humanBytes(rep.Bytes), time.Duration(rep.Millis)*time.Millisecond)
	if rep.DryRun {
		b.WriteString(" (dry run: nothing written)")
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// plural returns word with an s unless n is 1.
func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

func humanBytes(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// NewProgressBar returns a bar drawn on w when w is a terminal, else nil,
// on which Update and Clear do nothing.
func NewProgressBar(w io.Writer) *ProgressBar {
	f, ok := w.(*os.File)
	if !ok {
		return nil
	}
	if fi, err := f.Stat(); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return nil
	}
	return &ProgressBar{w: w}
}

// ProgressBar draws one line on a terminal, at most ten times a second.
// Its methods are safe for concurrent use, and do nothing on a nil bar.
type ProgressBar struct {
	w     io.Writer
	mu    sync.Mutex
	last  time.Time
	drawn bool
}

// Update draws p; it fits [PullOptions.OnProgress].
func (b *ProgressBar) Update(p Progress) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if time.Since(b.last) < 100*time.Millisecond && p.SkillsDone < p.Skills {
		return
	}
	b.last = time.Now()
	const width = 30
	filled := 0
	if p.Skills > 0 {
		filled = width * p.SkillsDone / p.Skills
	}
	fmt.Fprintf(b.w, "\r[%s%s] %d/%d skills, %d files, %s ", strings.Repeat("#", filled), strings.Repeat(" ", width-filled),
		p.SkillsDone, p.Skills, p.FilesDone, humanBytes(p.Bytes))
	b.drawn = true
}

// Clear erases the bar, if it was drawn.
func (b *ProgressBar) Clear() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.drawn {
		fmt.Fprint(b.w, "\r\033[K")
	}
}

// Tail keeps the last Max bytes written to it: a spawned server's log,
// noise while it works, shown when something fails. It is safe for
// concurrent use.
type Tail struct {
	Max int

	mu  sync.Mutex
	buf []byte
}

// Write implements io.Writer.
func (t *Tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.Max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

// String returns what is kept.
func (t *Tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
