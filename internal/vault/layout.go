package vault

import (
	"io/fs"
	"path"
	"slices"
	"strings"
)

// Where a vault keeps what this package reads, relative to the vault root.
const (
	// SkillsDir is the vault's skills folder.
	SkillsDir = "00-CORE/Agents/skills"
	// PlaybooksDir is the only playbook folder that is served: the
	// playbooks the vault ships.
	PlaybooksDir = "00-CORE/Playbooks"
	// ChainsFile is the canonical value-chain definition file.
	ChainsFile = "20-COMPANY/03-PROCESSES/value-chains.md"
	// RootChainsFile is the value-chain file some vaults keep at the root.
	RootChainsFile = "VALUE-CHAINS.md"
)

// PrivatePlaybookDirs hold a person's or a company's own playbooks. They
// are counted, so that an operator sees they exist, and never served.
var PrivatePlaybookDirs = []string{"20-COMPANY/03-PROCESSES/Playbooks", "10-ME/Playbooks"}

// Layout is what a library root holds.
type Layout struct {
	// Skills is the folder skills are discovered from, relative to the
	// root: "." or a vault's skills folder.
	Skills string
	// Vault is the vault root relative to the library root, or "" when the
	// root holds no vault.
	Vault string
}

// chainSearchDepth and chainSearchDirs bound the search for a value-chain
// file anywhere in a root: a skills library of 100,000 skills must not pay
// a second walk to find out it is not a vault.
const (
	chainSearchDepth = 4
	chainSearchDirs  = 256
)

// DetectLayout recognises a library root from what it holds, looking only
// inside it (the root is the boundary) and only at fixed places, so that it
// costs a few listings whatever the library's size:
//
//   - the root holds 00-CORE/Agents/skills: a vault, skills from there;
//   - the root's only visible folder holds it (a release zip's wrapper):
//     a vault one level down;
//   - the root holds 00-CORE/Playbooks, 20-COMPANY/03-PROCESSES/value-chains.md
//     or VALUE-CHAINS.md: a vault whose skills are discovered from the root;
//   - otherwise a plain skills folder, unless Probe finds a value-chains.md
//     deeper down.
//
// Symlinks never count as folders or files here.
func DetectLayout(fsys fs.FS) Layout {
	top, _ := fs.ReadDir(fsys, ".")
	core := false
	var visible []string
	for _, de := range top {
		if de.IsDir() && !hiddenName(de.Name()) {
			visible = append(visible, de.Name())
			core = core || de.Name() == "00-CORE"
		}
	}
	if core && isDir(fsys, SkillsDir) {
		return Layout{Skills: SkillsDir, Vault: "."}
	}
	// A release zip's wrapper is the root's only visible folder. Checking
	// every folder instead would cost a listing per skill of a large
	// plain library.
	if len(visible) == 1 && isDir(fsys, path.Join(visible[0], SkillsDir)) {
		return Layout{Skills: path.Join(visible[0], SkillsDir), Vault: visible[0]}
	}
	if (core && isDir(fsys, PlaybooksDir)) || isFile(fsys, ChainsFile) || isFile(fsys, RootChainsFile) {
		return Layout{Skills: ".", Vault: "."}
	}
	return Layout{Skills: ".", Vault: ""}
}

// Probe reports whether a root DetectLayout found no vault in holds a
// value-chains.md (any case) within 4 levels, outside skill folders and
// skillsDir: the last sign of a vault. It lists at most a few hundred
// folders, so a caller may run it on any library, but it is not free: the
// server runs it in the background, once per library.
func Probe(fsys fs.FS, skillsDir string) bool {
	return findChainsFile(fsys, ".", skillsDir) != ""
}

// isDir reports whether name is a folder reached through folders only:
// no component may be a symlink.
func isDir(fsys fs.FS, name string) bool {
	dir := "."
	for part := range strings.SplitSeq(name, "/") {
		des, err := fs.ReadDir(fsys, dir)
		if err != nil {
			return false
		}
		found := false
		for _, de := range des {
			if de.Name() == part {
				found = de.IsDir() // false for a symlink
				break
			}
		}
		if !found {
			return false
		}
		dir = path.Join(dir, part)
	}
	return true
}

// isFile reports whether name is a regular file reached through folders
// only.
func isFile(fsys fs.FS, name string) bool {
	dir, base := path.Split(name)
	dir = strings.TrimSuffix(dir, "/")
	if dir == "" {
		dir = "."
	} else if !isDir(fsys, dir) {
		return false
	}
	des, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return false
	}
	for _, de := range des {
		if de.Name() == base {
			return de.Type().IsRegular()
		}
	}
	return false
}

// hiddenName reports whether a file or folder name is one vaults keep out
// of sight: dotfiles, and the folders tools and archives use.
func hiddenName(name string) bool {
	if strings.HasPrefix(name, ".") {
		return true
	}
	switch name {
	case "node_modules", "__pycache__", "_archive", "UPGRADE":
		return true
	}
	return false
}

// findChainsFile returns the first value-chains.md (any case) found
// breadth-first below dir within chainSearchDepth levels, never entering
// skip, skill folders or hidden folders; "" when there is none.
func findChainsFile(fsys fs.FS, dir, skip string) string {
	level := []string{dir}
	listed := 0
	for depth := 0; depth < chainSearchDepth && len(level) > 0; depth++ {
		var next []string
		for _, d := range level {
			if listed == chainSearchDirs {
				return ""
			}
			listed++
			des, err := fs.ReadDir(fsys, d)
			if err != nil {
				continue
			}
			if slices.ContainsFunc(des, func(de fs.DirEntry) bool { return de.Name() == "SKILL.md" }) {
				continue // a skill's own files are the skill's
			}
			for _, de := range des {
				name := de.Name()
				switch {
				case de.Type().IsRegular() && strings.EqualFold(name, "value-chains.md"):
					return path.Join(d, name)
				case de.IsDir() && !hiddenName(name) && path.Join(d, name) != skip:
					next = append(next, path.Join(d, name))
				}
			}
		}
		level = next
	}
	return ""
}
