package cli

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

// options is the table of one command's settings: each row is a flag, its
// environment twin and its config-file key, with one help text. The flags,
// the variables read, the config keys named and the help all come from it,
// so none of them can drift from the others (TestOptionTable holds the
// table against what the code reads).
type options struct {
	fs   *pflag.FlagSet
	rows []*option
	// vars are variables read without a flag of their own.
	vars []envVar
}

// option is one row of the table.
type option struct {
	name   string // the flag, without dashes
	env    string // its environment twin; "" if none
	config string // its key in the config file; "" if none
	list   bool   // a repeatable flag: its variable holds a comma-separated list
	want   string // the type a value must have, for errors: "an integer"
}

// envVar is a variable a command reads that has no flag.
type envVar struct{ name, usage string }

func newOptions(name string) *options {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	return &options{fs: fs}
}

func (o *options) add(name, env, want string) *option {
	r := &option{name: name, env: env, want: want}
	o.rows = append(o.rows, r)
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
func (o *options) String(p *string, name, env, def, text string) *option {
	o.fs.StringVar(p, name, def, usage(text, env))
	return o.add(name, env, "a string")
}

// Int defines an integer flag and its twin.
func (o *options) Int(p *int, name, env string, def int, text string) *option {
	o.fs.IntVar(p, name, def, usage(text, env))
	return o.add(name, env, "an integer")
}

// Int64 defines a 64-bit integer flag and its twin.
func (o *options) Int64(p *int64, name, env string, def int64, text string) *option {
	o.fs.Int64Var(p, name, def, usage(text, env))
	return o.add(name, env, "an integer")
}

// Bool defines a boolean flag and its twin.
func (o *options) Bool(p *bool, name, env string, text string) *option {
	o.fs.BoolVar(p, name, false, usage(text, env))
	return o.add(name, env, "true or false")
}

// Duration defines a duration flag and its twin.
func (o *options) Duration(p *time.Duration, name, env string, def time.Duration, text string) *option {
	o.fs.DurationVar(p, name, def, usage(text, env))
	return o.add(name, env, "a duration such as 90s, 5m or 1h")
}

// Func defines a flag whose values fn takes, one at a time; a repeatable
// one's variable holds a comma-separated list of them.
func (o *options) Func(name, env, want, text string, repeatable bool, fn func(string) error) *option {
	o.fs.Func(name, usage(text, env), fn)
	r := o.add(name, env, want)
	r.list = repeatable
	return r
}

// Go adopts the flags a package defines on a standard flag set, each
// given its twin from envs.
func (o *options) Go(gfs *flag.FlagSet, envs map[string]string, want map[string]string) {
	gfs.VisitAll(func(f *flag.Flag) {
		pf := pflag.PFlagFromGoFlag(f)
		pf.Usage = usage(f.Usage, envs[f.Name])
		o.fs.AddFlag(pf)
		o.add(f.Name, envs[f.Name], want[f.Name])
	})
}

// Var records a variable the command reads that has no flag.
func (o *options) Var(name, text string) {
	o.vars = append(o.vars, envVar{name, text})
}

// Config names the key of the config file that also sets the row.
func (r *option) Config(key string) *option {
	r.config = key
	return r
}

// fromEnv fills every flag the command line left unset from its variable,
// if that is set and not empty: a flag beats its variable.
func (o *options) fromEnv(env env, hint string) error {
	if env == nil {
		return nil
	}
	for _, r := range o.rows {
		if r.env == "" || o.fs.Changed(r.name) {
			continue
		}
		v, ok := env(r.env)
		if !ok || v == "" {
			continue
		}
		values := []string{v}
		if r.list {
			values = splitList(v)
		}
		for _, item := range values {
			if err := o.fs.Set(r.name, item); err != nil {
				return &usageError{err: fmt.Errorf("%s=%q: %s (the variable of --%s)", r.env, v, valueProblem(r, err), r.name), hint: hint}
			}
		}
	}
	return nil
}

// valueProblem says what is wrong with a value, naming the type wanted.
func valueProblem(r *option, err error) string {
	if e, ok := errors.AsType[*pflag.InvalidValueError](err); ok && e.Unwrap() != nil {
		err = e.Unwrap()
	}
	msg := err.Error()
	// The strconv and time errors repeat the value; the type says more.
	if strings.Contains(msg, "strconv.") || strings.HasPrefix(msg, "time: ") || strings.Contains(msg, "parse error") || strings.Contains(msg, "invalid syntax") {
		return "want " + r.want
	}
	if r.want != "" && r.want != "a string" {
		return msg + "; want " + r.want
	}
	return msg
}

// row returns the row of flag name.
func (o *options) row(name string) *option {
	i := slices.IndexFunc(o.rows, func(r *option) bool { return r.name == name })
	if i < 0 {
		return nil
	}
	return o.rows[i]
}

// envHelp says how the command's variables work, and lists those without
// a flag.
func (o *options) envHelp() string {
	twins := slices.ContainsFunc(o.rows, func(r *option) bool { return r.env != "" })
	if !twins && len(o.vars) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\nEnvironment:\n")
	if twins {
		b.WriteString("  A flag marked [$NAME] also comes from variable NAME; the flag beats it. The\n" +
			"  variable of a repeatable flag holds a comma-separated list.\n")
	}
	for _, v := range o.vars {
		fmt.Fprintf(&b, "  %-20s %s\n", v.name, v.usage)
	}
	return b.String()
}

// names are every variable the command reads.
func (o *options) names() []string {
	var out []string
	for _, r := range o.rows {
		if r.env != "" {
			out = append(out, r.env)
		}
	}
	for _, v := range o.vars {
		out = append(out, v.name)
	}
	return out
}
