package bench

import (
	"encoding/json"
	"math"
	"testing"
)

func TestPercentile(t *testing.T) {
	for _, tc := range []struct {
		name string
		xs   []float64
		p    float64
		want float64
	}{
		{"one value", []float64{7}, 50, 7},
		{"odd median", []float64{3, 1, 2}, 50, 2},
		{"even median is the mean of the middle two", []float64{4, 1, 3, 2}, 50, 2.5},
		{"minimum", []float64{5, 9, 1}, 0, 1},
		{"maximum", []float64{5, 9, 1}, 100, 9},
		{"interpolated p95", []float64{0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100}, 95, 95},
		{"p99 of 1..100", seq(1, 100), 99, 99.01},
		{"p90 between ranks", []float64{1, 2}, 90, 1.9},
		{"duplicates", []float64{2, 2, 2, 8}, 50, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Percentile(tc.xs, tc.p); math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("Percentile(%v, %v) = %v, want %v", tc.xs, tc.p, got, tc.want)
			}
		})
	}
}

func TestPercentileEdges(t *testing.T) {
	for _, tc := range []struct {
		xs []float64
		p  float64
	}{{nil, 50}, {[]float64{1}, -1}, {[]float64{1}, 101}, {[]float64{1}, math.NaN()}} {
		if got := Percentile(tc.xs, tc.p); !math.IsNaN(got) {
			t.Errorf("Percentile(%v, %v) = %v, want NaN", tc.xs, tc.p, got)
		}
	}
	xs := []float64{3, 1, 2}
	Median(xs)
	if xs[0] != 3 || xs[1] != 1 || xs[2] != 2 {
		t.Errorf("Median reordered its input: %v", xs)
	}
}

func TestSummarize(t *testing.T) {
	got := Summarize([]float64{4, math.NaN(), 1, 9, 2})
	want := Summary{N: 4, Median: 3, Min: 1, Max: 9}
	if got != want {
		t.Errorf("Summarize = %+v, want %+v", got, want)
	}
	none := Summarize([]float64{math.NaN()})
	if none.N != 0 || !math.IsNaN(none.Median) {
		t.Errorf("Summarize(NaN) = %+v, want N=0 and NaN values", none)
	}
	b, err := json.Marshal(map[string]Summary{"a": got, "b": none})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"a":{"n":4,"median":3,"min":1,"max":9},"b":{"n":0}}`; string(b) != want {
		t.Errorf("JSON = %s, want %s", b, want)
	}
}

func seq(lo, hi int) []float64 {
	var out []float64
	for i := lo; i <= hi; i++ {
		out = append(out, float64(i))
	}
	return out
}
