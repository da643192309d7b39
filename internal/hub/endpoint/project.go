package endpoint

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skills-mcp/skills-mcp/internal/hub/projects"
	"github.com/skills-mcp/skills-mcp/skills"
)

// project is a loaded project as the endpoint serves it: the registry's
// project, the MCP servers of its catalog and the tools they list. It is
// the project's projects.Front.
type project struct {
	*projects.Project
	e *Endpoint
	// requests counts the requests served, and indexRequests those of its
	// well-known index.
	requests, indexRequests atomic.Int64

	smu      sync.Mutex
	servers  []*mcp.Server   // every server of the catalog (stateless and sessions)
	tools    bool            // whether the hub's tools are registered
	jobTools bool            // whether the job tools are registered
	stateful *skills.Handler // the handler of sessions, made on first use
	// wellKnown is the project's well-known index, made on first use.
	wellKnown http.Handler
}

// front makes the endpoint's side of a project the registry loaded.
func (e *Endpoint) front(pp *projects.Project) projects.Front {
	v := pp.View()
	p := &project{Project: pp, e: e,
		// No server yet: newServer adds them.
		tools: len(v.Bound) > 0, jobTools: e.wantJobTools(v) != nil}
	e.mu.Lock()
	e.byCat[pp.Catalog()] = p
	e.mu.Unlock()
	return p
}

// frontOf returns the endpoint's side of a loaded project.
func frontOf(pp *projects.Project) *project { return pp.Front().(*project) }

// Sessions is how many sessions the project's servers hold (sessions of
// 2025-11-25 and 2025-06-18, listen streams, requests in flight).
func (p *project) Sessions() int { return p.sessionCount() }

// Changed lists or withdraws the tools after a refresh.
func (p *project) Changed() { p.syncTools(p.e.wantJobTools(p.View())) }

// Close closes the project's sessions and makes the handlers forget its
// catalog, which the registry closes next.
func (p *project) Close() {
	for _, ms := range p.serverList() {
		for ss := range ms.Sessions() {
			ss.Close()
		}
	}
	cat := p.Catalog()
	p.e.mu.Lock()
	delete(p.e.byCat, cat)
	p.e.mu.Unlock()
	p.e.stateless.Forget(cat)
	p.smu.Lock()
	if p.stateful != nil {
		p.stateful.Forget(cat)
	}
	p.smu.Unlock()
}

func (p *project) serverList() []*mcp.Server {
	p.smu.Lock()
	defer p.smu.Unlock()
	return append([]*mcp.Server(nil), p.servers...)
}

// sessionCount is how many sessions the project's servers hold.
func (p *project) sessionCount() int {
	n := 0
	for _, ms := range p.serverList() {
		for range ms.Sessions() {
			n++
		}
	}
	return n
}

// sessionHandler returns the project's handler of sessions.
func (p *project) sessionHandler() http.Handler {
	e := p.e
	p.smu.Lock()
	defer p.smu.Unlock()
	if p.stateful == nil {
		h, err := skills.NewHandler(e.handlerOptions(&mcp.StreamableHTTPOptions{SessionTimeout: SessionTimeout, Logger: e.log}))
		if err != nil { // only for a nil Select, which it is not
			panic(err)
		}
		p.stateful = h
	}
	return p.stateful
}

// newServer makes a server of a project's catalog: the hub's tools while a
// version is bound, tools.listChanged always, instructions that name
// list_skills only when it is there, and every cacheable result private.
func (e *Endpoint) newServer(cat *skills.Catalog) *mcp.Server {
	e.mu.Lock()
	p := e.byCat[cat]
	e.mu.Unlock()
	ms := mcp.NewServer(e.impl, &mcp.ServerOptions{
		// Prompts are declared, with none: the go-sdk answers prompts/list
		// whatever is declared, and a server must declare what it handles.
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}, Prompts: &mcp.PromptCapabilities{}},
		SchemaCache:  e.schemas,
		// A project's answers are its bindings, behind its token: no
		// shared cache may serve them to another authorization context.
		SetCacheable: func(_ context.Context, _ mcp.Request, c *mcp.Cacheable) { c.CacheScope = "private" },
	})
	if p == nil { // a catalog dropped meanwhile: serve it bare
		return ms
	}
	ms.AddReceivingMiddleware(p.middleware)
	p.smu.Lock()
	p.servers = append(p.servers, ms)
	if p.tools {
		addTools(ms, p)
	}
	if p.jobTools {
		addJobTools(ms, p, e.opts.Jobs)
	}
	p.smu.Unlock()
	return ms
}

// syncTools registers the hub's tools on every server of p while a
// version is bound, and the job tools while jobs is set (wantJobTools),
// and removes them otherwise; the go-sdk sends
// notifications/tools/list_changed to the servers' sessions when the set
// changes, and nothing when it does not.
func (p *project) syncTools(jobs Jobs) {
	want := len(p.View().Bound) > 0
	wantJobs := jobs != nil
	p.smu.Lock()
	defer p.smu.Unlock()
	if want != p.tools {
		p.tools = want
		for _, ms := range p.servers {
			if want {
				addTools(ms, p)
			} else {
				ms.RemoveTools(toolNames...)
			}
		}
	}
	if wantJobs != p.jobTools {
		p.jobTools = wantJobs
		for _, ms := range p.servers {
			if wantJobs {
				addJobTools(ms, p, jobs)
			} else {
				ms.RemoveTools(jobToolNames...)
			}
		}
	}
}

// middleware holds the project's versions for each call (a call of a
// session may outlive the HTTP request that brought it, when its client
// goes away), and gives initialize and server/discover the project's
// instructions.
func (p *project) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		release := p.Hold()
		res, err := next(ctx, method, req)
		release()
		if err != nil {
			return res, err
		}
		switch r := res.(type) {
		case *mcp.InitializeResult:
			r.Instructions = p.instructions()
		case *mcp.DiscoverResult:
			r.Instructions = p.instructions()
		}
		return res, err
	}
}

func (p *project) instructions() string {
	n := len(p.View().Bound)
	if n == 0 {
		return fmt.Sprintf("Project %s has no skills bound yet. Hosts with the Skills extension can use skills/list; it is empty until an administrator binds a version.", p.ID())
	}
	return fmt.Sprintf("Project %s serves %d Agent Skills: reusable instructions, references and scripts for specific tasks. "+
		"Before starting a task that one of them may cover, call list_skills with the need in plain words, then get_skill on the best match "+
		"and follow its instructions; read its other files with read_skill_file when the instructions point at them. "+
		"Skills come from this hub, not from the user: never run a bundled script without the user's explicit approval. "+
		"Hosts with the Skills extension can also use skills/list and skills/get.", p.ID(), n) + p.jobInstructions()
}

var errNoSkill = errors.New("no such skill")
