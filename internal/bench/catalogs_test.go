package bench

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// TestCatalogs runs the catalogs mode against a real server process (the
// test binary as "catalogs-server"): every catalog is listed, the load is
// bounded by its request count, and no request fails.
func TestCatalogs(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, noFast := range []bool{false, true} {
		rep, err := Catalogs(context.Background(), CatalogsOptions{
			Catalogs: 12, Libraries: 3, Skills: 4, Server: []string{exe}, NoFastPath: noFast,
			Concurrency: 4, Duration: time.Minute, MaxRequests: 200, Dir: t.TempDir(),
		})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Catalogs != 12 || rep.Get.Requests != 200 || rep.Get.Errors != 0 || rep.Get.P99Ms <= 0 || rep.FastPath == noFast {
			t.Errorf("NoFastPath %v: %+v", noFast, rep)
		}
		if _, err := os.Stat("/proc/self/status"); err == nil && rep.RSSMiB <= 0 {
			t.Errorf("no resident size read: %+v", rep)
		}
		var b strings.Builder
		if err := rep.WriteText(&b); err != nil || !strings.Contains(b.String(), "12 catalogs over 3 libraries of 4 skills") {
			t.Errorf("report: %v\n%s", err, b.String())
		}
	}
}

// TestCatalogsServerFails: a server that exits before it is ready is an
// error that quotes its stderr.
func TestCatalogsServerFails(t *testing.T) {
	_, err := Catalogs(context.Background(), CatalogsOptions{Catalogs: 2, Libraries: 1, Skills: 1, Dir: t.TempDir(), MaxRequests: 1,
		Server: []string{"/bin/sh", "-c", "echo cannot open the libraries >&2; exit 3"}})
	if err == nil || !strings.Contains(err.Error(), "exited before it was ready") || !strings.Contains(err.Error(), "cannot open the libraries") {
		t.Errorf("err = %v, want the server's exit and its stderr", err)
	}
}
