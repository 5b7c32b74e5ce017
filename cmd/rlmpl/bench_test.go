package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rlmpl/rlmpl/prolog/enginebench"
)

// TestBenchEngine runs every engine workload once, each in a fresh
// process of this binary (TestMain makes the test binary rlmpl): each
// workload checks its own answer (92 queens, SEND+MORE=MONEY, 2^100 …),
// so a wrong engine fails here, not only a slow one.
func TestBenchEngine(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every workload")
	}
	t.Setenv("RLMPL_TEST_MAIN", "1")
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"bench", "engine", "--runs", "1", "--swipl", "none", "--json"}, nil, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var r enginebench.Result
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if r.Status != "ok" || r.CPU < 0 || r.RSSKB <= 0 {
			t.Errorf("%s: %+v", r.Workload, r)
		}
		seen[r.Workload] = true
	}
	for _, w := range enginebench.Workloads() {
		if !seen[w.Name] {
			t.Errorf("workload %s did not run", w.Name)
		}
	}
}

// TestBenchEngineUsage: a filter that matches nothing, or a bad one, is a
// usage error.
func TestBenchEngineUsage(t *testing.T) {
	for _, args := range [][]string{
		{"bench", "engine", "--only", "^nosuch$", "--swipl", "none"},
		{"bench", "engine", "--only", "("},
		{"bench", "motor"},
		{"bench"},
	} {
		var out, errOut bytes.Buffer
		if code := run(context.Background(), args, nil, &out, &errOut); code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", args, code, errOut.String())
		}
	}
}
