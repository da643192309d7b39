// Package bench measures Agent Skills servers from the outside, the way a
// host sees them. It is the engine of the skills-bench command:
//
//   - [Generate] writes a deterministic synthetic skill library (the same
//     flags give the same bytes on every machine), so that results from
//     different machines and different servers can be compared.
//   - [Run] drives any MCP server command over stdio with one fixed client
//     and times start-up, skills/list, tools/list, search, skills/get and
//     resources/read, over several runs, optionally alternating with a
//     second server.
//   - [LoadHTTP] measures throughput and latency of skills/get and
//     resources/read under concurrent load against a Streamable HTTP server.
//     By default it replays requests the SDK client built over plain
//     net/http ([ClientRaw]), so that on a machine shared with the server
//     the client's own CPU does not set the ceiling; [ClientSDK] sends each
//     request through an SDK session instead.
//
// The client speaks only the wire protocol (SEP-2640 over the official
// go-sdk); it knows nothing about how a server is built, so it measures
// skills-mcp and any other implementation in the same way.
//
// # Usage
//
//	skills-bench gen --out /tmp/lib5k --skills 5000
//	skills-bench run --lib /tmp/lib5k --runs 5 -- ./skills-mcp --root {lib}
//	skills-bench http --url http://127.0.0.1:3939/mcp --duration 10s
package bench
