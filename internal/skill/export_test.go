package skill

// ParseDependenciesWork is ParseDependencies, also returning the work it
// counted (markers matched, names looked up).
func ParseDependenciesWork(self string, body []byte) (Dependencies, int) {
	work := 0
	d := parseDependencies(self, body, &work)
	return d, work
}
