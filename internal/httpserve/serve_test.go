package httpserve_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/httpserve"
)

// closeSignal wraps a listener and closes Closed when the listener is
// closed, which is how shutdown stops accepting connections.
type closeSignal struct {
	net.Listener
	once   sync.Once
	Closed chan struct{}
}

func listen(t testing.TB) *closeSignal {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return &closeSignal{Listener: ln, Closed: make(chan struct{})}
}

func (l *closeSignal) Close() error {
	err := l.Listener.Close()
	l.once.Do(func() { close(l.Closed) })
	return err
}

// get fetches url on a fresh client and reports the outcome on a channel.
type getResult struct {
	status int
	body   string
	err    error
}

func get(t testing.TB, url string) <-chan getResult {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	out := make(chan getResult, 1)
	go func() {
		resp, err := (&http.Client{Transport: tr}).Get(url)
		if err != nil {
			out <- getResult{err: err}
			return
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		out <- getResult{resp.StatusCode, string(body), err}
	}()
	return out
}

// TestServeDrainsInFlight cancels the context while a request is blocked in
// its handler, checks that the listener is closed while the request is still
// running, then lets the request finish: it must complete normally and Serve
// must return nil.
func TestServeDrainsInFlight(t *testing.T) {
	ln := listen(t)
	started := make(chan struct{})
	release := make(chan struct{})
	ctxErr := make(chan error, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-release
		ctxErr <- r.Context().Err()
		io.WriteString(w, "finished")
	})

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- httpserve.Serve(ctx, ln, h, nil) }()

	result := get(t, "http://"+ln.Addr().String()+"/")
	<-started
	cancel()
	<-ln.Closed // no new connections from here on

	select {
	case err := <-served:
		t.Fatalf("Serve returned %v while a request was in flight", err)
	case r := <-result:
		t.Fatalf("request ended before it was released: %+v", r)
	default:
	}

	close(release)
	if err := <-ctxErr; err != nil {
		t.Errorf("request context ended during a graceful drain: %v", err)
	}
	if r := <-result; r.err != nil || r.status != http.StatusOK || r.body != "finished" {
		t.Errorf("in-flight request = %+v, want 200 \"finished\"", r)
	}
	if err := <-served; err != nil {
		t.Errorf("Serve = %v, want nil after a shutdown by context", err)
	}
	if conn, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		conn.Close()
		t.Errorf("listener still accepts connections after Serve returned")
	}
}

// TestServeForcesCloseAfterGrace uses a handler that only returns when its
// request context ends, like an idle event stream. Once the grace period is
// over, Serve must cancel that context, end the request and still return
// nil. The outcome does not depend on how long the grace is.
func TestServeForcesCloseAfterGrace(t *testing.T) {
	ln := listen(t)
	started := make(chan struct{})
	handlerDone := make(chan error, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		close(started)
		<-r.Context().Done()
		handlerDone <- r.Context().Err()
	})

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- httpserve.ServeWithGrace(ctx, ln, h, nil, time.Millisecond) }()

	result := get(t, "http://"+ln.Addr().String()+"/")
	<-started
	cancel()

	if err := <-served; err != nil {
		t.Errorf("Serve = %v, want nil after a forced shutdown", err)
	}
	if err := <-handlerDone; !errors.Is(err, context.Canceled) {
		t.Errorf("handler's request context ended with %v, want context.Canceled", err)
	}
	// The client's read ends: with an error when the connection is closed
	// first, or cleanly when the handler, cancelled, returns first. Either
	// way it does not hang.
	<-result
}

// TestServeContextValues checks that handlers see ctx's values.
func TestServeContextValues(t *testing.T) {
	type key struct{}
	ln := listen(t)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, _ := r.Context().Value(key{}).(string)
		io.WriteString(w, v)
	})
	ctx, cancel := context.WithCancel(context.WithValue(t.Context(), key{}, "carried"))
	served := make(chan error, 1)
	go func() { served <- httpserve.Serve(ctx, ln, h, nil) }()

	if r := <-get(t, "http://"+ln.Addr().String()+"/"); r.err != nil || r.body != "carried" {
		t.Errorf("GET = %+v, want body \"carried\"", r)
	}
	cancel()
	if err := <-served; err != nil {
		t.Errorf("Serve = %v, want nil", err)
	}
}

// brokenListener fails every Accept with a permanent error.
type brokenListener struct {
	net.Listener
}

var errBroken = errors.New("listener broke")

func (brokenListener) Accept() (net.Conn, error) { return nil, errBroken }

func TestServeReturnsServeError(t *testing.T) {
	ln := listen(t)
	err := httpserve.Serve(t.Context(), brokenListener{ln}, http.NotFoundHandler(), nil)
	if !errors.Is(err, errBroken) {
		t.Errorf("Serve = %v, want it to wrap %v", err, errBroken)
	}
	select {
	case <-ln.Closed:
	default:
		t.Errorf("Serve returned without closing the listener")
	}
}

// TestServeAlreadyCancelled checks that a context that is already done
// still gives a clean, prompt return.
func TestServeAlreadyCancelled(t *testing.T) {
	ln := listen(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := httpserve.Serve(ctx, ln, http.NotFoundHandler(), nil); err != nil {
		t.Errorf("Serve = %v, want nil", err)
	}
	select {
	case <-ln.Closed:
	default:
		t.Errorf("Serve returned without closing the listener")
	}
}
