package clawhub_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzRequests sends hostile bodies and paths to the registry's routes:
// it never panics, never answers 5xx for a client's mistake, and every
// refusal is ClawHub's plain-text error.
func FuzzRequests(f *testing.F) {
	for _, s := range []struct{ path, body string }{
		{"/api/v1/skills", `{"slug":"notes","version":"1.0.0","files":[{"path":"SKILL.md","storageId":"x"}]}`},
		{"/api/v1/skills", `{"slug":"notes","version":"1.0.0-rc.1+b","files":[]}`},
		{"/api/v1/skills/-/upload-url", `{"path":"../../x","size":-1,"sha256":"zz"}`},
		{"/api/v1/skills/-/upload-url", `{"path":"SKILL.md","size":3,"sha256":"` + strings.Repeat("a", 64) + `"}`},
		{"/api/v1/skills/-/upload/abc", "abc"},
		{"/api/v1/resolve?slug=notes&hash=%00", ""},
		{"/api/v1/download?slug=../x&version=v1", ""},
		{"/api/v1/search?q=%ff%fe&limit=-9", ""},
	} {
		f.Add(s.path, s.body)
	}
	fx := newFixture(f, false)
	if st, body := fx.publish(f, fx.write, "notes", "1.0.0", map[string]string{"SKILL.md": skillMD("notes")}); st != 200 {
		f.Fatalf("publish: %d %s", st, body)
	}
	h := fx.srv.Config.Handler
	f.Fuzz(func(t *testing.T, path, body string) {
		if !strings.HasPrefix(path, "/api/v1/") {
			return
		}
		method := http.MethodGet
		if body != "" {
			method = http.MethodPost
		}
		req, err := http.NewRequest(method, "http://hub"+path, bytes.NewReader([]byte(body)))
		if err != nil {
			return
		}
		req.Header.Set("Authorization", "Bearer "+fx.write)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 && rec.Code != http.StatusNotImplemented {
			t.Fatalf("%s %q: %d %s", path, body, rec.Code, rec.Body)
		}
		if rec.Code >= 400 && !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain") {
			t.Fatalf("%s: %d refusal of type %q", path, rec.Code, rec.Header().Get("Content-Type"))
		}
	})
}
