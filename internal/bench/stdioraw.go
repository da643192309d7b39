package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
)

// rawProtocolVersion is the revision the raw client asks for unless told
// otherwise: the latest with the initialize handshake, which servers of
// every revision speak.
const rawProtocolVersion = "2025-11-25"

// firstStatelessRevision is the first revision without initialize; the
// raw client does not speak it.
const firstStatelessRevision = "2026-07-28"

// maxFrameBytes bounds one line the server writes, so that a server that
// never ends a line fails its run instead of exhausting memory.
const maxFrameBytes = 256 << 20

// rawSession speaks newline-delimited JSON-RPC over the server's stdin and
// stdout, and decodes each answer once, straight into the fields the run
// checks. With the go-sdk client the client's CPU was most of a warm
// listing's time on a 2-core machine: the SDK reads every frame with a
// streaming decoder, tries it as a batch, decodes it, then decodes the
// result, so a listing measured more of the client than of the server.
// Calls are sequential, as the run makes them.
type rawSession struct {
	proc      *serverProcess
	stdin     io.WriteCloser
	out       *bufio.Reader
	lastID    int64
	resources bool

	closeOnce sync.Once
	closeErr  error
}

func connectRaw(ctx context.Context, proc *serverProcess, version string) (session, error) {
	if version == "" {
		version = rawProtocolVersion
	}
	if version >= firstStatelessRevision {
		return nil, fmt.Errorf("the raw client speaks the initialize handshake (up to %s); use --client %s for %s", rawProtocolVersion, ClientSDK, version)
	}
	stdin, stdout, err := proc.startPipes()
	if err != nil {
		return nil, err
	}
	s := &rawSession{proc: proc, stdin: stdin, out: bufio.NewReaderSize(stdout, 64<<10)}
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
		Capabilities    struct {
			Resources json.RawMessage `json:"resources"`
		} `json:"capabilities"`
	}
	params := map[string]any{
		"protocolVersion": version,
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]string{"name": "skills-bench", "version": "1"},
	}
	if err := s.call(ctx, "initialize", params, &res); err != nil {
		s.close()
		return nil, err
	}
	if res.ProtocolVersion == "" {
		s.close()
		return nil, errors.New("initialize: the result names no protocolVersion")
	}
	if err := s.write(ctx, map[string]string{"jsonrpc": "2.0", "method": "notifications/initialized"}); err != nil {
		s.close()
		return nil, err
	}
	s.resources = len(res.Capabilities.Resources) > 0 && string(res.Capabilities.Resources) != "null"
	return s, nil
}

// rpcError is a JSON-RPC error answer.
type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("%s (JSON-RPC error %d)", e.Message, e.Code) }

// call sends a request and decodes the result of its answer into result,
// in the same pass that decodes the frame.
func (s *rawSession) call(ctx context.Context, method string, params, result any) error {
	return s.exchange(ctx, method, params, func(line []byte) (frameHead, error) {
		frame := struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Result any             `json:"result"`
			Error  *rpcError       `json:"error"`
		}{Result: result}
		err := json.Unmarshal(line, &frame)
		return frameHead{id: frame.ID, method: frame.Method, err: frame.Error}, err
	})
}

// frameHead is what exchange needs of a frame to route it.
type frameHead struct {
	id     json.RawMessage
	method string
	err    *rpcError
}

// exchange sends a request and reads frames with read until the answer.
// Notifications that arrive first are skipped; requests from the server
// are answered (ping) or refused.
func (s *rawSession) exchange(ctx context.Context, method string, params any, read func(line []byte) (frameHead, error)) error {
	s.lastID++
	id := strconv.FormatInt(s.lastID, 10)
	req := struct {
		JSONRPC string `json:"jsonrpc"`
		ID      int64  `json:"id"`
		Method  string `json:"method"`
		Params  any    `json:"params"`
	}{"2.0", s.lastID, method, params}
	if err := s.write(ctx, req); err != nil {
		return err
	}
	for {
		line, err := s.readLine()
		if err != nil {
			return s.failed(ctx, fmt.Errorf("reading the answer to %s: %w", method, err))
		}
		frame, err := read(line)
		if err != nil {
			return fmt.Errorf("the server wrote a frame that is not JSON-RPC (%v): %s", err, abbreviate(string(line), 120))
		}
		switch {
		case frame.method != "" && len(frame.id) > 0: // a request to the client
			if err := s.answer(ctx, frame.id, frame.method); err != nil {
				return err
			}
			continue
		case frame.method != "": // a notification
			continue
		case string(frame.id) != id:
			return fmt.Errorf("%s: an answer to request %s arrived instead of %s", method, frame.id, id)
		case frame.err != nil:
			return frame.err
		}
		return nil
	}
}

// answer replies to a request from the server: ping is answered, anything
// else refused, as a client with no capabilities must.
func (s *rawSession) answer(ctx context.Context, id json.RawMessage, method string) error {
	if method == "ping" {
		return s.write(ctx, map[string]any{"jsonrpc": "2.0", "id": id, "result": map[string]any{}})
	}
	return s.write(ctx, map[string]any{"jsonrpc": "2.0", "id": id,
		"error": rpcError{Code: -32601, Message: "skills-bench does not handle " + method}})
}

func (s *rawSession) write(ctx context.Context, msg any) error {
	data, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	if _, err := s.stdin.Write(append(data, '\n')); err != nil {
		return s.failed(ctx, fmt.Errorf("writing to the server: %w", err))
	}
	return nil
}

// readLine returns the next non-empty line, without its newline.
func (s *rawSession) readLine() ([]byte, error) {
	var long []byte
	for {
		chunk, err := s.out.ReadSlice('\n')
		switch {
		case err == nil && long == nil:
			if line := bytes.TrimSpace(chunk); len(line) > 0 {
				return line, nil
			}
			continue
		case err == nil:
			long = append(long, chunk...)
			if line := bytes.TrimSpace(long); len(line) > 0 {
				return line, nil
			}
			long = long[:0]
			continue
		case errors.Is(err, bufio.ErrBufferFull):
			long = append(long, chunk...)
			if len(long) > maxFrameBytes {
				return nil, fmt.Errorf("a line of more than %d MiB", maxFrameBytes>>20)
			}
			continue
		case errors.Is(err, io.EOF):
			return nil, errors.New("the server closed its output")
		}
		return nil, err
	}
}

// failed returns the run's own cause when its deadline or cancellation
// (whose watchdog kills the server) is what broke the pipe.
func (s *rawSession) failed(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%w (%v)", context.Cause(ctx), err)
	}
	return err
}

// listPage reads the answer with the skimmer (see skim.go): a listing is
// most of what the client reads, and decoding it with encoding/json cost
// the client about as much CPU as the SDK path cost the server.
func (s *rawSession) listPage(ctx context.Context, cursor string) (*listSkillsResult, error) {
	var res listSkillsResult
	err := s.exchange(ctx, methodListSkills, listSkillsParams{Cursor: cursor}, func(line []byte) (frameHead, error) {
		f, err := skimListFrame(bytes.Clone(line)) // the entries outlive the read buffer
		if err != nil {
			return frameHead{}, err
		}
		h := frameHead{id: f.id}
		if f.method != nil {
			if err := json.Unmarshal(f.method, &h.method); err != nil {
				return h, err
			}
		}
		if f.err != nil {
			h.err = new(rpcError)
			if err := json.Unmarshal(f.err, h.err); err != nil {
				return h, err
			}
		}
		res.Skills, res.NextCursor = f.skills, f.nextCursor
		return h, nil
	})
	if err != nil {
		return nil, err
	}
	return &res, nil
}

func (s *rawSession) listTools(ctx context.Context) ([]string, error) {
	var res struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := s.call(ctx, "tools/list", struct{}{}, &res); err != nil {
		return nil, err
	}
	names := make([]string, len(res.Tools))
	for i, t := range res.Tools {
		names[i] = t.Name
	}
	return names, nil
}

func (s *rawSession) callTool(ctx context.Context, name string, args map[string]any) (bool, string, error) {
	var res struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := s.call(ctx, "tools/call", map[string]any{"name": name, "arguments": args}, &res); err != nil {
		return false, "", err
	}
	for _, c := range res.Content {
		if c.Type == "text" {
			return res.IsError, c.Text, nil
		}
	}
	return res.IsError, "", nil
}

func (s *rawSession) hasResources() bool { return s.resources }

func (s *rawSession) listResources(ctx context.Context) error {
	var res struct {
		Resources []json.RawMessage `json:"resources"`
	}
	return s.call(ctx, "resources/list", struct{}{}, &res)
}

func (s *rawSession) getSkill(ctx context.Context, uri string) (json.RawMessage, error) {
	var res getSkillResult
	if err := s.call(ctx, methodGetSkill, getSkillParams{URI: uri}, &res); err != nil {
		return nil, err
	}
	return res.Skill, nil
}

func (s *rawSession) readResource(ctx context.Context, uri string) (int, error) {
	var res struct {
		Contents []json.RawMessage `json:"contents"`
	}
	if err := s.call(ctx, methodReadResource, map[string]string{"uri": uri}, &res); err != nil {
		return 0, err
	}
	return len(res.Contents), nil
}

func (s *rawSession) close() error {
	s.closeOnce.Do(func() { s.closeErr = s.proc.stop(s.stdin) })
	return s.closeErr
}
