// Package index is the hub's installable catalog of public skills: the list
// an administrator browses and installs from. The user interface calls it
// the Catalog; in code it is the index, because package catalog already
// means the snapshot a server serves.
//
// The package parses and validates catalog documents ([Parse]), searches
// one with the project's ranked search ([Index]), ships a snapshot embedded
// in the binary so that the catalog works offline on first start
// ([Bundled]), and replaces the current snapshot from a URL or a file only
// once the new one is valid ([Catalog.Refresh], [Catalog.Import]). It keeps
// no state of its own: the last good document is kept by the hub's store
// through the [SnapshotStore] interface. Nothing here installs a package or
// touches a binding, so a catalog update can change neither.
//
// # The format, schema version 1
//
// A catalog document is one JSON object:
//
//	{
//	  "schema_version": 1,
//	  "generated_at": "2026-08-23T10:00:00Z",
//	  "sources": [{"repository": "https://github.com/o/r", "commit": "<40 hex>"}],
//	  "items": [{
//	    "id": "github.com/o/r/skills/pdf",
//	    "name": "pdf",
//	    "description": "Fill and merge PDF forms. Use when ...",
//	    "author": "o",
//	    "category": "documents",
//	    "repository": "https://github.com/o/r",
//	    "path": "skills/pdf",
//	    "commit": "<40 or 64 hex>",
//	    "license": "Apache-2.0",
//	    "requirements": "Python 3.10+ with pypdf",
//	    "file_count": 7,
//	    "size": 48213,
//	    "tree_digest": "sha256:<64 hex>"
//	  }]
//	}
//
// schema_version must be 1, and items must be present (it may be empty).
// generated_at (RFC 3339) and sources (the repositories and commits the
// document was built from) are optional. Per item:
//
//   - id (required): unique in the document, 1–256 bytes of printable ASCII
//     without spaces; it names the item when installing.
//   - name (required): the skill's frontmatter name, under the Agent Skills
//     naming rule (1–64 of a–z, 0–9 and "-").
//   - description (required): not blank, at most 1,024 characters.
//   - repository (required): an absolute URL without credentials, scheme
//     https, http, ssh, git or file.
//   - path: the package folder inside the repository, slash-separated and
//     relative, without "." or ".." elements; empty means the root.
//   - commit: the commit the item was read at, 40 or 64 lowercase hex. An
//     item without one installs from the repository's default branch,
//     resolved (and recorded in the version) at install time.
//   - author, category, license: short free text (at most 256 bytes each).
//   - requirements: the package's declared compatibility text (at most
//     1,024 bytes); absent means the requirements are unknown, never none.
//   - file_count, size: the package folder's files and bytes, not negative.
//   - tree_digest: the hub's version digest of the package tree,
//     "sha256:" and 64 lowercase hex, so an install can be checked against
//     the catalog.
//
// Fields this version does not know are ignored, so that a newer builder may
// add optional fields within version 1; a change an older reader must not
// ignore gets a new schema_version, which older readers refuse. A document
// is refused whole, never in part: a syntax error, a schema_version other
// than 1, an invalid item (named by its position and id), two items with
// one id, more than [MaxItems] items or more than [MaxBytes] bytes. The
// limits are checked while the document streams in, so a 1 GB body or a
// million items are refused without being read whole.
package index
