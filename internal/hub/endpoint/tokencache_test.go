package endpoint

import (
	"crypto/sha256"
	"testing"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

// The cache's rules on a clock of its own: an entry serves until its TTL,
// asks one request to verify it again past half of it, never serves past
// the token's expiry, and a verification that began before a forget is
// not recorded.
func TestTokenCacheRules(t *testing.T) {
	now := time.Unix(1000, 0)
	c := newTokenCache(time.Second)
	c.now = func() time.Time { return now }
	sum := sha256.Sum256([]byte("smcp_p_x"))
	tok := store.Token{ID: "t1", ProjectID: "alpha", Kind: store.ProjectToken}

	_, ok, _, epoch := c.get(sum)
	if ok {
		t.Fatal("an empty cache served a token")
	}
	c.put(sum, tok, epoch)
	if got, ok, refresh, _ := c.get(sum); !ok || refresh || got.ID != "t1" {
		t.Fatalf("fresh entry: %v %v %v", got, ok, refresh)
	}
	now = now.Add(600 * time.Millisecond)
	_, ok, refresh, epoch := c.get(sum)
	if !ok || !refresh {
		t.Fatalf("past half the TTL: ok %v, refresh %v", ok, refresh)
	}
	if _, ok, refresh, _ := c.get(sum); !ok || refresh {
		t.Fatal("a second request asked to verify it again while one does")
	}
	c.failed(sum, false) // the store unreachable: kept until its deadline
	if _, ok, refresh, _ := c.get(sum); !ok || !refresh {
		t.Fatal("after a failed verification, the next request does not try again")
	}
	now = now.Add(500 * time.Millisecond)
	if _, ok, _, _ := c.get(sum); ok {
		t.Fatal("served past its TTL")
	}

	// Verified again in time: extended.
	_, _, _, epoch = c.get(sum)
	c.put(sum, tok, epoch)
	now = now.Add(700 * time.Millisecond)
	_, _, refresh, epoch = c.get(sum)
	c.put(sum, tok, epoch)
	now = now.Add(700 * time.Millisecond)
	if _, ok, _, _ := c.get(sum); !ok {
		t.Fatal("an entry verified again expired")
	}
	// Refused on verification: gone.
	c.failed(sum, true)
	if _, ok, _, _ := c.get(sum); ok {
		t.Fatal("a refused token still served")
	}

	// A forget during a verification wins.
	_, _, _, epoch = c.get(sum)
	c.forget(func(t store.Token) bool { return t.ID == "t1" })
	c.put(sum, tok, epoch)
	if _, ok, _, _ := c.get(sum); ok {
		t.Fatal("a verification begun before a forget was recorded")
	}

	// Never past the token's expiry.
	exp := tok
	exp.ExpiresAt = now.Add(100 * time.Millisecond)
	_, _, _, epoch = c.get(sum)
	c.put(sum, exp, epoch)
	now = now.Add(100 * time.Millisecond)
	if _, ok, _, _ := c.get(sum); ok {
		t.Fatal("served at its expiry")
	}

	// Disabled: nothing kept.
	off := newTokenCache(-1)
	off.put(sum, tok, 0)
	if _, ok, _, _ := off.get(sum); ok {
		t.Fatal("a disabled cache served a token")
	}
}
