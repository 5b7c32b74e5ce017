package prolog

import (
	"slices"
	"strconv"
	"strings"

	"github.com/ichiban/prolog/engine"
)

// Answer renders the current solution the way SWI-Prolog 9's top level
// does, without the final full stop:
//
//	X = f(Y, Y)          an unbound query variable is shown by its name
//	X = Y                query variables bound to each other
//	X = Y, Y = f(a)      query variables with identical values, grouped
//	L = [_, _A, _A]      other variables: _ when they occur once, else _A, _B…
//	X = 1,               one binding (or group) per line
//	Y = "text"           text as text (see "Text" in the package doc)
//
// Values are written with writeq/1 as the right-hand side of =/2
// (operators of priority 700 or more are bracketed) and, as SWI does, with a
// space after each comma that separates arguments or list elements. Answer
// is "true" when no binding is shown (free query variables are not).
// Variables named _ are not shown; _X ones are, as in SWI-Prolog 9.
//
// Values are abbreviated as SWI-Prolog's answer_write_options
// max_depth(10) does: subterms nested deeper than 10 are written ...,
// and a list shows the elements that fit, then |... (see [abbreviate]);
// [Query.FullAnswer] writes them whole.
func (q *Query) Answer() string { return q.answer(answerDepth) }

// FullAnswer is [Query.Answer] without abbreviation: what SWI-Prolog's
// top level shows after w.
func (q *Query) FullAnswer() string { return q.answer(0) }

// SavedValue is a binding written as text (see [Query.Values]).
type SavedValue struct {
	Text string   // writeq/1 text
	Vars []string // the names given to the value's variables that occur more than once
}

// Values returns the query's named variables (not those starting with
// "_") and their values in the current solution written whole with
// writeq/1, which reads back as the same terms but for the identity of
// their variables: what a top level keeps for SWI-Prolog's $Var. A
// variable of Var's value is written _ when it occurs once in it, else
// _Var1, _Var2, … (listed in Vars: a query reading the text back hides
// them with [Query.Hide]).
func (q *Query) Values() map[string]SavedValue {
	vals := map[string]SavedValue{}
	eq := engine.NewAtom("=")
	for _, b := range q.Bindings() {
		counts := map[engine.Variable]int{}
		var order []engine.Variable
		countVars(b.Value, q.env, counts, &order, 0)
		var vn []engine.Term
		var val SavedValue
		for _, v := range order {
			name := "_"
			if counts[v] > 1 {
				name = "_" + b.Name + strconv.Itoa(len(val.Vars)+1)
				val.Vars = append(val.Vars, name)
			}
			vn = append(vn, eq.Apply(engine.NewAtom(name), v))
		}
		o := engine.List(engine.NewAtom("quoted").Apply(atomTrue), engine.NewAtom("variable_names").Apply(engine.List(vn...)))
		val.Text = q.in.writeText(b.Value, q.env, o)
		vals[b.Name] = val
	}
	return vals
}

// ShowLast moves the query variables called names after the others in
// answers (a top level's $Var, bound before the goal, shows after the
// goal's own variables, as in SWI-Prolog).
func (q *Query) ShowLast(names ...string) {
	if len(names) == 0 {
		return
	}
	var first, last []engine.ParsedVariable
	for _, v := range q.vars {
		if slices.Contains(names, v.Name.String()) {
			last = append(last, v)
		} else {
			first = append(first, v)
		}
	}
	q.vars = append(first, last...)
}

// Hide makes the query variables called names anonymous in answers: not
// shown, and named _A, _B, … (or _) inside values like any other variable.
func (q *Query) Hide(names ...string) {
	q.vars = slices.DeleteFunc(q.vars, func(v engine.ParsedVariable) bool {
		return slices.Contains(names, v.Name.String())
	})
}

// answerDepth is the depth at which the top level abbreviates answers,
// SWI-Prolog's default.
const answerDepth = 10

// answer renders the current solution, abbreviated at depth max (0: not
// at all).
func (q *Query) answer(max int) string {
	env := q.env
	type group struct {
		names []string
		value engine.Term
	}
	var groups []*group
	for _, v := range q.vars {
		name, val := v.Name.String(), env.Resolve(v.Variable)
		var g *group
		for _, h := range groups {
			if h.value.Compare(val, env) == 0 {
				g = h
				break
			}
		}
		if g == nil {
			g = &group{value: val}
			groups = append(groups, g)
		}
		g.names = append(g.names, name)
	}

	// Names of unbound variables: a group bound to one takes the name of
	// its last member (SWI's choice); the others are _ or _A, _B, ….
	names := map[engine.Variable]string{}
	taken := map[string]bool{}
	for _, g := range groups {
		for _, n := range g.names {
			taken[n] = true
		}
		if u, ok := g.value.(engine.Variable); ok {
			names[u] = g.names[len(g.names)-1]
		}
	}
	counts := map[engine.Variable]int{}
	var order []engine.Variable
	for _, g := range groups {
		if _, free := g.value.(engine.Variable); !free {
			countVars(g.value, env, counts, &order, 0)
		}
	}
	fresh := 0
	for _, u := range order {
		if _, ok := names[u]; ok {
			continue
		}
		if counts[u] == 1 {
			names[u] = "_"
			continue
		}
		for {
			n := "_" + string(rune('A'+fresh%26))
			if fresh >= 26 {
				n += strconv.Itoa(fresh / 26)
			}
			fresh++
			if !taken[n] {
				names[u] = n
				break
			}
		}
	}
	vn := make([]engine.Term, 0, len(names))
	eq := engine.NewAtom("=")
	for u, n := range names {
		vn = append(vn, eq.Apply(engine.NewAtom(n), u))
	}
	var lines []string
	for _, g := range groups {
		_, free := g.value.(engine.Variable)
		if free && len(g.names) == 1 {
			continue
		}
		var parts []string
		for i := 0; i+1 < len(g.names); i++ {
			parts = append(parts, g.names[i]+" = "+g.names[i+1])
		}
		if !free {
			// Written as the right operand of =/2, so it is bracketed as
			// SWI brackets it; the placeholder's name is cut off again.
			ph := engine.NewVariable()
			vnp := engine.List(append(vn, eq.Apply(engine.NewAtom("A"), ph))...)
			o := engine.List(
				engine.NewAtom("quoted").Apply(atomTrue),
				engine.NewAtom("numbervars").Apply(atomTrue),
				engine.NewAtom("variable_names").Apply(vnp))
			val := g.value
			if max > 0 {
				val = abbreviate(val, env, max)
			}
			s := q.in.writeText(eq.Apply(ph, val), env, o)
			s = strings.TrimLeft(strings.TrimPrefix(s, "A="), " ")
			parts = append(parts, g.names[len(g.names)-1]+" = "+spaceArgs(s))
		}
		lines = append(lines, strings.Join(parts, ", "))
	}
	if len(lines) == 0 {
		return "true"
	}
	return strings.Join(lines, ",\n")
}

// abbreviate returns t with what lies deeper than max replaced by ..., as
// SWI-Prolog's writer does with max_depth(max): a term at depth d (t at
// 1) deeper than max is ...; a list's elements are written one level
// deeper than the list, each further element one level deeper again, and
// the list is cut with |... once that depth reaches max. Texts are atomic,
// as SWI's strings are. ichiban's max_depth counts list elements and
// nesting differently, so the cut is made here.
func abbreviate(t engine.Term, env *engine.Env, max int) engine.Term {
	a := abbreviator{env: env, max: max}
	return a.term(t, 0)
}

type abbreviator struct {
	env *engine.Env
	max int
}

func (a *abbreviator) term(t engine.Term, depth int) engine.Term {
	depth++
	if depth > a.max {
		return atomEllipsis
	}
	c, ok := a.env.Resolve(t).(engine.Compound)
	if !ok {
		return t
	}
	if c.Functor() == atomDot && c.Arity() == 2 {
		if _, ok := textOf(c, a.env); ok {
			return c
		}
		var elems []engine.Term
		d := depth
		var rest engine.Term = c
		for {
			cell, ok := a.env.Resolve(rest).(engine.Compound)
			if !ok || cell.Functor() != atomDot || cell.Arity() != 2 {
				break
			}
			elems = append(elems, a.term(cell.Arg(0), d))
			rest = cell.Arg(1)
			if a.env.Resolve(rest) == atomNil {
				break
			}
			if d++; d >= a.max {
				rest = atomEllipsis
				break
			}
		}
		if r := a.env.Resolve(rest); r != atomNil && r != atomEllipsis {
			rest = a.term(r, d)
		}
		return engine.PartialList(rest, elems...)
	}
	args := make([]engine.Term, c.Arity())
	for i := range args {
		args[i] = a.term(c.Arg(i), depth)
	}
	return c.Functor().Apply(args...)
}

// countVars counts the occurrences of the unbound variables of t, in order
// of first occurrence.
func countVars(t engine.Term, env *engine.Env, counts map[engine.Variable]int, order *[]engine.Variable, depth int) {
	if depth > maxPortrayDepth {
		return
	}
	switch t := env.Resolve(t).(type) {
	case engine.Variable:
		if counts[t] == 0 {
			*order = append(*order, t)
		}
		counts[t]++
	case engine.Compound:
		if _, ok := compactText(t); ok {
			return
		}
		for i := range t.Arity() {
			countVars(t.Arg(i), env, counts, order, depth+1)
		}
	}
}

// spaceArgs puts a space after each comma of writeq output that is not
// quoted, which is SWI-Prolog's spacing(next_argument) (and how its top
// level writes the comma operator too).
func spaceArgs(s string) string {
	var b strings.Builder
	b.Grow(len(s) + len(s)/8)
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		b.WriteByte(c)
		switch {
		case quote != 0:
			switch {
			case c == '\\' && i+1 < len(s):
				i++
				b.WriteByte(s[i])
			case c == quote:
				quote = 0
			}
		case c == '\'' || c == '"' || c == '`':
			quote = c
		case c == ',' && i+1 < len(s) && s[i+1] != ' ':
			b.WriteByte(' ')
		}
	}
	return b.String()
}
