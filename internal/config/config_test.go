package config_test

import (
	"strings"
	"testing"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/config"
)

func TestParseValid(t *testing.T) {
	c, err := config.Parse(strings.NewReader(`{
	  "libraries": [
	    {"namespace": "bob", "root": "skills", "title": "BOB", "metadata": {"channel": "stable"}},
	    {"namespace": "gbl", "root": "/abs/gbl", "noScripts": true, "vault": false},
	    {"namespace": "acme", "root": "acme/skills", "vault": "acme"},
	    {"namespace": "sales", "url": "https://example.invalid/p.zip", "sha256": "` + strings.Repeat("a", 64) + `"}
	  ],
	  "noScripts": false, "lint": true, "excludeTiers": "pro, enterprise", "devStatus": ["stable"]
	}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := c.Resolve("/etc/skills"); err != nil {
		t.Fatal(err)
	}
	if c.Libraries[0].Root != "/etc/skills/skills" || c.Libraries[1].Root != "/abs/gbl" || c.Libraries[2].Vault.Path != "/etc/skills/acme" {
		t.Errorf("resolved = %+v", c.Libraries)
	}
	if !c.Libraries[1].Vault.Disabled || *c.Lint != true || c.NoScripts == nil || c.Playbooks != nil {
		t.Errorf("switches = %+v", c)
	}
	if got := *c.ExcludeTiers; len(got) != 2 || got[1] != "enterprise" {
		t.Errorf("excludeTiers = %v", got)
	}
}

func TestParseErrors(t *testing.T) {
	for name, tt := range map[string]struct{ in, want string }{
		"not json":    {`libraries: []`, "not valid JSON"},
		"empty":       {``, "empty"},
		"unknown key": {`{"libraries": [], "colour": 1}`, `unknown key "colour"`},
		"nested key":  {`{"libraries": [{"namespace": "a", "rooot": "x"}]}`, `unknown key "rooot"`},
		"wrong type":  {`{"libraries": [{"namespace": 3}]}`, "libraries.namespace"},
		"two values":  {`{"libraries": []} {}`, "more than one"},
		"vault true":  {`{"libraries": [{"namespace": "a", "root": "x", "vault": true}]}`, "folder path or false"},
		"huge":        {`{"libraries": [], "x": "` + strings.Repeat("a", config.MaxBytes) + `"}`, "larger than"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := config.Parse(strings.NewReader(tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	for name, tt := range map[string]struct{ in, want string }{
		"no libraries":  {`{"libraries": []}`, "at least one library"},
		"duplicate":     {`{"libraries": [{"namespace": "a", "root": "x"}, {"namespace": "a", "root": "y"}]}`, "libraries[1].namespace"},
		"bad namespace": {`{"libraries": [{"namespace": "-a", "root": "x"}]}`, "must match"},
		"no source":     {`{"libraries": [{"namespace": "a"}]}`, "needs root"},
		"both":          {`{"libraries": [{"namespace": "a", "root": "x", "url": "https://h/x.zip"}]}`, "both"},
		"http url":      {`{"libraries": [{"namespace": "a", "url": "http://h/x.zip"}]}`, "https"},
		"bad pin":       {`{"libraries": [{"namespace": "a", "url": "https://h/x.zip", "sha256": "abc"}]}`, "64 hex"},
	} {
		t.Run(name, func(t *testing.T) {
			c, err := config.Parse(strings.NewReader(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Validate() = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestResolveEscape(t *testing.T) {
	c, _ := config.Parse(strings.NewReader(`{"libraries": [{"namespace": "a", "root": "../outside"}, {"namespace": "b", "root": "x", "vault": "../../v"}]}`))
	err := c.Resolve("/etc/skills")
	if err == nil || !strings.Contains(err.Error(), "libraries[0].root") || !strings.Contains(err.Error(), "libraries[1].vault") {
		t.Errorf("Resolve = %v", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add(`{"libraries": [{"namespace": "a", "root": "x"}]}`)
	f.Add(`{"libraries": [{"namespace": "a", "url": "https://h/x.zip", "vault": false}], "excludeTiers": "a,b"}`)
	f.Add(`[]`)
	f.Fuzz(func(t *testing.T, in string) {
		c, err := config.Parse(strings.NewReader(in))
		if err != nil {
			return
		}
		_ = c.Validate()
		_ = c.Resolve("/base")
	})
}

func TestRateLimits(t *testing.T) {
	const lib = `"libraries": [{"namespace": "a", "root": "x"}]`
	c, err := config.Parse(strings.NewReader(`{` + lib + `, "rateLimitAddress": 50, "rateLimitToken": 0, "rateLimitBurst": "1.5s"}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if *c.RateLimitAddress != 50 || *c.RateLimitToken != 0 || time.Duration(*c.RateLimitBurst) != 1500*time.Millisecond {
		t.Errorf("rate limits = %v, %v, %v", *c.RateLimitAddress, *c.RateLimitToken, *c.RateLimitBurst)
	}
	for name, tt := range map[string]struct{ in, want string }{
		"negative":     {`"rateLimitAddress": -1`, "rateLimitAddress: must be a number of requests per second from 0"},
		"huge":         {`"rateLimitToken": 1e9`, "rateLimitToken: must be"},
		"burst zero":   {`"rateLimitBurst": "0s"`, "rateLimitBurst: must be a duration above 0"},
		"burst day":    {`"rateLimitBurst": "24h"`, "at most 1h0m0s"},
		"burst number": {`"rateLimitBurst": 2`, `rateLimitBurst must be a duration such as "2s"`},
		"burst words":  {`"rateLimitBurst": "fast"`, `rateLimitBurst "fast" is not a duration`},
	} {
		t.Run(name, func(t *testing.T) {
			c, err := config.Parse(strings.NewReader(`{` + lib + `, ` + tt.in + `}`))
			if err == nil {
				err = c.Validate()
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want %q", err, tt.want)
			}
		})
	}
}
