package plan

import (
	"fmt"
	"strings"
)

// Plan is a closed, typed plan: a non-empty list of steps whose last (and
// only) [Final] step gives the plan's value. Plans are built by [ParseJSON],
// [ParseTerm], [ParseText] or [FromTerm]; a hand-built Plan must pass
// [Validate] like any other.
type Plan struct {
	Steps []Step
}

// Step is one plan step: [*ContextStep], [*ModelStep], [*RLMStep],
// [*ToolStep], [*ParallelStep], [*RetryStep], [*CheckpointStep],
// [*RespondStep] or [*FinalStep]. The set is closed.
type Step interface {
	// Op is the step's operator name as the JSON "op" field spells it.
	Op() string
	step()
}

// ContextStep runs one bounded operation on a context handle:
// context(Handle, Action, Bind).
type ContextStep struct {
	Handle Expr
	Action Action
	Bind   string
}

// ModelStep asks a model one prompt: model(Provider, Prompt, Options, Bind).
// Options are passed to the provider; max_tokens is capped by the remaining
// token budget.
type ModelStep struct {
	Provider string
	Prompt   Expr
	Options  map[string]any
	Bind     string
}

// RLMStep is a recursive child completion, in one of two forms:
//
//   - Plan != nil: rlm(plan([...]), Bind), the upstream form, a child plan
//     written by the parent planner; it runs in a child scope at depth+1
//     under the child capabilities.
//   - Query != nil: rlm(query(Query[, Context]), Bind), a child completion:
//     a nested planner call for the child goal, over Context (default
//     input(context)), with the child capabilities and depth+1, whose plan
//     is parsed, validated and executed like the root's.
//
// Either way Bind gets the child's final value.
type RLMStep struct {
	Plan    *Plan
	Query   Expr
	Context Expr // nil means input(context); used with Query only
	Bind    string
}

// ToolStep calls a trusted, registered tool: tool(Name, Args, Bind).
type ToolStep struct {
	Name string
	Args Expr
	Bind string
}

// ParallelStep runs its branches concurrently (at most
// [Budget].MaxConcurrentSubcalls at a time): parallel([Plan, ...], Bind).
// Bind gets the list of the branches' final values, in branch order.
type ParallelStep struct {
	Plans []*Plan
	Bind  string
}

// RetryStep runs Plan up to Attempts times until one attempt succeeds:
// retry(Attempts, Plan, Bind). Counters are never refunded.
type RetryStep struct {
	Attempts int
	Plan     *Plan
	Bind     string
}

// CheckpointStep records a label in the outcome: checkpoint(Label). No I/O.
type CheckpointStep struct {
	Label string
}

// FinalStep ends the plan with a value: final(Value).
type FinalStep struct {
	Value Expr
}

// Op returns "context".
func (*ContextStep) Op() string { return "context" }

// Op returns "model".
func (*ModelStep) Op() string { return "model" }

// Op returns "rlm".
func (*RLMStep) Op() string { return "rlm" }

// Op returns "tool".
func (*ToolStep) Op() string { return "tool" }

// Op returns "parallel".
func (*ParallelStep) Op() string { return "parallel" }

// Op returns "retry".
func (*RetryStep) Op() string { return "retry" }

// Op returns "checkpoint".
func (*CheckpointStep) Op() string { return "checkpoint" }

// Op returns "final".
func (*FinalStep) Op() string { return "final" }

func (*ContextStep) step()    {}
func (*ModelStep) step()      {}
func (*RLMStep) step()        {}
func (*ToolStep) step()       {}
func (*ParallelStep) step()   {}
func (*RetryStep) step()      {}
func (*CheckpointStep) step() {}
func (*FinalStep) step()      {}

// Action is one allow-listed context operation. Type selects which of the
// other fields apply:
//
//	peek       Selector metadata | head | tail | item, with N
//	slice      Start, Length
//	search     Pattern (non-empty)
//	partition  Partition fixed | lines, with N (> 0)
//	map        Transform identity | lowercase | uppercase | length
//	reduce     Reducer count | byte_count
type Action struct {
	Type      string
	Selector  string
	N         int
	Start     int
	Length    int
	Pattern   string
	Partition string
	Transform string
	Reducer   string
}

// Allow-lists of the context actions.
var (
	actionTypes = []string{"peek", "slice", "search", "partition", "map", "reduce"}
	selectors   = []string{"metadata", "head", "tail", "item"}
	partitions  = []string{"fixed", "lines"}
	transforms  = []string{"identity", "lowercase", "uppercase", "length"}
	reducers    = []string{"count", "byte_count"}
)

// String renders the action in term syntax, e.g. search("needle").
func (a Action) String() string {
	switch a.Type {
	case "peek":
		if a.Selector == "metadata" {
			return "peek(metadata)"
		}
		return fmt.Sprintf("peek(%s(%d))", a.Selector, a.N)
	case "slice":
		return fmt.Sprintf("slice(%d,%d)", a.Start, a.Length)
	case "search":
		return "search(" + quoteString(a.Pattern) + ")"
	case "partition":
		return fmt.Sprintf("partition(%s(%d))", a.Partition, a.N)
	case "map":
		return "map(" + a.Transform + ")"
	case "reduce":
		return "reduce(" + a.Reducer + ")"
	}
	return a.Type
}

// Expr is a plan expression: [Literal], [InputRef], [VarRef], [FieldOf], [List]
// or [Object]. The set is closed.
type Expr interface {
	expr()
}

// Literal is a constant value: nil, bool, int64, float64, string,
// [Atom], []any, map[string]any, [Record] or [Compound].
type Literal struct{ Value any }

// InputRef refers to a completion input: context (the context handle) or query
// (the goal text).
type InputRef struct{ Name string }

// VarRef refers to a value bound by an earlier step in scope.
type VarRef struct{ Name string }

// FieldOf selects a field of an object value (or of a host value such as a
// model response's text): field(Value, Key).
type FieldOf struct {
	Value Expr
	Key   string
}

// List builds a list from expressions.
type List struct{ Elems []Expr }

// Object builds an object (a map) from key-expression pairs.
type Object struct{ Pairs []Pair }

// Pair is one Key-Value of an [Object].
type Pair struct {
	Key   string
	Value Expr
}

func (Literal) expr()  {}
func (InputRef) expr() {}
func (VarRef) expr()   {}
func (FieldOf) expr()  {}
func (List) expr()     {}
func (Object) expr()   {}

// quoteString writes s as a double-quoted string valid in both syntaxes.
func quoteString(s string) string {
	var sb strings.Builder
	sb.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			sb.WriteString(`\"`)
		case '\\':
			sb.WriteString(`\\`)
		case '\n':
			sb.WriteString(`\n`)
		case '\t':
			sb.WriteString(`\t`)
		case '\r':
			sb.WriteString(`\r`)
		default:
			if r < 0x20 {
				fmt.Fprintf(&sb, `\x%x\`, r)
				continue
			}
			sb.WriteRune(r)
		}
	}
	sb.WriteByte('"')
	return sb.String()
}
