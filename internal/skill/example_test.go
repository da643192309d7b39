package skill_test

import (
	"fmt"

	"github.com/skills-mcp/skills-mcp/internal/skill"
)

func ExampleParse() {
	data := []byte("---\nname: code-review\ndescription: Review code.\nmetadata:\n  version: 1.0\n---\n# Code review\n")
	doc, err := skill.Parse(data)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s\n", doc.Frontmatter.JSON())
	fmt.Printf("body: %q\n", data[doc.BodyOffset:])
	for _, p := range skill.Validate(doc.Frontmatter, nil) {
		fmt.Printf("%s %s: %s\n", p.Rule, p.Field, p.Message)
	}
	// Output:
	// {"name":"code-review","description":"Review code.","metadata":{"version":1}}
	// body: "# Code review\n"
	// F15 metadata.version: metadata.version is 1.0, which YAML reads as a number, not a string; quote it: "1.0"
}

func ExampleCheckName() {
	fmt.Println(skill.CheckName("code-review"))
	fmt.Println(skill.CheckName("Code_Review"))
	// Output:
	// <nil>
	// name "Code_Review" must be lowercase letters, digits and "-" (try "code-review")
}
