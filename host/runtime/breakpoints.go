package runtime

import (
	"slices"

	"github.com/rlmpl/rlmpl/host/pack"
)

// Cache breakpoints. A provider that caches a prompt only up to positions
// the request marks (Anthropic) is told where the stable part of each
// request ends, which the runtime knows (tokenizer.Request.Cache):
//
//   - after the fixed sections and the pinned messages: the same in every
//     request of a kind, whatever the window does;
//   - where the request stops repeating the previous one of its kind —
//     under window(stable), the end of the kept window: what the previous
//     request cached, read back;
//   - after the conversation, before the trailer (the planner's goal, a
//     step's prompt): what the next request repeats, written now — unless
//     the next request will not repeat it: under a window other than
//     window(stable), the boundary's text names the window's start, which
//     moves with every turn once history is left out, so a write there
//     would cost the cache write's premium (Anthropic: 1.25× the input
//     price) for nothing;
//   - for a respond round, after the whole request: the next round
//     repeats it with the tool calls and results added.
//
// At most maxBreakpoints, in request order. Dialects that cache every
// prefix on their own (chat completions) send none of it; the receipt
// keeps them with the recipe, so a replay renders the same bytes.

// maxBreakpoints is Anthropic's limit of cache_control blocks.
const maxBreakpoints = 4

// breakpoints are the message indices of a composed request's
// breakpoints (recipe is its recipe, in message order).
func (t *turn) breakpoints(kind string, cp Packed, sections, trailer []pack.TextSection, recipe []RecipeMessage) []int {
	fixed, tail := 0, 0
	for _, s := range sections {
		if s.Visibility == pack.Model {
			fixed++
		}
	}
	for _, sel := range cp.Selected {
		if cp.Units[sel.Unit].Section == pack.PinnedSection {
			fixed++ // pinned messages render first, after the sections
		}
	}
	for _, s := range trailer {
		if s.Visibility == pack.Model {
			tail++
		}
	}
	conversation := len(recipe) - tail - 1
	if cp.Boundary.Stable == "" && (cp.Boundary.Active || len(cp.Boundary.Omitted) > 0) {
		conversation = -1 // the window slides: nothing after the boundary repeats
	}
	bps := []int{fixed - 1, t.repeated(kind, recipe) - 1, conversation}
	if kind == "respond" {
		bps = append(bps, len(recipe)-1)
	}
	slices.Sort(bps)
	bps = slices.DeleteFunc(slices.Compact(bps), func(i int) bool { return i < 0 })
	return bps[max(0, len(bps)-maxBreakpoints):]
}

// repeated is how many leading messages recipe shares with the previous
// request of its kind: the turn's own last one for the kinds a turn sends
// one after the other (planner attempts, respond rounds), else the
// previous turn's first. (Model steps may run in parallel: which one came
// last is not deterministic, and a request must be.) The turn's first
// planner request, or first respond round, gives the receipt its
// CachePrefixTokens: the tokens it shares with the previous turn's.
func (t *turn) repeated(kind string, recipe []RecipeMessage) int {
	sequential := kind == "planner" || kind == "respond"
	t.mu.Lock()
	prev, inTurn := t.sent[kind]
	if sequential {
		t.sent[kind] = recipe
	}
	t.mu.Unlock()
	if !inTurn {
		prev = t.previousRecipes()[kind]
	}
	n, tokens := 0, 0
	for n < len(prev) && n < len(recipe) && prev[n].same(recipe[n]) {
		tokens += recipe[n].Tokens
		n++
	}
	if sequential && !inTurn {
		t.mu.Lock()
		if t.receipt.CachePrefixTokens == 0 {
			t.receipt.CachePrefixTokens = tokens
		}
		t.mu.Unlock()
	}
	return n
}
