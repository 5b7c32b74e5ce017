// Package pack compiles a provider-visible context under a hard token
// ceiling: fixed sections are charged first, then one exact optimization
// (package solver) chooses a variant — or omission — for every unit, and a
// ledger accounts for every token in stages that sum to the total.
//
// The ceiling is min(MaxContextTokens, ProviderContextTokens) minus the
// output reserve and the safety margin; nothing is ever packed over it
// (overflow is fail-closed). Results are deterministic: the solver breaks
// ties by a fixed rule (newer units, then fewer tokens), and the ledger's
// stage order is the unit order.
//
// Pack values are immutable and Pack is safe for concurrent use.
package pack

import (
	"context"
	"fmt"

	"github.com/rlmpl/rlmpl/solver"
	"github.com/rlmpl/rlmpl/tokenizer"
)

// Policy is the budget of one pack, and how its history window is chosen.
// There are no Go defaults: the policy is lib's (default_context_policy/1;
// host.Host.Policy reads it for Go callers). Check it with
// [Policy.Validate].
type Policy struct {
	MaxContextTokens      int64 // operator cap
	ProviderContextTokens int64 // the model's window
	ReserveOutputTokens   int64
	SafetyMarginTokens    int64
	MinRecentTurns        int    // the mandatory hot tail, in messages
	MaxCandidates         int    // older messages considered beyond the tail
	Overflow              string // "deny": fail closed, the only mode
	Window                Window // how older turns are chosen
	// StableSlidePercent is how far window(stable) moves when it must:
	// the share of the older history's room it frees (1..90). Zero means
	// 50.
	StableSlidePercent int64
	// CategoryLimits cap the fixed sections of a category (instructions,
	// skills, tools), in tokens; zero or absent means no cap of its own.
	CategoryLimits map[string]int64
}

// Window is how a conversation pack chooses its optional older turns.
type Window string

// Windows.
const (
	// Contiguous keeps the longest run of whole exchanges (a user message
	// and what answers it) right before the hot tail that fits, so the
	// model never sees an answer without its question and the omitted
	// history is one prefix.
	Contiguous Window = "contiguous"
	// MostTurns is upstream's model: as many older turns as fit, wherever
	// they are (small old turns can win over larger recent ones).
	MostTurns Window = "most_turns"
	// Stable is a contiguous window whose start stays put while the
	// conversation grows (ConversationInput.StableStart, the previous
	// request's), so each request extends the one before byte for byte
	// and a provider's prompt cache serves it; when the window no longer
	// fits, its start moves forward in one step, to where the kept history
	// takes (100 − Policy.StableSlidePercent)% of the room it had.
	Stable Window = "stable"
)

// Effective is the hard ceiling of the whole request: min(operator cap,
// provider window). A 300k cap on a 1M-token model stays 300k.
func (p Policy) Effective() int64 { return min(p.MaxContextTokens, p.ProviderContextTokens) }

// FieldError names the policy field a validation error is about.
type FieldError struct {
	Field string
	Value any
	Msg   string
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("pack: policy %s: %s (got %v)", e.Field, e.Msg, e.Value)
}

// Validate checks every field.
func (p Policy) Validate() error {
	switch {
	case p.MaxContextTokens < 1 || p.MaxContextTokens > solver.MaxValue:
		return &FieldError{"max_context_tokens", p.MaxContextTokens, "must be a positive integer"}
	case p.ProviderContextTokens < 1 || p.ProviderContextTokens > solver.MaxValue:
		return &FieldError{"provider_context_tokens", p.ProviderContextTokens, "must be a positive integer"}
	case p.ReserveOutputTokens < 0:
		return &FieldError{"reserve_output_tokens", p.ReserveOutputTokens, "must be a non-negative integer"}
	case p.SafetyMarginTokens < 0:
		return &FieldError{"safety_margin_tokens", p.SafetyMarginTokens, "must be a non-negative integer"}
	case p.MinRecentTurns < 0:
		return &FieldError{"min_recent_turns", p.MinRecentTurns, "must be a non-negative integer"}
	case p.MaxCandidates < 0 || p.MaxCandidates > 100000:
		return &FieldError{"max_candidates", p.MaxCandidates, "must be an integer in 0..100000"}
	case p.Overflow != "deny":
		return &FieldError{"overflow", p.Overflow, "must be deny (fail closed)"}
	case p.Window != Contiguous && p.Window != MostTurns && p.Window != Stable:
		return &FieldError{"window", p.Window, "must be contiguous, most_turns or stable"}
	case p.StableSlidePercent < 0 || p.StableSlidePercent > 90:
		return &FieldError{"stable_slide_percent", p.StableSlidePercent, "must be an integer in 0..90"}
	}
	return nil
}

// Visibility says whether a section is shown to the model (and charged) or
// kept by the host (measured, charged 0).
type Visibility string

// Visibilities.
const (
	Model Visibility = "model"
	Host  Visibility = "host"
)

// Section is fixed content: a system prompt, tool schemas, instructions.
type Section struct {
	Name       string
	Visibility Visibility
	Count      tokenizer.Count // its tokens as rendered, framing included
	Value      any             // what renders it (the caller's)
}

// Variant is one representation of a unit.
type Variant struct {
	Kind    string
	Count   tokenizer.Count // tokens as rendered, framing included
	Utility int64
	Value   any
}

// Unit is one selectable item: a message (or tool-call group member), a
// warm artifact, the boundary. Order is its recency (higher is newer).
type Unit struct {
	ID        string
	Section   string
	Mandatory bool
	Order     int64
	Variants  []Variant
}

// Input is one packing problem.
type Input struct {
	Policy      Policy
	Sections    []Section
	Units       []Unit
	Constraints []solver.Constraint
	Solver      *solver.Options
}

// Selection is a chosen (non-omitted) variant.
type Selection struct {
	Unit    int // index into Input.Units
	Variant int // index into the unit's Variants
}

// Pack is a solved pack.
type Pack struct {
	Selected []Selection // in unit order
	Utility  int64
	Status   solver.Status // Optimal, or Feasible when the solver ran out of time
	Bound    int64
	Ledger   Ledger
	Stats    solver.Stats
}

// Error kinds of an infeasible pack.
const (
	KindFixedExceeds     = "fixed_context_exceeds_limit"
	KindMandatoryExceeds = "mandatory_context_exceeds_limit"
	KindNoFeasible       = "no_feasible_context_pack"
	KindEmptyVariants    = "empty_variants"
	KindCategoryExceeds  = "section_category_exceeds_limit"
)

// Error is a typed pack failure: what does not fit, and by how much.
type Error struct {
	Kind        string
	Base        int64    // fixed sections + reserve + safety
	Reserve     int64    // of Base: the policy's reserve_output_tokens
	Safety      int64    // of Base: the policy's safety_margin_tokens
	Effective   int64    // the ceiling
	Available   int64    // what was left for units
	Units       []string // the units in the conflict (mandatory ones)
	Constraints []string // the constraints in the conflict
	Excess      int64    // tokens over the ceiling
}

func (e *Error) Error() string {
	switch e.Kind {
	case KindFixedExceeds:
		// Name the parts: a small cap under the default reserve and margin
		// is the usual cause, and "fixed content" alone hides it.
		return fmt.Sprintf("pack: %s: %d tokens before any message (fixed sections %d, reserve_output_tokens %d, safety_margin_tokens %d) > limit %d",
			e.Kind, e.Base, e.Base-e.Reserve-e.Safety, e.Reserve, e.Safety, e.Effective)
	case KindMandatoryExceeds, KindPinnedExceeds:
		return fmt.Sprintf("pack: %s: units %v exceed the %d available tokens by %d", e.Kind, e.Units, e.Available, e.Excess)
	case KindCategoryExceeds:
		return fmt.Sprintf("pack: %s: %v sections take %d tokens, %d over their limit %d", e.Kind, e.Units, e.Base, e.Excess, e.Effective)
	}
	return fmt.Sprintf("pack: %s: units %v constraints %v available %d", e.Kind, e.Units, e.Constraints, e.Available)
}

// CheckFixed returns the [KindFixedExceeds] error when fixed tokens, with
// the output reserve and the safety margin, exceed the ceiling, else nil.
func (p Policy) CheckFixed(fixed int64) *Error {
	base, eff := fixed+p.ReserveOutputTokens+p.SafetyMarginTokens, p.Effective()
	if base <= eff {
		return nil
	}
	return &Error{Kind: KindFixedExceeds, Base: base, Reserve: p.ReserveOutputTokens,
		Safety: p.SafetyMarginTokens, Effective: eff, Excess: base - eff}
}

// Solve packs in. Errors are *Error (infeasible), *FieldError (policy) or
// a solver validation error.
func Solve(ctx context.Context, in Input) (Pack, error) {
	if err := in.Policy.Validate(); err != nil {
		return Pack{}, err
	}
	eff := in.Policy.Effective()
	var fixed, hostOnly int64
	for _, s := range in.Sections {
		if s.Visibility == Model {
			fixed += int64(s.Count.Tokens)
		} else {
			hostOnly += int64(s.Count.Tokens)
		}
	}
	if err := in.Policy.CheckFixed(fixed); err != nil {
		return Pack{}, err
	}
	base := fixed + in.Policy.ReserveOutputTokens + in.Policy.SafetyMarginTokens
	avail := eff - base
	prob := &solver.Problem{Capacity: avail, Constraints: in.Constraints, Units: make([]solver.Unit, len(in.Units))}
	for i, u := range in.Units {
		if len(u.Variants) == 0 {
			return Pack{}, &Error{Kind: KindEmptyVariants, Units: []string{u.ID}}
		}
		su := solver.Unit{ID: u.ID, Order: u.Order, Mandatory: u.Mandatory, Variants: make([]solver.Variant, len(u.Variants))}
		for j, v := range u.Variants {
			su.Variants[j] = solver.Variant{Kind: v.Kind, Tokens: int64(v.Count.Tokens), Utility: v.Utility}
		}
		prob.Units[i] = su
	}
	sol, err := solver.Solve(ctx, prob, in.Solver)
	if err != nil {
		return Pack{}, err
	}
	if sol.Status == solver.Infeasible {
		e := &Error{Kind: KindNoFeasible, Base: base, Effective: eff, Available: avail}
		if c := sol.Conflict; c != nil {
			e.Units = c.Units
			for _, ci := range c.Constraints {
				e.Constraints = append(e.Constraints, in.Constraints[ci].String())
			}
			e.Excess = c.Excess
			if c.Excess > 0 && len(c.Units) > 0 {
				e.Kind = KindMandatoryExceeds
			}
		}
		return Pack{}, e
	}
	p := Pack{Utility: sol.Utility, Status: sol.Status, Bound: sol.Bound, Stats: sol.Stats}
	for i, ch := range sol.Choice {
		if ch >= 0 {
			p.Selected = append(p.Selected, Selection{Unit: i, Variant: ch})
		}
	}
	p.Ledger = ledger(in, p.Selected, fixed, hostOnly)
	return p, nil
}
