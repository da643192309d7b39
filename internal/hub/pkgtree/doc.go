// Package pkgtree is the hub's model of a skill package: a tree of files
// with SKILL.md at its root, read whole into memory from a ZIP upload
// ([FromZip]) or a git repository at a commit ([FromGit]), digested
// ([Tree.Digest]) and inspected ([Inspect]). The store keeps what this
// package produces as an immutable version; this package keeps nothing and
// writes nothing to disk.
//
// # The tree digest
//
// A tree's identity is its digest, and two trees with the same digest are
// the same version. It is defined once, here, and the catalog publishes it
// so that an install can be checked against the catalog entry it came
// from:
//
//	"sha256:" + hex(sha256(
//	    for each file, in byte order of Path:
//	        Path + "\x00" + mode + "\x00" + hex(sha256(content)) + "\n"
//	))
//
// where Path is "/"-separated relative to the package root, mode is "644"
// or "755" (the only modes a package file has), and hex is lowercase.
// Directories are not listed: a tree is its files. The digest covers
// names, modes and contents, nothing else: not timestamps, not owners, not
// where the tree came from.
//
// # What a valid tree is
//
// Every [*Tree] this package returns has passed the same checks, whatever
// its source: at most [Limits.MaxFiles] files, none over
// [Limits.MaxFileBytes], at most [Limits.MaxPackageBytes] in all (by
// default 2,000 files, 32 MiB and 128 MiB); paths that are relative,
// "/"-separated, UTF-8, free of control characters, backslashes, ".", ".."
// and empty segments, and of any ".git" segment; no two paths equal under
// Unicode case folding, and no path both a file and a folder; and a
// SKILL.md at the root whose frontmatter parses and passes the validator
// with no fatal problem, exactly as the server requires to serve a skill.
// Links, devices, fifos, sockets and git submodules are refused wherever
// they appear in the package, before anything is kept.
//
// # Nothing runs
//
// Reading a package never executes anything it contains or anything its
// source asks for: no git hooks, no clean or smudge filters, no LFS, no
// install scripts. Blobs are read as stored. [Inspect] labels what a host
// could run; it is not proof of safety, and its output says so.
package pkgtree
