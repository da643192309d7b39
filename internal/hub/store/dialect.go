package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
)

// kind is what a database error means to the store.
type kind int

const (
	kindOther      kind = iota
	kindUnique          // a unique or primary key was taken
	kindForeignKey      // a foreign key refused the change
	kindRetry           // a conflict with a concurrent transaction; retry
	kindFull            // no room left
	kindGone            // the server went away
)

// dialect is what differs between the backends once the schema is in
// place: placeholders and the meaning of errors.
type dialect interface {
	name() string
	rebind(q string) string
	classify(err error) kind
	// wrap adds the store's sentinel to an error it recognises.
	wrap(err error) error
	// byteOrder is col compared and sorted in byte order, whatever the
	// database's collation.
	byteOrder(col string) string
	// lockRow ends a SELECT of one row that the transaction will change,
	// locking it until the transaction ends.
	lockRow() string
	// skipLocked ends a SELECT of rows to take, locking the rows it returns
	// and passing over rows another transaction holds (a queue's claim).
	skipLocked() string
}

type sqliteDialect struct{}

// SQLite primary result codes the store acts on.
const (
	sqliteBusy       = 5
	sqliteLocked     = 6
	sqliteFull       = 13
	sqliteConstraint = 19
	sqliteNotADB     = 26

	sqliteConstraintForeignKey = 787
	sqliteConstraintPrimaryKey = 1555
	sqliteConstraintUnique     = 2067
)

func (sqliteDialect) name() string           { return "sqlite" }
func (sqliteDialect) rebind(q string) string { return q }

// SQLite's default collation is byte order; a write transaction holds the
// database's lock from BEGIN (_txlock=immediate), so rows need no lock.
func (sqliteDialect) byteOrder(col string) string { return col }
func (sqliteDialect) lockRow() string             { return "" }
func (sqliteDialect) skipLocked() string          { return "" }

func sqliteCode(err error) int {
	var e *sqlite.Error
	if errors.As(err, &e) {
		return e.Code()
	}
	return 0
}

func (sqliteDialect) classify(err error) kind {
	if err == nil {
		return kindOther
	}
	code := sqliteCode(err)
	switch {
	case code == sqliteConstraintForeignKey:
		return kindForeignKey
	case code == sqliteConstraintUnique || code == sqliteConstraintPrimaryKey:
		return kindUnique
	case code&0xff == sqliteFull:
		return kindFull
	case code&0xff == sqliteBusy || code&0xff == sqliteLocked:
		return kindRetry
	case errors.Is(err, syscall.ENOSPC):
		return kindFull
	}
	return kindOther
}

func (d sqliteDialect) wrap(err error) error { return wrapKind(d.classify(err), err) }

type pgDialect struct{}

func (pgDialect) name() string { return "postgres" }

func (pgDialect) byteOrder(col string) string { return col + ` COLLATE "C"` }

// FOR NO KEY UPDATE blocks other writers of the row but not foreign keys
// that refer to it.
func (pgDialect) lockRow() string { return " FOR NO KEY UPDATE" }

// FOR UPDATE SKIP LOCKED lets concurrent claims each take a different row
// instead of queueing behind one another.
func (pgDialect) skipLocked() string { return " FOR UPDATE SKIP LOCKED" }

// rebind turns the ? placeholders the store's queries are written with
// into PostgreSQL's $n. No query of the store has a literal '?'.
func (pgDialect) rebind(q string) string {
	if !strings.Contains(q, "?") {
		return q
	}
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func (pgDialect) classify(err error) kind {
	if err == nil {
		return kindOther
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pe.Code == "23505":
			return kindUnique
		case pe.Code == "23503":
			return kindForeignKey
		case pe.Code == "40001" || pe.Code == "40P01" || pe.Code == "55P03":
			return kindRetry
		case pe.Code == "53100" || pe.Code == "53200" || pe.Code == "54000":
			return kindFull
		case strings.HasPrefix(pe.Code, "57P") || strings.HasPrefix(pe.Code, "08"):
			return kindGone
		}
		return kindOther
	}
	var ne net.Error
	if errors.As(err, &ne) || errors.Is(err, driver.ErrBadConn) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.ENOENT) || pgconn.Timeout(err) || isConnClosed(err) {
		return kindGone
	}
	return kindOther
}

func isConnClosed(err error) bool {
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return true
	}
	s := err.Error()
	return strings.Contains(s, "conn closed") || strings.Contains(s, "closed pool") ||
		strings.Contains(s, "unexpected EOF") || strings.Contains(s, "failed to connect")
}

func (d pgDialect) wrap(err error) error { return wrapKind(d.classify(err), err) }

func wrapKind(k kind, err error) error {
	if err == nil {
		return nil
	}
	switch k {
	case kindFull:
		if !errors.Is(err, ErrStorageFull) {
			return fmt.Errorf("%w: free space (or raise the limit) and retry: %w", ErrStorageFull, err)
		}
	case kindGone:
		if !errors.Is(err, ErrUnavailable) {
			return fmt.Errorf("%w: the connection to PostgreSQL was lost; check the server and retry: %w", ErrUnavailable, err)
		}
	}
	return err
}

// fileLocker is goose's lock for a SQLite data directory: an exclusive
// flock on a lock file beside the database, held while migrations run.
// flock locks belong to the open file, so two stores in one process
// exclude each other as two processes do.
type fileLocker struct {
	path string
	f    *os.File // held between Lock and Unlock
}

func (l *fileLocker) Lock(ctx context.Context, _ *sql.DB) error {
	f, err := os.OpenFile(l.path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("migration lock: %w", err)
	}
	// Poll rather than block, so that a cancelled context leaves no
	// goroutine waiting in flock.
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return fmt.Errorf("migration lock %s: %w", l.path, err)
		}
		select {
		case <-time.After(20 * time.Millisecond):
		case <-ctx.Done():
			f.Close()
			return fmt.Errorf("waiting for the migration lock %s (another process is migrating this data directory): %w", l.path, ctx.Err())
		}
	}
	l.f = f
	return nil
}

func (l *fileLocker) Unlock(context.Context, *sql.DB) error {
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// redactURL drops every credential from a database URL for messages: the
// userinfo's password and any query parameter that names a password
// (password=, sslpassword=, …). Text that is not a URL (a keyword DSN,
// "host=… password=…") has its password values masked the same way.
func redactURL(raw string) string { return RedactDatabase(raw) }

// RedactDatabase is a database address fit for a log or an error: every
// password it holds, in any of the forms PostgreSQL takes (the URL's
// userinfo, a query parameter naming a password, a keyword DSN's
// password=), is replaced by xxxxx.
func RedactDatabase(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Opaque != "" {
		return keywordPassword.ReplaceAllString(raw, "${1}=xxxxx")
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			if secretKey(k) {
				q.Set(k, "xxxxx")
			}
		}
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

// secretKey reports whether a connection parameter holds a secret.
func secretKey(k string) bool { return strings.Contains(strings.ToLower(k), "password") }

// keywordPassword finds the values of a keyword DSN's password keys,
// quoted or not.
var keywordPassword = regexp.MustCompile(`(?i)\b(\w*password\w*)\s*=\s*('(?:[^'\\]|\\.)*'|[^\s&]*)`)

// databaseSecrets lists the secret values raw holds, decoded as a driver
// sees them, for scrubbing them from a driver's error messages, which may
// quote the address (pgx redacts only the userinfo).
func databaseSecrets(raw string) []string {
	var out []string
	add := func(v string) {
		if len(v) >= 3 {
			out = append(out, v)
			if esc := url.QueryEscape(v); esc != v {
				out = append(out, esc)
			}
		}
	}
	if u, err := url.Parse(raw); err == nil {
		if p, ok := u.User.Password(); ok {
			add(p)
		}
		for k, vs := range u.Query() {
			if secretKey(k) {
				for _, v := range vs {
					add(v)
				}
			}
		}
	}
	for _, m := range keywordPassword.FindAllStringSubmatch(raw, -1) {
		add(strings.Trim(m[2], "'"))
	}
	return out
}

// scrubbed is an error whose text has had secrets removed; errors.Is and
// As still see the error it wraps.
type scrubbed struct {
	msg string
	err error
}

func (e *scrubbed) Error() string { return e.msg }
func (e *scrubbed) Unwrap() error { return e.err }

// scrub removes the secrets of the database address raw from err's text.
func scrub(err error, raw string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	changed := false
	for _, sec := range databaseSecrets(raw) {
		if strings.Contains(msg, sec) {
			msg = strings.ReplaceAll(msg, sec, "xxxxx")
			changed = true
		}
	}
	if !changed {
		return err
	}
	return &scrubbed{msg: msg, err: err}
}
