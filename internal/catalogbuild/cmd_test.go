package catalogbuild

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
)

// TestFlagsEnvPrecedence: a flag beats its variable, so a bad variable
// fails the run only when no flag overrides it; an unknown boolean is a
// usage error naming the variable, not a silent false.
func TestFlagsEnvPrecedence(t *testing.T) {
	envOf := func(vars map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
	}
	parse := func(vars map[string]string, args ...string) (*config, error) {
		cfg := &config{}
		fs, envErr := flags(cfg, io.Discard, envOf(vars))
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		return cfg, envErr()
	}
	if cfg, err := parse(map[string]string{"SKILLS_CATALOG_PARALLEL": "many"}, "--parallel", "3"); err != nil || cfg.parallel != 3 {
		t.Errorf("flag over a bad variable: parallel %d, %v; want 3, no error", cfg.parallel, err)
	}
	if _, err := parse(map[string]string{"SKILLS_CATALOG_PARALLEL": "many"}); err == nil || !strings.Contains(err.Error(), "SKILLS_CATALOG_PARALLEL") {
		t.Errorf("bad variable, no flag: %v, want an error naming it", err)
	}
	if cfg, err := parse(map[string]string{"SKILLS_CATALOG_KEEP_GOING": "yes"}, "--keep-going=false"); err != nil || cfg.keepGoing {
		t.Errorf("flag over a bad boolean: keepGoing %v, %v; want false, no error", cfg.keepGoing, err)
	}
	for v, want := range map[string]bool{"1": true, "true": true, "TRUE": true, "0": false, "false": false} {
		if cfg, err := parse(map[string]string{"SKILLS_CATALOG_KEEP_GOING": v}); err != nil || cfg.keepGoing != want {
			t.Errorf("SKILLS_CATALOG_KEEP_GOING=%s: %v, %v; want %v", v, cfg.keepGoing, err, want)
		}
	}

	var stdout, stderr bytes.Buffer
	out := filepath.Join(t.TempDir(), "skills.json")
	code := Main(context.Background(), []string{"build", "--repositories", "https://github.com/acme/skills", "--out", out}, &stdout, &stderr,
		envOf(map[string]string{"SKILLS_CATALOG_KEEP_GOING": "yes"}))
	if code != exitUsage || !strings.Contains(stderr.String(), `SKILLS_CATALOG_KEEP_GOING="yes"`) {
		t.Errorf("SKILLS_CATALOG_KEEP_GOING=yes: exit %d, %s; want a usage error naming the variable", code, stderr.String())
	}
}
