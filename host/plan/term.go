package plan

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ichiban/prolog/engine"

	"github.com/rlmpl/rlmpl/prolog"
)

// ParseTerm extracts and reads a term plan, plan([Step, ...]), from
// planner text (alone, in prose, or in a markdown fence). The term is read
// by [prolog.ReadTerm]: standard operators only, no variables, bounded
// size, never executed. Errors are [*ParseError] located in text.
func ParseTerm(text string) (*Plan, error) {
	if len(text) > MaxPlanBytes {
		return nil, parseErr(PhaseParse, "term", text, 0, D("text_too_large", len(text), MaxPlanBytes),
			fmt.Sprintf("the answer is %d bytes; a plan must fit in %d", len(text), MaxPlanBytes))
	}
	start := termStart(text)
	if start < 0 {
		return nil, parseErr(PhaseParse, "term", text, 0, D("no_plan_term"), "no plan([...]) term found")
	}
	end, ok := parenEnd(text, start+len("plan"))
	if !ok {
		return nil, parseErr(PhaseParse, "term", text, start, D("invalid_term", "unbalanced parentheses"),
			"plan( starts here but its parentheses never balance (is the answer cut off?)")
	}
	t, err := prolog.ReadTerm(text[start:end], prolog.ReadLimits{MaxBytes: MaxPlanBytes, MaxDepth: 4 * maxPlanNesting})
	if err != nil {
		var re *prolog.ReadError
		if errors.As(err, &re) {
			return nil, parseErr(PhaseParse, "term", text, start+re.Offset, D("invalid_term", re.Msg), "invalid term: "+re.Msg)
		}
		return nil, parseErr(PhaseParse, "term", text, start, D("invalid_term", err.Error()), err.Error())
	}
	p, err := FromTerm(t, nil)
	if err != nil {
		var pe *ParseError
		if errors.As(err, &pe) {
			// Locate normalize errors at the plan term.
			loc := parseErr(pe.Phase, "term", text, start, pe.Detail, pe.Msg)
			return nil, loc
		}
		return nil, err
	}
	return p, nil
}

// termStart returns the offset of the first "plan(" that starts a word, or
// -1.
func termStart(text string) int {
	for off := 0; ; {
		i := strings.Index(text[off:], "plan(")
		if i < 0 {
			return -1
		}
		i += off
		if i == 0 || !isIdent(text[i-1]) {
			return i
		}
		off = i + 1
	}
}

func isIdent(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// parenEnd returns the offset after the ')' that closes the '(' at
// text[i], skipping brackets inside quotes.
func parenEnd(text string, i int) (int, bool) {
	depth := 0
	for j := i; j < len(text); j++ {
		switch c := text[j]; c {
		case '\'', '"', '`':
			if c == '\'' && j > 0 && text[j-1] == '0' && (j < 2 || !isIdent(text[j-2])) {
				j++ // 0'c
				if j < len(text) && text[j] == '\\' {
					j++
				}
				continue
			}
			for j++; j < len(text); j++ {
				if text[j] == '\\' {
					j = skipEscape(text, j)
					continue
				}
				if text[j] == c {
					if j+1 < len(text) && text[j+1] == c { // doubled quote
						j++
						continue
					}
					break
				}
			}
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
			if depth == 0 {
				return j + 1, c == ')'
			}
		}
	}
	return 0, false
}

// skipEscape returns the index of the last byte of the escape sequence
// starting with the backslash at text[j]: \c, or \xHEX\ and \OCTAL\.
func skipEscape(text string, j int) int {
	k := j + 1
	if k < len(text) && (text[k] == 'x' || text[k] >= '0' && text[k] <= '7') {
		for m := k + 1; m < len(text) && m < k+12; m++ {
			if text[m] == '\\' {
				return m
			}
			if !isHex(text[m]) {
				break
			}
		}
	}
	return k
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// FromTerm converts a plan term to the AST: a term read by [ParseTerm], or
// one a trusted Prolog planner_handler built (resolved in env, which may
// be nil). A variable anywhere is an error (detail
// non_ground_recursive_plan), and so is nesting deeper than the plan limit
// (detail recursive_cycle(cyclic_term): ichiban terms can be cyclic, and
// the walk never follows a cycle forever). Errors are [*ParseError] with
// phase normalize (no position: the term has none).
func FromTerm(t engine.Term, env *engine.Env) (*Plan, error) {
	n := &termNorm{env: env}
	return n.plan(t, "plan")
}

type termNorm struct {
	env   *engine.Env
	depth int
	nodes int // plans and expressions visited: shared subterms count each time
}

// maxPlanNodes bounds a plan's size as a tree. A handler-built term can
// share subterms, so a small term may stand for an exponential tree.
const maxPlanNodes = 100000

func (n *termNorm) fail(path string, d *Detail, format string, args ...any) *ParseError {
	return &ParseError{Phase: PhaseNormalize, Syntax: "term", Detail: d, Msg: path + ": " + fmt.Sprintf(format, args...)}
}

// show renders a subterm for messages, bounded.
func (n *termNorm) show(t engine.Term) string {
	var sb strings.Builder
	_ = n.env.Resolve(t).WriteTerm(&sb, &engine.WriteOptions{}, n.env)
	s := sb.String()
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return s
}

func (n *termNorm) enter(path string) *ParseError {
	n.depth++
	if n.nodes++; n.nodes > maxPlanNodes {
		return n.fail(path, D("plan_too_large", int64(maxPlanNodes)), "the plan has more than %d parts", maxPlanNodes)
	}
	if n.depth > 4*maxPlanNesting {
		return n.fail(path, D("recursive_cycle", prolog.Atom("cyclic_term")), "the plan nests deeper than %d levels (or is cyclic)", 4*maxPlanNesting)
	}
	return nil
}

func (n *termNorm) compound(t engine.Term) (string, []engine.Term, bool) {
	switch c := n.env.Resolve(t).(type) {
	case engine.Atom:
		return c.String(), nil, true
	case engine.Compound:
		args := make([]engine.Term, c.Arity())
		for i := range args {
			args[i] = c.Arg(i)
		}
		return c.Functor().String(), args, true
	}
	return "", nil, false
}

func (n *termNorm) list(t engine.Term, path string) ([]engine.Term, error) {
	var out []engine.Term
	for i := 0; ; i++ {
		switch c := n.env.Resolve(t).(type) {
		case engine.Variable:
			return nil, n.fail(path, D("non_ground_recursive_plan"), "the plan contains a variable")
		case engine.Atom:
			if c.String() == "[]" {
				return out, nil
			}
		case engine.Compound:
			if c.Functor().String() == "." && c.Arity() == 2 {
				if i > prolog.DefaultReadLimits.MaxTerms {
					return nil, n.fail(path, D("recursive_cycle", prolog.Atom("cyclic_term")), "the list is too long (or cyclic)")
				}
				out = append(out, c.Arg(0))
				t = c.Arg(1)
				continue
			}
		}
		return nil, n.fail(path, D("invalid_list", prolog.Atom(path), n.show(t)), "expected a list, got %s", n.show(t))
	}
}

func (n *termNorm) plan(t engine.Term, path string) (*Plan, error) {
	if err := n.enter(path); err != nil {
		return nil, err
	}
	defer func() { n.depth-- }()
	name, args, ok := n.compound(t)
	if _, isVar := n.env.Resolve(t).(engine.Variable); isVar {
		return nil, n.fail(path, D("non_ground_recursive_plan"), "the plan contains a variable")
	}
	if !ok || name != "plan" || len(args) != 1 {
		return nil, n.fail(path, D("invalid_plan", n.show(t)), "expected plan([Step, ...]), got %s", n.show(t))
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

func (n *termNorm) step(t engine.Term, path string) (Step, error) {
	if _, isVar := n.env.Resolve(t).(engine.Variable); isVar {
		return nil, n.fail(path, D("non_ground_recursive_plan"), "the plan contains a variable")
	}
	name, args, ok := n.compound(t)
	if !ok {
		return nil, n.fail(path, D("invalid_step", n.show(t)), "a step is a compound such as final(Expr), got %s", n.show(t))
	}
	bad := func() error {
		return n.fail(path, D("unknown_or_malformed_operation", prolog.Compound{Functor: "/", Args: []any{prolog.Atom(name), int64(len(args))}}),
			"unknown or malformed step %s/%d; steps are context/3, model/4, rlm/2, tool/3, parallel/2, retry/3, checkpoint/1, final/1", name, len(args))
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
			if q, terr := n.text(qa[0]); terr == nil && q != "" && n.isText(qa[0]) {
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
			return nil, n.fail(path, D("invalid_plan", n.show(args[0])), "rlm/2 takes plan([...]) or query(Goal) or query(Goal, Context), got %s", n.show(args[0]))
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
	case name == "checkpoint" && len(args) == 1:
		l, err := n.text(args[0])
		if err != nil || l == "" {
			return nil, n.fail(path, D("invalid_checkpoint_label", n.show(args[0])), "checkpoint label must be an atom or a string")
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

func (n *termNorm) atom(t engine.Term, field, path string) (string, error) {
	a, ok := n.env.Resolve(t).(engine.Atom)
	if !ok || a.String() == "" || a.String() == "[]" {
		return "", n.fail(path, D("invalid_text_field", prolog.Atom(field), n.show(t)), "%s must be an atom, got %s", field, n.show(t))
	}
	return a.String(), nil
}

func (n *termNorm) integer(t engine.Term, field, path string) (int, error) {
	i, ok := n.env.Resolve(t).(engine.Integer)
	if !ok || i > math.MaxInt32 || i < math.MinInt32 {
		return 0, n.fail(path, D("invalid_integer_field", prolog.Atom(field), n.show(t)), "%s must be an integer, got %s", field, n.show(t))
	}
	return int(i), nil
}

// isText reports whether t is a string (a non-empty chars list).
func (n *termNorm) isText(t engine.Term) bool {
	c, ok := n.env.Resolve(t).(engine.Compound)
	if !ok || c.Functor().String() != "." {
		return false
	}
	_, err := prolog.TextOf(t, n.env)
	return err == nil
}

// text reads an atom or a string (chars list).
func (n *termNorm) text(t engine.Term) (string, error) {
	switch v := n.env.Resolve(t).(type) {
	case engine.Atom:
		if v.String() == "[]" {
			return "", nil
		}
		return v.String(), nil
	case engine.Variable:
		return "", errors.New("variable")
	}
	return prolog.TextOf(t, n.env)
}

func (n *termNorm) literal(t engine.Term, path string) (any, error) {
	if err := n.ground(t, path); err != nil {
		return nil, err
	}
	v, err := prolog.Value(t, n.env)
	if err != nil {
		return nil, n.fail(path, D("invalid_literal", n.show(t)), "%v", err)
	}
	return v, nil
}

// ground checks t has no variables and bounded depth (cyclic terms).
func (n *termNorm) ground(t engine.Term, path string) error {
	type item struct {
		t engine.Term
		d int
	}
	stack := []item{{t, 0}}
	seen := 0
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen++; seen > prolog.DefaultReadLimits.MaxTerms || it.d > 4*maxPlanNesting {
			return n.fail(path, D("recursive_cycle", prolog.Atom("cyclic_term")), "a literal is too large or deep (or cyclic)")
		}
		switch c := n.env.Resolve(it.t).(type) {
		case engine.Variable:
			return n.fail(path, D("non_ground_recursive_plan"), "the plan contains a variable")
		case engine.Compound:
			if _, text := c.(fmt.Stringer); text && c.Functor().String() == "." {
				continue
			}
			for i := 0; i < c.Arity(); i++ {
				stack = append(stack, item{c.Arg(i), it.d + 1})
			}
		}
	}
	return nil
}

func (n *termNorm) options(t engine.Term, path string) (map[string]any, error) {
	elems, err := n.list(t, path+" options")
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	for _, e := range elems {
		name, args, ok := n.compound(e)
		if !ok || len(args) != 1 {
			return nil, n.fail(path, D("invalid_dict", prolog.Atom("options"), n.show(e)), "model options are a list of Name(Value), got %s", n.show(e))
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

func (n *termNorm) expr(t engine.Term, path string) (Expr, error) {
	if err := n.enter(path); err != nil {
		return nil, err
	}
	defer func() { n.depth-- }()
	if _, isVar := n.env.Resolve(t).(engine.Variable); isVar {
		return nil, n.fail(path, D("non_ground_recursive_plan"), "the plan contains a variable")
	}
	name, args, ok := n.compound(t)
	if !ok {
		return nil, n.fail(path, D("invalid_reference", n.show(t)), "an expression is literal(V), input(N), var(N), field(E, K), list([E, ...]) or object([K-E, ...]), got %s", n.show(t))
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
				return nil, n.fail(path, D("invalid_object_pair", n.show(e)), "object pairs are Key-Expr, got %s", n.show(e))
			}
			k, err := n.text(pa[0])
			if err != nil {
				return nil, n.fail(path, D("invalid_object_pair", n.show(e)), "an object key must be an atom, got %s", n.show(pa[0]))
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
		return nil, n.fail(path, D("unknown_reference", prolog.Atom(name)), "unknown expression %s/%d", name, len(args))
	}
	return nil, n.fail(path, D("invalid_reference", n.show(t)), "an expression is literal(V), input(N), var(N), field(E, K), list([E, ...]) or object([K-E, ...]), got %s", n.show(t))
}

func (n *termNorm) action(t engine.Term, path string) (Action, error) {
	name, args, ok := n.compound(t)
	badAct := func(d *Detail, format string, a ...any) (Action, error) {
		return Action{}, n.fail(path, d, format, a...)
	}
	if !ok {
		return badAct(D("invalid_context_action", n.show(t)), "invalid context action %s", n.show(t))
	}
	switch {
	case name == "search" && len(args) == 1:
		p, err := n.text(args[0])
		if err != nil || p == "" {
			return badAct(D("invalid_search_pattern", n.show(args[0])), "search needs non-empty text, e.g. search(\"needle\")")
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
		return badAct(D("unknown_selector", n.show(args[0])), "peek selector is metadata, head(N), tail(N) or item(I)")
	case name == "partition" && len(args) == 1:
		sn, sa, ok := n.compound(args[0])
		if !ok || len(sa) != 1 || !slices.Contains(partitions, sn) {
			return badAct(D("unknown_partition_strategy", n.show(args[0])), "partition strategy is fixed(N) or lines(N)")
		}
		k, err := n.integer(sa[0], "size", path)
		if err != nil {
			return Action{}, err
		}
		return Action{Type: "partition", Partition: sn, N: k}, nil
	case name == "map" && len(args) == 1:
		// Allow-listing happens in Validate; a non-atom is simply not on it.
		tr := n.show(args[0])
		if a, isAtom := n.env.Resolve(args[0]).(engine.Atom); isAtom {
			tr = a.String()
		}
		return Action{Type: "map", Transform: tr}, nil
	case name == "reduce" && len(args) == 1:
		tr := n.show(args[0])
		if a, isAtom := n.env.Resolve(args[0]).(engine.Atom); isAtom {
			tr = a.String()
		}
		return Action{Type: "reduce", Reducer: tr}, nil
	}
	return badAct(D("unknown_context_action", prolog.Atom(name)), "unknown context action %s/%d; actions are peek/1, slice/2, search/1, partition/1, map/1, reduce/1", name, len(args))
}
