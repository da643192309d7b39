package hubcmd

import (
	"strings"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/sandbox"
)

// TestSandboxOwner: the owner of a replica's sandboxes names its store and
// its replica, so that neither another store's hub nor another replica
// of this store on the same host or engine shares it; it is a valid owner.
func TestSandboxOwner(t *testing.T) {
	const storeA, storeB = "0123456789abcdef0123456789abcdef", "fedcba9876543210fedcba9876543210"
	owners := map[string]bool{}
	for _, s := range []string{storeA, storeB} {
		for _, r := range []string{"host-1a2b3c4d", "host-5e6f7a8b"} {
			o := sandboxOwner(s, r)
			if err := sandbox.CheckOwner(o); err != nil {
				t.Errorf("sandboxOwner(%s, %s) = %q: %v", s, r, o, err)
			}
			if !strings.Contains(o, s[:12]) {
				t.Errorf("sandboxOwner(%s, %s) = %q names no store", s, r, o)
			}
			if sandboxOwner(s, r) != o {
				t.Errorf("sandboxOwner(%s, %s) is not stable", s, r)
			}
			owners[o] = true
		}
	}
	if len(owners) != 4 {
		t.Errorf("four stores × replicas gave %d owners: %v", len(owners), owners)
	}
}

// TestLockReplica: one process at a time holds a jobs folder's lock; the
// refusal names the holder and the fix; closing releases it.
func TestLockReplica(t *testing.T) {
	dir := t.TempDir()
	first, err := lockReplica(dir)
	if err != nil {
		t.Fatal(err)
	}
	// flock locks belong to the open file: a second open is a second
	// holder, as another process would be.
	if _, err := lockReplica(dir); err == nil || !strings.Contains(err.Error(), "another hub serve (process ") || !strings.Contains(err.Error(), "--jobs") {
		t.Fatalf("a second lock of the jobs folder: %v; want a refusal naming the process and --jobs", err)
	}
	first.Close()
	again, err := lockReplica(dir)
	if err != nil {
		t.Fatalf("the lock after its holder closed it: %v", err)
	}
	again.Close()
}
