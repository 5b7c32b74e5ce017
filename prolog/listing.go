package prolog

// Showing code, SWI-Prolog style:
//
//	%!  portray_clause(+Clause) is det.
//	%!  portray_clause(+Stream, +Clause) is det.
//	%!  listing(:Spec) is det.
//	%!  numbervars(?Term, +Start, -End) is det.
//
// portray_clause/1 writes a clause as listing/1 does: variables named A,
// B, … (_ when they occur once), a space after argument commas, one body
// goal per line, if-then-else and disjunction in SWI's layout, and a full
// stop. listing/1 takes Name or Name/Arity; it throws
// existence_error(procedure, Spec) when nothing is called so, and names a
// Go predicate as foreign (toplevel.go). ichiban keeps no source of
// static predicates and clause/2 refuses them, so the interpreter keeps the
// texts it consulted: a static predicate is listed from its source (with
// its variable names), a dynamic one from its current clauses.

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ichiban/prolog/engine"
)

var (
	atomIf      = engine.NewAtom(":-")
	atomComma   = engine.NewAtom(",")
	atomArrow   = engine.NewAtom("->")
	atomSemi    = engine.NewAtom(";")
	atomNot     = engine.NewAtom(`\+`)
	atomSlash   = engine.NewAtom("/")
	atomVarName = engine.NewAtom("$VAR")
)

// consulted is a text the interpreter consulted, kept for listing/1 and
// help/1.
type consulted struct {
	name, text string
	shared     bool // a library text (ConsultShared): make/0 leaves it
	viaFS      bool // consulted with consult/1: make/0 reads it through FS
}

// remember keeps text as the latest version of the source called name.
func (in *Interpreter) remember(name, text string) {
	for i := range in.sources {
		if in.sources[i].name == name {
			in.sources[i].text = text
			return
		}
	}
	in.sources = append(in.sources, consulted{name: name, text: text, shared: in.quiet})
}

// clauseWriter writes clauses with variable names.
type clauseWriter struct {
	in    *Interpreter
	env   *engine.Env
	names []engine.Term // Name = Var, for variable_names
}

// newClauseWriter names the variables of t: with names when given (a
// source's), else A, B, … in order of appearance, and _ for those that
// occur once.
func newClauseWriter(in *Interpreter, t engine.Term, env *engine.Env, names map[engine.Variable]string) *clauseWriter {
	w := &clauseWriter{in: in, env: env}
	counts := map[engine.Variable]int{}
	var order []engine.Variable
	countVars(t, env, counts, &order, 0)
	eq := engine.NewAtom("=")
	next := 0
	for _, v := range order {
		name, ok := names[v]
		switch {
		case ok:
		case counts[v] == 1:
			name = "_"
		default:
			name = string(rune('A' + next%26))
			if next >= 26 {
				name += fmt.Sprint(next / 26)
			}
			next++
		}
		w.names = append(w.names, eq.Apply(engine.NewAtom(name), v))
	}
	return w
}

// term writes t as writeq/1 would at priority 999 (an argument), spaced
// after commas.
func (w *clauseWriter) term(t engine.Term) string {
	opts := engine.List(
		engine.NewAtom("quoted").Apply(atomTrue),
		engine.NewAtom("numbervars").Apply(atomTrue),
		engine.NewAtom("variable_names").Apply(engine.List(w.names...)))
	// NB: ichiban has no priority option; writing t as an argument of a
	// one-argument compound brackets operators above 999 as SWI does.
	s := w.in.writeText(engine.NewAtom("f").Apply(t), w.env, opts)
	return spaceArgs(s[2 : len(s)-1])
}

// clause returns the text of a clause, ending with ".\n".
func (w *clauseWriter) clause(t engine.Term) string {
	var b strings.Builder
	if c, ok := w.env.Resolve(t).(engine.Compound); ok && c.Functor() == atomIf && c.Arity() == 1 {
		return ":- " + w.term(c.Arg(0)) + ".\n"
	}
	if c, ok := w.env.Resolve(t).(engine.Compound); ok && c.Functor() == atomIf && c.Arity() == 2 {
		if w.env.Resolve(c.Arg(1)) == atomTrue {
			t = c.Arg(0)
		} else {
			b.WriteString(w.term(c.Arg(0)))
			b.WriteString(" :-\n    ")
			w.body(&b, c.Arg(1), 1)
			b.WriteString(".\n")
			return b.String()
		}
	}
	b.WriteString(w.term(t))
	b.WriteString(".\n")
	return b.String()
}

// body writes a clause body at indentation level depth (4 spaces each).
func (w *clauseWriter) body(b *strings.Builder, t engine.Term, depth int) {
	indent := strings.Repeat("    ", depth)
	c, ok := w.env.Resolve(t).(engine.Compound)
	switch {
	case ok && c.Functor() == atomComma && c.Arity() == 2:
		w.body(b, c.Arg(0), depth)
		b.WriteString(",\n" + indent)
		w.body(b, c.Arg(1), depth)
	case ok && c.Arity() == 2 && (c.Functor() == atomSemi || c.Functor() == atomArrow):
		// (   A
		// ->  B
		// ;   C
		// )
		b.WriteString("(   ")
		for i, alt := range w.alternatives(c) {
			if i > 0 {
				b.WriteString("\n" + indent + ";   ")
			}
			if a, ok := w.env.Resolve(alt).(engine.Compound); ok && a.Functor() == atomArrow && a.Arity() == 2 {
				w.body(b, a.Arg(0), depth+1)
				b.WriteString("\n" + indent + "->  ")
				alt = a.Arg(1)
			}
			w.body(b, alt, depth+1)
		}
		b.WriteString("\n" + indent + ")")
	case ok && c.Functor() == atomNot && c.Arity() == 1:
		b.WriteString(`\+ `)
		if g, ok := w.env.Resolve(c.Arg(0)).(engine.Compound); ok && g.Arity() == 2 &&
			(g.Functor() == atomComma || g.Functor() == atomSemi || g.Functor() == atomArrow) {
			w.body(b, g, depth)
			return
		}
		b.WriteString(w.term(c.Arg(0)))
	default:
		b.WriteString(w.term(t))
	}
}

// alternatives flattens a right-nested disjunction; an if-then without
// else is one alternative.
func (w *clauseWriter) alternatives(c engine.Compound) []engine.Term {
	if c.Functor() == atomArrow {
		return []engine.Term{c}
	}
	var alts []engine.Term
	for {
		alts = append(alts, c.Arg(0))
		r, ok := w.env.Resolve(c.Arg(1)).(engine.Compound)
		if !ok || r.Functor() != atomSemi || r.Arity() != 2 {
			return append(alts, c.Arg(1))
		}
		c = r
	}
}

func portrayClause1(c *Call, t engine.Term) (bool, error) { return portrayClause(c, nil, t) }

func portrayClause2(c *Call, s, t engine.Term) (bool, error) { return portrayClause(c, s, t) }

func portrayClause(c *Call, s, t engine.Term) (bool, error) {
	w := newClauseWriter(c.In, t, c.Env, nil)
	return writeRaw(c, s, w.clause(t))
}

// numbervars3 binds each variable of Term to '$VAR'(N), N counting from
// Start, and unifies End with the next number.
func numbervars3(c *Call, t, start, end engine.Term) (bool, error) {
	n, err := c.Int(start)
	if err != nil {
		return false, err
	}
	counts := map[engine.Variable]int{}
	var order []engine.Variable
	countVars(t, c.Env, counts, &order, 0)
	for _, v := range order {
		if !c.Unify(v, atomVarName.Apply(engine.Integer(n))) {
			return false, nil
		}
		n++
	}
	return c.Unify(end, engine.Integer(n)), nil
}

// listing1 is listing(Name) or listing(Name/Arity).
func listing1(c *Call, spec engine.Term) (bool, error) {
	name, arity, err := predicateSpec(c, spec)
	if err != nil {
		return false, err
	}
	var b strings.Builder
	pis, kinds := c.In.procedures(name, arity)
	if pis == nil { // ichiban's layout changed: what current_predicate/1 sees
		pis = c.In.userPredicates(c, name, arity)
		kinds = make([]procKind, len(pis))
		for i := range kinds {
			kinds[i] = procUser
		}
	}
	if len(pis) == 0 {
		return false, ExistenceError("procedure", spec)
	}
	for i, pi := range pis {
		if kinds[i] == procForeign {
			fmt.Fprintf(&b, "%%   Foreign: %s\n\n", pi)
			continue
		}
		c.In.list(c, &b, pi)
	}
	return writeRaw(c, nil, b.String())
}

// predicateSpec reads Name or Name/Arity (arity -1: any).
func predicateSpec(c *Call, spec engine.Term) (string, int, error) {
	switch s := c.Resolve(spec).(type) {
	case engine.Variable:
		return "", 0, InstantiationError()
	case engine.Atom:
		return s.String(), -1, nil
	case engine.Compound:
		if s.Functor() == atomSlash && s.Arity() == 2 {
			name, err := c.Atom(s.Arg(0))
			if err != nil {
				return "", 0, err
			}
			if _, ok := c.Resolve(s.Arg(1)).(engine.Variable); ok {
				return name, -1, nil
			}
			n, err := c.NonNeg(s.Arg(1))
			return name, int(n), err
		}
	}
	return "", 0, TypeError("predicate_indicator", spec)
}

// indicator is Name/Arity.
type indicator struct {
	name  string
	arity int
}

func (pi indicator) String() string { return fmt.Sprintf("%s/%d", pi.name, pi.arity) }

// userPredicates returns the user-defined predicates called name (of the
// given arity, or any when arity < 0), in sorted order.
func (in *Interpreter) userPredicates(c *Call, name string, arity int) []indicator {
	var out []indicator
	for _, p := range c.VM.Procedures() {
		if p.Kind == engine.ProcedureUser && p.Name.String() == name && (arity < 0 || p.Arity == arity) {
			out = append(out, indicator{name, p.Arity})
		}
	}
	slices.SortFunc(out, func(a, b indicator) int { return a.arity - b.arity })
	return out
}

// list writes the clauses of pi: a dynamic predicate's current ones, else
// those of the last consulted text that defines it.
func (in *Interpreter) list(c *Call, b *strings.Builder, pi indicator) {
	var head engine.Term = engine.NewAtom(pi.name)
	if pi.arity > 0 {
		args := make([]engine.Term, pi.arity)
		for i := range args {
			args[i] = engine.NewVariable()
		}
		head = engine.NewAtom(pi.name).Apply(args...)
	}
	body := engine.NewVariable()
	var clauses []string
	dynamic := true
	_, err := engine.Call(c.VM, engine.NewAtom("clause").Apply(head, body), func(env *engine.Env) *engine.Promise {
		cl := atomIf.Apply(head, body)
		clauses = append(clauses, newClauseWriter(in, cl, env, nil).clause(cl))
		return engine.Bool(false)
	}, c.Env).Force(c.Ctx)
	if err != nil { // static: private to clause/2
		dynamic = false
		clauses = in.sourceClauses(pi)
		if clauses == nil { // not consulted from a text (ichiban's own)
			for _, t := range in.rawClauses(pi) {
				clauses = append(clauses, newClauseWriter(in, t, nil, nil).clause(t))
			}
		}
	}
	if dynamic {
		fmt.Fprintf(b, ":- dynamic %s.\n\n", pi)
	}
	for _, cl := range clauses {
		b.WriteString(cl)
	}
	b.WriteString("\n")
}

// sourceClauses returns the clauses of pi as written in the last consulted
// text that defines it, with their variable names.
func (in *Interpreter) sourceClauses(pi indicator) []string {
	terms, names := in.sourceTerms(pi)
	var out []string
	for i, t := range terms {
		out = append(out, newClauseWriter(in, t, nil, names[i]).clause(t))
	}
	return out
}

// sourceTerms returns the clauses of pi as read from the last consulted
// text that defines it, each with its variable names; nil when no text
// does.
func (in *Interpreter) sourceTerms(pi indicator) (terms []engine.Term, names []map[engine.Variable]string) {
	for _, src := range in.sources {
		var ts []engine.Term
		var ns []map[engine.Variable]string
		s, err := scan(src.text)
		if err != nil {
			continue
		}
		for _, cl := range s.clauses {
			p := engine.NewParser(&in.ip.VM, &countingReader{s: s.text[cl.start:cl.end]})
			t, err := p.Term()
			if err != nil || indicatorOf(t) != pi {
				continue
			}
			m := map[engine.Variable]string{}
			for _, v := range p.Vars {
				m[v.Variable] = v.Name.String()
			}
			ts, ns = append(ts, t), append(ns, m)
		}
		if ts != nil {
			terms, names = ts, ns
		}
	}
	return terms, names
}

// indicatorOf returns the indicator of a clause's head (DCG rules count
// two more arguments).
func indicatorOf(t engine.Term) indicator {
	if c, ok := t.(engine.Compound); ok && c.Arity() == 2 {
		switch c.Functor().String() {
		case ":-":
			t = c.Arg(0)
		case "-->":
			pi := indicatorOf(c.Arg(0))
			pi.arity += 2
			return pi
		}
	}
	switch h := t.(type) {
	case engine.Atom:
		return indicator{h.String(), 0}
	case engine.Compound:
		return indicator{h.Functor().String(), h.Arity()}
	}
	return indicator{}
}
