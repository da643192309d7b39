// Package skills serves Agent Skills (folders with a SKILL.md) from a Go
// program, over the official MCP go-sdk, with the MCP Skills extension
// (SEP-2640): skills/list, skills/get, resources/directory/read, the
// skill:// resources, discovery tools and the use-skill prompt. It is the
// engine of the skills-mcp server, as a library.
//
// Build a [Catalog] from libraries (folders, zips, pinned https URLs, or
// any fs.FS such as an embed.FS or a *zip.Reader) with [Open], then serve
// it on your own *mcp.Server with [Attach], next to your own tools. To
// serve many catalogs behind one HTTP endpoint (one per tenant, token or
// project), give a [Handler] a Select function that picks the catalog of
// each request.
//
// A catalog of folders can be live ([Options.Watch]): edits are picked up
// and the sessions of every server it is attached to are notified;
// [Catalog.Reload] rescans on demand and reports what changed. Catalogs
// over the same immutable content (the same fs.FS value, the same zip)
// share one in-memory skill set.
//
// Everything a catalog starts it stops: [Catalog.Close] returns once its
// goroutines have ended.
//
// # Stability
//
// v0: this API may change between minor versions; every change is listed
// in the repository's CHANGELOG.md.
package skills
