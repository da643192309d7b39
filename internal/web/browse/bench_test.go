package browse

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"
)

// BenchmarkSearchPage renders the search page of a 5,000-skill catalog,
// server side (handler to bytes, no network): the listing and a ranked
// query. It reports the p95 of the renders (issue 21's budget: 30 ms).
func BenchmarkSearchPage(b *testing.B) {
	store := scanFS(b, "gen", generatedLibrary(b, 5000))
	br, err := New(store, nil)
	if err != nil {
		b.Fatal(err)
	}
	<-func() <-chan struct{} { s := store.Snapshot(); s.StartSearch(); return s.SearchReady() }()
	for _, tc := range []struct{ name, target string }{
		{"list", "/"},
		{"query", "/?q=report+data+invoice"},
		{"filtered", "/?q=deploy&category=cat-3"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var times []time.Duration
			for b.Loop() {
				req := httptest.NewRequest("GET", tc.target, nil)
				req.RemoteAddr = "127.0.0.1:5000"
				w := httptest.NewRecorder()
				start := time.Now()
				br.ServeHTTP(w, req)
				times = append(times, time.Since(start))
				if w.Code != http.StatusOK {
					b.Fatalf("status %d", w.Code)
				}
			}
			slices.Sort(times)
			p95 := times[len(times)*95/100]
			b.ReportMetric(float64(p95.Microseconds())/1000, "p95-ms")
		})
	}
}
