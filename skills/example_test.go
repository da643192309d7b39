package skills_test

import (
	"context"
	"fmt"
	"net/http"
	"testing/fstest"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skills-mcp/skills-mcp/skills"
)

// Serve a library next to your own tools on your own server.
func ExampleAttach() {
	lib := fstest.MapFS{
		"greet/SKILL.md": {Data: []byte("---\nname: greet\ndescription: Greet the user. Use when they say hello.\n---\nSay hello.\n")},
	}
	catalog, err := skills.Open(context.Background(), []skills.Library{{FS: lib}}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer catalog.Close()
	server := mcp.NewServer(&mcp.Implementation{Name: "mine", Version: "v1"}, nil)
	if err := skills.Attach(server, catalog, nil); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(catalog.Skills())
	// Output: [skill://greet/SKILL.md]
}

// Serve one catalog per tenant behind one HTTP endpoint.
func ExampleNewHandler() {
	tenants := map[string]*skills.Catalog{}
	for _, name := range []string{"acme", "globex"} {
		lib := fstest.MapFS{name + "-onboarding/SKILL.md": {Data: []byte("---\nname: " + name + "-onboarding\ndescription: Onboard a new " + name + " hire.\n---\nSteps.\n")}}
		c, err := skills.Open(context.Background(), []skills.Library{{FS: lib}}, nil)
		if err != nil {
			fmt.Println(err)
			return
		}
		defer c.Close()
		tenants[name] = c
	}
	h, err := skills.NewHandler(skills.HandlerOptions{
		Select: func(r *http.Request) (*skills.Catalog, error) {
			c, ok := tenants[r.Header.Get("X-Tenant")]
			if !ok {
				return nil, fmt.Errorf("unknown tenant")
			}
			return c, nil
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h) // then http.ListenAndServe(addr, mux)
	fmt.Println(len(tenants), "tenants")
	// Output: 2 tenants
}
