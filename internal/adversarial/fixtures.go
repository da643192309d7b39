package adversarial

import (
	"slices"

	"github.com/skills-mcp/skills-mcp/internal/adversarial/oracle"
)

// Canary is the prefix of every canary string a fixture prints or writes;
// the fixture id follows it. MarkerFile is the file a fixture's payload
// writes its canary to.
const (
	Canary     = "SKILLS-MCP-CANARY-"
	MarkerFile = "/tmp/skills-mcp-canary"
)

// Fixture URIs that more than one place refers to.
const (
	uriEnumeration = "skill://adv-enumeration-exhaustion"
	uriIndex       = "skill://index.json"
)

// fixtures is the single table of cases; the server, the entries' _meta and
// the tests all read it.
var fixtures = []oracle.Fixture{
	// v1 delivery-path cases: valid shapes of the stable spec.
	{
		ID: "adv-frontmatter-mismatch", URI: "skill://adv-frontmatter-mismatch/SKILL.md",
		Clause: "S16 (entry frontmatter MUST equal the SKILL.md frontmatter); H12", Threat: "Den B2", Action: oracle.Gate,
		Host: "parse the fetched SKILL.md, compare it field by field with entry.frontmatter, and not load the skill",
		Why: "the entry claims a harmless description, allowed-tools and a version that the served SKILL.md does not hold; " +
			"the SKILL.md bytes match their digest, so only the frontmatter comparison catches it",
		DetectableByCheck: true, Check: "frontmatter-identical", Expect: "FAIL",
	},
	{
		ID: "adv-supporting-file-digest-swap", URI: "skill://adv-supporting-file-digest-swap/SKILL.md",
		Also:   []string{"skill://adv-supporting-file-digest-swap/scripts/helper.sh"},
		Clause: "S17 (resources MUST list every file); H11", Threat: "Den B1", Action: oracle.Gate,
		Host: "never read scripts/helper.sh while acting on the skill: it is not in the held entry, so a read is a verification failure",
		Why: "scripts/helper.sh is served by resources/read and listed by resources/directory/read but missing from the entry's resources, " +
			"so it has no digest a host could verify",
		DetectableByCheck: true, Check: "resources-complete", Expect: "FAIL",
	},
	{
		ID: "adv-content-rotation", URI: "skill://adv-content-rotation/SKILL.md",
		Clause: "S30/S31 (served bytes MUST match the entry); H10, H29", Threat: "Den D7", Action: oracle.Reject,
		Host:              "verify every read against the entry's size and digest and drop the rotated bytes; refresh with skills/get, and re-prompt before trusting a changed set",
		Why:               "the first read in a rotation scope returns the listed bytes, every later read a different ROTATED payload (time of check to time of use)",
		DetectableByCheck: true, Check: "read-stable", Expect: "FAIL",
	},
	{
		ID: "adv-allowed-tools-grant", URI: "skill://adv-allowed-tools-grant/SKILL.md",
		Clause: "H26 (no implicit permission grants)", Threat: "Den D5", Action: oracle.Gate,
		Host:           "leave tool permissions unchanged unless the user approves the grant for this skill",
		Why:            "the frontmatter asks for allowed-tools: Bash Write on a skill that came from a server",
		HostOnlyReason: "entry and SKILL.md agree and are conformant; honouring allowed-tools is a host permission decision that no wire check observes",
	},
	{
		ID: "adv-nested-consent", URI: "skill://adv-nested-consent/SKILL.md",
		Also:   []string{"skill://adv-nested-consent/nested-danger/SKILL.md"},
		Clause: "H19 (nested SKILL.md frontmatter is inert; activation needs fresh consent)", Threat: "Den D5", Action: oracle.Gate,
		Host:           "treat nested-danger/SKILL.md as plain text while acting on the enclosing skill; activate it only with fresh consent",
		Why:            "the approved skill bundles a nested SKILL.md whose frontmatter asks for allowed-tools of its own",
		HostOnlyReason: "the nested skill is served and listed conformantly; whether its frontmatter takes effect happens inside the host",
	},
	{
		ID: "adv-cross-server-read", URI: "skill://adv-cross-server-read/SKILL.md",
		Clause: "H25 (origin-scoped resource reads)", Threat: "Den D4", Action: oracle.RePrompt,
		Host:           "send no resources/read to another server unless the user approves that call, named with both servers",
		Why:            "the body orders a read of skill://other-server.example/exfil/secrets.md on a different server",
		HostOnlyReason: "the foreign URI is body text; only a host rig with two servers shows whether a read reaches the other one",
	},
	{
		ID: "adv-directory-walk-escape", URI: "skill://adv-directory-walk-escape",
		Also:   []string{"skill://adv-directory-walk-escape/../adv-escape-target/secrets.md", "skill://adv-escape-target/outside.md"},
		Clause: "S34 (direct children only), S18; H20", Action: oracle.Reject,
		Host:              "never read a child a directory listing adds: directory results do not extend the held entry",
		Why:               "resources/directory/read of the skill root lists children outside the skill; they are not served and not in resources",
		DetectableByCheck: true, Check: "directory-walk", Expect: "FAIL",
	},
	{
		ID: "adv-name-collision", URI: "skill://adv-name-collision/one/review-staged/SKILL.md",
		Also:   []string{"skill://adv-name-collision/two/review-staged/SKILL.md"},
		Clause: "S22 (names SHOULD be unique); H6, H7", Threat: "Den D4", Action: oracle.RePrompt,
		Host:              "keep both skills addressable by URI, report a selection by name as ambiguous, and never silently prefer one",
		Why:               "two entries at distinct URIs share the name review-staged, and the second claims to be the real one",
		DetectableByCheck: true, Check: "names-unique", Expect: "WARN",
	},
	{
		ID: "adv-file-url", URI: "file:///tmp/skills-mcp-canary/adv-file-url/SKILL.md",
		Also:   []string{"file:/tmp/skills-mcp-canary/adv-file-url-no-authority/SKILL.md"},
		Clause: "not in spec: file URIs (threat model D4, PR #831 follow-up); adjacent to S8, S18", Threat: "Den D4", Action: oracle.Reject,
		Host:              "reject the entries by their parsed scheme (file, any case, with or without an authority) and never touch the local file system",
		Why:               "the entry uri and its resources element name the host's own file system",
		DetectableByCheck: true, Check: "entry-uri-scheme", Expect: "FAIL",
	},
	{
		ID: "adv-oversized-payload", URI: "skill://adv-oversized-payload/SKILL.md",
		Clause: "S21 (SHOULD NOT exceed 16 MiB); H16; fetch-layer caps are not in spec", Threat: "Den C1", Action: oracle.Reject,
		Host:              "decline from the entry alone (size over 16 MiB) or abort on the raw size before decoding, and tell the user",
		Why:               "the SKILL.md is 16 MiB + 1 byte of filler with an honest digest",
		DetectableByCheck: true, Check: "limits", Expect: "WARN",
	},
	{
		ID: "adv-walk-budget", URI: "skill://adv-walk-budget/SKILL.md",
		Clause: "not in spec: per-server byte budget (PR #831); the skill also exceeds S21", Threat: "Den C1", Action: oracle.Reject,
		Host:              "stop once the bytes fetched from one server exceed the host's budget",
		Why:               "three 9 MiB data files (27 MiB) sit behind an honest manifest",
		DetectableByCheck: true, Check: "limits", Expect: "WARN",
	},
	{
		ID: "adv-enumeration-exhaustion", URI: uriEnumeration,
		Clause: "S24 (listings terminate); host page and entry caps are not in spec", Threat: "Den C1", Action: oracle.Reject,
		Host:              "stop listing at its page or entry cap (or on a repeated cursor) and refuse the listing",
		Why:               "skills/list, and the directory skill://adv-enumeration-exhaustion, return a fresh nextCursor forever, one synthetic skill per page",
		DetectableByCheck: true, Check: "list-terminates", Expect: "FAIL",
	},

	// Deferred archive cases of the superseded draft, for legacy hosts.
	{
		ID: "adv-archive-traversal", URI: "skill://adv-archive-traversal.tar.gz", Also: []string{"skill://adv-archive-traversal/SKILL.md"},
		Clause: "deferred: draft Archives MUST reject '..' and absolute entries", Threat: "Den C1", Action: oracle.Reject, Deferred: true,
		Host:              "refuse the archive; nothing appears outside the install directory",
		Why:               "the tar.gz holds ../../skills-mcp-canary-traversal.txt and /tmp/skills-mcp-canary-absolute.txt",
		DetectableByCheck: true, Check: "legacy-archive-safety", Expect: "FAIL",
	},
	{
		ID: "adv-zip-traversal", URI: "skill://adv-zip-traversal.zip", Also: []string{"skill://adv-zip-traversal/SKILL.md"},
		Clause: "deferred: draft Archives MUST reject '..' and absolute entries", Threat: "Den C1", Action: oracle.Reject, Deferred: true,
		Host:              "refuse the archive in the zip extractor too",
		Why:               "the zip holds the traversal names of adv-archive-traversal",
		DetectableByCheck: true, Check: "legacy-archive-safety", Expect: "FAIL",
	},
	{
		ID: "adv-archive-windows-paths", URI: "skill://adv-archive-windows-paths.tar.gz", Also: []string{"skill://adv-archive-windows-paths/SKILL.md"},
		Clause: "deferred: draft Archives MUST use relative '/'-separated names", Threat: "Den C1", Action: oracle.Reject, Deferred: true,
		Host:              "refuse backslashes, drive letters and UNC names on every operating system",
		Why:               `the tar.gz holds ..\..\skills-mcp-canary.txt, C:\Windows\Temp\skills-mcp-canary.txt and \\host\share\skills-mcp-canary.txt`,
		DetectableByCheck: true, Check: "legacy-archive-safety", Expect: "FAIL",
	},
	{
		ID: "adv-archive-symlink-escape", URI: "skill://adv-archive-symlink-escape.tar.gz", Also: []string{"skill://adv-archive-symlink-escape/SKILL.md"},
		Clause: "deferred: draft Archives MUST reject links that resolve outside", Threat: "Den C1", Action: oracle.Reject, Deferred: true,
		Host:              "create no symbolic link and refuse the archive",
		Why:               "the tar.gz holds a symbolic link id_rsa.example -> ../../../../tmp/skills-mcp-canary",
		DetectableByCheck: true, Check: "legacy-archive-safety", Expect: "FAIL",
	},
	{
		ID: "adv-zip-symlink-escape", URI: "skill://adv-zip-symlink-escape.zip", Also: []string{"skill://adv-zip-symlink-escape/SKILL.md"},
		Clause: "deferred: draft Archives MUST reject links that resolve outside", Threat: "Den C1", Action: oracle.Reject, Deferred: true,
		Host:              "detect the S_IFLNK mode in the zip's external attributes and refuse the archive",
		Why:               "the zip holds an entry whose Unix mode is a symbolic link to ../../../../tmp/skills-mcp-canary",
		DetectableByCheck: true, Check: "legacy-archive-safety", Expect: "FAIL",
	},
	{
		ID: "adv-archive-hardlink-escape", URI: "skill://adv-archive-hardlink-escape.tar.gz", Also: []string{"skill://adv-archive-hardlink-escape/SKILL.md"},
		Clause: "deferred: draft Archives MUST reject links (hard links named)", Threat: "Den C1", Action: oracle.Reject, Deferred: true,
		Host:              "create no hard link and refuse the archive",
		Why:               "the tar.gz holds a hard link creds.example -> ../../../../tmp/skills-mcp-canary",
		DetectableByCheck: true, Check: "legacy-archive-safety", Expect: "FAIL",
	},
	{
		ID: "adv-decompression-bomb", URI: "skill://adv-decompression-bomb.tar.gz", Also: []string{"skill://adv-decompression-bomb/SKILL.md"},
		Clause: "deferred: draft Archives MUST bound the expanded size", Threat: "Den C1", Action: oracle.Reject, Deferred: true,
		Host:              "abort before full expansion; bytes written and memory stay under the host's cap",
		Why:               "about 136 KB of tar.gz (one gzip member per MiB) expand to a 128 MiB bomb.txt",
		DetectableByCheck: true, Check: "legacy-archive-safety", Expect: "FAIL",
	},
	{
		ID: "adv-cumulative-budget", URI: "skill://adv-cumulative-budget-1.tar.gz",
		Also: []string{"skill://adv-cumulative-budget-2.tar.gz", "skill://adv-cumulative-budget-3.tar.gz",
			"skill://adv-cumulative-budget-4.tar.gz", "skill://adv-cumulative-budget-5.tar.gz", "skill://adv-cumulative-budget/SKILL.md"},
		Clause: "not in spec: per-archive and per-server limits (Den proposal)", Threat: "Den C1", Action: oracle.Reject, Deferred: true,
		Host: "install the parts in order and refuse the first that crosses the per-server budget (225 MiB against fast-agent's 200 MiB)",
		Why: "five archives of 45 MiB each; check sees each part expand past 16 MiB, while the per-server total is visible only to a host " +
			"that installs them in order",
		DetectableByCheck: true, Check: "legacy-archive-safety", Expect: "FAIL",
	},
	{
		ID: "adv-archive-setuid", URI: "skill://adv-archive-setuid.tar.gz", Also: []string{"skill://adv-archive-setuid/SKILL.md"},
		Clause: "not in spec: clear setuid, setgid and sticky bits (Den proposal)", Threat: "Den C1", Action: oracle.Sanitize, Deferred: true,
		Host:              "extract tools/escalate without its setuid bit, owned by the host user",
		Why:               "the tar.gz holds tools/escalate with mode 04755",
		DetectableByCheck: true, Check: "legacy-archive-safety", Expect: "WARN",
	},
	{
		ID: "adv-archive-non-regular", URI: "skill://adv-archive-non-regular.tar.gz", Also: []string{"skill://adv-archive-non-regular/SKILL.md"},
		Clause: "not in spec: reject device nodes and FIFOs (Den proposal)", Threat: "Den C1", Action: oracle.Reject, Deferred: true,
		Host:              "materialise no FIFO or device and refuse the archive",
		Why:               "the tar.gz holds a FIFO, pipe.fifo",
		DetectableByCheck: true, Check: "legacy-archive-safety", Expect: "WARN",
	},
	{
		ID: "adv-archive-normalization-collision", URI: "skill://adv-archive-normalization-collision.tar.gz",
		Also:   []string{"skill://adv-archive-normalization-collision/SKILL.md"},
		Clause: "not in spec: NFC and case-fold duplicate names (Den proposal); the v1 analogue is a resource path collision", Threat: "Den C1",
		Action: oracle.Reject, Deferred: true,
		Host:              "refuse the archive; the installed SKILL.md never holds the overwriting bytes",
		Why:               "the tar.gz holds SKILL.md and Skill.md with different bytes; the second overwrites the first on case-insensitive file systems",
		DetectableByCheck: true, Check: "legacy-archive-safety", Expect: "WARN",
	},
	{
		ID: "adv-live-read-divergence", URI: "skill://adv-live-read-divergence.tar.gz", Also: []string{"skill://adv-live-read-divergence/SKILL.md"},
		Clause: "Den B2(2): serve from the verified copy; the v1 equivalent is H10", Threat: "Den B2", Action: oracle.Gate, Deferred: true,
		Host:              "use the verified archive copy of scripts/helper.sh and never the different live copy",
		Why:               "the archive's scripts/helper.sh differs from the one resources/read serves",
		DetectableByCheck: true, Check: "legacy-archive-content", Expect: "FAIL",
	},
	{
		ID: "adv-archive-name-collision", URI: "skill://adv-archive-collision/billing/refunds.tar.gz",
		Also:   []string{"skill://adv-archive-collision/support/refunds.tar.gz", "skill://adv-archive-name-collision/SKILL.md"},
		Clause: "deferred: the draft keyed archive-only skills by name (Den A2); resolved in v1 by H7, identity is (server, uri)", Threat: "Den A2",
		Action: oracle.Reject, Deferred: true,
		Host:              "keep the two skills apart or refuse the second; never overwrite one with the other",
		Why:               "two archive-only index entries, both named refunds, that a name-keyed installer writes to the same place",
		DetectableByCheck: true, Check: "legacy-index", Expect: "WARN",
	},
}

// Fixtures returns the fixture table: the v1 cases first, then the
// deferred archive cases. The slice is a copy.
func Fixtures() []oracle.Fixture {
	out := slices.Clone(fixtures)
	for i := range out {
		out[i].Also = slices.Clone(out[i].Also)
	}
	return out
}

// fixture returns the table row of id; it panics on an unknown id, which
// is a programming mistake every test run finds.
func fixture(id string) *oracle.Fixture {
	for i := range fixtures {
		if fixtures[i].ID == id {
			return &fixtures[i]
		}
	}
	panic("adversarial: no fixture " + id)
}
