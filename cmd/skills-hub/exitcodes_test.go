package main_test

import (
	"strings"
	"testing"
)

// TestExitCodes is the exit-status contract over the binary, the same in
// every command: 0 ok (help and versions included, on stdout), 1 a failure
// at run time, 2 bad usage. A usage error is one or two lines naming what
// is wrong (the flag or variable and the type it wants), then
// "Try: skills-hub CMD --help".
func TestExitCodes(t *testing.T) {
	data := "SKILLS_HUB_DATA=" + t.TempDir()
	for _, tc := range []struct {
		name   string
		env    []string
		args   []string
		code   int
		stdout string // in stdout
		stderr string // in stderr
	}{
		{"--version", nil, []string{"--version"}, 0, "skills-hub ", ""},
		{"version", nil, []string{"version"}, 0, "skills-hub ", ""},
		{"bare help", nil, nil, 0, "Commands:", ""},
		{"help", nil, []string{"help"}, 0, "Usage: skills-hub COMMAND", ""},
		{"install help", nil, []string{"install", "-h"}, 0, "--zip FILE", ""},
		{"help install", nil, []string{"help", "install"}, 0, "Usage: skills-hub install", ""},
		{"group help", nil, []string{"catalog"}, 0, "search [QUERY…]", ""},
		{"serve help", nil, []string{"serve", "--help"}, 0, "[$DOCKER_HOST]", ""},
		{"completion", nil, []string{"completion", "bash"}, 0, "bash completion", ""},
		{"completion fish", nil, []string{"completion", "fish"}, 0, "complete -c skills-hub", ""},
		{"completion of a flag", nil, []string{"__complete", "serve", "--rate-limit-p"}, 0, "--rate-limit-project", "Completion ended"},
		{"completion of a command", nil, []string{"__complete", "remnants", "d"}, 0, "download", "Completion ended"},
		{"list", []string{data}, []string{"list"}, 0, "no packages installed", ""},
		{"single-dash long flag", []string{data}, []string{"list", "-json"}, 0, "[]", ""},

		{"completion of an unknown shell", nil, []string{"completion", "tcsh"}, 2, "", `unknown shell "tcsh"`},
		{"version argument", nil, []string{"version", "extra"}, 2, "", `unknown command "extra"`},
		{"mistyped command", nil, []string{"intsall"}, 2, "", "did you mean install?"},
		{"unknown command", nil, []string{"frobnicate"}, 2, "", `unknown command "frobnicate"`},
		{"mistyped sub-command", nil, []string{"catalog", "serch"}, 2, "", "did you mean search?"},
		{"help of nothing", nil, []string{"help", "frobnicate"}, 2, "", `unknown command "frobnicate"`},
		{"mistyped flag", []string{data}, []string{"list", "--jsn"}, 2, "", "unknown flag --jsn: did you mean --json?"},
		{"bad flag value", []string{data}, []string{"catalog", "search", "--limit", "abc"}, 2, "", `--limit "abc": want an integer`},
		{"flag value missing", nil, []string{"list", "--data"}, 2, "", "--data needs a value"},
		{"bad boolean variable", []string{data, "SKILLS_HUB_REQUIRE_APPROVAL=maybe"}, []string{"list"}, 2, "", `SKILLS_HUB_REQUIRE_APPROVAL="maybe": want true or false (the variable of --require-approval)`},
		{"bad integer variable", []string{data, "SKILLS_HUB_MAX_CONNS=abc"}, []string{"serve"}, 2, "", `SKILLS_HUB_MAX_CONNS="abc": want an integer`},
		{"bad variable of a list", []string{data, "SKILLS_HUB_LOG_LEVEL=loud"}, []string{"serve"}, 2, "", `SKILLS_HUB_LOG_LEVEL="loud": want debug, info, warn or error`},
		{"bad log level", []string{data}, []string{"serve", "--log-level", "loud"}, 2, "", `--log-level "loud": want debug, info, warn or error`},
		{"bad sandbox", []string{data}, []string{"serve", "--sandbox", "podman"}, 2, "", `--sandbox "podman": want bwrap, docker, gvisor or auto`},
		{"bad sandbox, older variable", []string{data, "SKILLS_SANDBOX=podman"}, []string{"serve"}, 2, "", `SKILLS_SANDBOX="podman"`},
		{"short lease", []string{data}, []string{"serve", "--lease", "1ms"}, 2, "", `--lease "1ms": want a duration from 100ms`},
		{"bad address", []string{data}, []string{"serve", "--http", "not an address"}, 2, "", "--http"},
		{"bad base URL", []string{data}, []string{"serve", "--base-url", "ftp://hub"}, 2, "", `--base-url "ftp://hub": want an http or https URL`},
		{"issuer without base URL", []string{data}, []string{"serve", "--oauth-issuer", "https://issuer.example"}, 2, "", "--oauth-issuer needs --base-url"},
		{"no data directory", []string{"HOME=", "XDG_DATA_HOME="}, []string{"list"}, 2, "", "no data directory"},
		{"missing argument", []string{data}, []string{"inspect"}, 2, "", "inspect needs a VERSION"},
		{"extra argument", []string{data}, []string{"inspect", "a", "b"}, 2, "", `unexpected argument "b"`},
		{"install from nowhere", []string{data}, []string{"install"}, 2, "", "give one of --zip FILE, --repo URL or --item ID"},
		{"bad scope", []string{data}, []string{"token", "create", "--scope", "root"}, 2, "", `--scope "root": want read, write or admin`},
		{"revoke by secret", []string{data}, []string{"token", "revoke", "smcp_0123"}, 2, "", "not its secret"},
		{"build without --out", nil, []string{"catalog", "build", "--repositories", "https://github.com/acme/skills"}, 2, "", "give --out FILE"},
		{"build opens no hub", nil, []string{"catalog", "build", "--data", "x"}, 2, "", "opens no hub: it takes no --data"},
		{"bad build variable", []string{"SKILLS_CATALOG_PARALLEL=many"}, []string{"catalog", "build"}, 2, "", `SKILLS_CATALOG_PARALLEL="many": want an integer`},
		{"backup without --out", []string{data}, []string{"backup"}, 2, "", "--out is required"},
		{"refresh from nowhere", []string{data, "SKILLS_HUB_CATALOG_URL="}, []string{"catalog", "refresh"}, 2, "", "SKILLS_HUB_CATALOG_URL"},

		{"no such version", []string{data}, []string{"inspect", "nosuch"}, 1, "", `version "nosuch": not found`},
		{"no such backup", nil, []string{"--data", t.TempDir() + "/restored", "restore", "/does/not/exist.db"}, 1, "", "/does/not/exist.db"},
		{"no such token", []string{data}, []string{"token", "revoke", "0123456789abcdef"}, 1, "", "0123456789abcdef"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := run(t, tc.env, tc.args...)
			if code != tc.code || !strings.Contains(stdout, tc.stdout) || !strings.Contains(stderr, tc.stderr) {
				t.Fatalf("exit %d, stdout %.300q, stderr %q; want exit %d, %q and %q", code, stdout, stderr, tc.code, tc.stdout, tc.stderr)
			}
			switch code {
			case 0:
				if tc.stderr == "" && stderr != "" {
					t.Errorf("wrote to stderr: %q", stderr)
				}
			case 1, 2:
				// Log lines of what ran before may come first.
				_, last, _ := strings.Cut(stderr, "Error: ")
				lines := strings.Split(strings.TrimSuffix("Error: "+last, "\n"), "\n")
				try := strings.HasPrefix(lines[len(lines)-1], "Try: skills-hub") && strings.HasSuffix(lines[len(lines)-1], " --help")
				if code == 2 && (len(lines) > 3 || !try) {
					t.Errorf("a usage error is at most two lines then Try: …--help; got\n%s", stderr)
				}
				if code == 1 && try {
					t.Errorf("a failure at run time is no usage error; got\n%s", stderr)
				}
			}
		})
	}
}
