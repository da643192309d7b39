// Package catalogbuild is the catalog builder, "skills-hub catalog build":
// a publisher's tool that indexes public skill repositories into the hub's
// catalog document (package internal/hub/index, schema version 1).
//
// Repositories come from a list, a sources file or a saved directory page
// ([Discover]); each is resolved to one commit (git, or GitHub's API) and
// read there whole through internal/hub/pkgtree ([pkgtree.Repo]): a local
// git directory in place, a remote one fetched one commit deep, a GitHub
// archive or a local zip through the project's hardened readers. Skill
// folders are found by the server's discovery rule (a SKILL.md that is a
// regular file, not in a folder of tool state, under names a skill URI can
// hold, at most catalog.DefaultDepth deep; nested skills included), and
// each is read as the hub installs it, so that its item carries the tree
// digest an install from the catalog is checked against. A folder that
// fails is reported with its reason, never fatal; a repository that cannot
// be read, a discovery past its bounds or an empty result fails the build,
// because the catalog would be wrong or truncated. Nothing is executed.
//
// The document is a function of the commits read: items sorted by id,
// sources by repository, and generated_at the newest commit's time, so two
// builds of the same commits are byte-identical.
package catalogbuild
