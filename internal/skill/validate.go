package skill

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"
)

// Problem is one validation finding.
type Problem struct {
	// Rule is the checklist rule: "F2", "F3", ... "F15" (sep2640.md §3).
	Rule string
	// Field names the offending field: "name", "description",
	// "metadata.version", ...; empty for a problem with the whole file.
	Field string
	// Message is lowercase, says what is wrong and how to fix it.
	Message string
	// Fatal means the skill must not be served: a problem with the file
	// itself (F2), with name (F3–F7) or with description (F9).
	Fatal bool
}

// ValidateOptions configures [Validate]. A nil *ValidateOptions means all
// defaults.
type ValidateOptions struct {
	// UnknownFields reports top-level fields outside the Agent Skills set
	// (F14) as non-fatal problems. If false, they are not reported: many
	// real libraries add fields of their own, and SEP-2640 passes every
	// field through unchanged.
	UnknownFields bool
}

// Limits from the Agent Skills specification, in characters.
const (
	maxNameChars          = 64
	maxDescriptionChars   = 1024
	maxCompatibilityChars = 500
)

// reservedMetadataPrefix starts metadata keys reserved for MCP extensions.
const reservedMetadataPrefix = "io.modelcontextprotocol/"

// knownFields are the top-level fields the Agent Skills specification defines.
var knownFields = map[string]bool{
	"name":          true,
	"description":   true,
	"license":       true,
	"compatibility": true,
	"metadata":      true,
	"allowed-tools": true,
}

// Validate checks f against the Agent Skills rules F2–F15 and returns the
// problems in a stable order (file, name, description, license,
// compatibility, metadata, allowed-tools, other keys), or nil when there are
// none. F1 and F8 need the skill's folder and are the caller's: compare the
// folder name with [Frontmatter.Name], and use [CheckName] for names from
// elsewhere.
//
// Fatal problems: a leading UTF-8 BOM (F2); name missing, not a string or
// breaking the naming rules (F3–F7); description missing, not a string,
// blank or over 1024 characters (F9).
//
// Non-fatal problems: license, compatibility or allowed-tools not strings
// (F10, F11, F13); compatibility empty or over 500 characters (F11);
// metadata not a mapping of strings to strings, or a metadata key under the
// reserved "io.modelcontextprotocol/" prefix (F12); unknown top-level fields,
// when opts asks (F14); ambiguous scalars (F15): an unquoted value that YAML
// reads as a number, boolean or null where the specification expects a
// string, such as version: 1.0 under metadata, or an unquoted key that is
// not a string. For name and description such a value is reported under F3
// and F9, since it is fatal there.
//
// A nil f is treated as an empty frontmatter.
func Validate(f *Frontmatter, opts *ValidateOptions) []Problem {
	if opts == nil {
		opts = &ValidateOptions{}
	}
	v := &validator{}
	if f != nil && f.bom {
		v.add("F2", "", false, "the file starts with a UTF-8 byte order mark (BOM); it is served, but save SKILL.md without it, since some readers reject it")
	}
	v.name(f.node("name"))
	v.description(f.node("description"))
	v.optionalString(f.node("license"), "license", "F10", "license must be a string naming the license, e.g. license: Apache-2.0")
	if s, ok := v.optionalString(f.node("compatibility"), "compatibility", "F11", "compatibility must be a string describing the environment the skill needs"); ok {
		if s == "" {
			v.add("F11", "compatibility", false, "compatibility is empty; describe the environment the skill needs or remove the field")
		} else if n := utf8.RuneCountInString(s); n > maxCompatibilityChars {
			v.add("F11", "compatibility", false, fmt.Sprintf("compatibility is %d characters; shorten it to at most %d", n, maxCompatibilityChars))
		}
	}
	v.metadata(f.node("metadata"))
	v.optionalString(f.node("allowed-tools"), "allowed-tools", "F13", "allowed-tools must be one space-separated string, e.g. allowed-tools: Read Grep")
	if f != nil {
		for i, k := range f.keys {
			v.ambiguousKey(f.kNodes[i], k, k)
			if opts.UnknownFields && !knownFields[k] {
				v.add("F14", k, false, fmt.Sprintf("unknown field %s; the Agent Skills fields are name, description, license, compatibility, metadata and allowed-tools, and some readers reject others", quoteShort(k)))
			}
		}
	}
	return v.problems
}

// CheckName reports whether name is a valid Agent Skills name (F3–F7):
// 1–64 characters, ASCII lowercase letters, digits and "-", not starting or
// ending with "-", and without "--". It returns nil for a valid name, or an
// error whose message is that of the first [Problem] Validate would report.
func CheckName(name string) error {
	if ps := nameProblems(name); len(ps) > 0 {
		return errors.New(ps[0].Message)
	}
	return nil
}

// nameProblems checks a name string against F3–F7.
func nameProblems(name string) []Problem {
	const rules = `lowercase letters, digits and "-"`
	if name == "" {
		return []Problem{{Rule: "F3", Field: "name", Fatal: true,
			Message: "name is empty; set it to the skill's folder name, made of " + rules}}
	}
	var ps []Problem
	add := func(rule, msg string) {
		ps = append(ps, Problem{Rule: rule, Field: "name", Message: msg, Fatal: true})
	}
	if n := utf8.RuneCountInString(name); n > maxNameChars {
		add("F4", fmt.Sprintf("name %s is %d characters; shorten it to at most %d", quoteShort(name), n, maxNameChars))
	}
	if !nameCharsOK(name) {
		msg := fmt.Sprintf("name %s must be %s", quoteShort(name), rules)
		if try := nameSuggestion(name); try != "" {
			msg += fmt.Sprintf(" (try %q)", try)
		}
		add("F5", msg)
	}
	if strings.HasPrefix(name, "-") || strings.HasSuffix(name, "-") {
		add("F6", fmt.Sprintf(`name %s must not start or end with "-"`, quoteShort(name)))
	}
	if strings.Contains(name, "--") {
		add("F7", fmt.Sprintf(`name %s must not contain "--"`, quoteShort(name)))
	}
	return ps
}

// nameCharsOK reports whether name uses only a-z, 0-9 and "-". The rule is
// ASCII only, like the conformance suite's, so that every reader accepts it.
func nameCharsOK(name string) bool {
	for i := 0; i < len(name); i++ {
		c := name[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return true
}

// nameSuggestion returns a valid name close to name, or "".
func nameSuggestion(name string) string {
	try := strings.Map(func(r rune) rune {
		if r == ' ' || r == '_' {
			return '-'
		}
		return r
	}, strings.ToLower(name))
	if try == name || len(nameProblems(try)) > 0 {
		return ""
	}
	return try
}

// validator collects problems.
type validator struct {
	problems []Problem
}

func (v *validator) add(rule, field string, fatal bool, msg string) {
	v.problems = append(v.problems, Problem{Rule: rule, Field: field, Message: msg, Fatal: fatal})
}

func (v *validator) name(n *yaml.Node) {
	if n == nil {
		v.add("F3", "name", true, `name is missing; add name: with the skill's folder name, made of lowercase letters, digits and "-"`)
		return
	}
	s, ok := v.requiredString(n, "name", "F3")
	if !ok {
		return
	}
	v.problems = append(v.problems, nameProblems(s)...)
}

func (v *validator) description(n *yaml.Node) {
	if n == nil {
		v.add("F9", "description", true, "description is missing; add one saying what the skill does and when to use it")
		return
	}
	s, ok := v.requiredString(n, "description", "F9")
	if !ok {
		return
	}
	if strings.TrimSpace(s) == "" {
		v.add("F9", "description", true, "description is blank; say what the skill does and when to use it")
	} else if c := utf8.RuneCountInString(s); c > maxDescriptionChars {
		v.add("F9", "description", true, fmt.Sprintf("description is %d characters; shorten it to at most %d", c, maxDescriptionChars))
	}
}

// requiredString returns the string value of a required field, or reports
// a fatal problem under rule and returns false.
func (v *validator) requiredString(n *yaml.Node, field, rule string) (string, bool) {
	if s, ok := stringOf(n); ok {
		return s, true
	}
	if sc, ok := scalarOf(n); ok && sc.kind == kindNull && deref(n).Value == "" {
		v.add(rule, field, true, field+" is empty; give it a value")
		return "", false
	}
	v.add(rule, field, true, v.notString(n, field, field+" must be a string"))
	return "", false
}

// optionalString checks a field whose value must be a string when present.
// It reports a plain value that YAML reads as another type under F15, and
// any other non-string under rule with msg. It returns the string and
// whether the field held one.
func (v *validator) optionalString(n *yaml.Node, field, rule, msg string) (string, bool) {
	if n == nil {
		return "", false
	}
	if s, ok := stringOf(n); ok {
		return s, true
	}
	if isPlain(deref(n)) {
		v.add("F15", field, false, v.notString(n, field, msg))
	} else {
		v.add(rule, field, false, v.notString(n, field, msg))
	}
	return "", false
}

// notString explains why n is not a string. For a plain scalar YAML read as
// another type it says how to quote it; otherwise it returns msg with the
// type found.
func (v *validator) notString(n *yaml.Node, field, msg string) string {
	n = deref(n)
	if isPlain(n) {
		sc := resolveScalar(n)
		if sc.kind == kindNull {
			if n.Value == "" {
				return field + " is empty, which YAML reads as null; give it a value or remove it"
			}
			return fmt.Sprintf("%s is %s, which YAML reads as null; give it a quoted value or remove it", field, n.Value)
		}
		return fmt.Sprintf("%s is %s, which YAML reads as %s, not a string; quote it: %s", field, n.Value, kindName(n), quoteShort(n.Value))
	}
	return fmt.Sprintf("%s (found %s)", msg, kindName(n))
}

// kindName describes the type of n for messages.
func kindName(n *yaml.Node) string {
	n = deref(n)
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		sc := resolveScalar(n)
		switch sc.kind {
		case kindNull:
			return "null"
		case kindBool:
			return "a boolean"
		case kindNumber:
			return "a number"
		}
		return "a string"
	}
	return "an alias"
}

// metadata checks F12 and the F15 cases inside metadata.
func (v *validator) metadata(n *yaml.Node) {
	if n == nil {
		return
	}
	const msg = "metadata must be a mapping of string keys to string values, e.g. version: \"1.0\" on an indented line"
	if n.Kind != yaml.MappingNode {
		if sc, ok := scalarOf(n); ok && sc.kind == kindNull && n.Value == "" {
			v.add("F12", "metadata", false, "metadata is empty; add key: value lines under it or remove it")
			return
		}
		v.add("F12", "metadata", false, fmt.Sprintf("%s (found %s)", msg, kindName(n)))
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn, vn := n.Content[i], n.Content[i+1]
		ks, ok := scalarOf(kn)
		if !ok {
			continue // unreachable: Parse rejects collection keys
		}
		key := keyString(ks)
		field := "metadata." + key
		v.ambiguousKey(kn, key, field)
		if strings.HasPrefix(key, reservedMetadataPrefix) {
			v.add("F12", field, false, fmt.Sprintf("metadata key %s uses the prefix %q, which is reserved for MCP extensions; use a prefix of your own", quoteShort(key), reservedMetadataPrefix))
		}
		v.optionalString(vn, field, "F12", field+" must be a string")
	}
}

// ambiguousKey reports an unquoted key that YAML reads as a non-string.
func (v *validator) ambiguousKey(kn *yaml.Node, key, field string) {
	kn = deref(kn)
	if !isPlain(kn) {
		return
	}
	if resolveScalar(kn).kind != kindString {
		v.add("F15", field, false, fmt.Sprintf("key %s is read as %s and becomes %s; quote it so every YAML reader sees the same string", quoteShort(kn.Value), kindName(kn), quoteShort(key)))
	}
}
