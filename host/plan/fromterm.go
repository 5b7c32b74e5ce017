package plan

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// FromTerm converts a plan term to the AST: a raw term read by a
// [TermReader], or one the host converted from a trusted Prolog
// planner_handler's reply. A variable anywhere is an error (detail
// non_ground_recursive_plan), and so is nesting deeper than the plan limit
// or an [Elided] Deep subterm (detail recursive_cycle(cyclic_term): Prolog
// terms can be cyclic), and a tree of more than 100000 plans and
// expressions or an Elided one (plan_too_large: a shared subterm counts
// each time it is reached). Errors are [*ParseError] with phase normalize
// (no position: the term has none).
func FromTerm(t Term) (*Plan, error) {
	n := &termNorm{}
	return n.plan(t, "plan")
}

type termNorm struct {
	depth int
	nodes int // plans and expressions visited: shared subterms count each time
}

// maxPlanNodes bounds a plan's size as a tree. A handler-built term can
// share subterms, so a small term may stand for an exponential tree.
const maxPlanNodes = 100000

func (n *termNorm) fail(path string, d *Detail, format string, args ...any) *ParseError {
	return &ParseError{Phase: PhaseNormalize, Syntax: "term", Detail: d, Msg: path + ": " + fmt.Sprintf(format, args...)}
}

func (n *termNorm) tooLarge(path string) *ParseError {
	return n.fail(path, D("plan_too_large", int64(maxPlanNodes)), "the plan has more than %d parts", maxPlanNodes)
}

func (n *termNorm) tooDeep(path string) *ParseError {
	return n.fail(path, D("recursive_cycle", Atom("cyclic_term")), "the plan nests deeper than %d levels (or is cyclic)", 4*maxPlanNesting)
}

func (n *termNorm) nonGround(path string) *ParseError {
	return n.fail(path, D("non_ground_recursive_plan"), "the plan contains a variable")
}

// special reports a variable or an elided subterm where a plan, step,
// expression or list is expected.
func (n *termNorm) special(t Term, path string) error {
	switch t := t.(type) {
	case Var:
		return n.nonGround(path)
	case Elided:
		if t.Deep {
			return n.tooDeep(path)
		}
		return n.tooLarge(path)
	}
	return nil
}

func (n *termNorm) enter(path string) *ParseError {
	n.depth++
	if n.nodes++; n.nodes > maxPlanNodes {
		return n.tooLarge(path)
	}
	if n.depth > 4*maxPlanNesting {
		return n.tooDeep(path)
	}
	return nil
}

// compound returns t's name and arguments when t is an atom or a compound
// (a non-empty list being '.'(Head, Tail), as in Prolog).
func (n *termNorm) compound(t Term) (string, []Term, bool) {
	switch c := t.(type) {
	case Atom:
		return string(c), nil, true
	case Compound:
		return c.Functor, c.Args, true
	case []any, string:
		if h, tail, ok := listCell(c); ok {
			return ".", []Term{h, tail}, true
		}
		return "[]", nil, true
	}
	return "", nil, false
}

// list returns the elements of a list, walking '.'/2 cells for a list
// that is not proper to report where it goes wrong.
func (n *termNorm) list(t Term, path string) ([]Term, error) {
	var out []Term
	for {
		if err := n.special(t, path); err != nil {
			return nil, err
		}
		switch c := t.(type) {
		case Atom:
			if c == "[]" {
				return out, nil
			}
		case []any:
			return append(out, c...), nil
		case string:
			for _, r := range c {
				out = append(out, Atom(string(r)))
			}
			return out, nil
		case Compound:
			if c.Functor == "." && len(c.Args) == 2 {
				out = append(out, c.Args[0])
				t = c.Args[1]
				continue
			}
		}
		return nil, n.fail(path, D("invalid_list", Atom(path), show(t)), "expected a list, got %s", show(t))
	}
}

func (n *termNorm) plan(t Term, path string) (*Plan, error) {
	if err := n.enter(path); err != nil {
		return nil, err
	}
	defer func() { n.depth-- }()
	if err := n.special(t, path); err != nil {
		return nil, err
	}
	name, args, ok := n.compound(t)
	if !ok || name != "plan" || len(args) != 1 {
		return nil, n.fail(path, D("invalid_plan", show(t)), "expected plan([Step, ...]), got %s", show(t))
	}
	steps, err := n.list(args[0], path)
	if err != nil {
		return nil, err
	}
	p := &Plan{Steps: make([]Step, 0, len(steps))}
	for i, s := range steps {
		st, err := n.step(s, fmt.Sprintf("%s step %d", path, i+1))
		if err != nil {
			return nil, err
		}
		p.Steps = append(p.Steps, st)
	}
	return p, nil
}

func (n *termNorm) step(t Term, path string) (Step, error) {
	if err := n.special(t, path); err != nil {
		return nil, err
	}
	name, args, ok := n.compound(t)
	if !ok {
		return nil, n.fail(path, D("invalid_step", show(t)), "a step is a compound such as final(Expr), got %s", show(t))
	}
	bad := func() error {
		return n.fail(path, D("unknown_or_malformed_operation", Compound{Functor: "/", Args: []any{Atom(name), int64(len(args))}}),
			"unknown or malformed step %s/%d; steps are context/3, model/4, rlm/2, tool/3, parallel/2, retry/3, respond/2, checkpoint/1, final/1", name, len(args))
	}
	var err error
	switch {
	case name == "context" && len(args) == 3:
		st := &ContextStep{}
		if st.Handle, err = n.expr(args[0], path); err != nil {
			return nil, err
		}
		if st.Action, err = n.action(args[1], path); err != nil {
			return nil, err
		}
		if st.Bind, err = n.atom(args[2], "bind", path); err != nil {
			return nil, err
		}
		return st, nil
	case name == "model" && (len(args) == 4 || len(args) == 3):
		st := &ModelStep{Options: map[string]any{}}
		if st.Provider, err = n.atom(args[0], "provider", path); err != nil {
			return nil, err
		}
		if st.Prompt, err = n.expr(args[1], path); err != nil {
			return nil, err
		}
		if len(args) == 4 {
			if st.Options, err = n.options(args[2], path); err != nil {
				return nil, err
			}
		}
		if st.Bind, err = n.atom(args[len(args)-1], "bind", path); err != nil {
			return nil, err
		}
		return st, nil
	case name == "rlm" && len(args) == 2:
		st := &RLMStep{}
		switch qn, qa, _ := n.compound(args[0]); {
		case qn == "plan":
			if st.Plan, err = n.plan(args[0], path+" rlm"); err != nil {
				return nil, err
			}
		case qn == "query" && (len(qa) == 1 || len(qa) == 2):
			// query("text") is short for query(literal("text")).
			if q, ok := text(qa[0]); ok && q != "" && isText(qa[0]) {
				st.Query = Literal{Value: q}
			} else if st.Query, err = n.expr(qa[0], path); err != nil {
				return nil, err
			}
			if len(qa) == 2 {
				if st.Context, err = n.expr(qa[1], path); err != nil {
					return nil, err
				}
			}
		default:
			return nil, n.fail(path, D("invalid_plan", show(args[0])), "rlm/2 takes plan([...]) or query(Goal) or query(Goal, Context), got %s", show(args[0]))
		}
		if st.Bind, err = n.atom(args[1], "bind", path); err != nil {
			return nil, err
		}
		return st, nil
	case name == "tool" && len(args) == 3:
		st := &ToolStep{}
		if st.Name, err = n.atom(args[0], "name", path); err != nil {
			return nil, err
		}
		if st.Args, err = n.expr(args[1], path); err != nil {
			return nil, err
		}
		if st.Bind, err = n.atom(args[2], "bind", path); err != nil {
			return nil, err
		}
		return st, nil
	case name == "spawn_agent" && len(args) == 3:
		spec, err := n.literal(args[0], path)
		if err != nil {
			return nil, err
		}
		caps, err := n.literal(args[1], path)
		if err != nil {
			return nil, err
		}
		b, err := n.atom(args[2], "bind", path)
		if err != nil {
			return nil, err
		}
		return &ToolStep{Name: "spawn_agent", Args: Literal{Value: map[string]any{"spec": spec, "capabilities": caps}}, Bind: b}, nil
	case name == "parallel" && len(args) == 2:
		elems, err := n.list(args[0], path)
		if err != nil {
			return nil, err
		}
		st := &ParallelStep{}
		for i, e := range elems {
			p, err := n.plan(e, fmt.Sprintf("%s branch %d", path, i+1))
			if err != nil {
				return nil, err
			}
			st.Plans = append(st.Plans, p)
		}
		if st.Bind, err = n.atom(args[1], "bind", path); err != nil {
			return nil, err
		}
		return st, nil
	case name == "retry" && len(args) == 3:
		k, err := n.integer(args[0], "attempts", path)
		if err != nil {
			return nil, err
		}
		p, err := n.plan(args[1], path+" retry")
		if err != nil {
			return nil, err
		}
		b, err := n.atom(args[2], "bind", path)
		if err != nil {
			return nil, err
		}
		return &RetryStep{Attempts: k, Plan: p, Bind: b}, nil
	case name == "respond" && len(args) == 2:
		st := &RespondStep{}
		if st.Provider, err = n.atom(args[0], "provider", path); err != nil {
			return nil, err
		}
		if st.Bind, err = n.atom(args[1], "bind", path); err != nil {
			return nil, err
		}
		return st, nil
	case name == "checkpoint" && len(args) == 1:
		l, ok := text(args[0])
		if !ok || l == "" {
			return nil, n.fail(path, D("invalid_checkpoint_label", show(args[0])), "checkpoint label must be an atom or a string")
		}
		return &CheckpointStep{Label: l}, nil
	case name == "final" && len(args) == 1:
		e, err := n.expr(args[0], path)
		if err != nil {
			return nil, err
		}
		return &FinalStep{Value: e}, nil
	}
	return nil, bad()
}

func (n *termNorm) atom(t Term, field, path string) (string, error) {
	a, ok := t.(Atom)
	if !ok || a == "" || a == "[]" {
		return "", n.fail(path, D("invalid_text_field", Atom(field), show(t)), "%s must be an atom, got %s", field, show(t))
	}
	return string(a), nil
}

func (n *termNorm) integer(t Term, field, path string) (int, error) {
	i, ok := t.(int64)
	if !ok || i > math.MaxInt32 || i < math.MinInt32 {
		return 0, n.fail(path, D("invalid_integer_field", Atom(field), show(t)), "%s must be an integer, got %s", field, show(t))
	}
	return int(i), nil
}

func (n *termNorm) literal(t Term, path string) (any, error) {
	if err := n.ground(t, path); err != nil {
		return nil, err
	}
	v, err := value(t)
	if err != nil {
		return nil, n.fail(path, D("invalid_literal", show(t)), "%v", err)
	}
	return v, nil
}

// ground checks t has no variables and bounded depth and size (a cyclic
// term elided by its builder).
func (n *termNorm) ground(t Term, path string) error {
	type item struct {
		t Term
		d int
	}
	stack := []item{{t, 0}}
	seen := 0
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen++; seen > MaxTermNodes || it.d > 4*maxPlanNesting {
			return n.fail(path, D("recursive_cycle", Atom("cyclic_term")), "a literal is too large or deep (or cyclic)")
		}
		switch c := it.t.(type) {
		case Var:
			return n.nonGround(path)
		case Elided:
			return n.fail(path, D("recursive_cycle", Atom("cyclic_term")), "a literal is too large or deep (or cyclic)")
		case []any:
			for i := len(c) - 1; i >= 0; i-- {
				stack = append(stack, item{c[i], it.d + 1})
			}
		case Compound:
			for i := len(c.Args) - 1; i >= 0; i-- {
				stack = append(stack, item{c.Args[i], it.d + 1})
			}
		}
	}
	return nil
}

// options reads a model step's options: a list of Name(Value), or a
// record Tag([Name(Value), ...]) (upstream's options are a dict).
func (n *termNorm) options(t Term, path string) (map[string]any, error) {
	if c, isRecord := t.(Compound); isRecord && len(c.Args) == 1 && c.Functor != "." {
		t = c.Args[0]
	}
	elems, err := n.list(t, path+" options")
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	for _, e := range elems {
		name, args, ok := n.compound(e)
		if !ok || len(args) != 1 {
			return nil, n.fail(path, D("invalid_dict", Atom("options"), show(e)), "model options are a list of Name(Value), got %s", show(e))
		}
		v, err := n.literal(args[0], path)
		if err != nil {
			return nil, err
		}
		if _, dup := out[name]; !dup { // the first occurrence wins, as option/2
			out[name] = v
		}
	}
	return out, nil
}

func (n *termNorm) expr(t Term, path string) (Expr, error) {
	if err := n.enter(path); err != nil {
		return nil, err
	}
	defer func() { n.depth-- }()
	if err := n.special(t, path); err != nil {
		return nil, err
	}
	name, args, ok := n.compound(t)
	if !ok {
		return nil, n.fail(path, D("invalid_reference", show(t)), "an expression is literal(V), input(N), var(N), field(E, K), list([E, ...]) or object([K-E, ...]), got %s", show(t))
	}
	switch {
	case name == "literal" && len(args) == 1:
		v, err := n.literal(args[0], path)
		if err != nil {
			return nil, err
		}
		return Literal{Value: v}, nil
	case name == "input" && len(args) == 1:
		a, err := n.atom(args[0], "input", path)
		return InputRef{Name: a}, err
	case name == "var" && len(args) == 1:
		a, err := n.atom(args[0], "var", path)
		return VarRef{Name: a}, err
	case name == "field" && len(args) == 2:
		inner, err := n.expr(args[0], path)
		if err != nil {
			return nil, err
		}
		k, err := n.atom(args[1], "key", path)
		return FieldOf{Value: inner, Key: k}, err
	case name == "list" && len(args) == 1:
		elems, err := n.list(args[0], path)
		if err != nil {
			return nil, err
		}
		l := List{Elems: make([]Expr, 0, len(elems))}
		for _, e := range elems {
			x, err := n.expr(e, path)
			if err != nil {
				return nil, err
			}
			l.Elems = append(l.Elems, x)
		}
		return l, nil
	case name == "object" && len(args) == 1:
		elems, err := n.list(args[0], path)
		if err != nil {
			return nil, err
		}
		o := Object{Pairs: make([]Pair, 0, len(elems))}
		for _, e := range elems {
			pn, pa, ok := n.compound(e)
			if !ok || len(pa) != 2 || (pn != "-" && pn != ":" && pn != "=") {
				return nil, n.fail(path, D("invalid_object_pair", show(e)), "object pairs are Key-Expr, got %s", show(e))
			}
			k, ok := text(pa[0])
			if !ok {
				return nil, n.fail(path, D("invalid_object_pair", show(e)), "an object key must be an atom, got %s", show(pa[0]))
			}
			x, err := n.expr(pa[1], path)
			if err != nil {
				return nil, err
			}
			o.Pairs = append(o.Pairs, Pair{Key: k, Value: x})
		}
		slices.SortStableFunc(o.Pairs, func(a, b Pair) int { return strings.Compare(a.Key, b.Key) })
		return o, nil
	}
	if name == "ref" || name == "eval" || name == "call" {
		return nil, n.fail(path, D("unknown_reference", Atom(name)), "unknown expression %s/%d", name, len(args))
	}
	return nil, n.fail(path, D("invalid_reference", show(t)), "an expression is literal(V), input(N), var(N), field(E, K), list([E, ...]) or object([K-E, ...]), got %s", show(t))
}

func (n *termNorm) action(t Term, path string) (Action, error) {
	name, args, ok := n.compound(t)
	badAct := func(d *Detail, format string, a ...any) (Action, error) {
		return Action{}, n.fail(path, d, format, a...)
	}
	if !ok {
		return badAct(D("invalid_context_action", show(t)), "invalid context action %s", show(t))
	}
	switch {
	case name == "search" && len(args) == 1:
		p, ok := text(args[0])
		if !ok || p == "" {
			return badAct(D("invalid_search_pattern", show(args[0])), "search needs non-empty text, e.g. search(\"needle\")")
		}
		return Action{Type: "search", Pattern: p}, nil
	case name == "slice" && len(args) == 2:
		s, err := n.integer(args[0], "start", path)
		if err != nil {
			return Action{}, err
		}
		l, err := n.integer(args[1], "length", path)
		if err != nil {
			return Action{}, err
		}
		return Action{Type: "slice", Start: s, Length: l}, nil
	case name == "peek" && len(args) == 1:
		sn, sa, ok := n.compound(args[0])
		switch {
		case ok && sn == "metadata" && len(sa) == 0:
			return Action{Type: "peek", Selector: "metadata"}, nil
		case ok && (sn == "head" || sn == "tail" || sn == "item") && len(sa) == 1:
			k, err := n.integer(sa[0], sn, path)
			if err != nil {
				return Action{}, err
			}
			return Action{Type: "peek", Selector: sn, N: k}, nil
		}
		return badAct(D("unknown_selector", show(args[0])), "peek selector is metadata, head(N), tail(N) or item(I)")
	case name == "partition" && len(args) == 1:
		sn, sa, ok := n.compound(args[0])
		if !ok || len(sa) != 1 || !slices.Contains(partitions, sn) {
			return badAct(D("unknown_partition_strategy", show(args[0])), "partition strategy is fixed(N) or lines(N)")
		}
		k, err := n.integer(sa[0], "size", path)
		if err != nil {
			return Action{}, err
		}
		return Action{Type: "partition", Partition: sn, N: k}, nil
	case name == "map" && len(args) == 1:
		// Allow-listing happens in Validate; a non-atom is simply not on it.
		return Action{Type: "map", Transform: atomOrShow(args[0])}, nil
	case name == "reduce" && len(args) == 1:
		return Action{Type: "reduce", Reducer: atomOrShow(args[0])}, nil
	}
	return badAct(D("unknown_context_action", Atom(name)), "unknown context action %s/%d; actions are peek/1, slice/2, search/1, partition/1, map/1, reduce/1", name, len(args))
}

// atomOrShow returns an atom's name, or the rendering of anything else.
func atomOrShow(t Term) string {
	if a, ok := t.(Atom); ok {
		return string(a)
	}
	return show(t)
}
