// Package check is a client-side conformance and safety checker for servers
// of the MCP Skills extension (SEP-2640). It connects to any skills server,
// once at protocol revision 2026-07-28 and once at 2025-11-25, and checks
// every server rule of the stable specification that a client can observe
// on the wire: the capability declaration, the methods, the shape of every
// entry, the frontmatter against the served SKILL.md, the manifest against
// a directory walk, digests and sizes recomputed from the bytes read, URIs,
// names, limits, pagination, the errors for unknown URIs and the cache
// fields of each revision, and every message the server sends against the
// MCP JSON schema of the negotiated revision. A server that also serves the superseded
// skill://index.json is checked against that draft, archives included.
//
// Every check is bounded: each request has a timeout, and pages, entries,
// directory children and bytes read are capped, so a server that hangs,
// answers garbage, sends enormous pages or loops its cursors gets a FAIL
// that names the cause instead of a hung checker.
//
// Results are one line per check: PASS, FAIL, WARN or SKIP, the check id
// ([Checks] lists them with their clauses) and a message. When the server
// is the skills-mcp adversarial research profile, [Report.Fixtures] pairs
// each fixture's documented oracle with what the checks saw.
package check

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skills-mcp/skills-mcp/internal/adversarial/oracle"
)

// Status is the outcome of one check.
type Status string

// Statuses, from best to worst. A FAIL breaks a MUST; a WARN breaks a
// SHOULD or a limit, or marks what cannot be verified; a SKIP says what was
// not checked and why.
const (
	Pass Status = "PASS"
	Skip Status = "SKIP"
	Warn Status = "WARN"
	Fail Status = "FAIL"
)

// Result is one line of a report.
type Result struct {
	Status Status `json:"status"`
	// ID names the check; Clause is the rule it checks (see Checks).
	ID     string `json:"id"`
	Clause string `json:"clause"`
	// Subject is what the result is about: a URI, or a method.
	Subject string `json:"subject,omitempty"`
	Message string `json:"message"`
	// Version is the protocol revision of the connection the check ran on.
	Version string `json:"protocolVersion,omitempty"`
}

// Report is the outcome of a run.
type Report struct {
	// Server is what the server said it is, from its first connection.
	Server *mcp.Implementation `json:"server,omitempty"`
	// Versions are the protocol revisions the connections negotiated.
	Versions []string `json:"protocolVersions"`
	Results  []Result `json:"results"`
	// Fixtures are the adversarial fixtures the server's entries carry,
	// with their oracle and what check saw of each.
	Fixtures []Oracle `json:"fixtures,omitempty"`
}

// Failed reports whether any result is a FAIL.
func (r *Report) Failed() bool {
	return slices.ContainsFunc(r.Results, func(x Result) bool { return x.Status == Fail })
}

// Count returns how many results have status st.
func (r *Report) Count(st Status) int {
	n := 0
	for _, x := range r.Results {
		if x.Status == st {
			n++
		}
	}
	return n
}

// Defaults for Options fields left zero.
const (
	DefaultTimeout       = 10 * time.Second
	DefaultMaxPages      = 10000
	DefaultMaxEntries    = 10000
	DefaultMaxFileBytes  = 16 << 20
	DefaultMaxTotalBytes = 256 << 20
	DefaultMaxDirEntries = 10000
	// DefaultMaxMessageBytes bounds one message over the transports HTTP
	// and Command build: a 16 MiB file, base64-encoded, with room to spare.
	DefaultMaxMessageBytes = 32 << 20
)

// Fixed bounds and probes.
const (
	maxPagesPerDirectory    = 1000
	maxDirectoryDepth       = 32
	maxLinesPerCheck        = 25
	maxVerifiedWhenEndless  = 1000
	maxCursorProbes         = 10
	maxLegacyArchiveEntries = 10000
	newestVersion           = "2026-07-28"
	previousVersion         = "2025-11-25"
	// nonexistentSkillPath names a skill no server serves, for the -32602
	// probes.
	nonexistentSkillPath = "skills-mcp-check-nonexistent-5f1d"
)

// testerMetaKey carries Options.Tester on every resources/read.
const testerMetaKey = oracle.TesterMetaKey

// Options bounds and tunes a run. A nil *Options means defaults.
type Options struct {
	// Timeout bounds every request, connecting included. If zero,
	// DefaultTimeout.
	Timeout time.Duration
	// ConnectTimeout bounds connecting (the initialize handshake) alone.
	// If zero, Timeout.
	ConnectTimeout time.Duration
	// MaxPages bounds the pages of one listing; a listing still going
	// after that many pages fails list-terminates. If zero,
	// DefaultMaxPages.
	MaxPages int
	// MaxEntries bounds the entries collected from skills/list. If zero,
	// DefaultMaxEntries.
	MaxEntries int
	// MaxFileBytes is the largest file read; larger declared sizes are
	// skipped. If zero, DefaultMaxFileBytes (the 16 MiB a skill may hold).
	MaxFileBytes int64
	// MaxTotalBytes bounds all the bytes read in a run. If zero,
	// DefaultMaxTotalBytes.
	MaxTotalBytes int64
	// MaxDirEntries bounds the children a directory walk of one skill
	// collects. If zero, DefaultMaxDirEntries.
	MaxDirEntries int
	// PageSizeProbe also probes pagination: an invalid cursor, a second
	// listing, and listings resumed from the first cursors.
	PageSizeProbe bool
	// Tester is the rotation scope sent with every resources/read under
	// _meta["io.github.skills-mcp/tester"], so that servers which rotate
	// content per tester (the adversarial profile) count this run's reads
	// on their own. If empty, a random id.
	Tester string
	// Versions are the protocol revisions to connect with, in order. The
	// first connection runs every check; later ones check the capability,
	// the listing, skills/get and that re-reads return the same bytes. If
	// empty, 2026-07-28 then 2025-11-25.
	Versions []string
}

func (o *Options) withDefaults() Options {
	var v Options
	if o != nil {
		v = *o
	}
	v.Timeout = cmp.Or(v.Timeout, DefaultTimeout)
	v.ConnectTimeout = cmp.Or(v.ConnectTimeout, v.Timeout)
	v.MaxPages = cmp.Or(v.MaxPages, DefaultMaxPages)
	v.MaxEntries = cmp.Or(v.MaxEntries, DefaultMaxEntries)
	v.MaxFileBytes = cmp.Or(v.MaxFileBytes, DefaultMaxFileBytes)
	v.MaxTotalBytes = cmp.Or(v.MaxTotalBytes, DefaultMaxTotalBytes)
	v.MaxDirEntries = cmp.Or(v.MaxDirEntries, DefaultMaxDirEntries)
	if v.Tester == "" {
		var b [8]byte
		rand.Read(b[:])
		v.Tester = "skills-mcp-check-" + hex.EncodeToString(b[:])
	}
	if len(v.Versions) == 0 {
		v.Versions = []string{newestVersion, previousVersion}
	}
	return v
}

// Dialer returns a new transport to the server for each connection.
type Dialer func(ctx context.Context) (mcp.Transport, error)

// Run checks the server that dial reaches and returns the report. It never
// fails: a server that cannot be reached, or breaks off, is a FAIL in the
// report. When ctx ends with a cause (context.WithTimeoutCause, as the
// CLI's overall deadline does), Run stops at once and the report says why.
// Run is safe to call concurrently.
func Run(ctx context.Context, dial Dialer, opts *Options) *Report {
	c := &checker{opts: opts.withDefaults(), rec: newRecorder()}
	rep := &Report{Versions: []string{}}
	var first *listing
	for i, v := range c.opts.Versions {
		c.rec.conn = i
		if cause := stoppedBy(ctx); cause != nil {
			c.rec.add(Skip, "connect", v, "", "not connected: the run was stopped: %v", cause)
			continue
		}
		s := c.connect(ctx, dial, v)
		if s == nil {
			continue
		}
		if rep.Server == nil {
			rep.Server = s.cs.InitializeResult().ServerInfo
		}
		rep.Versions = append(rep.Versions, s.version)
		if first == nil {
			first = c.full(ctx, s)
		} else {
			c.again(ctx, s, first)
		}
		c.wireResults(s)
		s.close()
	}
	rep.Results = c.rec.finish()
	if first != nil {
		rep.Fixtures = oracles(first, rep.Results)
	}
	return rep
}

// checker holds the state of one run.
type checker struct {
	opts Options
	rec  *recorder
	// read is the number of bytes read so far.
	read int64
}

// full runs every check on the first connection and returns the listing,
// with the SKILL.md bytes it read.
func (c *checker) full(ctx context.Context, s *session) *listing {
	caps := c.capabilities(s)
	l := &listing{}
	if !caps.extension {
		c.rec.add(Skip, "list-implemented", s.version, "", "the server does not declare the Skills extension, so no skills method is called (hosts call them only after the declaration, H2)")
		return l
	}
	c.phases(s,
		func() { l = c.list(ctx, s) },
		func() { c.entryChecks(l, s.version) },
		func() { c.gets(ctx, s, l) },
		func() { c.probes(ctx, s, l, caps) },
		func() { c.reads(ctx, s, l) },
		func() { c.frontmatters(l, s.version) },
		func() {
			if caps.directoryRead {
				c.directories(ctx, s, l)
			} else {
				c.rec.add(Skip, "directory-walk", s.version, "", "the server does not declare directoryRead, so resources/directory/read and manifest completeness against it are not checked")
			}
		},
		func() { c.legacy(ctx, s, l) },
		func() {
			if c.opts.PageSizeProbe {
				c.cursorProbe(ctx, s, l)
			}
		},
	)
	return l
}

// again runs the checks of a later connection: the declaration, the
// listing and skills/get at this revision, and re-reads of every SKILL.md
// read on the first connection.
func (c *checker) again(ctx context.Context, s *session, first *listing) {
	if !c.capabilities(s).extension {
		return
	}
	l := &listing{}
	c.phases(s,
		func() { l = c.list(ctx, s) },
		func() {
			if len(l.entries) > 0 && l.entries[0].valid {
				c.get(ctx, s, l.entries[0])
			}
		},
		func() { c.rereads(ctx, s, first) },
	)
}

// phases runs the phases of a connection in order, and stops with one line
// once the connection broke, instead of a failure per remaining request.
func (c *checker) phases(s *session, phases ...func()) {
	for _, p := range phases {
		if s.dead != nil {
			c.rec.add(Skip, "connect", s.version, "", "the remaining checks of this connection did not run: %v", s.dead)
			return
		}
		p()
	}
}

// Check describes one check.
type Check struct {
	ID     string `json:"id"`
	Clause string `json:"clause"`
	Title  string `json:"title"`
}

// checks is the catalog, in report order. Clause ids are those of the
// normative checklist of the stable specification (S# server rules, F#
// Agent Skills frontmatter rules, § sections of the research notes).
var checks = []Check{
	{"connect", "§1.1", "connects and negotiates a protocol revision"},
	{"wire-schema", "MCP schema of the revision", "every message the server sends is valid against the MCP JSON schema of the negotiated revision (extension results against SEP-2640's shapes)"},
	{"capability-declared", "S1", "capabilities.extensions declares io.modelcontextprotocol/skills"},
	{"capability-inline", "S1", "the settings object sits directly under the identifier; directoryRead is a boolean"},
	{"capability-resources", "S2", "the resources capability is declared too"},
	{"list-implemented", "S3", "skills/list answers with a skills array"},
	{"list-terminates", "S24", "pagination ends, without a repeated cursor, within the page cap"},
	{"list-entry-atomic", "S24", "no entry appears twice in one listing"},
	{"list-result-type", "S25", `skills/list, skills/get and resources/directory/read carry resultType "complete"`},
	{"cache-fields", "S26, S29, S32", "ttlMs and cacheScope on 2026-07-28 results; one cacheScope per listing"},
	{"entry-shape", "S15, S20", `every entry has uri, a frontmatter object and resources (an array or "dynamic")`},
	{"entry-uri-scheme", "S8; file: not in spec (D4)", "entry URIs use skill:// (never file:)"},
	{"entry-uri-grammar", "S9, S11, §1.3", "entry URIs end in /SKILL.md and parse as skill URIs"},
	{"entry-name", "S9, F3–F8", "frontmatter name follows the naming rules and equals the final skill-path segment"},
	{"entry-description", "S7, F9", "frontmatter description is a non-blank string of at most 1024 characters"},
	{"authority-reg-name", "S10", "the URI authority is an RFC 3986 reg-name"},
	{"names-unique", "S22", "names are unique within the listing"},
	{"metadata-reserved-prefix", "S14", "no frontmatter metadata key under the reserved io.modelcontextprotocol/ prefix"},
	{"resources-self", "S17", "resources holds exactly one element equal to the entry uri"},
	{"resources-unique", "S17", "resources lists each file once"},
	{"resources-within", "S18", "every resources uri lies inside its skill"},
	{"resources-digest-format", "S19", "every element has a sha256:<64 hex> digest and an integer size"},
	{"limits", "S21", "at most 512 files and 16 MiB per skill"},
	{"get-implemented", "S4", "skills/get answers"},
	{"get-shape", "S28, S29", "skills/get of a listed skill returns the same entry, uri echoed, without nextCursor"},
	{"get-unknown", "S27", "skills/get answers -32602 for an unknown skill, a supporting file and a directory"},
	{"read-files", "S19, S31", "every listed file reads back as one content item of the listed size and digest"},
	{"read-stable", "S30, S31", "a later read of SKILL.md, on another connection, returns the same bytes"},
	{"read-unknown", "S31, §1.11", "resources/read answers -32602 for an unknown skill URI"},
	{"skillmd-frontmatter", "S7, F1–F2", "the served SKILL.md starts with a frontmatter that parses, with name and description"},
	{"frontmatter-identical", "S16", "entry frontmatter equals the served SKILL.md frontmatter, key by key"},
	{"skillmd-mimetype", "S12", "SKILL.md is served as text/markdown"},
	{"directory-implemented", "S5", "resources/directory/read answers for every skill root"},
	{"directory-walk", "S11, S34", "directory results hold direct children only, directories marked inode/directory, and end"},
	{"directory-invalid", "S33", "resources/directory/read answers -32602 for a file and for an unknown URI"},
	{"resources-complete", "S17, S34", "resources lists exactly the files a directory walk of the skill finds"},
	{"list-cursor-probe", "S24, §1.11", "an invalid cursor gives -32602; listings resumed from a cursor continue it exactly"},
	{"legacy-index", "§1.14 (superseded draft)", "skill://index.json, when served, has the draft's shape, digests and distinct names"},
	{"legacy-archives", "§1.14 (superseded draft)", "archives match their digest, hold SKILL.md at the root and the index frontmatter"},
	{"legacy-archive-safety", "deferred draft Archives MUSTs; Den C1", "archive entries are relative and clean, not links, bounded, regular and distinct"},
	{"legacy-archive-content", "Den B2(2); H10", "archive files equal the live files the skill lists"},
}

// Checks returns the catalog of checks in report order.
func Checks() []Check { return slices.Clone(checks) }

func clauseOf(id string) string {
	for _, ch := range checks {
		if ch.ID == id {
			return ch.Clause
		}
	}
	panic("check: unknown check id " + id)
}

func orderOf(id string) int {
	return slices.IndexFunc(checks, func(ch Check) bool { return ch.ID == id })
}

// recorder collects results. Checks report their failures, warnings and
// skips as they find them and count what passed; finish turns the counts
// into one PASS line per check and connection that found nothing wrong.
type recorder struct {
	conn    int
	results []ordered
	passed  map[recKey]int
	bad     map[recKey]bool
	lines   map[recKey]int
	dropped map[recKey]int
}

type recKey struct {
	id      string
	version string
	conn    int
}

type ordered struct {
	Result
	conn, seq int
}

func newRecorder() *recorder {
	return &recorder{passed: map[recKey]int{}, bad: map[recKey]bool{}, lines: map[recKey]int{}, dropped: map[recKey]int{}}
}

// ok counts one subject that passed check id.
func (r *recorder) ok(id, version string) {
	clauseOf(id)
	r.passed[recKey{id, version, r.conn}]++
}

// add records a non-PASS result. Each check keeps at most
// maxLinesPerCheck lines per connection; the rest are counted.
func (r *recorder) add(st Status, id, version, subject, format string, args ...any) {
	k := recKey{id, version, r.conn}
	if st == Fail || st == Warn {
		r.bad[k] = true
	}
	if r.lines[k] >= maxLinesPerCheck {
		r.dropped[k]++
		return
	}
	r.lines[k]++
	msg := fmt.Sprintf(format, args...)
	if subject != "" {
		msg = subject + ": " + msg
	}
	r.results = append(r.results, ordered{Result{Status: st, ID: id, Clause: clauseOf(id), Subject: subject, Message: msg, Version: version}, r.conn, len(r.results)})
}

// finish returns the results in report order.
func (r *recorder) finish() []Result {
	out := slices.Clone(r.results)
	for k, n := range r.passed {
		if r.bad[k] {
			continue
		}
		title := checks[orderOf(k.id)].Title
		out = append(out, ordered{Result{Status: Pass, ID: k.id, Clause: clauseOf(k.id), Message: fmt.Sprintf("%s (%d checked)", title, n), Version: k.version}, k.conn, -1})
	}
	for k, n := range r.dropped {
		worst := Skip
		if r.bad[k] {
			worst = Warn
			for _, x := range r.results {
				if x.ID == k.id && x.conn == k.conn && x.Status == Fail {
					worst = Fail
				}
			}
		}
		out = append(out, ordered{Result{Status: worst, ID: k.id, Clause: clauseOf(k.id), Message: fmt.Sprintf("… and %d more results of this check", n), Version: k.version}, k.conn, 1 << 30})
	}
	slices.SortStableFunc(out, func(a, b ordered) int {
		return cmp.Or(cmp.Compare(a.conn, b.conn), cmp.Compare(orderOf(a.ID), orderOf(b.ID)), cmp.Compare(a.seq, b.seq))
	})
	res := make([]Result, len(out))
	for i, x := range out {
		res[i] = x.Result
	}
	return res
}
