package hubcmd

import (
	"reflect"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/hub/endpoint"
	"github.com/skills-mcp/skills-mcp/internal/hub/hubserve"
)

// Every count the endpoints keep per project reaches /metrics.
func TestProjectStats(t *testing.T) {
	got := projectStats(endpoint.Stats{Projects: []endpoint.ProjectStats{
		{ID: "p1", Sessions: 2, Bindings: 3, Requests: 9, IndexRequests: 6},
		{ID: "p2"},
	}})
	want := []hubserve.ProjectStat{
		{Project: "p1", Sessions: 2, Bindings: 3, Requests: 9, IndexRequests: 6},
		{Project: "p2"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("projectStats = %+v, want %+v", got, want)
	}
}
