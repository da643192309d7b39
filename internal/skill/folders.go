package skill

import (
	"path"
	"strings"
)

// toolFolders hold tool state (version control, package managers, Python
// environments and caches), not skill content.
var toolFolders = map[string]bool{
	".git": true, "node_modules": true, ".venv": true, "venv": true,
	"__pycache__": true, "site-packages": true, ".pytest_cache": true,
	".mypy_cache": true, ".ruff_cache": true, ".hg": true, ".svn": true,
}

// IsToolFolder reports whether a folder of this name holds tool state
// rather than skill content: .git, .hg, .svn, node_modules, .venv, venv,
// __pycache__, site-packages, .pytest_cache, .mypy_cache, .ruff_cache and
// Python's *.dist-info and *.egg-info. It is the one list in skills-mcp:
// the catalog never enters such a folder, and lint never reads one.
func IsToolFolder(name string) bool {
	return toolFolders[name] || strings.HasSuffix(name, ".dist-info") || strings.HasSuffix(name, ".egg-info")
}

// buildArtefacts are the extensions of compiled build output.
var buildArtefacts = map[string]bool{
	".pyc": true, ".pyo": true, ".so": true, ".dylib": true, ".dll": true,
	".whl": true, ".pyi": true,
}

// IsBuildArtefact reports whether a file of this name is build output
// (.pyc, .pyo, .so, .dylib, .dll, .whl, .pyi, in any case), which the
// catalog does not serve and lint does not count toward the limits.
func IsBuildArtefact(name string) bool {
	return buildArtefacts[strings.ToLower(path.Ext(name))]
}
