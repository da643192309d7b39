package sandboxtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestREADMETable: the README's isolation table is the measured one, each
// backend's column read from its testdata/escapes file.
func TestREADMETable(t *testing.T) {
	cols := []string{"bwrap", "docker", "gvisor"}
	res := map[string]map[string]string{}
	for _, b := range cols {
		data, err := os.ReadFile(filepath.Join(testdataDir(), "escapes", b+".txt"))
		if err != nil {
			t.Fatal(err)
		}
		res[b] = map[string]string{}
		for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			k, v, _ := strings.Cut(l, "\t")
			res[b][k] = v
		}
	}
	var want strings.Builder
	for _, e := range Escapes {
		want.WriteString("  | " + e)
		for _, b := range cols {
			v := res[b][e]
			if v == "" {
				v = "not measured"
			}
			want.WriteString(" | " + v)
		}
		want.WriteString(" |\n")
	}
	readme, err := os.ReadFile(filepath.Join(testdataDir(), "..", "..", "..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), want.String()) {
		t.Errorf("README.md's isolation table differs from the measured one; it should read:\n%s", want.String())
	}
}
