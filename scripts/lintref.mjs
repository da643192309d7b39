// Compares `skills-mcp lint` with the Agent Skills reference validator (skills-ref, pinned in
// package-lock.json) over skill corpora, for scripts/interop.sh.
//
//   node scripts/lintref.mjs BIN CORPUS...
//
// For every skill folder in each CORPUS (a folder holding SKILL.md or skill.md), skills-ref's
// validate() says valid or not; `BIN lint --format json` says whether the folder gets an error of
// the Agent Skills format rules (skill-frontmatter, skill-name). The risk and SEP-2640 limit rules
// are not part of the format and not compared.
//
// A skill the two judge alike passes. A disagreement passes only when it falls in one of the
// classes below, each decided by the specification's text (agentskills.io/specification) and
// recorded in docs/decisions/2026-12-04-lint-vs-skills-ref.md; any other disagreement fails the
// run. Prints one line per corpus, the disagreements with their class, then the table and
// `lintref: N passed, M failed`.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

import { validate } from "skills-ref";

const [bin, ...corpora] = process.argv.slice(2);
if (!bin || corpora.length === 0) {
  console.error("usage: node scripts/lintref.mjs BIN CORPUS...");
  process.exit(2);
}

// The decided classes. missed: skills-ref rejects, lint has no format error; stricter: the
// other way round. Each test gets the reference's messages (ref) and lint's format errors
// (lint) of one skill and its SKILL.md bytes (md), and must match all of them.
const classes = [
  {
    id: "unknown-fields",
    side: "missed",
    why: "skills-ref refuses top-level fields outside its six; the specification lists fields without forbidding others, and SEP-2640 passes them through: lint reports them at info (F14)",
    test: ({ ref }) => ref.every((m) => m.startsWith("Unexpected fields in frontmatter")),
  },
  {
    id: "byte-order-mark",
    side: "missed",
    why: "skills-ref reads the BOM as content and finds no ---; the specification does not mention encoding marks, so lint warns (F2) and the server serves the file",
    test: ({ ref, md }) => md[0] === 0xef && md[1] === 0xbb && md[2] === 0xbf && ref.every((m) => m.includes("must start with YAML frontmatter")),
  },
  {
    id: "utf16-length",
    side: "missed",
    why: "skills-ref measures JavaScript string length (UTF-16 code units); the specification's limit is 1,024 characters, which lint counts as characters",
    test: ({ ref }) => ref.every((m) => /^Description exceeds 1024 character limit/.test(m)),
  },
  {
    id: "dashes-inside-frontmatter",
    side: "missed",
    why: "skills-ref splits the file at the first --- anywhere, so a value holding --- cuts its YAML short; the specification delimits the frontmatter with --- lines, which lint reads",
    test: ({ ref, md }) => {
      const text = md.toString("utf8").slice(3);
      const end = text.search(/\r?\n---\r?(\n|$)/);
      return end > 0 && text.slice(0, end).includes("---") && ref.every((m) => m.startsWith("Invalid YAML in frontmatter"));
    },
  },
  {
    id: "ascii-names",
    side: "stricter",
    why: "skills-ref accepts any lowercase Unicode letter in a name; the specification's text gives the allowed characters as a-z, 0-9 and -, which lint enforces (F5)",
    test: ({ lint }) => lint.every((m) => m.includes("[F5]") && /[^\x00-\x7f]/.test(m)),
  },
  {
    id: "empty-compatibility",
    side: "stricter",
    why: "skills-ref accepts compatibility: \"\"; the specification says it must be 1-500 characters if provided",
    test: ({ lint }) => lint.every((m) => m.includes("[F11]") && m.includes("empty")),
  },
];

// skillDirs lists the skill folders below root.
function skillDirs(root) {
  const out = [];
  const walk = (dir, depth) => {
    let entries;
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    if (entries.some((e) => e.isFile() && (e.name === "SKILL.md" || e.name === "skill.md"))) out.push(dir);
    if (depth >= 8) return;
    for (const e of entries) {
      if (e.isDirectory() && e.name !== "node_modules" && e.name !== ".git") walk(path.join(dir, e.name), depth + 1);
    }
  };
  walk(root, 0);
  return out.sort();
}

// lintErrors maps each skill folder lint saw to its format errors.
function lintErrors(root) {
  let out;
  try {
    out = execFileSync(bin, ["lint", "--format", "json", "--fail-on", "none", root], { encoding: "utf8", maxBuffer: 256 << 20 });
  } catch (e) {
    out = e.stdout;
  }
  const report = JSON.parse(out);
  const m = new Map();
  for (const s of report.skills ?? []) {
    const errs = (s.findings ?? [])
      .filter((f) => f.severity === "error" && (f.rule === "skill-frontmatter" || f.rule === "skill-name"))
      .map((f) => f.message);
    m.set(path.normalize(s.path), errs);
  }
  return m;
}

const rows = [];
let passed = 0;
let failed = 0;
for (const corpus of corpora) {
  const lint = lintErrors(corpus);
  const row = { corpus, skills: 0, refRejects: 0, lintErrors: 0, agree: 0, decided: {}, undecided: 0 };
  for (const dir of skillDirs(corpus)) {
    row.skills++;
    const ref = await validate(dir);
    const errs = lint.get(path.normalize(dir)) ?? [];
    const mdName = fs.existsSync(path.join(dir, "SKILL.md")) ? "SKILL.md" : "skill.md";
    const md = fs.readFileSync(path.join(dir, mdName));
    if (ref.length > 0) row.refRejects++;
    if (errs.length > 0) row.lintErrors++;
    if ((ref.length > 0) === (errs.length > 0)) {
      row.agree++;
      passed++;
      continue;
    }
    const side = ref.length > 0 ? "missed" : "stricter";
    const cls = classes.find((c) => c.side === side && c.test({ ref, lint: errs, md }));
    if (cls) {
      row.decided[cls.id] = (row.decided[cls.id] ?? 0) + 1;
      passed++;
      console.log(`  decided ${cls.id}: ${dir}`);
    } else {
      row.undecided++;
      failed++;
      console.log(`  UNDECIDED ${side}: ${dir}\n    skills-ref: ${JSON.stringify(ref)}\n    lint: ${JSON.stringify(errs)}`);
    }
  }
  rows.push(row);
}

console.log("\n| corpus | skills | skills-ref rejects | lint errors | agree | decided disagreements | undecided |");
console.log("|---|---:|---:|---:|---:|---|---:|");
for (const r of rows) {
  const decided = Object.entries(r.decided).map(([k, v]) => `${k} ${v}`).join(", ") || "none";
  console.log(`| ${r.corpus} | ${r.skills} | ${r.refRejects} | ${r.lintErrors} | ${r.agree} | ${decided} | ${r.undecided} |`);
}
console.log(`\nlintref: ${passed} passed, ${failed} failed`);
process.exit(failed > 0 ? 1 : 0);
