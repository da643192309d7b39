package lint

import (
	"bytes"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/skills-mcp/skills-mcp/internal/skill"
)

// family is a set of trigger bits: which trigger words a line holds. Each
// pattern runs only on lines holding the bits it needs.
type family uint64

const (
	bDownload   family = 1 << iota // curl, wget, iwr, …
	bIex                           // iex, invoke-expression
	bPSDownload                    // downloadstring, net.webclient, scriptblock
	bLolbin                        // mshta, regsvr32
	bDecoder                       // base64, b64decode, atob, …
	bSink                          // exec, eval, function
	bPS                            // powershell, pwsh
	bRm                            // rm, rd, remove-item, …
	bRmAPI                         // rmtree, rmSync, rimraf
	bFindDel                       // -delete, -exec
	bChmod                         // chmod
	bIcacls                        // icacls
	bUmask                         // umask
	bSensitive                     // .ssh, .aws, /etc/shadow, …
	bCred                          // akia, ghp_, sk-, …
	bEnvSh                         // env, printenv
	bEnviron                       // environ
	bProcEnv                       // process.env
	bExport                        // export, declare
	bPSEnv                         // getenvironmentvariables
	bNet                           // any network client
	bDevTCP                        // /dev/tcp, /dev/udp
	bNc                            // nc, ncat, netcat
	bFifo                          // mkfifo, mknod
	bPyShell                       // pty.spawn, dup2, fileno
	bSockets                       // socket, fsockopen, tcpsocket, tcpclient, socat
	bOverride                      // ignore, disregard, forget, override, bypass
	bPrompt                        // prompt
	bUser                          // user
	bYou                           // you
	bSecretly                      // secretly
	bChatTok                       // <|, [inst], <<sys>>
	bComment                       // <!--, -->
	bFence                         // ```, ~~~
	bUnicode                       // invisible and control characters
	bIgnore                        // lint-ignore
	bAutoload                      // pytest_plugins, addopts, pytest11
	bCmdclass                      // cmdclass
)

// Families of bits that enable a detector.
const (
	famPipe      = bDownload
	famRemote    = bIex | bPSDownload | bLolbin
	famEval      = bDecoder | bPS
	famRm        = bRm | bRmAPI | bFindDel
	famChmod     = bChmod | bIcacls | bUmask
	famEnv       = bEnvSh | bEnviron | bProcEnv | bExport | bPSEnv
	famRevShell  = bDevTCP | bNc | bFifo | bPyShell | bSockets
	famInject    = bOverride | bPrompt | bYou | bUser | bSecretly | bChatTok
	famStructure = bComment | bFence | bUnicode | bIgnore
)

// trigger is a word whose presence on a line sets bits. The match is ASCII
// case-insensitive; word requires no letter, digit or underscore before the
// word, nor after it when it ends in one.
type trigger struct {
	s    string
	bits family
	word bool
}

// triggers are necessary conditions: every pattern contains one of the
// trigger words of each bit it is gated on, so a line without them cannot
// match.
var triggers = []trigger{
	{"curl", bDownload | bNet, false},
	{"wget", bDownload | bNet, false},
	{"iwr", bDownload | bNet, true},
	{"irm", bDownload | bNet, true},
	{"invoke-webrequest", bDownload | bNet, false},
	{"invoke-restmethod", bDownload | bNet, false},
	{"fetch", bDownload | bNet, false},
	{"lwp-request", bDownload, false},
	{"aria2c", bDownload, false},
	{"start-bitstransfer", bDownload, false},
	{"iex", bIex, true},
	{"invoke-expression", bIex, false},
	{"downloadstring", bPSDownload, false},
	{"downloaddata", bPSDownload, false},
	{"downloadfile", bPSDownload, false},
	{"net.webclient", bPSDownload | bNet, false},
	{"scriptblock", bPSDownload, false},
	{"mshta", bLolbin, false},
	{"regsvr32", bLolbin, false},
	{"base64", bDecoder, false},
	{"b64", bDecoder, false},
	{"b32decode", bDecoder, false},
	{"b16decode", bDecoder, false},
	{"b85decode", bDecoder, false},
	{"a85decode", bDecoder, false},
	{"decode64", bDecoder, false},
	{"fromhex", bDecoder, false},
	{"unhexlify", bDecoder, false},
	{"decompress", bDecoder, false},
	{"marshal.loads", bDecoder, false},
	{"codecs.decode", bDecoder, false},
	{"atob", bDecoder, false},
	{"buffer.from", bDecoder, false},
	{"gzinflate", bDecoder, false},
	{"gzipstream", bDecoder, false},
	{"deflatestream", bDecoder, false},
	{"str_rot13", bDecoder, false},
	{"xxd", bDecoder, false},
	{"exec", bSink, false},
	{"eval", bSink, false},
	{"function", bSink, false},
	{"powershell", bPS, false},
	{"pwsh", bPS, false},
	{"rm ", bRm, true},
	{"rm\t", bRm, true},
	{"rd ", bRm, true},
	{"rmdir", bRm, true},
	{"del", bRm, true},
	{"erase", bRm, true},
	{"remove-item", bRm, false},
	{"--no-preserve-root", bRm, false},
	{"rmtree", bRmAPI, false},
	{"rmsync", bRmAPI, false},
	{"rmdirsync", bRmAPI, false},
	{"rimraf", bRmAPI, false},
	{"-delete", bFindDel, false},
	{"-exec", bFindDel, false},
	{"chmod", bChmod, false},
	{"icacls", bIcacls, false},
	{"umask", bUmask, false},
	{".ssh", bSensitive, false},
	{".aws", bSensitive, false},
	{".gnupg", bSensitive, false},
	{".kube", bSensitive, false},
	{".docker", bSensitive, false},
	{".npmrc", bSensitive, false},
	{".netrc", bSensitive, false},
	{".pgpass", bSensitive, false},
	{".git-credentials", bSensitive, false},
	{".azure", bSensitive, false},
	{"gcloud", bSensitive, false},
	{".password-store", bSensitive, false},
	{".vault-token", bSensitive, false},
	{"/etc/shadow", bSensitive, false},
	{"/etc/gshadow", bSensitive, false},
	{"/etc/sudoers", bSensitive, false},
	{"master.passwd", bSensitive, false},
	{"login data", bSensitive, false},
	{"cookies", bSensitive, false},
	{"logins.json", bSensitive, false},
	{"key4.db", bSensitive, false},
	{"keychain", bSensitive, false},
	{"-password", bSensitive, false},
	{"akia", bCred, false},
	{"asia", bCred, false},
	{"abia", bCred, false},
	{"acca", bCred, false},
	{"ghp_", bCred, false},
	{"gho_", bCred, false},
	{"ghu_", bCred, false},
	{"ghs_", bCred, false},
	{"ghr_", bCred, false},
	{"github_pat_", bCred, false},
	{"sk-", bCred, false},
	{"sk_live_", bCred, false},
	{"rk_live_", bCred, false},
	{"xox", bCred, false},
	{"aiza", bCred, false},
	{"-----begin", bCred, false},
	{"hooks.slack.com", bCred, false},
	{"env", bEnvSh, true},
	{"printenv", bEnvSh, false},
	{"os.environ", bEnviron, false},
	{"/environ", bEnviron, false},
	{"process.env", bProcEnv, false},
	{"getenvironmentvariables", bPSEnv, false},
	{"export", bExport, true},
	{"declare", bExport, true},
	{"nc ", bNet | bNc, true},
	{"nc\t", bNet | bNc, true},
	{"ncat", bNet | bNc, false},
	{"netcat", bNet | bNc, false},
	{"socat", bNet | bSockets, false},
	{"telnet", bNet, false},
	{"nslookup", bNet, false},
	{"dig", bNet, true},
	{"requests", bNet, false},
	{"httpx", bNet, false},
	{"aiohttp", bNet, false},
	{"urllib", bNet, false},
	{"urlopen", bNet, false},
	{"http.client", bNet, false},
	{"http.request", bNet, false},
	{"https.request", bNet, false},
	{"xmlhttprequest", bNet, false},
	{"sendbeacon", bNet, false},
	{"axios", bNet, false},
	{"smtplib", bNet, false},
	{"ftplib", bNet, false},
	{".upload", bNet, false},
	{"/dev/tcp", bNet | bDevTCP, false},
	{"/dev/udp", bNet | bDevTCP, false},
	{"mkfifo", bFifo, false},
	{"mknod", bFifo, false},
	{"pty.spawn", bPyShell, false},
	{"dup2", bPyShell, false},
	{"fileno", bPyShell, false},
	{"socket", bSockets, false},
	{"fsockopen", bSockets, false},
	{"tcpsocket", bSockets, false},
	{"tcpclient", bSockets, false},
	{"ignore", bOverride, false},
	{"disregard", bOverride, false},
	{"forget", bOverride, false},
	{"override", bOverride, false},
	{"bypass", bOverride, false},
	{"prompt", bPrompt, false},
	{"user", bUser, true},
	{"you", bYou, true},
	{"secretly", bSecretly, false},
	{"<|i", bChatTok, false},
	{"<|s", bChatTok, false},
	{"<|e", bChatTok, false},
	{"[inst]", bChatTok, false},
	{"[/inst]", bChatTok, false},
	{"<<sys>>", bChatTok, false},
	{"<</sys>>", bChatTok, false},
	{"<!--", bComment, false},
	{"-->", bComment, false},
	{"```", bFence, false},
	{"~~~", bFence, false},
	// Invisible and control characters, by their UTF-8 encodings.
	{"\u200b", bUnicode, false},
	{"\u200c", bUnicode, false},
	{"\u200d", bUnicode, false},
	{"\u202a", bUnicode, false},
	{"\u202b", bUnicode, false},
	{"\u202c", bUnicode, false},
	{"\u202d", bUnicode, false},
	{"\u202e", bUnicode, false},
	{"\u2060", bUnicode, false},
	{"\u2061", bUnicode, false},
	{"\u2062", bUnicode, false},
	{"\u2063", bUnicode, false},
	{"\u2064", bUnicode, false},
	{"\u2066", bUnicode, false},
	{"\u2067", bUnicode, false},
	{"\u2068", bUnicode, false},
	{"\u2069", bUnicode, false},
	{"\ufeff", bUnicode, false},
	{"\ufe00", bUnicode, false},
	{"\ufe01", bUnicode, false},
	{"\ufe02", bUnicode, false},
	{"\ufe03", bUnicode, false},
	{"\ufe04", bUnicode, false},
	{"\ufe05", bUnicode, false},
	{"\ufe06", bUnicode, false},
	{"\ufe07", bUnicode, false},
	{"\ufe08", bUnicode, false},
	{"\ufe09", bUnicode, false},
	{"\ufe0a", bUnicode, false},
	{"\ufe0b", bUnicode, false},
	{"\ufe0c", bUnicode, false},
	{"\ufe0d", bUnicode, false},
	{"\ufe0e", bUnicode, false},
	{"\ufe0f", bUnicode, false},
	{"\xf3\xa0\x80", bUnicode, false}, // U+E0000–U+E003F: tags
	{"\xf3\xa0\x81", bUnicode, false}, // U+E0040–U+E007F: tags
	{"\xf3\xa0\x84", bUnicode, false}, // U+E0100–U+E01EF: variation selectors
	{"\xf3\xa0\x85", bUnicode, false},
	{"\xf3\xa0\x86", bUnicode, false},
	{"\xf3\xa0\x87", bUnicode, false},
	{"lint-ignore", bIgnore, false},
	{"pytest_plugins", bAutoload, false},
	{"addopts", bAutoload, false},
	{"pytest11", bAutoload, false},
	{"cmdclass", bCmdclass, false},
}

// fold maps ASCII upper case to lower case and every other byte to itself.
var fold = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
		if i >= 'A' && i <= 'Z' {
			t[i] = byte(i + 'a' - 'A')
		}
	}
	return
}()

// isWord is [A-Za-z0-9_], the bytes RE2's \b treats as word characters.
var isWord = func() (t [256]bool) {
	for i := range t {
		t[i] = i >= 'a' && i <= 'z' || i >= 'A' && i <= 'Z' || i >= '0' && i <= '9' || i == '_'
	}
	return
}()

// commonBigrams lists frequent letter pairs of English prose and code,
// most frequent first. A trigger is anchored on its least common triple of
// bytes (scored by its pairs), so the scan stops rarely on ordinary text.
const commonBigrams = "th he in er an re on at en nd ti es or te of ed is it al ar st to nt ng " +
	"se ha as ou io le ve co me de hi ri ro ic ne ea ra ce li ch ll be ma si om ur ca el ta la ns " +
	"di fo ho pe ec pr no ct us ac ot il tr ly nc et ut ss so rs un lo wa ge ie wh ee wi em ad ol " +
	"rt po we na ul ni ts mo ow pa im mi ai sh ir su id os iv ia am fi ci vi pl ig tu ev ld ry mp " +
	"fe bl ab gh ty op wo sa ay ex ke fr oo av ag if ap gr od bo sp rd do uc bu ei ov by rm ep tt " +
	"oc fa ef cu rn sc gi da yo cr cl du ga qu ue ff ba ey ls va um pp ua up lu go ht ru ug ds lt " +
	"pi rc rr eg au ck ew mu br bi pt ak pu ui rg ib tl ny ki rk ys ob mm fu ph og ms ye ud mb ip"

// anchored is a trigger and the offset of its anchor triple.
type anchored struct {
	trigger
	off int
}

// triHash maps three folded bytes (packed in the low 24 bits of x) to a
// 16-bit key.
func triHash(x uint32) uint32 { return (x * 0x9e3779b1) >> 16 }

// The anchor index: interesting is a bitmap over hashed triples (8 KiB, so
// it stays in the L1 cache); anchors maps a key to an index into
// anchorGroups.
var interesting, anchors, anchorGroups = func() (*[1 << 10]uint64, *[1 << 16]uint16, [][]anchored) {
	common := strings.Fields(commonBigrams)
	rank := map[string]int{}
	for i, bg := range common {
		rank[bg] = len(common) - i // higher is more common
	}
	pairRank := func(p string) int {
		if strings.ContainsAny(p, " \t") {
			return 2 * len(common) // spaces are everywhere
		}
		return rank[p]
	}
	bits := new([1 << 10]uint64)
	t := new([1 << 16]uint16)
	groups := [][]anchored{nil}
	for _, tr := range triggers {
		if len(tr.s) < 3 {
			panic("lint: trigger shorter than 3 bytes: " + tr.s) // programmer error
		}
		best, bestRank := 0, -1
		for k := 0; k+2 < len(tr.s); k++ {
			r := pairRank(tr.s[k:k+2]) + pairRank(tr.s[k+1:k+3])
			if bestRank < 0 || r < bestRank {
				best, bestRank = k, r
			}
		}
		x := uint32(fold[tr.s[best]])<<16 | uint32(fold[tr.s[best+1]])<<8 | uint32(fold[tr.s[best+2]])
		key := triHash(x)
		bits[key>>6] |= 1 << (key & 63)
		if t[key] == 0 {
			t[key] = uint16(len(groups))
			groups = append(groups, nil)
		}
		groups[t[key]] = append(groups[t[key]], anchored{tr, best})
	}
	return bits, t, groups
}()

// prefilter returns the trigger bits of the words in b.
func prefilter(b []byte) family {
	if len(b) < 3 {
		return 0
	}
	var m family
	x := uint32(fold[b[0]])<<8 | uint32(fold[b[1]])
	for i := 2; i < len(b); i++ {
		x = (x<<8 | uint32(fold[b[i]])) & 0xffffff
		key := triHash(x)
		if interesting[key>>6&(1<<10-1)]&(1<<(key&63)) != 0 {
			m |= checkGroup(anchorGroups[anchors[key&(1<<16-1)]], b, i-2)
		}
	}
	return m
}

// checkGroup verifies the triggers anchored at the triple starting at b[p].
func checkGroup(g []anchored, b []byte, p int) family {
	var m family
	for _, tr := range g {
		start := p - tr.off
		n := len(tr.s)
		if start < 0 || start+n > len(b) || m&tr.bits == tr.bits {
			continue
		}
		ok := true
		for j := 0; j < n; j++ {
			if fold[b[start+j]] != tr.s[j] {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		if tr.word && (start > 0 && isWord[b[start-1]] || isWord[tr.s[n-1]] && start+n < len(b) && isWord[b[start+n]]) {
			continue
		}
		m |= tr.bits
	}
	return m
}

// kind is how a file's lines are read.
type kind int

const (
	kindCode     kind = iota // every line is code
	kindProse                // plain text documents: every line is prose
	kindMarkdown             // fences and comments are code, the rest prose
)

// ctx is where a match sits.
type ctx int

const (
	ctxCode    ctx = iota // a script, a fenced block, frontmatter of a non-markdown file
	ctxProse              // markdown or text prose, inline code spans included
	ctxComment            // a markdown HTML comment
)

var markdownExts = map[string]bool{".md": true, ".markdown": true, ".mdx": true, ".mdown": true, ".mkd": true, ".mkdn": true}
var proseExts = map[string]bool{".txt": true, ".text": true, ".rst": true, ".adoc": true, ".asciidoc": true, ".org": true}

// codeExts are source code that is not run as a script file but read by a
// compiler, build tool or interpreter module loader; base64-blob applies to
// them as to scripts. What is a script (.sh, .py, .ps1, a shebang line, …)
// is skill.SniffScript's to say, the one definition the catalog and pull
// share.
var codeExts = map[string]bool{
	".csh": true, ".tcsh": true, ".psd1": true, ".vba": true, ".pyw": true, ".mts": true,
	".cts": true, ".jsx": true, ".tsx": true, ".pm": true,
	".go": true, ".rs": true, ".java": true, ".kt": true, ".kts": true, ".swift": true,
	".c": true, ".h": true, ".cc": true, ".cpp": true, ".cs": true,
	".groovy": true, ".gradle": true, ".awk": true, ".sed": true, ".mk": true,
	".jl": true, ".dart": true, ".ex": true, ".exs": true, ".nu": true, ".wsf": true,
	".hta": true, ".jsh": true, ".coffee": true, ".scala": true,
}

var scriptNames = map[string]bool{
	"makefile": true, "gnumakefile": true, "dockerfile": true, "containerfile": true, "justfile": true,
	"rakefile": true, "vagrantfile": true, "gemfile": true, "brewfile": true, "taskfile": true,
}

var softHyphen = []byte("\u00ad")

// maxLine is the longest line scanned as one piece; longer lines are
// scanned in chunks of this size overlapping by chunkOverlap, so a match
// up to chunkOverlap bytes long is found wherever it falls.
const (
	maxLine      = 64 << 10
	chunkOverlap = 1 << 10
)

// fileScan is the state of one File call.
type fileScan struct {
	path   string
	base   string // lower-case base name
	ext    string // lower-case extension
	data   []byte
	kind   kind
	script bool
	col    collector

	isSkillMD bool
	fmEnd     int // end of the frontmatter block (after its closing line), 0 if none

	// Markdown state across lines.
	fenceChar   byte
	fenceLen    int
	inComment   bool
	cmtOff      int // offset in data of the open "<!--"
	cmtLine     int
	cmtLineOff  int // offset in data of the line holding "<!--"
	cmtColBytes int // byte offset of "<!--" in that line

	// env-exfil: line of the last environment dump.
	envDumpLine int

	// base64-blob across wrapped lines.
	b64Run, b64Lines, b64Line int
	b64Done                   bool

	// cur is the line being scanned.
	cur lineRef
	// colPos and colRunes cache the last column computed on cur.
	colPos, colRunes int
	// at is the line of the last finding placed by its data offset.
	at atLine
	// work counts the bytes read to place findings by their offsets and
	// to parse their lines' markers, for the test that holds it linear.
	work int
	// Buffers for folded text: the current unit, and any other slice.
	unitLow, scratch []byte
	// Buffers for a line without its invisible characters.
	cleanBuf []byte
	posBuf   []int
}

// lineRef is a line of the file.
type lineRef struct {
	no      int    // 1-based line number
	off     int    // offset of the line in data
	text    []byte // the line, without "\n" or a final "\r"
	markers []marker
	marked  bool // markers parsed
}

func newFileScan(p string, data []byte) *fileScan {
	base := strings.ToLower(path.Base(p))
	ext := path.Ext(base)
	s := &fileScan{path: p, base: base, ext: ext, data: data, col: collector{path: p}}
	return s
}

// prepare decides the kind of file and reads the frontmatter.
func (s *fileScan) prepare() {
	switch {
	case markdownExts[s.ext]:
		s.kind = kindMarkdown
	case proseExts[s.ext]:
		s.kind = kindProse
	}
	_, isScript := skill.SniffScript(s.path, s.data)
	s.script = isScript || codeExts[s.ext] || scriptNames[s.base]
	s.isSkillMD = s.base == "skill.md"
	if s.kind == kindMarkdown {
		s.fmEnd = frontmatterEnd(s.data)
	}
	s.wholeFile()
}

// frontmatterEnd returns the offset after a leading "---" … "---" block,
// or 0. The block is bounded like the skill parser bounds it.
func frontmatterEnd(data []byte) int {
	d := bytes.TrimPrefix(data, []byte("\ufeff"))
	skip := len(data) - len(d)
	first, _, ok := bytes.Cut(d, []byte("\n"))
	if !ok || string(bytes.TrimRight(first, " \t\r")) != "---" {
		return 0
	}
	off := skip + len(first) + 1
	for off < len(data) && off-skip <= 64<<10 {
		line, _, found := bytes.Cut(data[off:], []byte("\n"))
		next := off + len(line) + 1
		if string(bytes.TrimRight(line, " \t\r")) == "---" {
			return min(next, len(data))
		}
		if !found {
			return 0
		}
		off = next
	}
	return 0
}

func (s *fileScan) run() {
	s.prepare()
	data := s.data
	for off := 0; off < len(data); {
		end := bytes.IndexByte(data[off:], '\n')
		next := 0
		if end < 0 {
			end = len(data)
			next = len(data)
		} else {
			end += off
			next = end + 1
		}
		line := data[off:end]
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
		s.cur = lineRef{no: s.cur.no + 1, off: off, text: line}
		s.colPos, s.colRunes = 0, 0
		s.scanLine()
		off = next
	}
	s.finish()
}

// unit is a piece of a line that detectors see: the whole line, or a chunk
// of a long one, possibly with invisible characters removed.
type unit struct {
	t       []byte // text the detectors match
	pos     []int  // pos[i] is the offset in the line of t[i]; nil when t is a slice of the line
	base    int    // offset in the line of t[0] when pos is nil
	ownEnd  int    // matches starting at or after this line offset belong to the next chunk
	segs    []seg  // markdown segments of the line, or nil
	lineCtx ctx    // context of the unit when segs is nil
	low     []byte // t folded to ASCII lower case, computed on demand
}

// seg is a markdown region of a prose line.
type seg struct {
	start, end int // line offsets
	kind       segKind
}

type segKind int

const (
	segSpan    segKind = iota // inline code span, backticks included
	segComment                // HTML comment, delimiters included
)

// lineOffset maps an offset in u.t to an offset in the line.
func (u *unit) lineOffset(i int) int {
	if u.pos == nil {
		return u.base + i
	}
	if i >= len(u.pos) {
		if len(u.pos) == 0 {
			return u.base
		}
		return u.pos[len(u.pos)-1] + 1
	}
	return u.pos[i]
}

func (s *fileScan) scanLine() {
	line := s.cur.text
	inFM := s.cur.off < s.fmEnd
	if len(line) <= maxLine {
		u := unit{t: line, ownEnd: len(line)}
		s.structure(&u, inFM)
		s.scanUnit(&u)
		return
	}
	// A long line: structure is read roughly (comment and fence state
	// only), then the text is scanned in overlapping chunks.
	u0 := unit{t: line, ownEnd: len(line)}
	ctx := s.roughStructure(&u0, inFM)
	for start := 0; start < len(line); start += maxLine {
		end := min(len(line), start+maxLine+chunkOverlap)
		own := start + maxLine
		if end == len(line) {
			own = len(line)
		}
		u := unit{t: line[start:end], base: start, ownEnd: own, lineCtx: ctx}
		s.scanUnit(&u)
		if end == len(line) {
			break
		}
	}
}

// scanUnit runs every detector the unit's triggers enable.
func (s *fileScan) scanUnit(u *unit) {
	if s.script && len(u.t) >= b64MinLine {
		s.base64Blob(u)
	} else if s.script {
		s.b64Break()
	}
	m := prefilter(u.t)
	if bytes.Contains(u.t, softHyphen) {
		m |= bUnicode // two bytes, too short for a trigger
	}
	if m&bIgnore != 0 {
		s.parseMarkers()
		s.ignoreMarkers(u)
	}
	if m&bUnicode != 0 {
		if clean := s.unicodeChars(u); clean != nil {
			// Detect the rest on the text a model reads: without the
			// invisible characters that split trigger words.
			u = clean
			m = prefilter(u.t) &^ bUnicode
		}
	}
	if u.segs != nil && s.kind == kindMarkdown {
		s.inlineExec(u)
	}
	if m&^famStructure == 0 {
		return
	}
	// Each detector runs while its rule has budget left (MaxCounted).
	live := func(bits family, rule string) bool { return m&bits != 0 && s.col.budget(rule) > 0 }
	if live(famPipe, RulePipeToShell) {
		s.pipeToShell(u)
	}
	if live(famRemote, RuleRemoteExec) {
		s.remoteExec(u, m)
	}
	if live(famEval, RuleEvalDecoded) {
		s.evalDecoded(u, m)
	}
	if live(famRm, RuleDestructiveRm) {
		s.destructiveRm(u, m)
	}
	if live(famChmod, RuleWorldWritable) {
		s.worldWritable(u, m)
	}
	if live(bSensitive, RuleSensitivePath) {
		s.sensitivePath(u)
	}
	if live(bCred, RuleCredentialLiteral) {
		s.credentials(u)
	}
	if live(famEnv|bNet, RuleEnvExfil) {
		s.envExfil(u, m)
	}
	if live(famRevShell, RuleReverseShell) {
		s.reverseShell(u, m)
	}
	if live(famInject, RulePromptInjection) {
		s.promptInjection(u, m)
	}
	if m&bAutoload != 0 {
		s.autoload(u)
	}
	if m&bCmdclass != 0 {
		s.cmdclass(u)
	}
}

// structure updates the markdown state for a line that fits in one unit
// and records its context and segments in u.
func (s *fileScan) structure(u *unit, inFM bool) {
	switch {
	case s.kind == kindCode:
		u.lineCtx = ctxCode
		return
	case s.kind == kindProse || inFM:
		u.lineCtx = ctxProse
		return
	}
	line := u.t
	if s.fenceLen > 0 {
		u.lineCtx = ctxCode
		if c, n, rest := fenceMarker(line); c == s.fenceChar && n >= s.fenceLen && len(bytes.TrimSpace(rest)) == 0 {
			s.fenceLen = 0
		}
		return
	}
	if !s.inComment {
		if c, n, rest := fenceMarker(line); n > 0 && (c == '~' || bytes.IndexByte(rest, '`') < 0) {
			s.fenceChar, s.fenceLen = c, n
			u.lineCtx = ctxCode
			return
		}
	}
	u.lineCtx = ctxProse
	if !s.inComment && bytes.IndexByte(line, '`') < 0 && !bytes.Contains(line, []byte("<!--")) {
		return
	}
	u.segs = s.segments(line)
}

// fenceMarker returns the fence character and length when line opens or
// closes a fenced code block, and the text after the fence. Block quote and
// list indentation are skipped: reading too much as code only raises
// severities.
func fenceMarker(line []byte) (byte, int, []byte) {
	i := 0
	for i < len(line) && (line[i] == ' ' || line[i] == '\t' || line[i] == '>') {
		i++
	}
	if i+3 > len(line) || (line[i] != '`' && line[i] != '~') {
		return 0, 0, nil
	}
	c := line[i]
	n := 0
	for i+n < len(line) && line[i+n] == c {
		n++
	}
	if n < 3 {
		return 0, 0, nil
	}
	return c, n, line[i+n:]
}

// segments splits a markdown prose line into code spans and comments,
// carrying the comment state across lines. It runs in linear time.
func (s *fileScan) segments(line []byte) []seg {
	var segs []seg
	pos := 0
	if s.inComment {
		end := bytes.Index(line, []byte("-->"))
		if end < 0 {
			return []seg{{0, len(line), segComment}}
		}
		segs = append(segs, seg{0, end + 3, segComment})
		s.closeComment(s.cur.off + end)
		pos = end + 3
	}
	// Backtick runs, and for each the next run of the same length.
	type run struct{ start, n, next int }
	var runs []run
	for i := pos; i < len(line); {
		if line[i] != '`' {
			j := bytes.IndexByte(line[i:], '`')
			if j < 0 {
				break
			}
			i += j
			continue
		}
		j := i
		for j < len(line) && line[j] == '`' {
			j++
		}
		runs = append(runs, run{i, j - i, -1})
		i = j
	}
	lastByLen := map[int]int{}
	for k := len(runs) - 1; k >= 0; k-- {
		if nx, ok := lastByLen[runs[k].n]; ok {
			runs[k].next = nx
		}
		lastByLen[runs[k].n] = k
	}
	nextCmt := -2 // cached offset of the next "<!--" at or after pos; -1 none
	ri := 0
	for pos < len(line) {
		for ri < len(runs) && runs[ri].start < pos {
			ri++
		}
		if nextCmt != -1 && nextCmt < pos {
			if k := bytes.Index(line[pos:], []byte("<!--")); k >= 0 {
				nextCmt = pos + k
			} else {
				nextCmt = -1
			}
		}
		runAt := -1
		if ri < len(runs) {
			runAt = runs[ri].start
		}
		switch {
		case runAt >= 0 && (nextCmt < 0 || runAt < nextCmt):
			r := runs[ri]
			if r.next < 0 {
				pos = r.start + r.n // a literal backtick run
				ri++
				continue
			}
			c := runs[r.next]
			segs = append(segs, seg{r.start, c.start + c.n, segSpan})
			pos = c.start + c.n
			ri = r.next + 1
		case nextCmt >= 0:
			s.openComment(nextCmt)
			end := bytes.Index(line[nextCmt+4:], []byte("-->"))
			if end < 0 {
				segs = append(segs, seg{nextCmt, len(line), segComment})
				return segs
			}
			e := nextCmt + 4 + end
			segs = append(segs, seg{nextCmt, e + 3, segComment})
			s.closeComment(s.cur.off + e)
			pos = e + 3
		default:
			return segs
		}
	}
	return segs
}

// roughStructure updates the markdown state for a long line without
// reading code spans, and returns the context of the whole line.
func (s *fileScan) roughStructure(u *unit, inFM bool) ctx {
	switch {
	case s.kind == kindCode:
		return ctxCode
	case s.kind == kindProse || inFM:
		return ctxProse
	case s.fenceLen > 0:
		return ctxCode
	}
	line := u.t
	c := ctxProse
	pos := 0
	for pos < len(line) {
		if s.inComment {
			c = ctxComment
			e := bytes.Index(line[pos:], []byte("-->"))
			if e < 0 {
				return c
			}
			s.closeComment(s.cur.off + pos + e)
			pos += e + 3
			continue
		}
		o := bytes.Index(line[pos:], []byte("<!--"))
		if o < 0 {
			return c
		}
		s.openComment(pos + o)
		pos += o + 4
	}
	return c
}

// ctxAt returns the context of line offset p.
func (u *unit) ctxAt(p int) ctx {
	for _, sg := range u.segs {
		if p >= sg.start && p < sg.end && sg.kind == segComment {
			return ctxComment
		}
	}
	return u.lineCtx
}

// gated is a pattern that runs only on lines holding its trigger bits.
type gated struct {
	re  pattern
	all family   // every one of these bits
	any family   // at least one of these bits, when non-zero
	lit []string // at least one of these substrings, when non-empty
	// words lists groups of lower-case words; the line must contain one
	// word of each group (ASCII case-insensitive, anywhere). It gates on
	// words too common to be triggers.
	words [][]string
}

func (g *gated) ok(s *fileScan, u *unit, m family) bool {
	if m&g.all != g.all || g.any != 0 && m&g.any == 0 {
		return false
	}
	t := u.t
	if len(g.words) > 0 {
		low := s.lowOf(u)
		for _, group := range g.words {
			if !slices.ContainsFunc(group, func(w string) bool { return bytes.Contains(low, []byte(w)) }) {
				return false
			}
		}
	}
	if len(g.lit) == 0 {
		return true
	}
	for _, l := range g.lit {
		if bytes.Contains(t, []byte(l)) {
			return true
		}
	}
	return false
}

// findAll calls f with the matches in u of every pattern of gs that its
// trigger bits m allow, while rule has budget left.
func (s *fileScan) findAll(rule string, gs []gated, u *unit, m family, f func(loc []int)) {
	for i := range gs {
		n := s.col.budget(rule)
		if n <= 0 {
			return
		}
		if !gs[i].ok(s, u, m) {
			continue
		}
		t := u.t
		if gs[i].re.fold {
			t = s.lowOf(u)
		}
		for _, loc := range gs[i].re.re().FindAllIndex(t, n) {
			f(loc)
		}
	}
}

// lowOf returns u's text folded to ASCII lower case, computed once.
func (s *fileScan) lowOf(u *unit) []byte {
	if u.low == nil {
		u.low = foldInto(s.unitLow[:0], u.t)
		s.unitLow = u.low
	}
	return u.low
}

// spanAt returns the index in u.segs of the code span holding line offset
// p, or -1.
func (u *unit) spanAt(p int) int {
	for i, sg := range u.segs {
		if p >= sg.start && p < sg.end && sg.kind == segSpan {
			return i
		}
	}
	return -1
}

// inSpan reports whether line offset p is inside a code span.
func (u *unit) inSpan(p int) bool {
	for _, sg := range u.segs {
		if p >= sg.start && p < sg.end && sg.kind == segSpan {
			return true
		}
	}
	return false
}

// emit records a finding of rule at [start, end) of u.t with severity sev.
// msg "" means the rule title.
func (s *fileScan) emit(u *unit, rule string, sev Severity, start, end int, msg string) {
	ls, le := u.lineOffset(start), u.lineOffset(max(start, end-1))+1
	if end <= start {
		le = ls
	}
	if ls >= u.ownEnd {
		return // the next chunk reports it
	}
	s.emitLine(rule, sev, ls, le, msg, rule == RuleCredentialLiteral)
}

// emitLine records a finding at line offsets [ls, le) of the current line.
func (s *fileScan) emitLine(rule string, sev Severity, ls, le int, msg string, redact bool) {
	s.parseMarkers()
	reason, sup := "", false
	if rule != RuleIgnoreWithoutReason {
		reason, sup = suppression(s.cur.markers, rule)
	}
	if s.col.full(rule, sev, sup) {
		s.col.add(Finding{Rule: rule, Severity: sev, Suppressed: sup})
		return
	}
	if msg == "" {
		r, _ := Lookup(rule)
		msg = r.Title
	}
	s.col.add(Finding{
		Rule:       rule,
		Severity:   sev,
		Line:       s.cur.no,
		Column:     s.column(ls),
		Message:    msg,
		Excerpt:    excerpt(s.cur.text, ls, le, redact),
		Suppressed: sup,
		Reason:     reason,
	})
}

// parseMarkers reads the lint-ignore markers of the current line once.
func (s *fileScan) parseMarkers() {
	if !s.cur.marked {
		s.work += len(s.cur.text)
		if bytes.Contains(s.cur.text, markerPrefix) {
			s.cur.markers = parseMarkers(s.cur.text)
		}
		s.cur.marked = true
	}
}

// column returns the 1-based code-point column of line offset p. It counts
// on from the previous column when it can, so that the findings of one
// detector on a huge line cost linear time in total.
func (s *fileScan) column(p int) int {
	p = max(0, min(p, len(s.cur.text)))
	if p < s.colPos {
		s.colPos, s.colRunes = 0, 0
	}
	s.colRunes += utf8.RuneCount(s.cur.text[s.colPos:p])
	s.colPos = p
	return s.colRunes + 1
}

// emitFile records a finding about the whole file (line 0).
func (s *fileScan) emitFile(rule string, msg string) {
	if s.col.full(rule, mustRule(rule).Severity, false) {
		s.col.add(Finding{Rule: rule, Severity: mustRule(rule).Severity})
		return
	}
	s.col.add(Finding{Rule: rule, Severity: mustRule(rule).Severity, Message: msg})
}

func mustRule(id string) Rule {
	r, ok := Lookup(id)
	if !ok {
		panic("lint: unknown rule " + id) // programmer error
	}
	return r
}

// ignoreMarkers reports markers that give no reason.
func (s *fileScan) ignoreMarkers(u *unit) {
	for _, m := range s.cur.markers {
		if m.reason == "" && m.col < u.ownEnd && m.col >= u.lineOffset(0) {
			s.emitLine(RuleIgnoreWithoutReason, Warning, m.col, m.col+len(markerPrefix), "", false)
		}
	}
}

func (s *fileScan) openComment(lineOffset int) {
	s.inComment = true
	s.cmtOff = s.cur.off + lineOffset
	s.cmtLine = s.cur.no
	s.cmtLineOff = s.cur.off
	s.cmtColBytes = lineOffset
}

// finish reports what is still open at the end of the file.
func (s *fileScan) finish() {
	if s.inComment {
		s.closeComment(-1)
	}
	s.b64Break()
}

// isUTF16 reports whether data starts with a UTF-16 byte-order mark.
func isUTF16(data []byte) bool {
	return len(data) >= 2 && (data[0] == 0xff && data[1] == 0xfe || data[0] == 0xfe && data[1] == 0xff)
}

// decodeUTF16 converts UTF-16 with a byte-order mark to UTF-8, dropping
// the mark. An odd trailing byte is dropped.
func decodeUTF16(data []byte) []byte {
	le := data[0] == 0xff
	data = data[2:]
	u := make([]uint16, len(data)/2)
	for i := range u {
		if le {
			u[i] = uint16(data[2*i]) | uint16(data[2*i+1])<<8
		} else {
			u[i] = uint16(data[2*i])<<8 | uint16(data[2*i+1])
		}
	}
	out := make([]byte, 0, len(u)+len(u)/2)
	for _, r := range utf16.Decode(u) {
		out = utf8.AppendRune(out, r)
	}
	return out
}

// wordSet is a set of lower-case words to find as command words.
type wordSet struct {
	words []string
	first [256]bool
}

func newWordSet(words ...string) *wordSet {
	ws := &wordSet{words: words}
	for _, w := range words {
		ws.first[w[0]] = true
		if w[0] >= 'a' && w[0] <= 'z' {
			ws.first[w[0]-'a'+'A'] = true
		}
	}
	return ws
}

// each calls f with the start and end of each occurrence in t of a word
// of ws (ASCII case-insensitive) that stands alone: not preceded by a
// letter, digit, underscore, dot or hyphen (a slash or backslash is
// allowed, for /usr/bin/curl and \rm), and not followed by a letter, digit,
// underscore or hyphen (".exe" is allowed). It stops when f returns false.
func (ws *wordSet) each(t []byte, f func(start, end int) bool) {
	for i := 0; i < len(t); i++ {
		if !ws.first[t[i]] {
			continue
		}
		if i > 0 {
			if p := t[i-1]; isWord[p] || p == '.' || p == '-' {
				continue
			}
		}
		for _, w := range ws.words {
			n := len(w)
			if i+n > len(t) || !equalFold(t[i:i+n], w) {
				continue
			}
			if i+n < len(t) && (isWord[t[i+n]] || t[i+n] == '-') {
				continue
			}
			if !f(i, i+n) {
				return
			}
			i += n - 1
			break
		}
	}
}

// equalFold reports whether b equals the lower-case ASCII word w, ignoring
// ASCII case.
func equalFold(b []byte, w string) bool {
	for j := range len(w) {
		if fold[b[j]] != w[j] {
			return false
		}
	}
	return true
}

// containsFold reports whether t contains the lower-case ASCII word w,
// ignoring ASCII case.
func containsFold(t []byte, w string) bool {
	for i := 0; i+len(w) <= len(t); i++ {
		if fold[t[i]] == w[0] && equalFold(t[i:i+len(w)], w) {
			return true
		}
	}
	return false
}

// pattern is a regular expression, compiled on first use: the rules are
// many, and a server answers its first request before its first scan
// lints anything. A case-insensitive one is compiled lower-cased and run
// on an ASCII-folded copy of the text: the same offsets, no Unicode case
// folding in the matcher, and literal prefixes the matcher can skip to.
type pattern struct {
	re   func() *regexp.Regexp
	fold bool
}

func lazy(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// cs compiles a case-sensitive pattern.
func cs(expr string) pattern { return pattern{re: lazy(expr)} }

// ci compiles an ASCII case-insensitive pattern. expr must not use (?i);
// its letters are lower-cased except in escapes (\S, \w, \x60 keep their
// meaning).
func ci(expr string) pattern {
	var b strings.Builder
	for i := 0; i < len(expr); i++ {
		c := expr[i]
		if c == '\\' && i+1 < len(expr) {
			b.WriteByte(c)
			b.WriteByte(expr[i+1])
			i++
			continue
		}
		b.WriteByte(fold[c])
	}
	return pattern{re: lazy(b.String()), fold: true}
}

// text returns t, or its folded copy for a case-insensitive pattern. The
// copy lives in s.scratch until the next call.
func (p pattern) text(s *fileScan, t []byte) []byte {
	if !p.fold {
		return t
	}
	s.scratch = foldInto(s.scratch[:0], t)
	return s.scratch
}

func (p pattern) findAll(s *fileScan, t []byte) [][]int { return p.re().FindAllIndex(p.text(s, t), -1) }
func (p pattern) match(s *fileScan, t []byte) bool      { return p.re().Match(p.text(s, t)) }
func (p pattern) find(s *fileScan, t []byte) []int      { return p.re().FindIndex(p.text(s, t)) }

// foldInto appends the ASCII-folded t to dst.
func foldInto(dst, t []byte) []byte {
	dst = slices.Grow(dst, len(t))[:len(t)]
	for i, c := range t {
		dst[i] = fold[c]
	}
	return dst
}
