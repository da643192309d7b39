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
// expiry, whichever comes first. Refusals are never cached. Past half its
// TTL, the request that finds an entry has it verified again in the
// background, so that a token in use is never waited for and a
// revocation still takes effect within the TTL.
type tokenCache struct {
	ttl time.Duration
	now func() time.Time

	mu sync.Mutex
	m  map[[sha256.Size]byte]cachedToken
	// epoch counts forget calls: a verification that began before one
	// may have read what it forgot, and is not recorded.
	epoch uint64
}

type cachedToken struct {
	tok        store.Token
	until      time.Time
	refreshAt  time.Time // when a request has it verified again
	refreshing bool      // a verification is under way
}

func newTokenCache(ttl time.Duration) *tokenCache {
	return &tokenCache{ttl: ttl, now: time.Now, m: map[[sha256.Size]byte]cachedToken{}}
}

// get returns the token of a secret verified within the TTL; refresh
// says that the caller is to verify it again (and call put or failed),
// and epoch is what to give put.
func (c *tokenCache) get(sum [sha256.Size]byte) (tok store.Token, ok, refresh bool, epoch uint64) {
	if c.ttl <= 0 {
		return store.Token{}, false, false, 0
	}
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[sum]
	if !ok {
		return store.Token{}, false, false, c.epoch
	}
	if !now.Before(e.until) || !e.tok.ExpiresAt.IsZero() && !now.Before(e.tok.ExpiresAt) {
		delete(c.m, sum)
		return store.Token{}, false, false, c.epoch
	}
	if !e.refreshing && !now.Before(e.refreshAt) {
		e.refreshing, refresh = true, true
		c.m[sum] = e
	}
	return e.tok, true, refresh, c.epoch
}

// failed records that verifying an entry again failed: refused, it is
// dropped; otherwise (the store unreachable) it stays until its deadline,
// and a later request tries again.
func (c *tokenCache) failed(sum [sha256.Size]byte, refused bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if refused {
		delete(c.m, sum)
	} else if e, ok := c.m[sum]; ok {
		e.refreshing = false
		c.m[sum] = e
	}
}

// put records a token the store just verified, in a verification that
// began at epoch (from get).
func (c *tokenCache) put(sum [sha256.Size]byte, tok store.Token, epoch uint64) {
	if c.ttl <= 0 {
		return
	}
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if epoch != c.epoch {
		delete(c.m, sum) // forgotten meanwhile: the next request asks again
		return
	}
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
	c.m[sum] = cachedToken{tok: tok, until: now.Add(c.ttl), refreshAt: now.Add(c.ttl / 2)}
}

// forget drops the entries of which say so.
func (c *tokenCache) forget(which func(store.Token) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.epoch++
	for k, e := range c.m {
		if which(e.tok) {
			delete(c.m, k)
		}
	}
}
