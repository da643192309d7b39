package skillsext

import (
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Error codes used by the extension.
const (
	// CodeInvalidParams answers an unknown skill, file, directory or cursor.
	CodeInvalidParams = jsonrpc.CodeInvalidParams
	// CodeInternal answers a failure of the server itself.
	CodeInternal = jsonrpc.CodeInternalError
)

// InvalidParams returns a -32602 error whose message says what is wrong and
// what to call instead. When uri is not empty it is also put in data, as the
// base protocol does for an unknown resource.
func InvalidParams(uri, format string, args ...any) *jsonrpc.Error {
	e := &jsonrpc.Error{Code: CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
	if uri != "" {
		data, _ := json.Marshal(map[string]string{"uri": uri})
		e.Data = data
	}
	return e
}

// NoSkill is the error for skills/get of a URI that is not a served skill.
func NoSkill(uri string) *jsonrpc.Error {
	return InvalidParams(uri, "no skill is served at %s; call skills/list for the skills this server serves", uri)
}

// Internal is the error for a failure of the server, never of the request.
func Internal(format string, args ...any) *jsonrpc.Error {
	return &jsonrpc.Error{Code: CodeInternal, Message: fmt.Sprintf(format, args...)}
}
