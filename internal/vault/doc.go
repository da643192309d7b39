// Package vault reads the extras of an Obsidian-style business knowledge
// base (a "vault") that sit next to its Agent Skills.
//
// A vault keeps, besides its skills, playbooks and value chains. A playbook
// is a markdown note whose frontmatter says "type: playbook"; its numbered
// steps chain skills into an outcome ("3. cro (audit) → Find the leaks
// (AGENT)"). A value chain is an end-to-end business journey such as
// lead-to-cash, made of ordered stages, to which skills and playbooks map
// themselves through their frontmatter (value-chains and chain-stage for a
// skill, value-chain and chain-coverage for a playbook). Chains are declared
// in a definition file (value-chains.md) or a generated index
// (VALUE-CHAINS.md), or else derived from what the members declare.
//
// The parsing half of the package is pure: ParseSteps reads the steps of a
// playbook body, Embeds lists the files a note embeds, ParseChainFile reads a
// chain definition or index file, and BuildChains joins chain definitions
// with their members into a coverage table. These functions take strings,
// do no file IO, never panic, and do work roughly linear in their input, so
// they are safe on whatever a vault contains.
//
// The other half reads a vault through an fs.FS: DetectLayout recognises a
// vault inside a library root (the root is the boundary), Load reads the
// playbook folder the vault ships, counts its private ones without reading
// them and finds its chain file, never following a symlink, and Build joins
// what Load read with the skills a library serves: the runner gate, step
// skills, hidden and misplaced playbooks, cycles and chain coverage.
package vault
