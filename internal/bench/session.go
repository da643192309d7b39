package bench

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// session is what a run asks of its connection to the server under test.
// Every method measures one round trip; results carry only what the run
// checks.
type session interface {
	listPage(ctx context.Context, cursor string) (*listSkillsResult, error)
	// listTools returns the names on the first page of tools/list.
	listTools(ctx context.Context) ([]string, error)
	// callTool calls a tool and returns whether the result is an error,
	// with its first text.
	callTool(ctx context.Context, name string, args map[string]any) (isError bool, text string, err error)
	// hasResources reports whether the server declared the resources
	// capability.
	hasResources() bool
	// listResources fetches the first page of resources/list.
	listResources(ctx context.Context) error
	getSkill(ctx context.Context, uri string) (json.RawMessage, error)
	// readResource returns the number of contents of resources/read.
	readResource(ctx context.Context, uri string) (int, error)
	// close ends the session and waits for the server to exit, as the
	// stdio transport prescribes (stdin closed, then SIGTERM, then SIGKILL).
	close() error
}

// sdkSession is a go-sdk client session.
type sdkSession struct{ cs *mcp.ClientSession }

func connectSDK(ctx context.Context, proc *serverProcess, protocolVersion string) (session, error) {
	client, err := newClient()
	if err != nil {
		return nil, err
	}
	cs, err := client.Connect(ctx, proc, &mcp.ClientSessionOptions{ProtocolVersion: protocolVersion})
	if err != nil {
		return nil, err
	}
	return sdkSession{cs}, nil
}

func (s sdkSession) listPage(ctx context.Context, cursor string) (*listSkillsResult, error) {
	return sdkLister(s.cs)(ctx, cursor)
}

func (s sdkSession) listTools(ctx context.Context) ([]string, error) {
	res, err := s.cs.ListTools(ctx, nil)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(res.Tools))
	for i, t := range res.Tools {
		names[i] = t.Name
	}
	return names, nil
}

func (s sdkSession) callTool(ctx context.Context, name string, args map[string]any) (bool, string, error) {
	res, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return false, "", err
	}
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			return res.IsError, t.Text, nil
		}
	}
	return res.IsError, "", nil
}

func (s sdkSession) hasResources() bool {
	ir := s.cs.InitializeResult()
	return ir != nil && ir.Capabilities != nil && ir.Capabilities.Resources != nil
}

func (s sdkSession) listResources(ctx context.Context) error {
	_, err := s.cs.ListResources(ctx, &mcp.ListResourcesParams{})
	return err
}

func (s sdkSession) getSkill(ctx context.Context, uri string) (json.RawMessage, error) {
	g, err := mcp.CallCustomMethod[*getSkillParams, *getSkillResult](ctx, s.cs, methodGetSkill, &getSkillParams{URI: uri})
	if err != nil {
		return nil, err
	}
	return g.Skill, nil
}

func (s sdkSession) readResource(ctx context.Context, uri string) (int, error) {
	rr, err := s.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		return 0, err
	}
	return len(rr.Contents), nil
}

func (s sdkSession) close() error { return s.cs.Close() }

// connect starts the server and opens a session with the client o names
// (Run has checked it is one of the two).
func connect(ctx context.Context, proc *serverProcess, o RunOptions) (session, error) {
	if o.Client == ClientSDK {
		return connectSDK(ctx, proc, o.ProtocolVersion)
	}
	return connectRaw(ctx, proc, o.ProtocolVersion)
}
