package bench

import (
	"encoding/json"
	"math"
	"slices"
)

// Percentile returns the p-th percentile (0 ≤ p ≤ 100) of xs by linear
// interpolation between the two nearest ranks, the method of NumPy's
// default and of most spreadsheet PERCENTILE functions: the 50th percentile
// of an even count is the mean of the middle two. xs is not modified. It
// returns NaN for an empty xs or a p outside [0, 100].
func Percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 || !(p >= 0 && p <= 100) {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return percentileSorted(s, p)
}

func percentileSorted(s []float64, p float64) float64 {
	rank := p / 100 * float64(len(s)-1)
	lo := int(math.Floor(rank))
	hi := int(math.Ceil(rank))
	if lo == hi {
		return s[lo]
	}
	return s[lo] + (s[hi]-s[lo])*(rank-float64(lo))
}

// Median returns the 50th percentile of xs (NaN if xs is empty).
func Median(xs []float64) float64 { return Percentile(xs, 50) }

// Summary is the spread of one metric over several runs. N counts the runs
// that measured it; a metric no run measured has N == 0 and NaN values.
type Summary struct {
	N      int     `json:"n"`
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

// Summarize returns the median, minimum and maximum of xs, ignoring NaN
// values (metrics a run could not measure).
func Summarize(xs []float64) Summary {
	s := make([]float64, 0, len(xs))
	for _, x := range xs {
		if !math.IsNaN(x) {
			s = append(s, x)
		}
	}
	if len(s) == 0 {
		return Summary{Median: math.NaN(), Min: math.NaN(), Max: math.NaN()}
	}
	slices.Sort(s)
	return Summary{N: len(s), Median: percentileSorted(s, 50), Min: s[0], Max: s[len(s)-1]}
}

// MarshalJSON implements json.Marshaler. A metric no run measured is
// written as {"n":0}: JSON has no NaN.
func (s Summary) MarshalJSON() ([]byte, error) {
	if s.N == 0 {
		return []byte(`{"n":0}`), nil
	}
	type plain Summary
	return json.Marshal(plain(s))
}
