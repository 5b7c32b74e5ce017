package runtime

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/rlmpl/rlmpl/host/handle"
	"github.com/rlmpl/rlmpl/host/pack"
)

// TestStableWindow: under window(stable) each request repeats the
// previous one up to its goal while the window keeps its start (kept),
// the start moves forward in one step when the history no longer fits
// (moved: the boundary's text changes then and only then), no request
// exceeds the ceiling, and replay still renders every request byte for
// byte.
func TestStableWindow(t *testing.T) {
	c := memConv(t)
	p := &planner{answers: []string{final("noted")}}
	opts := turnOpts(p, handle.New(nil))
	opts.Pack.Policy.MaxContextTokens, opts.Pack.Policy.ProviderContextTokens = 6000, 6000
	opts.Pack.Policy.Window = pack.Stable
	var windows []string
	var last string
	for i := range 40 {
		opts.TurnID = fmt.Sprintf("t%d", i)
		res, err := c.Turn(context.Background(), user(fmt.Sprintf("question %d: %s", i, strings.Repeat("lease renewal detail ", 40))), opts)
		if err != nil {
			t.Fatalf("turn %d: %v", i, err)
		}
		b := res.Receipt.Context.Boundary
		windows = append(windows, b.Window)
		if res.Receipt.Calls[0].LocalPromptTokens > 6000 {
			t.Fatalf("turn %d: %d tokens over the ceiling", i, res.Receipt.Calls[0].LocalPromptTokens)
		}
		last = opts.TurnID
	}
	moved := 0
	for i := 1; i < len(p.reqs); i++ {
		prev, cur := p.reqs[i-1].Messages, p.reqs[i].Messages
		if windows[i] == "moved" {
			moved++
			continue
		}
		for j := range len(prev) - 1 { // all but the goal
			if cur[j].Content != prev[j].Content || cur[j].Role != prev[j].Role {
				t.Fatalf("turn %d kept its window but message %d differs from the previous request's", i, j)
			}
		}
	}
	if moved == 0 || moved > 10 || windows[1] != "kept" {
		t.Errorf("windows %v: %d moves", windows, moved)
	}
	if _, err := c.Replay(context.Background(), last); err != nil {
		t.Fatal(err)
	}
}
