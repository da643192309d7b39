//go:build unix

package main_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestSpecialFileWhileServing swaps a served file for a FIFO while the
// server runs over stdio: reads of it get a JSON-RPC error at once instead
// of hanging (each used to hold a thread for ever), the server keeps
// answering, and SIGTERM still ends it.
func TestSpecialFileWhileServing(t *testing.T) {
	lib := copyTree(t, testLibrary)
	cmd := exec.Command(binary, "--root", lib, "--rescan-seconds", "0")
	cmd.Env = testEnv(t)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := newLogBuffer()
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	ref := filepath.Join(lib, "code-review", "references", "checklist.md")
	t.Cleanup(func() {
		cmd.Process.Kill()
		// Release a read that blocked, so that a failing test still ends.
		if f, err := os.OpenFile(ref, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})

	type message struct {
		ID     *int            `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	answers := make(chan message, 64)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m message
			if json.Unmarshal(sc.Bytes(), &m) == nil && m.ID != nil {
				answers <- m
			}
		}
		close(answers)
	}()
	send := func(format string, args ...any) {
		t.Helper()
		if _, err := fmt.Fprintf(stdin, format+"\n", args...); err != nil {
			t.Fatal(err)
		}
	}
	got := map[int]message{} // answers come in any order: reads run concurrently
	answer := func(id int) message {
		t.Helper()
		deadline := time.After(30 * time.Second)
		for {
			if m, ok := got[id]; ok {
				return m
			}
			select {
			case m, ok := <-answers:
				if !ok {
					t.Fatalf("the server closed stdout before answering %d; log:\n%s", id, stderr.String())
				}
				got[*m.ID] = m
			case <-deadline:
				t.Fatalf("no answer to request %d within 30 s; log:\n%s", id, stderr.String())
			}
		}
	}
	const read = `{"jsonrpc":"2.0","id":%d,"method":"resources/read","params":{"uri":"skill://code-review/references/checklist.md"}}`
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`)
	answer(1)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(read, 2)
	if m := answer(2); m.Error != nil {
		t.Fatalf("reading the file before the swap: %+v", m.Error)
	}

	if err := os.Remove(ref); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(ref, 0o644); err != nil {
		t.Fatal(err)
	}
	// At once, before the rescan the swap triggers withholds the file,
	// and again after it.
	const reads = 20
	for id := 3; id < 3+reads; id++ {
		send(read, id)
	}
	for id := 3; id < 3+reads; id++ {
		if m := answer(id); m.Error == nil {
			t.Errorf("read %d of a file swapped for a FIFO succeeded: %s", id, m.Result)
		}
	}
	send(`{"jsonrpc":"2.0","id":100,"method":"skills/list","params":{}}`)
	if m := answer(100); m.Error != nil {
		t.Errorf("skills/list after the swap: %+v", m.Error)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		t.Fatalf("the server did not exit within 30 s of SIGTERM; log:\n%s", stderr.String())
	}
}
