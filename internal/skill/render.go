package skill

import (
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"
)

// This file turns a yaml.Node tree into JSON the way the JavaScript "yaml"
// library (YAML 1.2 core schema) followed by JSON.stringify would. The
// conformance suite compares every frontmatter field that way, and the
// YAML library's own resolution differs (it reads 010 as octal, resolves
// timestamps, and Go maps lose key order), so we resolve scalars ourselves.

// Limits on what a 64 KiB frontmatter may expand to.
const (
	// maxDepth bounds collection nesting. Real frontmatter nests two or three
	// levels; the bound keeps rendering recursion small.
	maxDepth = 64
	// maxAliasNodes bounds the nodes produced by alias expansion, which is
	// where a small document can explode ("billion laughs").
	maxAliasNodes = 10000
	// maxJSONBytes bounds the rendered JSON. Without aliases a 64 KiB
	// frontmatter renders to at most a few times its size; aliases of long
	// strings are what could exceed this.
	maxJSONBytes = 1 << 20
)

// scalarKind is the JSON type a scalar resolves to.
type scalarKind uint8

const (
	kindNull scalarKind = iota
	kindBool
	kindNumber
	kindString
)

// scalar is a resolved YAML scalar.
type scalar struct {
	kind scalarKind
	str  string  // kindString
	b    bool    // kindBool
	num  float64 // kindNumber; may be ±Inf or NaN
}

// The YAML 1.2 core schema, as the JavaScript "yaml" library spells it.
var (
	nullRE   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?:~|[Nn]ull|NULL)?$`) })
	boolRE   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$`) })
	intDecRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[-+]?[0-9]+$`) })
	intOctRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^0o[0-7]+$`) })
	intHexRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^0x[0-9a-fA-F]+$`) })
	// floatRE needs a dot or an exponent: a bare integer is an int, and
	// !!float 1 is a string, as in the JavaScript library.
	floatRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*|(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+)$`)
	})
	floatInfRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[-+]?\.(?:inf|Inf|INF)$`) })
	floatNaNRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\.(?:nan|NaN|NAN)$`) })
)

// resolveScalar resolves a scalar node. An explicit tag wins; otherwise a
// quoted or block scalar is a string and a plain one is resolved by the core
// schema. The renderer has already refused unsupportedTags.
func resolveScalar(n *yaml.Node) scalar {
	// The YAML library checks its input encoding, but keep every string we
	// hand out (keys, values, JSON) identical and valid regardless.
	v := strings.ToValidUTF8(n.Value, "\uFFFD")
	switch {
	case n.Style&yaml.TaggedStyle != 0:
		return resolveTagged(n.Tag, v)
	case n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0:
		return scalar{kind: kindString, str: v}
	}
	return resolvePlain(v)
}

// isPlain reports whether n is an untagged, unquoted scalar: the kind whose
// type depends on how it looks.
func isPlain(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode &&
		n.Style&(yaml.TaggedStyle|yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) == 0
}

// resolvePlain resolves an unquoted, untagged scalar by the YAML 1.2 core
// schema. Dates, yes/no and on/off stay strings.
func resolvePlain(v string) scalar {
	if !mayBeNonString(v) {
		return scalar{kind: kindString, str: v}
	}
	for _, tag := range []string{"!!null", "!!bool", "!!int", "!!float"} {
		if s, ok := resolveAs(tag, v); ok {
			return s
		}
	}
	return scalar{kind: kindString, str: v}
}

// mayBeNonString reports whether a plain scalar could resolve to null, a
// bool or a number; most values (prose) cannot, and skip the regexps.
func mayBeNonString(v string) bool {
	if v == "" {
		return true
	}
	switch v[0] {
	case '~', '+', '-', '.', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return true
	case 'n', 'N', 't', 'T', 'f', 'F':
		return len(v) <= len("false")
	}
	return false
}

// resolveTagged resolves value v with an explicit tag. As in the JavaScript
// library, a value that does not have its core tag's form (!!int abc,
// !!float 1) and a value with a tag outside the core schema (!thing) are
// strings.
func resolveTagged(tag, v string) scalar {
	if s, ok := resolveAs(tag, v); ok {
		return s
	}
	return scalar{kind: kindString, str: v}
}

// unsupportedTags are tags the JavaScript library turns into values that
// JSON renders in ways of its own (a Date, a Buffer, a Set): we refuse them
// rather than publish frontmatter that clients would read differently.
var unsupportedTags = map[string]bool{
	"!!timestamp": true,
	"!!binary":    true,
	"!!set":       true,
	"!!omap":      true,
	"!!pairs":     true,
	"!!merge":     true,
}

// resolveAs resolves v as the core-schema type named by tag, reporting
// whether v has that type's form.
func resolveAs(tag, v string) (scalar, bool) {
	switch tag {
	case "!!null":
		if nullRE().MatchString(v) {
			return scalar{kind: kindNull}, true
		}
	case "!!bool":
		if boolRE().MatchString(v) {
			return scalar{kind: kindBool, b: v[0] == 't' || v[0] == 'T'}, true
		}
	case "!!int":
		switch {
		case intDecRE().MatchString(v):
			// Leading zeros are decimal in YAML 1.2 (010 is ten). Integers
			// beyond 2^53 round as they do in JavaScript numbers.
			return scalar{kind: kindNumber, num: parseDecimal(v)}, true
		case intOctRE().MatchString(v):
			return scalar{kind: kindNumber, num: parseRadix(v[2:], 8)}, true
		case intHexRE().MatchString(v):
			return scalar{kind: kindNumber, num: parseRadix(v[2:], 16)}, true
		}
	case "!!float":
		switch {
		case floatRE().MatchString(v):
			return scalar{kind: kindNumber, num: parseDecimal(v)}, true
		case floatInfRE().MatchString(v):
			return scalar{kind: kindNumber, num: math.Inf(signOf(v))}, true
		case floatNaNRE().MatchString(v):
			return scalar{kind: kindNumber, num: math.NaN()}, true
		}
	case "!!str":
		return scalar{kind: kindString, str: v}, true
	}
	return scalar{}, false
}

// parseDecimal parses a string already matched by intDecRE or floatRE.
// Out-of-range values become ±Inf (or 0), as in JavaScript.
func parseDecimal(v string) float64 {
	f, _ := strconv.ParseFloat(v, 64) // syntax was checked; ErrRange leaves ±Inf
	return f
}

// parseRadix parses unsigned digits in base 8 or 16 and rounds to the
// nearest float64.
func parseRadix(digits string, base int) float64 {
	i, ok := new(big.Int).SetString(digits, base)
	if !ok {
		return math.NaN() // unreachable: digits were checked by a regexp
	}
	f, _ := new(big.Float).SetInt(i).Float64()
	return f
}

func signOf(v string) int {
	if strings.HasPrefix(v, "-") {
		return -1
	}
	return 1
}

// jsNumber formats f as JavaScript's Number.prototype.toString does:
// integers below 1e21 without exponent, the shortest digits that round-trip,
// and exponent form outside [1e-7, 1e21). It returns "NaN", "Infinity" or
// "-Infinity" for non-finite values.
func jsNumber(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		return "0" // also -0
	}
	sign := ""
	if f < 0 {
		sign, f = "-", -f
	}
	// 'e' with precision -1 gives the shortest round-trip digits: d.ddde±x.
	mant, expStr, _ := strings.Cut(strconv.FormatFloat(f, 'e', -1, 64), "e")
	digits := strings.Replace(mant, ".", "", 1)
	exp, _ := strconv.Atoi(expStr)
	k, n := len(digits), exp+1 // n: position of the decimal point
	var s string
	switch {
	case k <= n && n <= 21:
		s = digits + strings.Repeat("0", n-k)
	case 0 < n && n <= 21:
		s = digits[:n] + "." + digits[n:]
	case -6 < n && n <= 0:
		s = "0." + strings.Repeat("0", -n) + digits
	default:
		e := n - 1
		esign := "+"
		if e < 0 {
			esign, e = "-", -e
		}
		s = digits[:1]
		if k > 1 {
			s += "." + digits[1:]
		}
		s += "e" + esign + strconv.Itoa(e)
	}
	return sign + s
}

// appendJSONNumber appends f as JSON.stringify would: NaN and ±Inf are null.
func appendJSONNumber(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	return append(b, jsNumber(f)...)
}

// appendJSONString appends s as a JSON string, escaping as JSON.stringify
// does. Invalid UTF-8 becomes U+FFFD so the output is always valid JSON.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\b':
				b = append(b, `\b`...)
			case c == '\f':
				b = append(b, `\f`...)
			case c == '\n':
				b = append(b, `\n`...)
			case c == '\r':
				b = append(b, `\r`...)
			case c == '\t':
				b = append(b, `\t`...)
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, `\ufffd`...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

// keyString is the property name a mapping key becomes in JavaScript:
// String(key), with null as "".
func keyString(s scalar) string {
	switch s.kind {
	case kindNull:
		return ""
	case kindBool:
		return strconv.FormatBool(s.b)
	case kindNumber:
		return jsNumber(s.num)
	}
	return s.str
}

// renderer builds JSON from a node tree within the limits above.
type renderer struct {
	buf     []byte
	path    []*yaml.Node // collections being rendered, to catch recursive aliases
	inAlias int          // > 0 while expanding an alias
	aliased int          // nodes produced by alias expansion so far
}

// fail builds a *ParseError located at n.
func fail(n *yaml.Node, format string, args ...any) error {
	return &ParseError{Line: n.Line + lineOffset, Msg: fmt.Sprintf(format, args...)}
}

// value appends the JSON for n at nesting depth (the number of enclosing
// collections).
func (r *renderer) value(n *yaml.Node, depth int) error {
	if r.inAlias > 0 {
		r.aliased++
		if r.aliased > maxAliasNodes {
			return fail(n, "aliases expand to more than %d nodes; remove the anchors and aliases", maxAliasNodes)
		}
	}
	if len(r.buf) > maxJSONBytes {
		return fail(n, "frontmatter expands to more than %d bytes of JSON; remove the anchors and aliases", maxJSONBytes)
	}
	if n.Style&yaml.TaggedStyle != 0 && unsupportedTags[n.Tag] {
		return fail(n, "tag %s is not supported in frontmatter; remove it", n.Tag)
	}
	switch n.Kind {
	case yaml.AliasNode:
		t := n.Alias
		if t == nil {
			return fail(n, "alias *%s has no anchor", n.Value)
		}
		for _, p := range r.path {
			if p == t {
				return fail(n, "alias *%s refers to a collection that contains it", n.Value)
			}
		}
		r.inAlias++
		err := r.value(t, depth)
		r.inAlias--
		return err
	case yaml.ScalarNode:
		s := resolveScalar(n)
		switch s.kind {
		case kindNull:
			r.buf = append(r.buf, "null"...)
		case kindBool:
			r.buf = strconv.AppendBool(r.buf, s.b)
		case kindNumber:
			r.buf = appendJSONNumber(r.buf, s.num)
		default:
			r.buf = appendJSONString(r.buf, s.str)
		}
		return nil
	case yaml.SequenceNode:
		if depth >= maxDepth {
			return fail(n, "frontmatter nests deeper than %d levels", maxDepth)
		}
		r.path = append(r.path, n)
		r.buf = append(r.buf, '[')
		for i, c := range n.Content {
			if i > 0 {
				r.buf = append(r.buf, ',')
			}
			if err := r.value(c, depth+1); err != nil {
				return err
			}
		}
		r.buf = append(r.buf, ']')
		r.path = r.path[:len(r.path)-1]
		return nil
	case yaml.MappingNode:
		if depth >= maxDepth {
			return fail(n, "frontmatter nests deeper than %d levels", maxDepth)
		}
		if len(n.Content)%2 != 0 {
			return fail(n, "mapping has a key without a value")
		}
		r.path = append(r.path, n)
		r.buf = append(r.buf, '{')
		seen := make(map[string]bool, len(n.Content)/2)
		for i := 0; i < len(n.Content); i += 2 {
			k, err := r.key(n.Content[i], seen)
			if err != nil {
				return err
			}
			if i > 0 {
				r.buf = append(r.buf, ',')
			}
			r.buf = appendJSONString(r.buf, k)
			r.buf = append(r.buf, ':')
			if err := r.value(n.Content[i+1], depth+1); err != nil {
				return err
			}
		}
		r.buf = append(r.buf, '}')
		r.path = r.path[:len(r.path)-1]
		return nil
	}
	return fail(n, "unexpected YAML node")
}

// key returns the property name for the mapping key n and records it in
// seen. Keys must be scalars, and two keys must not name the same property.
// A merge key "<<" is an ordinary key: YAML 1.2 has no merge keys.
func (r *renderer) key(n *yaml.Node, seen map[string]bool) (string, error) {
	kn := n
	if kn.Kind == yaml.AliasNode && kn.Alias != nil {
		kn = kn.Alias
	}
	if kn.Style&yaml.TaggedStyle != 0 && unsupportedTags[kn.Tag] {
		return "", fail(n, "tag %s is not supported in frontmatter; remove it", kn.Tag)
	}
	if kn.Kind != yaml.ScalarNode {
		return "", fail(n, "mapping keys must be strings, not collections")
	}
	k := keyString(resolveScalar(kn))
	if seen[k] {
		return "", fail(n, "duplicate key %s; each key may appear once", quoteShort(k))
	}
	seen[k] = true
	return k, nil
}

// quoteShort quotes s for a message, shortening it past 64 characters.
func quoteShort(s string) string {
	const max = 64
	if utf8.RuneCountInString(s) > max {
		rs := []rune(s)
		s = string(rs[:max]) + "…"
	}
	return strconv.Quote(s)
}
