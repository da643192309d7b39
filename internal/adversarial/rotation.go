package adversarial

import (
	"github.com/skills-mcp/skills-mcp/internal/adversarial/oracle"
	"sync"
	"weak"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// scopeKey names a rotation scope: a tester id (or, over stateless HTTP,
// a client identity) or a client session. Sessions are held weakly so that
// a closed session is not kept alive by the table, and a later session
// that reuses its memory is still a new scope.
type scopeKey struct {
	name    string
	session weak.Pointer[mcp.ServerSession]
}

// maxScopes bounds the rotation table. When it is full the oldest scope is
// forgotten, so a client that comes back after that many others sees an
// honest first read again: harmless, and it keeps memory constant however
// many clients connect.
const maxScopes = 10000

// maxTesterID bounds the tester ids kept in the table.
const maxTesterID = 256

// rotation counts reads of rotating files per scope.
type rotation struct {
	mu    sync.Mutex
	reads map[rotationKey]int
	order []rotationKey // insertion order, for eviction
}

type rotationKey struct {
	scope scopeKey
	uri   string
}

func newRotation() *rotation { return &rotation{reads: map[rotationKey]int{}} }

// read records a read of uri in scope and returns how many reads the scope
// made before this one.
func (r *rotation) read(scope scopeKey, uri string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := rotationKey{scope, uri}
	n, ok := r.reads[k]
	if !ok {
		if len(r.order) >= maxScopes {
			delete(r.reads, r.order[0])
			r.order = r.order[1:]
		}
		r.order = append(r.order, k)
	}
	r.reads[k] = n + 1
	return n
}

// scopeOf returns the rotation scope of a read, as documented in the
// package comment, and false when the read has none.
func scopeOf(req *mcp.ReadResourceRequest) (scopeKey, bool) {
	var meta mcp.Meta
	if req.Params != nil {
		meta = req.Params.Meta
	}
	if t, ok := meta[oracle.TesterMetaKey].(string); ok && t != "" && len(t) <= maxTesterID {
		return scopeKey{name: "tester:" + t}, true
	}
	var stateless bool
	if req.Extra != nil && req.Extra.Header != nil {
		if t := req.Extra.Header.Get(oracle.TesterHeader); t != "" && len(t) <= maxTesterID {
			return scopeKey{name: "tester:" + t}, true
		}
		// Over HTTP a session without an id is the one-request session of a
		// stateless server.
		stateless = req.Session == nil || req.Session.ID() == ""
	}
	if !stateless && req.Session != nil {
		return scopeKey{session: weak.Make(req.Session)}, true
	}
	if ci, ok := meta["io.modelcontextprotocol/clientInfo"].(map[string]any); ok {
		name, _ := ci["name"].(string)
		version, _ := ci["version"].(string)
		if id := name + "@" + version; name != "" && len(id) <= maxTesterID {
			return scopeKey{name: "client:" + id}, true
		}
	}
	return scopeKey{}, false
}
