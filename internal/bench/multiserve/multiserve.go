// Package multiserve is the server that "skills-bench catalogs" measures:
// many catalogs over a few libraries in one process, behind one
// skills.Handler, each request on the catalog its path names
// (/c/<index>). It is the only part of skills-bench that knows how a
// server is built; the driver (internal/bench) speaks to it over loopback
// HTTP like any client.
package multiserve

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/skills-mcp/skills-mcp/skills"
)

// Command is the hidden skills-bench command that runs the server.
const Command = "catalogs-server" // bench.CatalogsCommand

// Ready is the line the server prints on stdout, as JSON, once every
// catalog is open and it listens.
type Ready struct {
	// URL is the endpoint; catalog i is served at URL + "/c/" + i.
	URL      string `json:"url"`
	Catalogs int    `json:"catalogs"`
	// OpenSeconds is how long opening every catalog took.
	OpenSeconds float64 `json:"openSeconds"`
	// OpenOneMoreMs is the mean time to open one more catalog over a
	// library already loaded.
	OpenOneMoreMs float64 `json:"openOneMoreMs"`
}

// Main runs the server with args (after the command name) until stdin
// ends or ctx is cancelled, and returns the exit status.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if err := run(ctx, args, stdin, stdout); err != nil {
		fmt.Fprintf(stderr, "Error: %v\n", err)
		return 1
	}
	return 0
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer) error {
	fs := flag.NewFlagSet(Command, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dir := fs.String("dir", "", "folder of the libraries, one sub-folder each")
	catalogs := fs.Int("catalogs", 1000, "catalogs to open, round-robin over the libraries")
	noFast := fs.Bool("no-fast-path", false, "send every request through the go-sdk")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" || *catalogs < 1 {
		return errors.New("catalogs-server needs --dir and --catalogs of at least 1")
	}
	ents, err := os.ReadDir(*dir)
	if err != nil {
		return err
	}
	var libs []string
	for _, e := range ents {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			libs = append(libs, filepath.Join(*dir, e.Name()))
		}
	}
	if len(libs) == 0 {
		return fmt.Errorf("%s holds no library folder", *dir)
	}
	// An os.DirFS value compares by its path, so catalogs of one folder
	// share one skill set, as catalogs of one package version would.
	fsys := make([]skills.Library, len(libs))
	for i, l := range libs {
		fsys[i] = skills.Library{FS: os.DirFS(l)}
	}
	var cats []*skills.Catalog
	defer func() {
		for _, c := range cats {
			c.Close()
		}
	}()
	start := time.Now()
	for i := range *catalogs {
		c, err := skills.Open(ctx, fsys[i%len(fsys):i%len(fsys)+1], nil)
		if err != nil {
			return fmt.Errorf("opening catalog %d: %w", i, err)
		}
		cats = append(cats, c)
	}
	ready := Ready{Catalogs: len(cats), OpenSeconds: time.Since(start).Seconds()}
	const more = 100
	start = time.Now()
	for i := range more {
		c, err := skills.Open(ctx, fsys[i%len(fsys):i%len(fsys)+1], nil)
		if err != nil {
			return err
		}
		c.Close()
	}
	ready.OpenOneMoreMs = float64(time.Since(start).Microseconds()) / more / 1000

	h, err := skills.NewHandler(skills.HandlerOptions{
		NoFastPath: *noFast,
		Select: func(r *http.Request) (*skills.Catalog, error) {
			rest, ok := strings.CutPrefix(r.URL.Path, "/c/")
			i, err := strconv.Atoi(rest)
			if !ok || err != nil || i < 0 || i >= len(cats) {
				return nil, errors.New("no such catalog: the path is /c/<index>")
			}
			return cats[i], nil
		},
	})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	ready.URL = "http://" + ln.Addr().String()
	line, _ := json.Marshal(ready)
	if _, err := fmt.Fprintf(stdout, "%s\n", line); err != nil {
		srv.Close()
		<-served
		return err
	}
	// The driver closes stdin to stop the server.
	eof := make(chan struct{})
	go func() {
		io.Copy(io.Discard, stdin)
		close(eof)
	}()
	select {
	case <-eof:
	case <-ctx.Done():
	case err := <-served:
		return err
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err = srv.Shutdown(sctx)
	<-served
	return err
}
