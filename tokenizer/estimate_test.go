package tokenizer

import (
	"sort"
	"strings"
	"testing"
)

// TestEstimatorNeverUnderCounts runs the estimator over the mixed corpus
// (prose, code, CJK and other scripts, emoji ZWJ sequences, whitespace and
// character runs, base64, literal special tokens) and every small case,
// whole and line by line, and checks that it is never below the exact
// o200k_base or cl100k_base count.
func TestEstimatorNeverUnderCounts(t *testing.T) {
	r := newTestRegistry(t)
	inputs := goldenInputs(t)
	names := make([]string, 0, len(inputs))
	for n := range inputs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, encName := range []string{O200kBase, Cl100kBase} {
		enc, _ := r.Encoding(encName)
		worst, worstText := 1e9, ""
		for _, name := range names {
			text := inputs[name]
			pieces := append([]string{text}, strings.SplitAfter(text, "\n")...)
			for _, p := range pieces {
				exact, est := enc.Count(p), Estimate(p).Tokens
				if est < exact {
					t.Errorf("%s %s: Estimate(%q) = %d < exact %d", encName, name, trunc(p), est, exact)
				}
				if exact > 0 && float64(est)/float64(exact) < worst {
					worst, worstText = float64(est)/float64(exact), p
				}
			}
			if strings.HasPrefix(name, "corpus/") {
				exact, est := enc.Count(text), Estimate(text).Tokens
				t.Logf("%s %-22s exact %6d estimate %6d (%.2f×)", encName, name, exact, est, float64(est)/float64(exact))
			}
		}
		t.Logf("%s: tightest estimate %.2f× on %q", encName, worst, trunc(worstText))
	}
}

func TestEstimateSmall(t *testing.T) {
	for _, tc := range []struct {
		text string
		want int
	}{
		{"", 0},
		{"a", 1},        // capped at the byte length
		{"hello", 2},    // max(1, 5/3 + 1/3) = 2 letters' worth, +10%, rounded up
		{" ", 1},        // a lone space is a whitespace run
		{"1\n1\n", 4},   // digits and line breaks never merge
		{"你好", 4},       // 3/2 each, +10%, rounded up
		{"👍", 4},        // 3, +10%, rounded up: 4 (= its UTF-8 length)
		{"\xff\xfe", 5}, // two U+FFFD (3-byte symbols), 2 each, +10%, rounded up
	} {
		if got := Estimate(tc.text); got.Tokens != tc.want || got.Method != Estimated || got.SafetyPercent != EstimatorSafetyPercent {
			t.Errorf("Estimate(%q) = %+v, want %d tokens", tc.text, got, tc.want)
		}
	}
}

// TestCalibratedCounter checks the calibrated estimator: each text count
// is the estimate times ratio and safety, rounded up; a request's stages
// still sum to its total, which grows with the ratio; a counter with an
// encoding, or a ratio that is not a ratio, is left alone.
func TestCalibratedCounter(t *testing.T) {
	text := "The lease renewal of node-7 took 412 ms; the deploy plan waits for it."
	est := Estimate(text).Tokens
	for _, tc := range []struct {
		ratio float64
		want  int
	}{{1.25, (est*125*105 + 9999) / 10000}, {0.5, (est*50*105 + 9999) / 10000}, {1, (est*105 + 99) / 100}} {
		c := (Counter{}).Calibrated(tc.ratio, 5)
		got := c.Count(text)
		if got.Tokens != tc.want || got.Method != Estimated || got.Basis != BasisCalibrated || got.SafetyPercent != 5 {
			t.Errorf("Calibrated(%v, 5).Count = %v, want %d estimated (%s, +5%%)", tc.ratio, got, tc.want, BasisCalibrated)
		}
	}
	req := fullRequest()
	req.ResponseFormat = nil
	req.Messages[1].Parts = req.Messages[1].Parts[:1] // images keep their rule
	plain := (Counter{}).CountRequest(&req)
	cal := (Counter{}).Calibrated(1.25, 5).CountRequest(&req)
	sum := 0
	for _, s := range cal.Stages {
		sum += s.Count.Tokens
	}
	if sum != cal.Total.Tokens || cal.Total.Method != Estimated {
		t.Errorf("calibrated stages sum to %d, total %v", sum, cal.Total)
	}
	if float64(cal.Total.Tokens) < 1.25*float64(plain.Total.Tokens) {
		t.Errorf("calibrated total %d < 1.25 × %d", cal.Total.Tokens, plain.Total.Tokens)
	}
	r := newTestRegistry(t)
	exact, err := r.Counter("gpt-4o")
	if err != nil {
		t.Fatal(err)
	}
	if got := exact.Calibrated(2, 5).Count(text); got != exact.Count(text) {
		t.Errorf("an exact counter calibrated counts %v, want %v", got, exact.Count(text))
	}
	if got := (Counter{}).Calibrated(0, 5).Count(text); got != Estimate(text) {
		t.Errorf("Calibrated(0, 5).Count = %v, want the plain estimate", got)
	}
}
