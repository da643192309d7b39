package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"strings"
	"sync"
)

// Clients of Run (RunOptions.Client) and LoadHTTP (HTTPOptions.Client).
const (
	// ClientRaw keeps the client's CPU small next to the server's, on a
	// machine the two share. Over stdio it speaks JSON-RPC on the pipes
	// itself and decodes each answer once. Over HTTP it replays, with
	// plain net/http, the request the SDK client sent for the same method
	// with only the URI changed, and parses just enough of each response
	// to tell success from failure.
	ClientRaw = "raw"
	// ClientSDK sends every request through a go-sdk client session, as a
	// host built on the SDK would: the client then costs about as much CPU
	// as the server, and more during a listing.
	ClientSDK = "sdk"
)

// recorder is an http.RoundTripper that keeps the headers and body of the
// latest request carrying each JSON-RPC method, so that a request the SDK
// built can be replayed without it.
type recorder struct {
	next http.RoundTripper

	mu   sync.Mutex
	last map[string]recorded
}

type recorded struct {
	header http.Header
	body   []byte
}

// RoundTrip implements http.RoundTripper.
func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPost && req.Body != nil {
		body, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		var m struct {
			Method string `json:"method"`
		}
		if json.Unmarshal(body, &m) == nil && m.Method != "" {
			r.mu.Lock()
			if r.last == nil {
				r.last = map[string]recorded{}
			}
			r.last[m.Method] = recorded{header: req.Header.Clone(), body: body}
			r.mu.Unlock()
		}
		req = req.Clone(req.Context())
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.ContentLength = int64(len(body))
	}
	return r.next.RoundTrip(req)
}

// request returns what was recorded for method.
func (r *recorder) request(method string) (recorded, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec, ok := r.last[method]
	return rec, ok
}

// rawTemplate is one recorded request, split around the URI it was sent
// for so that it can be rebuilt for any other URI.
type rawTemplate struct {
	url            string
	header         http.Header
	prefix, suffix []byte
	// uriHeaders are the headers that repeat the URI (SEP-2243's Mcp-Name).
	uriHeaders []string
}

// newRawTemplate splits rec's body around the JSON string of uri, which must
// occur exactly once in it.
func newRawTemplate(url string, rec recorded, uri string) (*rawTemplate, error) {
	q, err := json.Marshal(uri)
	if err != nil {
		return nil, err
	}
	i := bytes.Index(rec.body, q)
	if i < 0 || bytes.Count(rec.body, q) != 1 {
		return nil, fmt.Errorf("bench: the recorded request does not hold its URI %s exactly once; use --client %s", q, ClientSDK)
	}
	h := rec.header.Clone()
	h.Del("Content-Length")
	t := &rawTemplate{url: url, header: h, prefix: rec.body[:i], suffix: rec.body[i+len(q):]}
	for k, vs := range h {
		for _, v := range vs {
			switch {
			case v == uri && len(vs) == 1:
				t.uriHeaders = append(t.uriHeaders, k)
			case strings.Contains(v, uri):
				return nil, fmt.Errorf("bench: the recorded request's %s header holds its URI in a form the raw client cannot rewrite; use --client %s", k, ClientSDK)
			}
		}
	}
	return t, nil
}

// body returns the request body for the already JSON-quoted URI q.
func (t *rawTemplate) body(q []byte) []byte {
	b := make([]byte, 0, len(t.prefix)+len(q)+len(t.suffix))
	return append(append(append(b, t.prefix...), q...), t.suffix...)
}

// rawResponse is what the raw client reads of a response: whether it is a
// result or an error, and for a result whether it holds what was asked for.
type rawResponse struct {
	Result *struct {
		Skill    json.RawMessage   `json:"skill"`
		Contents []json.RawMessage `json:"contents"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// rawCaller sends one method's requests for one worker, reusing its buffer.
type rawCaller struct {
	hc     *http.Client
	tmpl   *rawTemplate
	method string
	buf    bytes.Buffer
}

// call sends the request for uri, whose JSON string is q, and checks the
// answer.
func (c *rawCaller) call(ctx context.Context, uri string, q []byte) error {
	return c.callURL(ctx, c.tmpl.url, uri, q)
}

// callURL is call, sent to url instead of the recorded request's.
func (c *rawCaller) callURL(ctx context.Context, url, uri string, q []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(c.tmpl.body(q)))
	if err != nil {
		return err
	}
	// Shared and never written when no header repeats the URI: neither the
	// client nor the transport modifies a request's header.
	req.Header = c.tmpl.header
	if len(c.tmpl.uriHeaders) > 0 {
		req.Header = c.tmpl.header.Clone()
		for _, k := range c.tmpl.uriHeaders {
			req.Header[k] = []string{uri}
		}
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	c.buf.Reset()
	_, err = c.buf.ReadFrom(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("HTTP status %d: %s", resp.StatusCode, abbreviate(string(c.buf.Bytes()), 200))
	}
	return checkRawResponse(c.method, resp.Header.Get("Content-Type"), c.buf.Bytes())
}

// checkRawResponse finds the JSON-RPC response in body (plain JSON, or the
// data of one server-sent event among others) and reports whether it is a
// result that holds what method asks for.
func checkRawResponse(method, contentType string, body []byte) error {
	for msg := range jsonMessages(contentType, body) {
		var r rawResponse
		if err := json.Unmarshal(msg, &r); err != nil {
			return fmt.Errorf("response is not JSON: %w", err)
		}
		switch {
		case r.Error != nil:
			return fmt.Errorf("JSON-RPC error %d: %s", r.Error.Code, r.Error.Message)
		case r.Result == nil:
			continue // a notification or request from the server
		case method == methodGetSkill && (len(r.Result.Skill) == 0 || string(r.Result.Skill) == "null"):
			return errors.New("the result has no skill")
		case method == methodReadResource && len(r.Result.Contents) == 0:
			return errors.New("no contents")
		}
		return nil
	}
	return errors.New("no JSON-RPC response in the body")
}

// jsonMessages yields the JSON messages of a response body: the body itself,
// or the data of each event of an event stream.
func jsonMessages(contentType string, body []byte) iter.Seq[[]byte] {
	return func(yield func([]byte) bool) {
		if !strings.HasPrefix(contentType, "text/event-stream") {
			yield(body)
			return
		}
		var data []byte
		sc := bufio.NewScanner(bytes.NewReader(body))
		sc.Buffer(nil, len(body)+1)
		for sc.Scan() {
			line := sc.Bytes()
			if len(line) == 0 {
				if len(data) > 0 && !yield(data) {
					return
				}
				data = nil
				continue
			}
			if d, ok := bytes.CutPrefix(line, []byte("data:")); ok {
				if len(data) > 0 {
					data = append(data, '\n')
				}
				data = append(data, bytes.TrimPrefix(d, []byte(" "))...)
			}
		}
		if len(data) > 0 {
			yield(data)
		}
	}
}
