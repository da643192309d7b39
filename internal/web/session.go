package web

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"sync"
	"time"
)

// Session is one signed-in browser.
type Session struct {
	Identity Identity
	// Expires is when the session ends; zero for a request signed in by a
	// bearer token, which has no session.
	Expires time.Time
	csrf    string // the form token, "" for a bearer-token request
	created time.Time
}

type sessionKey struct{}

// SessionFrom returns the session of a request the site let through, or
// nil when the site has no sign-in.
func SessionFrom(ctx context.Context) *Session {
	s, _ := ctx.Value(sessionKey{}).(*Session)
	return s
}

// checkCSRF compares a form's token with the session's in constant time.
func (s *Session) checkCSRF(tok string) bool {
	return s.csrf != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(s.csrf)) == 1
}

// sessions holds the sessions of one process, in memory: a restart signs
// everyone out, which for a token typed again costs little, and nothing
// secret is ever written to disk.
type sessions struct {
	ttl time.Duration
	max int
	now func() time.Time

	mu   sync.Mutex
	byID map[string]*Session
}

func newSessions(ttl time.Duration, max int, now func() time.Time) *sessions {
	return &sessions{ttl: ttl, max: max, now: now, byID: map[string]*Session{}}
}

// sessionState says what a request's cookie held.
type sessionState int

const (
	sessionNone    sessionState = iota // no cookie, or one this process never issued
	sessionExpired                     // a session that has ended
	sessionValid
)

// randomID returns 32 random bytes, base64url: a session id or a form token.
func randomID() string {
	b := make([]byte, 32)
	rand.Read(b) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b)
}

// create starts a session for id and returns it with its cookie value.
func (ss *sessions) create(id Identity) (*Session, string) {
	now := ss.now()
	sess := &Session{Identity: id, Expires: now.Add(ss.ttl), csrf: randomID(), created: now}
	key := randomID()
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if len(ss.byID) >= ss.max {
		ss.pruneLocked(now)
	}
	ss.byID[key] = sess
	return sess, key
}

// pruneLocked drops ended sessions and, if the table is still full, the
// oldest one: a flood of sign-ins (each needs a valid token) cannot grow
// memory without bound.
func (ss *sessions) pruneLocked(now time.Time) {
	var oldestKey string
	var oldest time.Time
	for k, s := range ss.byID {
		if !now.Before(s.Expires) {
			delete(ss.byID, k)
			continue
		}
		if oldestKey == "" || s.created.Before(oldest) {
			oldestKey, oldest = k, s.created
		}
	}
	if len(ss.byID) >= ss.max && oldestKey != "" {
		delete(ss.byID, oldestKey)
	}
}

// fromRequest returns the live session the request's cookie names.
func (ss *sessions) fromRequest(r *http.Request) (*Session, sessionState) {
	c, err := r.Cookie(cookieName(r))
	if err != nil || c.Value == "" {
		return nil, sessionNone
	}
	now := ss.now()
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s, ok := ss.byID[c.Value]
	if !ok {
		return nil, sessionNone
	}
	if !now.Before(s.Expires) {
		delete(ss.byID, c.Value)
		return nil, sessionExpired
	}
	return s, sessionValid
}

// end ends the session with cookie value key.
func (ss *sessions) end(key string) {
	ss.mu.Lock()
	delete(ss.byID, key)
	ss.mu.Unlock()
}

// cookieName is the session cookie's name: with the __Host- prefix on TLS,
// which makes the browser refuse one set by another host or over plain
// HTTP, or a path other than /.
func cookieName(r *http.Request) string {
	if r.TLS != nil {
		return "__Host-skills-session"
	}
	return "skills-session"
}

// setCookie sets the session cookie. It has no expiry of its own (the
// browser drops it when it closes): the server ends the session, on its
// own clock, which a client cannot stretch.
func setCookie(w http.ResponseWriter, r *http.Request, value string) {
	http.SetCookie(w, &http.Cookie{
		Name:     cookieName(r),
		Value:    value,
		Path:     "/",
		HttpOnly: true,
		Secure:   r.TLS != nil,
		SameSite: http.SameSiteStrictMode,
	})
}

func clearCookie(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{
		Name:     cookieName(r),
		Value:    "",
		Path:     "/",
		MaxAge:   -1,
		HttpOnly: true,
		Secure:   r.TLS != nil,
		SameSite: http.SameSiteStrictMode,
	})
}
