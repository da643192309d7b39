package sandboxtest

import (
	"os"
	"path/filepath"
)

// CgroupFolders lists the folders named name (a path below a hierarchy's
// root, such as "skills-mcp/OWNER") in each cgroup hierarchy of the host,
// v1's and v2's, and every folder below them: what a backend's runs and
// Close left there.
func CgroupFolders(name string) []string {
	var out []string
	ms, _ := filepath.Glob(filepath.Join("/sys/fs/cgroup", "*", name))
	if _, err := os.Stat(filepath.Join("/sys/fs/cgroup", name)); err == nil {
		ms = append(ms, filepath.Join("/sys/fs/cgroup", name))
	}
	for _, m := range ms {
		filepath.WalkDir(m, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				out = append(out, p)
			}
			return nil
		})
	}
	return out
}
