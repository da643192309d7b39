package cli

import (
	"io"
	"log/slog"
)

// newLogger is the process's logger on w: format text (key=value lines) or
// json (one object a line), at level and above. Every package logs through
// the logger it is given, with the keys listed in CONTRIBUTING.md.
func newLogger(w io.Writer, format string, level slog.Level) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
