package api_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"path/filepath"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/golden"
	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

var updateOpenAPI = flag.Bool("update-openapi", false, "rewrite testdata/openapi.json from the API as built")

// TestOpenAPIDocument pins the document the API serves: its routes, their
// scopes, statuses and every schema of a body sent or answered. A change
// of the wire, meant or not, shows here first; one that is meant is taken
// with -update-openapi and goes in the CHANGELOG.
func TestOpenAPIDocument(t *testing.T) {
	e := newEnv(t, store.Options{Dir: filepath.Join(t.TempDir(), "data")})
	var doc bytes.Buffer
	if err := json.Indent(&doc, e.a.Document(), "", "  "); err != nil {
		t.Fatal(err)
	}
	doc.WriteByte('\n')
	golden.Check(t, filepath.Join("testdata", "openapi.json"), doc.Bytes(), *updateOpenAPI, "update-openapi")
}
