// Drives one real MCP client against a running or spawnable skills-mcp, for scripts/realclients.sh.
//
//   node scripts/realclients.mjs CLIENT REVISION LIBRARY (URL | -- COMMAND ARGS...)
//
// CLIENT is "sdk" (the official TypeScript SDK's Client with its SkillsClient) or "inspector"
// (MCP Inspector's CLI with --verify). REVISION is the protocol revision to negotiate:
// 2025-06-18, 2025-11-25 or 2026-07-28 for the SDK; 2025-11-25 (its "legacy" era, the
// initialize handshake) or 2026-07-28 (its "modern" era, pinned) for the Inspector.
// LIBRARY is the folder the server serves (with --root), the truth the answers are checked
// against: every skill in it must be listed and got, and every file in it read, verified by the
// client against the entry's digest and size, and equal byte for byte to the file on disk.
// URL is a Streamable HTTP endpoint; after `--` comes the command that serves over stdio.
//
// Prints what it checked and each problem found, one per line; exits 0 when there is none, 1
// otherwise, 2 on a usage error. Any error the client raises (a result its schemas reject, a
// failed verification, a JSON-RPC error) is a problem.
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { isDeepStrictEqual } from "node:util";

import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { SkillsClient } from "@modelcontextprotocol/client/ext/skills";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

const here = path.dirname(fileURLToPath(import.meta.url));
const INSPECTOR = path.join(
  here,
  "..",
  "node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js",
);
// A request, or one Inspector run, may take this long on a loaded machine before it is a failure.
const REQUEST_TIMEOUT_MS = 60_000;
const INSPECTOR_TIMEOUT_MS = 120_000;

const problems = [];
const problem = (msg) => problems.push(msg);
// One line per problem: a schema rejection's message is a whole JSON report, so it is cut short.
const reason = (err) => {
  const msg = (err instanceof Error ? err.message : String(err)).replace(/\s+/g, " ");
  return msg.length > 400 ? `${msg.slice(0, 400)}...` : msg;
};

// The library as the server must serve it: skill folders (those with a SKILL.md, relative to the
// root) and every file below them, keyed by the path a skill:// URI names.
function readLibrary(root) {
  const files = new Map();
  const skills = [];
  const walk = (rel) => {
    for (const ent of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
      const name = rel ? `${rel}/${ent.name}` : ent.name;
      if (ent.isDirectory()) walk(name);
      else if (ent.isFile()) {
        files.set(name, fs.readFileSync(path.join(root, name)));
        if (ent.name === "SKILL.md") skills.push(rel);
      }
    }
  };
  walk("");
  return { files, skills: skills.sort() };
}

// skill://a/b%20c/d.md -> a/b c/d.md; undefined for anything else.
function uriPath(uri) {
  const m = /^skill:\/\/(.+)$/.exec(uri);
  if (!m) return undefined;
  try {
    return m[1].split("/").map(decodeURIComponent).join("/");
  } catch {
    return undefined;
  }
}

// What every client must have seen, once it is done: each skill listed and got, each file read.
function checkCoverage(lib, listed, got, read) {
  for (const s of lib.skills) {
    if (!listed.has(s)) problem(`skill ${s} was not listed`);
    if (!got.has(s)) problem(`skill ${s} was not got`);
  }
  for (const s of listed) if (!lib.skills.includes(s)) problem(`listed skill ${s} is not in the library`);
  for (const p of lib.files.keys()) if (!read.has(p)) problem(`file ${p} was not read`);
}

async function runSDK(revision, lib, target) {
  const options = { capabilities: {} };
  if (revision === "2026-07-28") options.versionNegotiation = { mode: { pin: revision } };
  else options.supportedProtocolVersions = [revision];
  const client = new Client({ name: "skills-mcp-realclients", version: "0.0.0" }, options);
  client.onerror = (err) => problem(`client error: ${reason(err)}`);
  let stderr = "";
  let transport;
  if (target.url) {
    transport = new StreamableHTTPClientTransport(new URL(target.url));
  } else {
    const [command, ...args] = target.command;
    transport = new StdioClientTransport({ command, args, stderr: "pipe" });
    transport.stderr?.on("data", (b) => {
      stderr = (stderr + b.toString()).slice(-4000);
    });
  }
  const req = { timeout: REQUEST_TIMEOUT_MS };
  const listed = new Set();
  const got = new Set();
  const read = new Set();
  try {
    await client.connect(transport, req);
    const negotiated = client.getNegotiatedProtocolVersion();
    console.log(`negotiated ${negotiated}`);
    if (negotiated !== revision) problem(`negotiated ${negotiated}, want ${revision}`);
    const skills = new SkillsClient(client);
    if (!skills.supported) problem("the server does not declare the skills extension");
    const { skills: entries } = await skills.list(undefined, req);
    console.log(`listed ${entries.length} skills`);
    for (const entry of entries) {
      const p = uriPath(entry.uri);
      const dir = p?.replace(/\/SKILL\.md$/, "");
      if (!dir || dir === p) {
        problem(`listed entry ${entry.uri} is not a skill:// SKILL.md URI`);
        continue;
      }
      listed.add(dir);
      try {
        const { skill } = await skills.get(entry.uri, req);
        got.add(dir);
        if (!isDeepStrictEqual(skill, entry)) problem(`skills/get ${entry.uri} differs from its skills/list entry`);
      } catch (err) {
        problem(`skills/get ${entry.uri}: ${reason(err)}`);
      }
      if (!Array.isArray(entry.resources)) {
        problem(`${entry.uri}: resources is ${JSON.stringify(entry.resources)}, not a manifest`);
        continue;
      }
      for (const res of entry.resources) {
        const fp = uriPath(res.uri);
        try {
          const file = await skills.read(entry, res.uri, { ...req, cacheMode: "bypass" });
          read.add(fp);
          if (!file.verified) problem(`${res.uri}: read but not verified`);
          const want = lib.files.get(fp);
          if (!want) problem(`${res.uri}: served, but no such file in the library`);
          else if (!Buffer.from(file.bytes).equals(want)) problem(`${res.uri}: bytes differ from the library's file`);
        } catch (err) {
          problem(`resources/read ${res.uri}: ${reason(err)}`);
        }
      }
      if (skills.directoryRead) await walkDirectory(skills, entry, lib, req);
    }
    checkCoverage(lib, listed, got, read);
    console.log(`got ${got.size} skills, read ${read.size} of ${lib.files.size} files`);
  } catch (err) {
    problem(`${reason(err)}`);
  } finally {
    await client.close().catch((err) => problem(`closing: ${reason(err)}`));
  }
  if (problems.length && stderr) console.log(`server stderr (last lines):\n${stderr.trimEnd()}`);
}

// Reads the skill's root folder and every folder below it; each child must be a file of the
// manifest or a folder that holds some.
async function walkDirectory(skills, entry, lib, req) {
  const root = entry.uri.replace(/\/SKILL\.md$/, "");
  const queue = [root];
  while (queue.length) {
    const dir = queue.shift();
    let listing;
    try {
      listing = await skills.readDirectory(dir, req);
    } catch (err) {
      problem(`resources/directory/read ${dir}: ${reason(err)}`);
      continue;
    }
    for (const child of listing.resources) {
      const cp = uriPath(child.uri);
      if (child.mimeType === "inode/directory") {
        if (![...lib.files.keys()].some((f) => f.startsWith(`${cp}/`))) problem(`${child.uri}: a folder with no file`);
        queue.push(child.uri);
      } else if (!lib.files.has(cp)) {
        problem(`${child.uri}: listed in ${dir}, but no such file in the library`);
      }
    }
  }
}

// One Inspector CLI run; resolves to its exit status and the reports it printed (NDJSON).
function inspector(args, label) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [INSPECTOR, "--cli", ...args], {
      stdio: ["ignore", "pipe", "pipe"],
      timeout: INSPECTOR_TIMEOUT_MS,
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (b) => (out += b));
    child.stderr.on("data", (b) => (err = (err + b).slice(-4000)));
    child.on("close", (code, signal) => {
      const reports = [];
      for (const line of out.split("\n")) {
        if (!line.trim().startsWith("{")) continue;
        try {
          reports.push(JSON.parse(line));
        } catch {
          problem(`${label}: a line of output is not JSON: ${line.slice(0, 200)}`);
        }
      }
      if (code !== 0) {
        problem(`${label}: the Inspector exited with ${code ?? signal}`);
        if (err.trim()) console.log(`${label}: stderr (last lines):\n${err.trimEnd()}`);
      }
      resolve(reports);
    });
  });
}

// Checks --verify reports; returns the skill folders they cover and adds the files read.
function checkReports(label, reports, read) {
  const seen = new Set();
  for (const r of reports) {
    const p = uriPath(r.uri ?? "");
    const dir = p?.replace(/\/SKILL\.md$/, "");
    if (!dir || dir === p) {
      problem(`${label}: a report for ${r.uri}, not a skill:// SKILL.md URI`);
      continue;
    }
    seen.add(dir);
    if (r.outcome !== "verified") problem(`${label}: ${r.uri}: outcome ${r.outcome}`);
    for (const issue of [...(r.conformance ?? []), ...(r.frontmatter ?? [])]) {
      problem(`${label}: ${r.uri}: ${issue.severity ?? "issue"}: ${issue.message ?? JSON.stringify(issue)}`);
    }
    for (const f of r.files ?? []) {
      if (f.status === "verified") read.add(uriPath(f.uri));
      else problem(`${label}: ${f.uri}: ${f.status}${f.reason ? `: ${f.reason}` : ""}`);
    }
  }
  return seen;
}

async function runInspector(revision, lib, target) {
  const era = revision === "2026-07-28" ? "modern" : "legacy";
  const common = ["--verify", "--format", "json", "--protocol-era", era, "--connect-timeout", "60000"];
  const tail = target.url ? [target.url] : ["--", ...target.command];
  const read = new Set();
  const listReports = await inspector(["--method", "skills/list", ...common, ...tail], "skills/list");
  const listed = checkReports("skills/list", listReports, read);
  console.log(`skills/list --verify: ${listReports.length} skills, ${read.size} files verified`);
  const got = new Set();
  for (const r of listReports) {
    const reports = await inspector(["--method", "skills/get", "--uri", r.uri, ...common, ...tail], `skills/get ${r.uri}`);
    for (const dir of checkReports(`skills/get ${r.uri}`, reports, read)) got.add(dir);
  }
  checkCoverage(lib, listed, got, read);
  console.log(`got ${got.size} skills, read ${read.size} of ${lib.files.size} files`);
}

async function main(argv) {
  const [client, revision, library, ...rest] = argv;
  const usage = "usage: realclients.mjs sdk|inspector REVISION LIBRARY (URL | -- COMMAND ARGS...)";
  let target;
  if (rest[0] === "--" && rest.length > 1) target = { command: rest.slice(1) };
  else if (rest.length === 1 && /^https?:\/\//.test(rest[0])) target = { url: rest[0] };
  const revisions = { sdk: ["2025-06-18", "2025-11-25", "2026-07-28"], inspector: ["2025-11-25", "2026-07-28"] };
  if (!target || !revisions[client]?.includes(revision) || !library) {
    console.error(usage);
    return 2;
  }
  const lib = readLibrary(library);
  if (!lib.skills.length) {
    console.error(`realclients.mjs: no SKILL.md under ${library}`);
    return 2;
  }
  await (client === "sdk" ? runSDK : runInspector)(revision, lib, target);
  for (const p of problems) console.log(`problem: ${p}`);
  return problems.length ? 1 : 0;
}

process.exitCode = await main(process.argv.slice(2));
