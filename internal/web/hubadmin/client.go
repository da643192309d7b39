package hubadmin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// client calls the admin API in process, as the signed-in token: the
// request goes through the API's whole handler (its token check, scope
// guard, validation, body bounds and audit), so the pages can do nothing
// the API would refuse, with exactly its scopes.
type client struct {
	api   http.Handler
	token string
}

// upload is a request body passed on from the browser, with the length
// it declared (-1: unknown).
type upload struct {
	r io.Reader
	n int64
}

// uploadOf is the body of r, to pass on to the API.
func uploadOf(r *http.Request) upload { return upload{r: r.Body, n: r.ContentLength} }

// apiError is an error answer of the API.
type apiError struct {
	Status  int
	Code    string
	Message string
}

func (e *apiError) Error() string { return e.Message }

// maxAnswer bounds an API answer the pages read (a file is 32 MiB at most;
// the viewer shows far less).
const maxAnswer = 40 << 20

// do sends a request to the API and decodes a JSON answer into out (nil:
// discard). body is JSON-encoded unless it is an io.Reader, sent as is with
// ctype.
func (c client) do(ctx context.Context, method, path string, q url.Values, body any, ctype string, out any) error {
	raw, _, err := c.raw(ctx, method, path, q, body, ctype)
	if err != nil {
		return err
	}
	if out == nil || len(raw) == 0 {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("the admin API's answer to %s %s is not what the pages expect: %w", method, path, err)
	}
	return nil
}

// raw sends a request and returns the answer's bytes and headers; an error
// answer is an *apiError.
func (c client) raw(ctx context.Context, method, path string, q url.Values, body any, ctype string) ([]byte, http.Header, error) {
	var rd io.Reader
	length := int64(-1)
	switch b := body.(type) {
	case nil:
	case upload:
		rd, length = b.r, b.n
	case io.Reader:
		rd = b
	default:
		js, err := json.Marshal(b)
		if err != nil {
			return nil, nil, err
		}
		rd = bytes.NewReader(js)
		ctype = "application/json"
	}
	u := path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, nil, err
	}
	if length >= 0 {
		// The API refuses a declared length over its bound before it
		// reads a byte.
		req.ContentLength = length
	}
	req.RemoteAddr = "127.0.0.1:0"
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Accept", "application/json")
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	rec := &recorder{header: http.Header{}}
	c.api.ServeHTTP(rec, req)
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	if rec.over {
		return nil, nil, errors.New("the admin API's answer is larger than the pages read")
	}
	if rec.status >= 400 {
		var e struct {
			Error struct {
				Code    string `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(rec.body.Bytes(), &e) != nil || e.Error.Message == "" {
			e.Error.Code, e.Error.Message = "internal", strings.TrimSpace(http.StatusText(rec.status))
		}
		return nil, rec.header, &apiError{Status: rec.status, Code: e.Error.Code, Message: e.Error.Message}
	}
	return rec.body.Bytes(), rec.header, nil
}

// recorder is the ResponseWriter of an in-process API call.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
	over   bool
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
}

func (r *recorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	if r.body.Len()+len(p) > maxAnswer {
		r.over = true
		return 0, errors.New("answer too large")
	}
	return r.body.Write(p)
}
