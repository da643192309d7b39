package cmdline

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// Table is one command's settings: each row is a flag, its environment
// twin and its config-file key, with one help text. The flags, the
// variables read, the config keys named and the help all come from it,
// so none of them can drift from the others (each binary's tests hold
// its tables against what its code reads).
type Table struct {
	fs   *pflag.FlagSet
	rows []*Option
	// vars are variables read without a flag of their own.
	vars []Variable
}

// Option is one row of a [Table].
type Option struct {
	Name      string // the flag, without dashes
	Env       string // its environment twin; "" if none
	ConfigKey string // its key in the config file; "" if none
	// Aliases are older names of Env, read when Env is not set.
	Aliases []string
	list    bool   // a repeatable flag: its variable holds a comma-separated list
	want    string // the type a value must have, for errors: "an integer"
}

// Variable is a variable a command reads that has no flag.
type Variable struct{ Name, Usage string }

// NewTable returns an empty table for the command name.
func NewTable(name string) *Table {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	return &Table{fs: fs}
}

// Flags is the table's flag set.
func (t *Table) Flags() *pflag.FlagSet { return t.fs }

// Options are the table's rows, in the order they were defined.
func (t *Table) Options() []*Option { return t.rows }

// Changed reports whether the command line gave flag name.
func (t *Table) Changed(name string) bool { return t.fs.Changed(name) }

func (t *Table) add(name, env, want string) *Option {
	r := &Option{Name: name, Env: env, want: want}
	t.rows = append(t.rows, r)
	return r
}

// usage is a flag's help with its variable named.
func usage(text, env string) string {
	if env == "" {
		return text
	}
	return text + " [$" + env + "]"
}

// String defines a string flag and its twin.
func (t *Table) String(p *string, name, env, def, text string) *Option {
	t.fs.StringVar(p, name, def, usage(text, env))
	return t.add(name, env, "a string")
}

// Int defines an integer flag and its twin.
func (t *Table) Int(p *int, name, env string, def int, text string) *Option {
	t.fs.IntVar(p, name, def, usage(text, env))
	return t.add(name, env, "an integer")
}

// Int64 defines a 64-bit integer flag and its twin.
func (t *Table) Int64(p *int64, name, env string, def int64, text string) *Option {
	t.fs.Int64Var(p, name, def, usage(text, env))
	return t.add(name, env, "an integer")
}

// Bool defines a boolean flag and its twin.
func (t *Table) Bool(p *bool, name, env string, text string) *Option {
	t.fs.BoolVar(p, name, false, usage(text, env))
	return t.add(name, env, "true or false")
}

// Duration defines a duration flag and its twin.
func (t *Table) Duration(p *time.Duration, name, env string, def time.Duration, text string) *Option {
	t.fs.DurationVar(p, name, def, usage(text, env))
	return t.add(name, env, "a duration such as 90s, 5m or 1h")
}

// Func defines a flag whose values fn takes, one at a time; want names
// the type of value it takes, for errors. A repeatable flag's variable
// holds a comma-separated list of values.
func (t *Table) Func(name, env, want, text string, repeatable bool, fn func(string) error) *Option {
	t.fs.Func(name, usage(text, env), fn)
	r := t.add(name, env, want)
	r.list = repeatable
	return r
}

// Go adopts the flags a package defines on a standard flag set, each
// given its twin from envs and the type it wants from want.
func (t *Table) Go(gfs *flag.FlagSet, envs map[string]string, want map[string]string) {
	gfs.VisitAll(func(f *flag.Flag) {
		pf := pflag.PFlagFromGoFlag(f)
		pf.Usage = usage(f.Usage, envs[f.Name])
		t.fs.AddFlag(pf)
		t.add(f.Name, envs[f.Name], want[f.Name])
	})
}

// Var records a variable the command reads that has no flag.
func (t *Table) Var(name, text string) {
	t.vars = append(t.vars, Variable{name, text})
}

// Config names the key of the config file that also sets the row.
func (r *Option) Config(key string) *Option {
	r.ConfigKey = key
	return r
}

// Alias adds an older name of the row's variable, read when the variable
// itself is not set.
func (r *Option) Alias(name string) *Option {
	r.Aliases = append(r.Aliases, name)
	return r
}

// FromEnv fills every flag the command line left unset from its variable
// (or an alias of it), if that is set and not empty: a flag beats its
// variable. A bad value is a [UsageError] that names the variable, the
// flag and the type wanted, with hint.
func (t *Table) FromEnv(env Env, hint string) error {
	if env == nil {
		return nil
	}
	for _, r := range t.rows {
		if r.Env == "" || t.fs.Changed(r.Name) {
			continue
		}
		var name, v string
		for _, n := range append([]string{r.Env}, r.Aliases...) {
			if s, ok := env(n); ok && s != "" {
				name, v = n, s
				break
			}
		}
		if name == "" {
			continue
		}
		values := []string{v}
		if r.list {
			values = SplitList(v)
		}
		for _, item := range values {
			if err := t.fs.Set(r.Name, item); err != nil {
				return &UsageError{Err: fmt.Errorf("%s=%q: %s (the variable of --%s)", name, v, valueProblem(r, err), r.Name), Hint: hint}
			}
		}
	}
	return nil
}

// SplitList splits a comma-separated list, dropping blanks.
func SplitList(v string) []string {
	var out []string
	for s := range strings.SplitSeq(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// valueProblem says what is wrong with a value: the type wanted, unless
// the parser's own error says more.
func valueProblem(r *Option, err error) string {
	if e, ok := errors.AsType[*pflag.InvalidValueError](err); ok && e.Unwrap() != nil {
		err = e.Unwrap()
	}
	// The strconv and time errors repeat the value; the type says more.
	if msg := err.Error(); !bareParseError(msg) {
		return msg
	}
	return "want " + r.want
}

// bareParseError reports whether msg is a parser's error that says no
// more than that the value did not parse.
func bareParseError(msg string) bool {
	return strings.Contains(msg, "strconv.") || strings.HasPrefix(msg, "time: ") || strings.Contains(msg, "parse error") || strings.Contains(msg, "invalid syntax")
}

// Option returns the row of flag name, or nil.
func (t *Table) Option(name string) *Option {
	i := slices.IndexFunc(t.rows, func(r *Option) bool { return r.Name == name })
	if i < 0 {
		return nil
	}
	return t.rows[i]
}

// EnvHelp says how the command's variables work, and lists the older
// names and the variables without a flag.
func (t *Table) EnvHelp() string {
	twins := slices.ContainsFunc(t.rows, func(r *Option) bool { return r.Env != "" })
	if !twins && len(t.vars) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\nEnvironment:\n")
	if twins {
		b.WriteString("  A flag marked [$NAME] also comes from variable NAME; the flag beats it. The\n" +
			"  variable of a repeatable flag holds a comma-separated list.\n")
	}
	for _, r := range t.rows {
		for _, a := range r.Aliases {
			fmt.Fprintf(&b, "  %-20s %s\n", a, "the older name of "+r.Env+", read when that is not set")
		}
	}
	for _, v := range t.vars {
		fmt.Fprintf(&b, "  %-20s %s\n", v.Name, v.Usage)
	}
	return b.String()
}

// Names are every variable the command reads.
func (t *Table) Names() []string {
	var out []string
	for _, r := range t.rows {
		if r.Env != "" {
			out = append(out, r.Env)
			out = append(out, r.Aliases...)
		}
	}
	for _, v := range t.vars {
		out = append(out, v.Name)
	}
	return out
}

// Parse parses args with t's flags, then their variables: what a command
// does when run without a command tree (tests, and commands that parse
// their own arguments). It returns the arguments left, [ErrHelp] when
// help was asked for, or a [UsageError] with hint.
func Parse(t *Table, args []string, env Env, hint string) ([]string, error) {
	if err := t.fs.Parse(NormalizeArgs(args, t.fs)); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return nil, ErrHelp
		}
		return nil, &UsageError{Err: DescribeFlagError(t.fs, err), Hint: hint}
	}
	if err := t.FromEnv(env, hint); err != nil {
		return nil, err
	}
	return t.fs.Args(), nil
}
