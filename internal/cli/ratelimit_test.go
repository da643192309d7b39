package cli

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/httpserve"
)

// TestRateLimitSettings checks where the rate limits come from: a flag
// beats its variable, which beats the config file, which beats the
// default; 0 turns a limit off.
func TestRateLimitSettings(t *testing.T) {
	lib, err := filepath.Abs("../../testdata/library")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "skills.json")
	if err := os.WriteFile(cfgFile, []byte(`{"libraries": [{"namespace": "lib", "root": "`+lib+`"}],
		"rateLimitAddress": 30, "rateLimitToken": 40, "rateLimitBurst": "3s"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	type want struct {
		address, token float64
		burst          time.Duration
	}
	def := want{httpserve.DefaultAddressRate, httpserve.DefaultTokenRate, httpserve.DefaultRateBurst}
	for name, tc := range map[string]struct {
		args []string
		env  map[string]string
		want want
	}{
		"defaults":    {nil, nil, def},
		"config":      {[]string{"--config", cfgFile}, nil, want{30, 40, 3 * time.Second}},
		"env":         {[]string{"--config", cfgFile}, map[string]string{"SKILLS_RATE_LIMIT_ADDRESS": "20", "SKILLS_RATE_LIMIT_BURST": "500ms"}, want{20, 40, 500 * time.Millisecond}},
		"flag":        {[]string{"--config", cfgFile, "--rate-limit-address", "10", "--rate-limit-token", "0"}, map[string]string{"SKILLS_RATE_LIMIT_ADDRESS": "20"}, want{10, 0, 3 * time.Second}},
		"no config":   {[]string{"--rate-limit-token", "2.5"}, nil, want{def.address, 2.5, def.burst}},
		"env no file": {nil, map[string]string{"SKILLS_RATE_LIMIT_TOKEN": "7"}, want{def.address, 7, def.burst}},
	} {
		t.Run(name, func(t *testing.T) {
			env := func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }
			c := &serveCommand{streams: streams{stdout: io.Discard, stderr: io.Discard, env: env}}
			cfg, err := c.parseArgs(append(tc.args, "--cache-dir", t.TempDir()))
			if err != nil {
				t.Fatal(err)
			}
			libs, err := openLibraries(context.Background(), cfg, env, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			defer libs.Close()
			libs.rateFromFile()
			got := want{cfg.rate.Address, cfg.rate.Token, cfg.rate.Burst}
			if got != tc.want {
				t.Errorf("rate limits = %+v, want %+v", got, tc.want)
			}
			var opts httpserve.Options
			cfg.rate.Apply(&opts)
			if (tc.want.token == 0) != (opts.TokenRate < 0) {
				t.Errorf("token rate %v became option %v; 0 must turn the limit off", tc.want.token, opts.TokenRate)
			}
		})
	}
}

func TestRateLimitFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--rate-limit-address", "-1"}, nil, "from 0 (no limit)"},
		{[]string{"--rate-limit-token", "lots"}, nil, "not a number of requests per second"},
		{[]string{"--rate-limit-burst", "0s"}, nil, "above 0"},
		{[]string{"--rate-limit-burst", "2"}, nil, "not a duration"},
		{nil, map[string]string{"SKILLS_RATE_LIMIT_ADDRESS": "NaN"}, "SKILLS_RATE_LIMIT_ADDRESS"},
	} {
		env := func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }
		c := &serveCommand{streams: streams{stdout: io.Discard, stderr: io.Discard, env: env}}
		if _, err := c.parseArgs(tc.args); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v %v: error %v, want one saying %q", tc.args, tc.env, err, tc.want)
		}
	}
}
