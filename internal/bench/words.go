package bench

// Word tables for the synthetic library. They are slices, never maps, so
// that drawing from them with a seeded generator gives the same text on
// every run and every Go version. Every word is lowercase a-z so that names
// built from them are valid Agent Skills names.

// categories are the top-level folders of a generated library.
var categories = []string{
	"engineering", "data-analysis", "writing", "operations",
	"security", "design", "finance", "research",
}

// verbs start a skill name: what the skill does.
var verbs = []string{
	"analyze", "audit", "build", "check", "clean", "compare", "convert", "debug",
	"deploy", "design", "draft", "estimate", "explain", "export", "extract", "fix",
	"format", "generate", "import", "index", "inspect", "label", "lint", "map",
	"measure", "merge", "migrate", "monitor", "normalize", "optimize", "plan", "profile",
	"publish", "refactor", "reconcile", "render", "review", "scan", "schedule", "score",
	"search", "sort", "split", "summarize", "sync", "tag", "test", "trace",
	"translate", "triage", "validate", "verify", "visualize", "write",
}

// objects are what a skill works on.
var objects = []string{
	"api", "archive", "budget", "changelog", "chart", "checklist", "config", "contract",
	"csv", "dashboard", "dataset", "diagram", "docker", "email", "excel", "expense",
	"feature", "form", "graph", "helm", "image", "incident", "invoice", "issue",
	"json", "kubernetes", "ledger", "license", "log", "manifest", "markdown", "metric",
	"migration", "model", "notebook", "onboarding", "outage", "pdf", "pipeline", "pitch",
	"policy", "postmortem", "presentation", "prompt", "proposal", "query", "readme", "release",
	"report", "resume", "roadmap", "schema", "secret", "slide", "spreadsheet", "sql",
	"survey", "terraform", "ticket", "timeline", "transcript", "translation", "typescript", "video",
	"vulnerability", "webhook", "wiki", "yaml",
}

// qualifiers make a name unique when verb and object are taken.
var qualifiers = []string{
	"quick", "batch", "incremental", "offline", "weekly", "monthly", "legacy", "secure",
	"team", "client", "vendor", "internal", "public", "draft", "final", "local",
	"remote", "daily", "annual", "shared", "small", "large", "strict", "lenient",
	"fast", "safe", "minimal", "full", "partial", "bulk",
}

// audiences and contexts fill descriptions and bodies.
var audiences = []string{
	"engineers", "analysts", "reviewers", "on-call staff", "new hires", "auditors",
	"product managers", "designers", "support agents", "researchers", "finance teams",
	"operators",
}

var situations = []string{
	"before a release", "after an incident", "during code review", "when numbers disagree",
	"at the end of a sprint", "when a customer reports a problem", "before sharing with a client",
	"when onboarding a new project", "while preparing a quarterly report", "when a build fails",
	"after a schema change", "when data arrives from a new source", "before a security review",
	"when the user asks for a summary", "while planning the next milestone",
}

var adjectives = []string{
	"consistent", "complete", "readable", "reproducible", "accurate", "traceable",
	"minimal", "safe", "well-structured", "documented", "validated", "up-to-date",
	"auditable", "idempotent", "portable", "concise",
}

var actions = []string{
	"Read the input carefully and note anything unusual",
	"Collect the files the user pointed to",
	"Confirm the expected format with the user if it is ambiguous",
	"Run the bundled script and keep its output",
	"Compare the result with the previous version",
	"Record every assumption in the summary",
	"Check the totals against the source",
	"Flag values that fall outside the expected range",
	"Group related findings before writing them down",
	"Ask before changing anything outside the working folder",
	"Keep the original file untouched and write a new one",
	"List the open questions at the end",
	"Prefer small, reviewable changes",
	"Quote the exact line when reporting a problem",
	"Stop and report if a required input is missing",
	"Write the final answer in the structure shown below",
	"Use the checklist in the references folder",
	"Link each finding to the file it came from",
}

var notes = []string{
	"Large inputs may take a while; process them in chunks",
	"Dates are always written as YYYY-MM-DD",
	"Never include credentials or tokens in the output",
	"The script exits non-zero when validation fails",
	"Tables use pipes and a header row",
	"Numbers keep the precision of the source",
	"If two sources disagree, report both",
	"Keep the summary under two hundred words",
	"Do not run the script on files you cannot read back",
	"Mark anything you could not verify as unverified",
	"The reference guide explains each field in detail",
	"Prefer the user's terminology over ours",
}

var pythonDeps = []string{
	"requests<3", "pyyaml>=6", "rich>=13", "pandas>=2", "jinja2>=3", "click>=8",
	"httpx>=0.27", "tabulate>=0.9",
}

var licenses = []string{"Apache-2.0", "MIT", "BSD-3-Clause"}
