package cmdline

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// testTable is a table of each kind of row, and what its flags hold.
type testTable struct {
	t       *Table
	n       int
	on      bool
	wait    time.Duration
	name    string
	hosts   []string
	level   string
	without string
}

func newTestTable() *testTable {
	v := &testTable{t: NewTable("test")}
	v.t.Int(&v.n, "count", "T_COUNT", 3, "how many")
	v.t.Bool(&v.on, "on", "T_ON", "switch it on")
	v.t.Duration(&v.wait, "wait", "T_WAIT", time.Second, "how long")
	v.t.String(&v.name, "name", "T_NAME", "", "a `NAME`").Config("name").Alias("T_OLD_NAME")
	v.t.Func("host", "T_HOSTS", "host names", "a `HOST` (repeatable)", true, func(s string) error {
		v.hosts = append(v.hosts, s)
		return nil
	})
	v.t.Func("level", "T_LEVEL", "low or high", "the `LEVEL`", false, func(s string) error {
		if s != "low" && s != "high" {
			return errors.New("want low or high")
		}
		v.level = s
		return nil
	})
	v.t.String(&v.without, "once", "", "", "a flag without a variable")
	v.t.Var("T_EXTRA", "read without a flag")
	return v
}

func lookup(m map[string]string) Env {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// A flag beats its variable; a variable fills a flag not given; an older
// name is read only when the new one is not set; a repeatable flag's
// variable is a list; an empty variable is not set.
func TestFromEnv(t *testing.T) {
	v := newTestTable()
	env := lookup(map[string]string{"T_COUNT": "9", "T_ON": "true", "T_OLD_NAME": "old", "T_HOSTS": "a, b,,c", "T_WAIT": "", "T_LEVEL": "bogus"})
	rest, err := Parse(v.t, []string{"-count", "4", "--level=high", "arg"}, env, "")
	if err != nil {
		t.Fatal(err)
	}
	if v.n != 4 || !v.on || v.name != "old" || !slices.Equal(v.hosts, []string{"a", "b", "c"}) || v.wait != time.Second || v.level != "high" || !slices.Equal(rest, []string{"arg"}) {
		t.Errorf("count %d on %v name %q hosts %q wait %v level %q rest %q", v.n, v.on, v.name, v.hosts, v.wait, v.level, rest)
	}

	v = newTestTable()
	_, err = Parse(v.t, nil, lookup(map[string]string{"T_NAME": "new", "T_OLD_NAME": "old"}), "")
	if err != nil || v.name != "new" {
		t.Errorf("the new name beats the old: %q, %v", v.name, err)
	}
}

// Every bad value is a usage error in one line that names the flag or the
// variable (and its flag) and the type wanted, never a parser's jargon.
func TestValueErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--count", "x"}, nil, `--count "x": want an integer`},
		{[]string{"--on=maybe"}, nil, `--on "maybe": want true or false`},
		{[]string{"--wait", "soon"}, nil, `--wait "soon": want a duration such as 90s, 5m or 1h`},
		{[]string{"--level", "mid"}, nil, `--level "mid": want low or high`},
		{[]string{"--count"}, nil, "--count needs a value (an integer)"},
		{[]string{"--cuont", "3"}, nil, "unknown flag --cuont: did you mean --count?"},
		{nil, map[string]string{"T_COUNT": "x"}, `T_COUNT="x": want an integer (the variable of --count)`},
		{nil, map[string]string{"T_ON": "yes"}, `T_ON="yes": want true or false (the variable of --on)`},
		{nil, map[string]string{"T_LEVEL": "mid"}, `T_LEVEL="mid": want low or high (the variable of --level)`},
	} {
		v := newTestTable()
		_, err := Parse(v.t, tc.args, lookup(tc.env), "the hint")
		ue, ok := errors.AsType[*UsageError](err)
		if !ok || ue.Error() != tc.want || strings.Contains(ue.Error(), "strconv") {
			t.Errorf("%q %v: %v; want a usage error %q", tc.args, tc.env, err, tc.want)
		}
	}
}

// The help names every variable the table reads; Names lists them all,
// aliases and flagless variables included.
func TestHelpAndNames(t *testing.T) {
	v := newTestTable()
	help := Help{Intro: "Usage: test\n", Flags: v.t, ExitStatus: "\nExit status: 0, 1, 2.\n"}.String()
	for _, n := range v.t.Names() {
		if !strings.Contains(help, n) {
			t.Errorf("the help does not name %s:\n%s", n, help)
		}
	}
	want := []string{"T_COUNT", "T_ON", "T_WAIT", "T_NAME", "T_OLD_NAME", "T_HOSTS", "T_LEVEL", "T_EXTRA"}
	if got := v.t.Names(); !slices.Equal(got, want) {
		t.Errorf("Names = %q, want %q", got, want)
	}
	if !strings.Contains(help, "--help") || !strings.HasSuffix(help, "Exit status: 0, 1, 2.\n") {
		t.Errorf("help:\n%s", help)
	}
	if r := v.t.Option("name"); r == nil || r.ConfigKey != "name" {
		t.Errorf("Option(name) = %+v", r)
	}
}

// PrintError: a usage error is its line, its hint unless that only points
// at the help, then what to try (exit 2); anything else one line (exit 1).
func TestPrintError(t *testing.T) {
	for _, tc := range []struct {
		err  error
		code int
		want string
	}{
		{Usagef("give --out FILE", "--out is required"), ExitUsage, "Error: --out is required\nHint: give --out FILE\nTry: prog cmd --help\n"},
		{Usagef("prog cmd -h", "bad"), ExitUsage, "Error: bad\nTry: prog cmd --help\n"},
		{errors.New("disk full"), ExitFailure, "Error: disk full\n"},
	} {
		var b bytes.Buffer
		if code := PrintError(&b, "prog cmd", tc.err); code != tc.code || b.String() != tc.want {
			t.Errorf("%v: exit %d, %q; want %d, %q", tc.err, code, b.String(), tc.code, tc.want)
		}
	}
}

// The Go flag package's single dash still names a long flag, and nothing
// after "--" is touched.
func TestNormalizeArgs(t *testing.T) {
	v := newTestTable()
	got := NormalizeArgs([]string{"-count", "3", "-on", "-x", "--name=a", "--", "-count"}, v.t.Flags())
	want := []string{"--count", "3", "--on", "-x", "--name=a", "--", "-count"}
	if !slices.Equal(got, want) {
		t.Errorf("NormalizeArgs = %q, want %q", got, want)
	}
}
