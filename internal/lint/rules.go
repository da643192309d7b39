package lint

import (
	"slices"
	"strings"
)

// Rule IDs. They are stable: suppression markers, SARIF results and the
// catalog's risk flags name them.
const (
	RulePipeToShell         = "pipe-to-shell"
	RuleRemoteExec          = "remote-exec"
	RuleEvalDecoded         = "eval-decoded"
	RuleBase64Blob          = "base64-blob"
	RuleDestructiveRm       = "destructive-rm"
	RuleWorldWritable       = "world-writable"
	RuleSensitivePath       = "sensitive-path"
	RuleCredentialLiteral   = "credential-literal"
	RuleEnvExfil            = "env-exfil"
	RuleReverseShell        = "reverse-shell"
	RulePromptInjection     = "prompt-injection"
	RuleHiddenComment       = "hidden-comment"
	RuleInvisibleChar       = "invisible-char"
	RuleUnicodeTag          = "unicode-tag"
	RuleBidiControl         = "bidi-control"
	RuleFrontmatterHook     = "frontmatter-hook"
	RuleInlineExec          = "inline-exec"
	RuleInstallHook         = "install-hook"
	RuleTestAutoload        = "test-autoload"
	RuleSymlinkEscape       = "symlink-escape"
	RuleIgnoreWithoutReason = "lint-ignore-without-reason"
	RuleSkillFrontmatter    = "skill-frontmatter"
	RuleSkillName           = "skill-name"
	RuleSkillLimits         = "skill-limits"
	RuleSkillArchive        = "skill-archive"
	RuleZipPath             = "zip-path"
	RuleZipRefused          = "zip-refused"
	RuleExecutableBinary    = "executable-binary"
	RuleMacroDocument       = "macro-document"
)

// rules is the rule table, sorted by ID. Titles are the one-line messages
// of findings that carry no more specific message.
var rules = sortRules([]Rule{
	{
		ID:          RuleBase64Blob,
		Severity:    Warning,
		Title:       "long base64 blob in a script",
		Explanation: "A script carries 200 or more characters of base64, which can hide a payload that no reviewer reads.",
		Fix:         "Ship the data as a separate, reviewable file (or fetch it from a pinned, checksummed source) instead of embedding it.",
	},
	{
		ID:          RuleBidiControl,
		Severity:    Warning,
		Title:       "bidirectional control character",
		Explanation: "Bidi overrides and isolates (U+202A–U+202E, U+2066–U+2069) make text display in a different order than a model or shell reads it.",
		Fix:         "Delete the control characters; write right-to-left text without explicit overrides.",
	},
	{
		ID:          RuleCredentialLiteral,
		Severity:    Error,
		Title:       "credential literal",
		Explanation: "The file contains what looks like a live secret (AWS, GitHub, OpenAI-style, Slack, Google, Stripe key or a private key block); anyone who reads the skill can use it.",
		Fix:         "Revoke the credential, remove it, and read secrets from the environment or a secret store at run time.",
	},
	{
		ID:          RuleDestructiveRm,
		Severity:    Error,
		Title:       "recursive delete of /, ~ or $HOME",
		Explanation: "A recursive delete targets the filesystem root, a system folder or the home folder (or disables --preserve-root).",
		Fix:         "Delete only paths the skill created, inside a temporary or project folder, and quote variables so an empty one cannot widen the target.",
	},
	{
		ID:          RuleEnvExfil,
		Severity:    Error,
		Title:       "environment sent to the network",
		Explanation: "The whole process environment (env, printenv, os.environ, process.env, env:) is serialised into a network request, which leaks every secret it holds.",
		Fix:         "Send only the specific, non-secret values the service needs.",
	},
	{
		ID:          RuleEvalDecoded,
		Severity:    Error,
		Title:       "decoded data executed",
		Explanation: "Base64, hex or compressed data is decoded and executed (eval/exec, a shell, PowerShell -EncodedCommand), so the code that runs is not the code a reviewer reads.",
		Fix:         "Ship the code in plain text where it can be reviewed.",
	},
	{
		ID:          RuleExecutableBinary,
		Severity:    Warning,
		Title:       "compiled program inside a skill",
		Explanation: "The skill bundles an ELF, Mach-O, PE or WebAssembly program (recognised by its magic bytes, whatever its name): nobody can review what it does, and an agent may be asked to run it. --no-scripts withholds it.",
		Fix:         "Ship the source and a reproducible build instead, or have the user install the tool from its publisher.",
	},
	{
		ID:          RuleFrontmatterHook,
		Severity:    Warning,
		Title:       "frontmatter asks the host to run a command",
		Explanation: "The SKILL.md frontmatter declares hooks or pre/post/on-load commands that some hosts run automatically, without the user approving each command.",
		Fix:         "Remove the hook and describe the command in the instructions, so the agent asks before running it.",
	},
	{
		ID:          RuleHiddenComment,
		Severity:    Warning,
		Title:       "hidden comment in markdown",
		Explanation: "An HTML comment is invisible when the markdown is rendered but is read by the model; this one holds instruction-like text or is unusually long.",
		Fix:         "Move the text into the visible body, or delete it.",
	},
	{
		ID:          RuleIgnoreWithoutReason,
		Severity:    Warning,
		Title:       "lint-ignore marker without a reason",
		Explanation: "A lint-ignore marker must give a reason after the rule ID; without one it suppresses nothing.",
		Fix:         "Write `lint-ignore: RULE-ID why this line is safe` on the line of the finding.",
	},
	{
		ID:          RuleInlineExec,
		Severity:    Warning,
		Title:       "pre-prompt command execution",
		Explanation: "The !`command` syntax makes some hosts run the command and paste its output while loading the skill, before the user sees anything.",
		Fix:         "Write the command as an ordinary code span or block and let the agent ask to run it.",
	},
	{
		ID:          RuleInstallHook,
		Severity:    Warning,
		Title:       "package install hook",
		Explanation: "A package manifest runs code on install (package.json preinstall/install/postinstall/prepare, setup.py cmdclass), so installing the skill's dependencies executes it.",
		Fix:         "Remove the hook, or document an explicit build step the user runs on purpose.",
	},
	{
		ID:          RuleInvisibleChar,
		Severity:    Warning,
		Title:       "invisible character",
		Explanation: "Zero-width characters (U+200B–U+200D, U+2060, U+FEFF) or runs of variation selectors inside text can hide or split words that a reviewer and a filter would otherwise see.",
		Fix:         "Delete the invisible characters.",
	},
	{
		ID:          RulePromptInjection,
		Severity:    Error,
		Title:       "prompt-injection phrasing",
		Explanation: "The text tries to override the agent's instructions, change its identity, or hide actions from the user.",
		Fix:         "Remove the phrasing; a skill should add instructions, never cancel the user's or the host's.",
	},
	{
		ID:          RuleMacroDocument,
		Severity:    Warning,
		Title:       "document with macros",
		Explanation: "An Office document carries a VBA project (vbaProject.bin) or is a macro-enabled format (.docm, .xlsm, .pptm, …), or an OpenDocument file holds Basic or script macros; they run when a user opens it and enables macros.",
		Fix:         "Save the document without macros (.docx, .xlsx, .pptx) and ship any automation as a reviewable script.",
	},
	{
		ID:          RulePipeToShell,
		Severity:    Error,
		Title:       "download piped into a shell",
		Explanation: "A script is downloaded and executed in one step (curl|sh, wget|bash, iwr|iex, bash <(curl …), sh -c \"$(curl …)\"), so whatever the server returns runs unreviewed.",
		Fix:         "Download to a file, verify a pinned checksum or signature, then run it; or install from a package manager.",
	},
	{
		ID:          RuleRemoteExec,
		Severity:    Error,
		Title:       "PowerShell runs downloaded code",
		Explanation: "Invoke-Expression (iex) or a script block runs text fetched from the network (Net.WebClient DownloadString, Invoke-WebRequest, mshta, regsvr32 /i:http).",
		Fix:         "Download to a file, check its signature or hash, and run the file.",
	},
	{
		ID:          RuleReverseShell,
		Severity:    Error,
		Title:       "reverse shell",
		Explanation: "A shell's input and output are connected to a network socket (bash -i >& /dev/tcp, nc -e, mkfifo … nc, socket + pty.spawn), giving a remote party control of the machine.",
		Fix:         "Remove it; a skill never needs to hand a shell to a remote host.",
	},
	{
		ID:          RuleSensitivePath,
		Severity:    Warning,
		Title:       "sensitive path read",
		Explanation: "The skill reads credential stores (~/.ssh, ~/.aws, ~/.gnupg, ~/.kube, ~/.docker/config.json, ~/.npmrc, ~/.netrc, /etc/shadow, browser or keychain secrets).",
		Fix:         "Do not touch credential files; let the tool that owns them authenticate, or ask the user for the specific value.",
	},
	{
		ID:          RuleSkillArchive,
		Severity:    Error,
		Title:       "archive inside a skill",
		Explanation: "The skill bundles an archive (recognised by name or by magic bytes), whose content cannot be reviewed or linted; skills-mcp does not serve such skills.",
		Fix:         "Unpack the files into the skill folder.",
	},
	{
		ID:          RuleSkillFrontmatter,
		Severity:    Error,
		Title:       "invalid SKILL.md frontmatter",
		Explanation: "SKILL.md must start with a YAML frontmatter block that follows the Agent Skills rules (description present and at most 1024 characters, string fields, metadata of strings).",
		Fix:         "Fix the field the message names.",
	},
	{
		ID:          RuleSkillLimits,
		Severity:    Error,
		Title:       "skill over the SEP-2640 limits",
		Explanation: "A skill may hold at most 512 files and 16 MiB; skills-mcp withholds larger skills unless --allow-oversize is set.",
		Fix:         "Move large or generated files out of the skill, or split it.",
	},
	{
		ID:          RuleSkillName,
		Severity:    Error,
		Title:       "invalid skill name",
		Explanation: "The name must be 1–64 lowercase letters, digits and single hyphens, and equal the skill's folder name.",
		Fix:         "Rename the skill or its folder so both match a valid name.",
	},
	{
		ID:          RuleSymlinkEscape,
		Severity:    Error,
		Title:       "symlink points outside the skill",
		Explanation: "A symlink inside the skill targets a path outside it (absolute, or climbing out with ..), which a host that copies or follows it would read or overwrite.",
		Fix:         "Replace the symlink with the file it should contain.",
	},
	{
		ID:          RuleTestAutoload,
		Severity:    Warning,
		Title:       "file that a tool runs automatically",
		Explanation: "conftest.py, pytest plugins (pytest_plugins, addopts -p, pytest11) and sitecustomize.py run as soon as pytest or Python starts in the folder, without being called.",
		Fix:         "Remove the auto-loaded file, or make its code an explicit script the user runs.",
	},
	{
		ID:          RuleUnicodeTag,
		Severity:    Error,
		Title:       "Unicode tag characters",
		Explanation: "Tag characters (U+E0000–U+E007F) are invisible but models read them as ASCII, so they can smuggle hidden instructions.",
		Fix:         "Delete the tag characters.",
	},
	{
		ID:          RuleWorldWritable,
		Severity:    Warning,
		Title:       "world-writable permissions",
		Explanation: "chmod 777/666, o+w or a+w (or umask 000, icacls Everyone:F) lets any user on the machine change the file, for example to plant code the agent later runs.",
		Fix:         "Use the narrowest mode that works, such as 755 for programs and 644 for data.",
	},
	{
		ID:          RuleZipPath,
		Severity:    Error,
		Title:       "unsafe path in a zip",
		Explanation: "A zip entry name is absolute, contains .. or a backslash, so extracting it naively writes outside the target folder.",
		Fix:         "Rebuild the zip from the skill folder with relative, slash-separated names.",
	},
	{
		ID:          RuleZipRefused,
		Severity:    Error,
		Title:       "the server refuses this zip",
		Explanation: "skills-mcp checks every zip library before extracting it and refuses the whole archive for one bad entry (a symlink, a device, an encrypted or duplicate entry, an unknown compression method, lying sizes, a corrupt structure, sizes or counts over the limits), so none of its skills is served.",
		Fix:         "Rebuild the zip from the skill folders with regular files only (zip -r without -y, or skills-mcp pack for a vault).",
	},
})

func sortRules(rs []Rule) []Rule {
	slices.SortFunc(rs, func(a, b Rule) int { return strings.Compare(a.ID, b.ID) })
	return rs
}

// ruleIndex maps a rule ID to its position in rules.
var ruleIndex = func() map[string]int {
	m := make(map[string]int, len(rules))
	for i, r := range rules {
		m[r.ID] = i
	}
	return m
}()

// Rules returns every rule, sorted by ID. The slice is the caller's.
func Rules() []Rule {
	return slices.Clone(rules)
}

// Lookup returns the rule with the given ID and reports whether it exists.
func Lookup(id string) (Rule, bool) {
	i, ok := ruleIndex[id]
	if !ok {
		return Rule{}, false
	}
	return rules[i], true
}
