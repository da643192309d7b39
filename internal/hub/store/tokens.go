package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
)

// TokenKind is what a token opens: one project's endpoint, one project's
// well-known index, or the admin API.
type TokenKind string

// The kinds of token.
const (
	ProjectToken TokenKind = "project"
	AdminToken   TokenKind = "admin"
	// IndexToken is the capability of one project's well-known index: it
	// travels in the index's URL (the installers that read it send no
	// headers), so it opens that index and nothing else: no MCP endpoint,
	// no admin route.
	IndexToken TokenKind = "index"
)

// Scope is an admin token's reach. Each scope includes the ones before
// it: read < write < admin.
type Scope string

// The scopes of admin tokens.
const (
	ScopeRead  Scope = "read"
	ScopeWrite Scope = "write"
	ScopeAdmin Scope = "admin"
)

func (s Scope) rank() int {
	switch s {
	case ScopeRead:
		return 1
	case ScopeWrite:
		return 2
	case ScopeAdmin:
		return 3
	}
	return 0
}

// Valid reports whether s is one of the three scopes.
func (s Scope) Valid() bool { return s.rank() > 0 }

// Includes reports whether a token of scope s may do what needs scope
// need.
func (s Scope) Includes(need Scope) bool { return need.Valid() && s.rank() >= need.rank() }

// Token is a stored token, without its secret. Its ID is not secret: it
// names the token in lists, revocations and the audit log, and is the
// part of the secret that finds it.
type Token struct {
	ID        string    `json:"id"`
	Kind      TokenKind `json:"kind"`
	ProjectID string    `json:"project_id,omitempty"` // project and index tokens only
	Scope     Scope     `json:"scope,omitempty"`      // admin tokens only
	Name      string    `json:"name,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	ExpiresAt time.Time `json:"expires_at,omitzero"` // zero: never
	RevokedAt time.Time `json:"revoked_at,omitzero"`
	// LastUsedAt is when VerifyToken last accepted it, to the minute.
	LastUsedAt time.Time `json:"last_used_at,omitzero"`
}

// Allows reports whether t is an admin token whose scope includes need.
// A project token allows nothing on the admin API.
func (t Token) Allows(need Scope) bool { return t.Kind == AdminToken && t.Scope.Includes(need) }

// ForProject reports whether t is a token of project id. Each project
// token opens exactly one project's endpoint.
func (t Token) ForProject(id string) bool {
	return t.Kind == ProjectToken && id != "" && t.ProjectID == id
}

// ForIndex reports whether t is a capability of project id's well-known
// index.
func (t Token) ForIndex(id string) bool {
	return t.Kind == IndexToken && id != "" && t.ProjectID == id
}

// NewToken asks CreateToken for a token.
type NewToken struct {
	Kind      TokenKind
	ProjectID string // required for a project or index token, empty for an admin token
	Scope     Scope  // required for an admin token, empty for the others
	Name      string // a label for people, optional
	ExpiresAt time.Time
}

// TokenFilter narrows ListTokens. Zero fields match everything.
type TokenFilter struct {
	Kind           TokenKind
	ProjectID      string
	IncludeRevoked bool
}

// ErrTokenInvalid is matched by every refusal of VerifyToken. Its
// messages never contain the token.
var ErrTokenInvalid = errors.New("invalid token")

// A token's secret is a prefix naming its kind, the token's id (16 hex
// digits, not secret) and 32 random bytes in unpadded base64url:
//
//	smcp_p_0123456789abcdef_<43 characters>
//
// Every character is one of a URL path segment, so that an index token can
// be one. The store keeps only the sha256 of the whole string.
const (
	projectTokenPrefix = "smcp_p_"
	adminTokenPrefix   = "smcp_a_"
	indexTokenPrefix   = "smcp_i_"
	tokenIDLen         = 16
	tokenSecretLen     = 43 // base64url of 32 bytes, unpadded
	tokenLen           = len(projectTokenPrefix) + tokenIDLen + 1 + tokenSecretLen
)

// HasIndexTokenPrefix reports whether secret starts as every index
// token's secret does ("smcp_i_"): a cheap first filter, such as a project
// index's before it asks VerifyToken. It checks the prefix only; the
// token's id, its key and whether it exists are VerifyToken's to check.
func HasIndexTokenPrefix(secret string) bool {
	return strings.HasPrefix(secret, indexTokenPrefix)
}

// lastUsedEvery is how stale a token's last-used time may get before a
// verification writes it again: a write per minute at most, not one per
// request.
const lastUsedEvery = time.Minute

// parseSecret returns the kind and id of a well-formed secret.
func parseSecret(secret string) (TokenKind, string, bool) {
	if len(secret) != tokenLen {
		return "", "", false
	}
	var kind TokenKind
	switch secret[:len(projectTokenPrefix)] {
	case projectTokenPrefix:
		kind = ProjectToken
	case adminTokenPrefix:
		kind = AdminToken
	case indexTokenPrefix:
		kind = IndexToken
	default:
		return "", "", false
	}
	rest := secret[len(projectTokenPrefix):]
	id, sep, key := rest[:tokenIDLen], rest[tokenIDLen], rest[tokenIDLen+1:]
	if sep != '_' || !isLowerHex(id) {
		return "", "", false
	}
	if b, err := base64.RawURLEncoding.Strict().DecodeString(key); err != nil || len(b) != 32 {
		return "", "", false
	}
	return kind, id, true
}

func isLowerHex(s string) bool {
	for _, c := range []byte(s) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// CreateToken makes a token and returns it with its secret. The secret is
// kept only as its sha256: show it once, it cannot be read back.
func (s *DB) CreateToken(ctx context.Context, nt NewToken) (Token, string, error) {
	prefix := ""
	switch nt.Kind {
	case ProjectToken:
		if nt.ProjectID == "" || nt.Scope != "" {
			return Token{}, "", invalidf("a project token names its project and has no scope (scopes are for admin tokens)")
		}
		prefix = projectTokenPrefix
	case AdminToken:
		if nt.ProjectID != "" || !nt.Scope.Valid() {
			return Token{}, "", invalidf("an admin token has a scope (read, write or admin) and no project")
		}
		prefix = adminTokenPrefix
	case IndexToken:
		if nt.ProjectID == "" || nt.Scope != "" {
			return Token{}, "", invalidf("an index token names its project and has no scope (it opens the project's well-known index only)")
		}
		prefix = indexTokenPrefix
	default:
		return Token{}, "", invalidf("token kind %q: it must be %q, %q or %q", truncate(string(nt.Kind), 40), ProjectToken, AdminToken, IndexToken)
	}
	if len(nt.Name) > 128 || strings.IndexFunc(nt.Name, unicode.IsControl) >= 0 {
		return Token{}, "", invalidf("token name: at most 128 characters, no control characters")
	}
	now := s.now()
	if !nt.ExpiresAt.IsZero() && !nt.ExpiresAt.After(now) {
		return Token{}, "", invalidf("token expiry %s is not in the future", nt.ExpiresAt.UTC().Format(time.RFC3339))
	}
	var raw [8 + 32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return Token{}, "", fmt.Errorf("creating a token: no randomness: %w", err)
	}
	id := hex.EncodeToString(raw[:8])
	secret := prefix + id + "_" + base64.RawURLEncoding.EncodeToString(raw[8:])
	sum := sha256.Sum256([]byte(secret))
	var project, scope, expires any
	if nt.ProjectID != "" {
		project = nt.ProjectID
	}
	if nt.Scope != "" {
		scope = string(nt.Scope)
	}
	if !nt.ExpiresAt.IsZero() {
		expires = nt.ExpiresAt.UnixMicro()
	}
	err := s.write(ctx, "creating a token", func(tx *sql.Tx) ([]string, error) {
		_, err := tx.ExecContext(ctx, s.d.rebind(`INSERT INTO tokens (id, kind, project_id, scope, name, hash, created_at, expires_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`), id, string(nt.Kind), project, scope, nt.Name, sum[:], now.UnixMicro(), expires)
		if s.d.classify(err) == kindForeignKey {
			return nil, fmt.Errorf("creating a token: project %s: %w", truncate(nt.ProjectID, 80), ErrNotFound)
		}
		return nil, err
	})
	if err != nil {
		return Token{}, "", err
	}
	t, err := s.GetToken(ctx, id)
	if err != nil {
		return Token{}, "", err
	}
	return t, secret, nil
}

const tokenColumns = `id, kind, project_id, scope, name, created_at, expires_at, revoked_at, last_used_at`

func scanToken(r scanner, extra ...any) (Token, error) {
	var (
		t                          Token
		project, scope             sql.NullString
		created                    int64
		expires, revoked, lastUsed sql.NullInt64
	)
	dest := append([]any{&t.ID, &t.Kind, &project, &scope, &t.Name, &created, &expires, &revoked, &lastUsed}, extra...)
	if err := r.Scan(dest...); err != nil {
		return Token{}, err
	}
	t.ProjectID, t.Scope = project.String, Scope(scope.String)
	t.CreatedAt = time.UnixMicro(created).UTC()
	for _, f := range []struct {
		v  sql.NullInt64
		to *time.Time
	}{{expires, &t.ExpiresAt}, {revoked, &t.RevokedAt}, {lastUsed, &t.LastUsedAt}} {
		if f.v.Valid {
			*f.to = time.UnixMicro(f.v.Int64).UTC()
		}
	}
	return t, nil
}

// unknownHash is compared against when a token's id is unknown, so that
// every refusal costs one comparison.
var unknownHash [32]byte

// VerifyToken returns the token secret belongs to. The token is found by
// the id in the secret, then the secret's sha256 is compared with the
// stored one in constant time. Every refusal matches ErrTokenInvalid and
// never repeats the secret: a malformed or unknown secret, a wrong one,
// a revoked or an expired token.
func (s *DB) VerifyToken(ctx context.Context, secret string) (Token, error) {
	kind, id, ok := parseSecret(secret)
	sum := sha256.Sum256([]byte(secret))
	if !ok {
		subtle.ConstantTimeCompare(sum[:], unknownHash[:])
		return Token{}, fmt.Errorf("%w: it is not a skills-mcp token (they start with %s, %s or %s)", ErrTokenInvalid, projectTokenPrefix, adminTokenPrefix, indexTokenPrefix)
	}
	var hash []byte
	t, err := scanToken(s.db.QueryRowContext(ctx, s.d.rebind(`SELECT `+tokenColumns+`, hash FROM tokens WHERE id = ?`), id), &hash)
	if errors.Is(err, sql.ErrNoRows) {
		subtle.ConstantTimeCompare(sum[:], unknownHash[:])
		return Token{}, fmt.Errorf("%w: it is unknown (deleted with its project, or never issued here)", ErrTokenInvalid)
	}
	if err != nil {
		return Token{}, fmt.Errorf("verifying a token: %w", s.d.wrap(err))
	}
	if subtle.ConstantTimeCompare(sum[:], hash) != 1 || t.Kind != kind {
		return Token{}, fmt.Errorf("%w: it is unknown (deleted with its project, or never issued here)", ErrTokenInvalid)
	}
	now := s.now()
	if !t.RevokedAt.IsZero() {
		return Token{}, fmt.Errorf("%w: token %s was revoked at %s", ErrTokenInvalid, t.ID, t.RevokedAt.Format(time.RFC3339))
	}
	if !t.ExpiresAt.IsZero() && !now.Before(t.ExpiresAt) {
		return Token{}, fmt.Errorf("%w: token %s expired at %s; create a new one", ErrTokenInvalid, t.ID, t.ExpiresAt.Format(time.RFC3339))
	}
	if t.LastUsedAt.IsZero() || now.Sub(t.LastUsedAt) >= lastUsedEvery {
		// Best effort: a failure to note the use does not refuse the token.
		if _, err := s.db.ExecContext(ctx, s.d.rebind(`UPDATE tokens SET last_used_at = ? WHERE id = ?`), now.UnixMicro(), t.ID); err == nil {
			t.LastUsedAt = now.UTC().Truncate(time.Microsecond)
		}
	}
	return t, nil
}

// GetToken returns a token by id, or ErrNotFound.
func (s *DB) GetToken(ctx context.Context, id string) (Token, error) {
	t, err := scanToken(s.db.QueryRowContext(ctx, s.d.rebind(`SELECT `+tokenColumns+` FROM tokens WHERE id = ?`), id))
	if errors.Is(err, sql.ErrNoRows) {
		return Token{}, fmt.Errorf("token %s: %w", truncate(id, 40), ErrNotFound)
	}
	if err != nil {
		return Token{}, fmt.Errorf("reading token %s: %w", truncate(id, 40), s.d.wrap(err))
	}
	return t, nil
}

// ListTokens lists the tokens f matches, newest first.
func (s *DB) ListTokens(ctx context.Context, f TokenFilter) ([]Token, error) {
	q := `SELECT ` + tokenColumns + ` FROM tokens WHERE 1 = 1`
	var args []any
	if f.Kind != "" {
		q += ` AND kind = ?`
		args = append(args, string(f.Kind))
	}
	if f.ProjectID != "" {
		q += ` AND project_id = ?`
		args = append(args, f.ProjectID)
	}
	if !f.IncludeRevoked {
		q += ` AND revoked_at IS NULL`
	}
	rows, err := s.db.QueryContext(ctx, s.d.rebind(q+` ORDER BY created_at DESC, id`), args...)
	if err != nil {
		return nil, fmt.Errorf("listing tokens: %w", s.d.wrap(err))
	}
	defer rows.Close()
	out := []Token{}
	for rows.Next() {
		t, err := scanToken(rows)
		if err != nil {
			return nil, fmt.Errorf("listing tokens: %w", s.d.wrap(err))
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing tokens: %w", s.d.wrap(err))
	}
	return out, nil
}

// RevokeToken revokes a token at once: VerifyToken refuses it from now
// on. Revoking a revoked token keeps its first revocation time.
func (s *DB) RevokeToken(ctx context.Context, id string) (Token, error) {
	err := s.write(ctx, "revoking token "+truncate(id, 40), func(tx *sql.Tx) ([]string, error) {
		res, err := tx.ExecContext(ctx, s.d.rebind(`UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL`), s.now().UnixMicro(), id)
		if err != nil {
			return nil, err
		}
		if n, err := res.RowsAffected(); err != nil {
			return nil, err
		} else if n == 0 {
			if ok, err := exists(ctx, tx, s.d.rebind(`SELECT 1 FROM tokens WHERE id = ?`), id); err != nil {
				return nil, err
			} else if !ok {
				return nil, fmt.Errorf("token %s: %w", truncate(id, 40), ErrNotFound)
			}
		}
		return nil, nil
	})
	if err != nil {
		return Token{}, err
	}
	return s.GetToken(ctx, id)
}

// RedactSecrets returns s with the secret of every token in it cut off
// after the token's id ("smcp_i_0123456789abcdef_…"), for a log line that
// may hold one, such as the path of a well-known index, whose capability is
// a token. The prefix and the id stay: they name the token, as the logs and
// the audit log do.
func RedactSecrets(s string) string {
	const head = len(projectTokenPrefix) + tokenIDLen + 1 // smcp_x_ + id + _
	var b strings.Builder
	rest := s
	for {
		i := strings.Index(rest, "smcp_")
		if i < 0 || len(rest)-i < head {
			break
		}
		t := rest[i:]
		kind, id := t[:len(projectTokenPrefix)], t[len(projectTokenPrefix):head-1]
		if (kind != projectTokenPrefix && kind != adminTokenPrefix && kind != indexTokenPrefix) || !isLowerHex(id) || t[head-1] != '_' {
			b.WriteString(rest[:i+1])
			rest = rest[i+1:]
			continue
		}
		n := head
		for n < len(t) && isBase64URL(t[n]) {
			n++
		}
		b.WriteString(rest[:i+head])
		if n > head {
			b.WriteString("…")
		}
		rest = t[n:]
	}
	if b.Len() == 0 {
		return s
	}
	b.WriteString(rest)
	return b.String()
}

func isBase64URL(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_'
}
