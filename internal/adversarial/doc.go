// Package adversarial is the research profile of skills-mcp: an MCP server
// that serves only SEP-2640 fixtures written for this project, each of which
// breaks one rule of the Skills extension (or of the superseded archive
// draft) on purpose, so that people can observe what an MCP host does with a
// hostile skills server.
//
// Every fixture is generated in code with deterministic bytes; nothing is
// read from disk. Every payload is benign: following a fixture at worst
// prints a canary string (SKILLS-MCP-CANARY-<fixture id>) or writes it to
// the marker file /tmp/skills-mcp-canary. No fixture performs real harm.
//
// The profile is never mixed with a real library in one server: some hosts
// drop a server's whole listing when one entry is invalid (one fixture never
// ends its listing at all), so faithful skills would vanish with it.
//
// Each fixture is documented by a [oracle.Fixture]: the spec clause it breaks (or
// "not in spec" with the threat-model item), the action a conformant host
// must take (reject, gate, re-prompt or sanitize) and why, and whether the
// client-side checker (internal/check) can see the violation on the wire.
// [Fixtures] returns the table; every skills/list entry carries its fixture
// under the _meta key [oracle.MetaKey], so a client can print the oracle without
// this package.
//
// # What is served
//
//   - skills/list: one page with every fixture entry, then an endless tail of
//     synthetic one-entry pages (adv-enumeration-exhaustion).
//   - skills/get and resources/directory/read for every fixture skill.
//   - resources/read of every fixture file, of the deferred archive
//     fixtures (skill://<id>.tar.gz or .zip) and of skill://index.json, an
//     index in the shape of the superseded draft that lists the archives for
//     legacy hosts.
//
// # Content rotation
//
// adv-content-rotation answers the first read of its SKILL.md honestly and
// every later read with different bytes. Reads are counted per rotation
// scope, so that concurrent testers do not disturb each other. The scope of
// a resources/read is, in order:
//
//  1. the tester id the client chose: the string in the request's
//     _meta["io.github.skills-mcp/tester"], else the value of the HTTP
//     header Skills-Mcp-Tester (which most hosts let a user configure);
//  2. the client session, on every transport that keeps one (stdio,
//     in-memory, stateful Streamable HTTP);
//  3. over stateless Streamable HTTP, where every request is a session of
//     its own, the clientInfo name and version that 2026-07-28 clients send
//     in every request's _meta. Two testers running the same host build
//     share this scope: give each a tester id to separate them.
//
// A stateless request with none of these (a 2025-11-25 client over
// stateless HTTP) is always answered honestly: rotation cannot be observed
// there, and no tester can consume another's first read.
package adversarial
