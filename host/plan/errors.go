package plan

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Scope says which upstream error record an [*Error] stands for.
type Scope string

// Scopes.
const (
	ScopePlan       Scope = "plan_error"       // the plan interpreter (parse … execute)
	ScopeCompletion Scope = "completion_error" // the completion loop around it
)

// Phase is where an error happened.
type Phase string

// Phases.
const (
	PhaseParse     Phase = "parse"     // no plan could be extracted or read
	PhaseNormalize Phase = "normalize" // read, but not a plan of the closed AST
	PhaseValidate  Phase = "validate"  // a plan, but rejected before any side effect
	PhasePreflight Phase = "preflight" // an unknown provider or tool
	PhaseExecute   Phase = "execute"   // a step failed while running
	PhasePlanner   Phase = "planner"   // the planner loop
	PhaseModel     Phase = "model"     // a direct model call (Query)
	PhaseBudget    Phase = "budget"    // reported usage broke the budget
	PhaseRuntime   Phase = "runtime"   // cancellation, time limit, bad input
)

// Kind classifies an [*Error]; callers branch on it (never on messages).
type Kind string

// Plan error kinds (scope plan_error).
const (
	KindInvalidPlan        Kind = "invalid_plan"        // Detail says why (the §1.8.6 catalogue)
	KindCapabilityDenied   Kind = "capability_denied"   // capability
	KindBudgetExceeded     Kind = "budget_exceeded"     // static estimate: budget, estimated, limit
	KindUnknownProvider    Kind = "unknown_provider"    // value
	KindUnknownTool        Kind = "unknown_tool"        // value
	KindBudgetExhausted    Kind = "budget_exhausted"    // at run time: budget, requested, remaining
	KindContextError       Kind = "context_error"       // Cause is the *handle.Error
	KindModelError         Kind = "model_error"         // provider; Cause (also completion_error phase model, from Query)
	KindToolError          Kind = "tool_error"          // tool, exception
	KindInvalidPrompt      Kind = "invalid_prompt"      // a model prompt that is not text
	KindMissingInput       Kind = "missing_input"       // name
	KindMissingField       Kind = "missing_field"       // key
	KindInvalidHandle      Kind = "invalid_handle"      // a context step on a non-handle
	KindUnsupportedInput   Kind = "unsupported_input"   // value_shape
	KindNormalizationError Kind = "normalization_error" // exception
)

// Completion error kinds (scope completion_error).
const (
	KindModelCallBudgetExhausted Kind = "model_call_budget_exhausted"
	KindTokenBudgetExhausted     Kind = "token_budget_exhausted"
	KindPlanParseFailed          Kind = "plan_parse_failed" // attempts; Cause is the last *ParseError or *Error
	KindPlannerError             Kind = "planner_error"     // the Planner returned an error; Cause
	KindRecursivePlanRejected    Kind = "recursive_plan_rejected"
	KindModelCallsExceeded       Kind = "model_calls_exceeded"  // used, limit
	KindTokenBudgetExceeded      Kind = "token_budget_exceeded" // used, limit, estimated
	KindCostBudgetExceeded       Kind = "cost_budget_exceeded"  // used, limit
	KindTimeout                  Kind = "timeout"               // the time limit or ctx deadline; unwraps to context.DeadlineExceeded
	KindCancelled                Kind = "cancelled"             // ctx cancelled; unwraps to context.Canceled
	KindCompletionFault          Kind = "completion_fault"      // bad input; Detail
)

// Detail is an upstream detail term such as unbound_variable(missing):
// a name and arguments (Go values of the host's term mapping).
type Detail struct {
	Name string
	Args []any
}

// D builds a Detail.
func D(name string, args ...any) *Detail { return &Detail{Name: name, Args: args} }

// String renders d as a term, e.g. unbound_variable(missing).
func (d *Detail) String() string {
	if d == nil {
		return ""
	}
	if len(d.Args) == 0 {
		return d.Name
	}
	parts := make([]string, len(d.Args))
	for i, a := range d.Args {
		parts[i] = renderValue(a)
	}
	return d.Name + "(" + strings.Join(parts, ",") + ")"
}

// Term returns the detail as a [Compound] (an atom when it has no
// arguments) for the Prolog layer.
func (d *Detail) Term() any {
	if len(d.Args) == 0 {
		return Atom(d.Name)
	}
	return Compound{Functor: d.Name, Args: d.Args}
}

// Field is one named property of an [*Error] or an event.
type Field struct {
	Key   string
	Value any
}

// Error is a structured plan or completion error: an expected outcome, the
// Go form of upstream's plan_error{...} and completion_error{...} dicts.
// Fields hold the kind-specific properties (documented on each Kind),
// sorted by key. Cause, when set, is what Unwrap returns: a
// [*handle.Error], a [*ParseError], a provider's error, or for
// [KindCancelled] and [KindTimeout] the context error, so
// errors.Is(err, context.Canceled) holds for a cancelled completion.
type Error struct {
	Scope   Scope
	Phase   Phase
	Kind    Kind
	Detail  *Detail
	Fields  []Field
	Message string
	Cause   error
}

func (e *Error) Error() string {
	var sb strings.Builder
	e.write(&sb, true)
	return sb.String()
}

// write renders e and its causes, each message once: a cause that says
// again what its error's message ends with adds only its kind, detail and
// fields (a parse error's position is in its fields already), or nothing
// when it is not an *Error; a text field the message already holds (a
// tool's exception) is not repeated.
func (e *Error) write(sb *strings.Builder, message bool) {
	fmt.Fprintf(sb, "plan: %s: %s", e.Phase, e.Kind)
	if message {
		fmt.Fprintf(sb, ": %s", e.Message)
	}
	if e.Detail != nil {
		fmt.Fprintf(sb, " detail=%s", e.Detail)
	}
	for _, f := range e.Fields {
		if s, isText := f.Value.(string); isText && s != "" && strings.Contains(e.Message, s) {
			continue
		}
		fmt.Fprintf(sb, " %s=%s", f.Key, renderValue(f.Value))
	}
	switch c := e.Cause.(type) {
	case nil:
	case *ParseError:
		if c.Msg != e.Message {
			fmt.Fprintf(sb, ": %v", c)
		}
	case *Error:
		if !strings.HasSuffix(e.Message, c.Message) {
			fmt.Fprintf(sb, ": %v", c)
			return
		}
		sb.WriteString(": ")
		c.write(sb, false)
	default:
		if !strings.HasSuffix(e.Message, c.Error()) {
			fmt.Fprintf(sb, ": %v", c)
		}
	}
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Cause }

// Get returns the value of the field named key.
func (e *Error) Get(key string) (any, bool) {
	for _, f := range e.Fields {
		if f.Key == key {
			return f.Value, true
		}
	}
	return nil, false
}

// Record returns the error as a record term value: Scope([cause(...),
// detail(...), kind(K), message("..."), phase(P), ...]) with keys sorted, for
// the Prolog layer (host/planterm converts it to a term). A cause is rendered as
// text unless it is itself an *Error (then it nests as a record).
func (e *Error) Record() Record {
	fs := []Field{
		{Key: "kind", Value: Atom(e.Kind)},
		{Key: "message", Value: e.Message},
		{Key: "phase", Value: Atom(e.Phase)},
	}
	if e.Detail != nil {
		fs = append(fs, Field{Key: "detail", Value: e.Detail.Term()})
	}
	if e.Cause != nil {
		var ce *Error
		if errors.As(e.Cause, &ce) && ce != e {
			fs = append(fs, Field{Key: "cause", Value: ce.Record()})
		} else {
			fs = append(fs, Field{Key: "cause", Value: e.Cause.Error()})
		}
	}
	for _, f := range e.Fields {
		fs = append(fs, Field{Key: f.Key, Value: f.Value})
	}
	sortFields(fs)
	return Record{Tag: string(e.Scope), Fields: fs}
}

func planErr(phase Phase, kind Kind, msg string, fields ...Field) *Error {
	return newErr(ScopePlan, phase, kind, nil, msg, fields)
}

func invalid(phase Phase, d *Detail, msg string) *Error {
	return newErr(ScopePlan, phase, KindInvalidPlan, d, msg, nil)
}

func complErr(phase Phase, kind Kind, msg string, fields ...Field) *Error {
	return newErr(ScopeCompletion, phase, kind, nil, msg, fields)
}

func newErr(scope Scope, phase Phase, kind Kind, d *Detail, msg string, fields []Field) *Error {
	fields = slices.Clone(fields)
	sortFields(fields)
	return &Error{Scope: scope, Phase: phase, Kind: kind, Detail: d, Fields: fields, Message: msg}
}

// sortFields sorts fields by key (stable): the order of record fields.
func sortFields(fs []Field) {
	slices.SortStableFunc(fs, func(a, b Field) int { return strings.Compare(a.Key, b.Key) })
}

// ParseError reports planner text that is not a plan: nothing that looks
// like one (phase parse) or a JSON object / term that breaks the grammar
// (phase normalize). Offset, Line and Col locate the problem in the text
// (Line 0 when unknown). Msg is written for the planner model: Complete
// feeds it back in the next attempt's prompt.
type ParseError struct {
	Phase  Phase  // PhaseParse or PhaseNormalize
	Syntax string // "json" or "term"
	Offset int
	Line   int
	Col    int
	Detail *Detail // the §1.8.6 detail, e.g. unknown_operator(eval)
	Msg    string
}

func (e *ParseError) Error() string {
	loc := ""
	if e.Line > 0 {
		loc = fmt.Sprintf(" at %d:%d", e.Line, e.Col)
	}
	return fmt.Sprintf("plan: %s %s error%s: %s", e.Syntax, e.Phase, loc, e.Msg)
}

// AsError converts the parse error to the upstream plan_error shape
// (kind invalid_plan, the detail, and the position as fields).
func (e *ParseError) AsError() *Error {
	err := newErr(ScopePlan, e.Phase, KindInvalidPlan, e.Detail, e.Msg, []Field{{"syntax", Atom(e.Syntax)}})
	if e.Line > 0 {
		err.Fields = append(err.Fields, Field{"column", e.Col}, Field{"line", e.Line}, Field{"offset", e.Offset})
		sortFields(err.Fields)
	}
	err.Cause = e
	return err
}

// ErrTimeLimit is the cause of the context of a completion that ran past
// its budget's TimeLimit; the completion's error is [KindTimeout] and
// unwraps to it (and to context.DeadlineExceeded).
var ErrTimeLimit = errors.New("plan: time limit exceeded")

// control reports whether ctx is done and, if so, the control error that
// must win over whatever error a step produced. Its cause unwraps to both
// ctx.Err() and context.Cause(ctx) (ErrTimeLimit, or the caller's cause).
func control(ctx context.Context) *Error {
	if ctx.Err() == nil {
		return nil
	}
	cause := &ctlCause{cause: context.Cause(ctx), base: ctx.Err()}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		e := complErr(PhaseRuntime, KindTimeout, "the completion ran past its time limit")
		e.Cause = cause
		return e
	}
	e := complErr(PhaseRuntime, KindCancelled, "the completion was cancelled")
	e.Cause = cause
	return e
}

// ctlCause unwraps to both the context's cause and its error.
type ctlCause struct{ cause, base error }

func (c *ctlCause) Error() string { return c.cause.Error() }
func (c *ctlCause) Unwrap() []error {
	return []error{c.cause, c.base}
}

// IsControl reports whether err is a cancellation or time-limit error
// (which the Prolog layer should surface as such, not as a plan failure).
func IsControl(err error) bool {
	var e *Error
	return errors.As(err, &e) && (e.Kind == KindCancelled || e.Kind == KindTimeout)
}
