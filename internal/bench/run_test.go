package bench

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// forEachClient runs test once with each client of Run.
func forEachClient(t *testing.T, test func(t *testing.T, client string)) {
	for _, client := range []string{ClientRaw, ClientSDK} {
		t.Run(client, func(t *testing.T) { test(t, client) })
	}
}

func TestRunGoodServer(t *testing.T) {
	forEachClient(t, func(t *testing.T, client string) {
		servers := []Server{
			{Label: "A", Argv: fakeCommand(t, "good")},
			{Label: "B", Argv: fakeCommand(t, "good")},
		}
		rep, err := Run(context.Background(), servers, &RunOptions{Client: client, Runs: 2, Samples: 3})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Servers) != 2 {
			t.Fatalf("got %d server reports, want 2", len(rep.Servers))
		}
		for _, sr := range rep.Servers {
			if len(sr.Samples) != 2 {
				t.Errorf("server %s: got %d samples, want 2", sr.Label, len(sr.Samples))
			}
			// Every metric is measured against the fake, which offers a search
			// tool and runs where /proc exists.
			for _, m := range Metrics {
				if got := sr.Summary[m.Key]; got.N != 2 {
					t.Errorf("server %s: metric %s measured in %d runs, want 2", sr.Label, m.Key, got.N)
				}
			}
			if got := sr.Summary["skills"].Median; got != float64(len(fakeSkills)) {
				t.Errorf("server %s: listed %v skills, want %d", sr.Label, got, len(fakeSkills))
			}
			if got := sr.Summary["pages"].Median; got != 3 {
				t.Errorf("server %s: %v pages, want 3", sr.Label, got)
			}
			if got := searchToolOf(sr); got != "fake_search_skills" {
				t.Errorf("server %s: search tool %q, want fake_search_skills", sr.Label, got)
			}
		}
		if len(rep.Warnings) > 0 {
			t.Errorf("unexpected warnings: %q", rep.Warnings)
		}
		var text strings.Builder
		if err := rep.WriteText(&text); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"server A:", "server B:", "B/A", "spawn → complete skills/list", client + " client"} {
			if !strings.Contains(text.String(), want) {
				t.Errorf("text report lacks %q:\n%s", want, text.String())
			}
		}
	})
}

func TestRunTimeout(t *testing.T) {
	forEachClient(t, func(t *testing.T, client string) {
		// The fake never answers, so the only way out is the run's timeout; the
		// test asserts what is reported, not how long it took.
		srv := Server{Label: "A", Argv: fakeCommand(t, "hang")}
		_, err := Run(context.Background(), []Server{srv}, &RunOptions{Client: client, Runs: 3, Timeout: 300 * time.Millisecond})
		var re *RunError
		if !errors.As(err, &re) {
			t.Fatalf("got %v, want a *RunError", err)
		}
		if re.Run != 1 || re.Runs != 3 || re.Server.Label != "A" {
			t.Errorf("RunError names run %d of %d, server %s; want run 1 of 3, server A", re.Run, re.Runs, re.Server.Label)
		}
		if !errors.Is(err, ErrTimeout) {
			t.Errorf("error does not wrap ErrTimeout: %v", err)
		}
		if !strings.Contains(err.Error(), "initialize") {
			t.Errorf("error does not name the step that hung: %v", err)
		}
	})
}

func TestRunServerExits(t *testing.T) {
	forEachClient(t, func(t *testing.T, client string) {
		srv := Server{Label: "B", Argv: fakeCommand(t, "exit")}
		_, err := Run(context.Background(), []Server{srv}, &RunOptions{Client: client, Runs: 1, Timeout: 30 * time.Second})
		var re *RunError
		if !errors.As(err, &re) {
			t.Fatalf("got %v, want a *RunError", err)
		}
		msg := err.Error()
		for _, want := range []string{"run 1 of 1, server B", "initialize", "exit status 3", "cannot open the library"} {
			if !strings.Contains(msg, want) {
				t.Errorf("error lacks %q:\n%s", want, msg)
			}
		}
		if errors.Is(err, ErrTimeout) {
			t.Errorf("a server that exits is reported as a timeout: %v", err)
		}
	})
}

func TestRunCommandNotFound(t *testing.T) {
	forEachClient(t, func(t *testing.T, client string) {
		srv := Server{Label: "A", Argv: []string{t.TempDir() + "/no-such-server"}}
		_, err := Run(context.Background(), []Server{srv}, &RunOptions{Client: client, Runs: 1})
		var re *RunError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), "no-such-server") {
			t.Fatalf("got %v, want a *RunError naming the command", err)
		}
	})
}

func TestRunCursorLoop(t *testing.T) {
	forEachClient(t, func(t *testing.T, client string) {
		srv := Server{Label: "A", Argv: fakeCommand(t, "loop")}
		_, err := Run(context.Background(), []Server{srv}, &RunOptions{Client: client, Runs: 2, Timeout: 30 * time.Second})
		if !errors.Is(err, ErrCursorLoop) {
			t.Fatalf("got %v, want ErrCursorLoop", err)
		}
		if !strings.Contains(err.Error(), "page 2") || !strings.Contains(err.Error(), "page 1") {
			t.Errorf("error does not name the pages: %v", err)
		}
	})
}

func TestRunDetectsChangingLibrary(t *testing.T) {
	forEachClient(t, func(t *testing.T, client string) {
		srv := Server{Label: "A", Argv: fakeCommand(t, "changing")}
		rep, err := Run(context.Background(), []Server{srv}, &RunOptions{Client: client, Runs: 1, Timeout: 30 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0], "changed between the first and the warm listing") ||
			!strings.Contains(rep.Warnings[0], "5 skills changed") {
			t.Errorf("warnings = %q, want one about 5 changed skills", rep.Warnings)
		}
	})
}

func TestRunCancelled(t *testing.T) {
	forEachClient(t, func(t *testing.T, client string) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		srv := Server{Label: "A", Argv: fakeCommand(t, "hang")}
		_, err := Run(ctx, []Server{srv}, &RunOptions{Client: client, Runs: 1})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v, want context.Canceled", err)
		}
	})
}

// TestListAll drives listAll over the in-memory transport.
func TestListAll(t *testing.T) {
	for _, tc := range []struct {
		mode      string
		wantPages int
		wantErr   error
	}{
		{"good", 3, nil},
		{"loop", 0, ErrCursorLoop},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			ctx := context.Background()
			ct, st := mcp.NewInMemoryTransports()
			ss, err := newFakeServer(tc.mode).Connect(ctx, st, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer ss.Close()
			client, err := newClient()
			if err != nil {
				t.Fatal(err)
			}
			cs, err := client.Connect(ctx, ct, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			first := 0
			l, err := listAll(ctx, sdkLister(cs), func() { first++ })
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("listAll: got error %v, want %v", err, tc.wantErr)
			}
			if tc.wantErr != nil {
				return
			}
			if l.Pages != tc.wantPages || len(l.Entries) != len(fakeSkills) || first != 1 {
				t.Errorf("got %d pages, %d entries, first-page callback %d times; want %d, %d, 1",
					l.Pages, len(l.Entries), first, tc.wantPages, len(fakeSkills))
			}
			views, err := parseEntries(l.Entries)
			if err != nil {
				t.Fatal(err)
			}
			for i, v := range views {
				if v.URI != fakeSkills[i] {
					t.Errorf("entry %d: uri %q, want %q", i, v.URI, fakeSkills[i])
				}
			}
		})
	}
}

// A server may ping the client and notify it between a request and its
// answer; the run answers the ping and reads past the notification.
func TestRunChattyServer(t *testing.T) {
	forEachClient(t, func(t *testing.T, client string) {
		srv := Server{Label: "A", Argv: fakeCommand(t, "chatty")}
		rep, err := Run(context.Background(), []Server{srv}, &RunOptions{Client: client, Runs: 1, Samples: 2, Timeout: 30 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if got := rep.Servers[0].Summary["skills"].Median; got != float64(len(fakeSkills)) {
			t.Errorf("listed %v skills, want %d", got, len(fakeSkills))
		}
	})
}

// The raw client asks for the revision it is given, and refuses the ones
// without the initialize handshake instead of sending a request the server
// would misread.
func TestRunRawClientRevisions(t *testing.T) {
	srv := Server{Label: "A", Argv: fakeCommand(t, "good")}
	if _, err := Run(context.Background(), []Server{srv}, &RunOptions{Client: ClientRaw, ProtocolVersion: "2025-06-18", Runs: 1, Samples: 1}); err != nil {
		t.Errorf("2025-06-18: %v", err)
	}
	_, err := Run(context.Background(), []Server{srv}, &RunOptions{Client: ClientRaw, ProtocolVersion: "2026-07-28", Runs: 1})
	if err == nil || !strings.Contains(err.Error(), "--client sdk") {
		t.Errorf("2026-07-28 with the raw client: got %v, want an error pointing to --client sdk", err)
	}
	if _, err := Run(context.Background(), []Server{srv}, &RunOptions{Client: "curl", Runs: 1}); err == nil || !strings.Contains(err.Error(), "unknown client") {
		t.Errorf("client curl: got %v, want an unknown-client error", err)
	}
}
