package store

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode"
)

// AuditEntry is one mutation as the audit log keeps it: who made it (a
// token id, or a name such as "cli" for the shell), what, on which
// object, with what result, and when. It holds no payload and no secret.
type AuditEntry struct {
	ID int64 `json:"id"`
	// At is when it happened: set by the store when zero, or by a writer
	// that records it later (an entry retried while the database was
	// away keeps the time of its event).
	At         time.Time `json:"at"`
	Actor      string    `json:"actor"`
	Action     string    `json:"action"`      // e.g. "project.bind"
	ObjectKind string    `json:"object_kind"` // e.g. "project"
	ObjectID   string    `json:"object_id"`
	Result     string    `json:"result"` // AuditOK or an error code
	// Replica names the hub process that acted, when it is one of
	// several sharing the database.
	Replica string `json:"replica,omitempty"`
}

// AuditOK is the result of a mutation that succeeded.
const AuditOK = "ok"

// AuditFilter selects audit entries. Zero fields match everything.
type AuditFilter struct {
	Since, Until time.Time // Since inclusive, Until exclusive
	Actor        string
	Action       string
	ObjectKind   string
	ObjectID     string
	// Before is the Next of the previous page: entries older than it.
	Before int64
	// Limit is the page's size. If zero, DefaultPageSize; at most
	// MaxPageSize.
	Limit int
}

// AuditPage is one page of audit entries, newest first.
type AuditPage struct {
	Entries []AuditEntry `json:"entries"`
	// Next is the Before of the next page; zero on the last page.
	Next int64 `json:"next,omitempty"`
}

// isCode reports whether s is a short lowercase code: an action, an
// object kind or a result.
func isCode(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range []byte(s) {
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-' || c == ':') {
			return false
		}
	}
	return true
}

func checkAuditText(field, s string, required bool, max int) error {
	if (required && s == "") || len(s) > max || strings.IndexFunc(s, unicode.IsControl) >= 0 {
		return invalidf("audit %s: %s1 to %d characters without control characters", field, map[bool]string{true: "", false: "at most "}[!required], max)
	}
	// A token's secret has no place in the log, by mistake or otherwise.
	if strings.Contains(s, projectTokenPrefix) || strings.Contains(s, adminTokenPrefix) || strings.Contains(s, indexTokenPrefix) {
		return invalidf("audit %s looks like a token's secret; the log names tokens by their id", field)
	}
	return nil
}

// AppendAudit appends an entry to the audit log, stamped with the current
// time, and returns it with its id. The database refuses any change or
// deletion of a stored entry.
func (s *DB) AppendAudit(ctx context.Context, e AuditEntry) (AuditEntry, error) {
	if err := checkAuditText("actor", e.Actor, true, 128); err != nil {
		return AuditEntry{}, err
	}
	if err := checkAuditText("object id", e.ObjectID, false, 256); err != nil {
		return AuditEntry{}, err
	}
	if err := checkAuditText("replica", e.Replica, false, maxReplicaIDBytes); err != nil {
		return AuditEntry{}, err
	}
	for field, v := range map[string]string{"action": e.Action, "object kind": e.ObjectKind, "result": e.Result} {
		if !isCode(v) {
			return AuditEntry{}, invalidf("audit %s %q: 1 to 64 of a-z 0-9 _ . - :", field, truncate(v, 80))
		}
	}
	now := e.At
	if now.IsZero() {
		now = s.now()
	}
	err := s.db.QueryRowContext(ctx, s.d.rebind(`INSERT INTO audit (at, actor, action, object_kind, object_id, result, replica)
		VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`), now.UnixMicro(), e.Actor, e.Action, e.ObjectKind, e.ObjectID, e.Result, e.Replica).Scan(&e.ID)
	if err != nil {
		return AuditEntry{}, fmt.Errorf("recording %s on %s %s in the audit log: %w", e.Action, e.ObjectKind, e.ObjectID, s.d.wrap(err))
	}
	e.At = now.UTC().Truncate(time.Microsecond)
	return e, nil
}

// AuditList lists the entries f selects, newest first, a page at a time.
func (s *DB) AuditList(ctx context.Context, f AuditFilter) (AuditPage, error) {
	limit, err := pageLimit(f.Limit)
	if err != nil {
		return AuditPage{}, err
	}
	q := `SELECT id, at, actor, action, object_kind, object_id, result, replica FROM audit WHERE 1 = 1`
	var args []any
	add := func(cond string, v any) {
		q += " AND " + cond
		args = append(args, v)
	}
	if !f.Since.IsZero() {
		add("at >= ?", f.Since.UnixMicro())
	}
	if !f.Until.IsZero() {
		add("at < ?", f.Until.UnixMicro())
	}
	if f.Actor != "" {
		add("actor = ?", f.Actor)
	}
	if f.Action != "" {
		add("action = ?", f.Action)
	}
	if f.ObjectKind != "" {
		add("object_kind = ?", f.ObjectKind)
	}
	if f.ObjectID != "" {
		add("object_id = ?", f.ObjectID)
	}
	if f.Before > 0 {
		add("id < ?", f.Before)
	}
	args = append(args, limit+1)
	rows, err := s.db.QueryContext(ctx, s.d.rebind(q+` ORDER BY id DESC LIMIT ?`), args...)
	if err != nil {
		return AuditPage{}, fmt.Errorf("listing the audit log: %w", s.d.wrap(err))
	}
	defer rows.Close()
	out := AuditPage{Entries: []AuditEntry{}}
	for rows.Next() {
		var e AuditEntry
		var at int64
		if err := rows.Scan(&e.ID, &at, &e.Actor, &e.Action, &e.ObjectKind, &e.ObjectID, &e.Result, &e.Replica); err != nil {
			return AuditPage{}, fmt.Errorf("listing the audit log: %w", s.d.wrap(err))
		}
		e.At = time.UnixMicro(at).UTC()
		out.Entries = append(out.Entries, e)
	}
	if err := rows.Err(); err != nil {
		return AuditPage{}, fmt.Errorf("listing the audit log: %w", s.d.wrap(err))
	}
	if len(out.Entries) > limit {
		out.Entries = out.Entries[:limit]
		out.Next = out.Entries[limit-1].ID
	}
	return out, nil
}
