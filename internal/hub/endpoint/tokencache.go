package endpoint

import (
	"crypto/sha256"
	"sync"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

// DefaultTokenCacheTTL is how long a verified project token is trusted
// without asking the store again, unless Options.TokenCacheTTL says
// otherwise. It is below the change feed's fallback period
// (store.DefaultChangePoll), so that a revocation made on any replica
// takes effect within the time a change of bindings may take.
const DefaultTokenCacheTTL = time.Second

// maxCachedTokens bounds the cache; when it is full of live entries it
// starts over (every token is verified again once).
const maxCachedTokens = 16384

// tokenCache holds the project tokens verified lately, by the sha256 of
// their secret (never the secret), each until its entry's deadline or its
// expiry, whichever comes first. Refusals are never cached.
type tokenCache struct {
	ttl time.Duration
	now func() time.Time

	mu sync.Mutex
	m  map[[sha256.Size]byte]cachedToken
}

type cachedToken struct {
	tok   store.Token
	until time.Time
}

func newTokenCache(ttl time.Duration) *tokenCache {
	return &tokenCache{ttl: ttl, now: time.Now, m: map[[sha256.Size]byte]cachedToken{}}
}

// get returns the token of a secret verified within the TTL.
func (c *tokenCache) get(sum [sha256.Size]byte) (store.Token, bool) {
	if c.ttl <= 0 {
		return store.Token{}, false
	}
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[sum]
	if !ok {
		return store.Token{}, false
	}
	if !now.Before(e.until) || !e.tok.ExpiresAt.IsZero() && !now.Before(e.tok.ExpiresAt) {
		delete(c.m, sum)
		return store.Token{}, false
	}
	return e.tok, true
}

// put records a token the store just verified.
func (c *tokenCache) put(sum [sha256.Size]byte, tok store.Token) {
	if c.ttl <= 0 {
		return
	}
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= maxCachedTokens {
		for k, e := range c.m {
			if !now.Before(e.until) {
				delete(c.m, k)
			}
		}
		if len(c.m) >= maxCachedTokens {
			clear(c.m)
		}
	}
	c.m[sum] = cachedToken{tok: tok, until: now.Add(c.ttl)}
}

// forget drops the entries of which say so.
func (c *tokenCache) forget(which func(store.Token) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, e := range c.m {
		if which(e.tok) {
			delete(c.m, k)
		}
	}
}
