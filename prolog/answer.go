package prolog

import (
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
func (q *Query) Answer() string {
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
			s := q.in.writeText(eq.Apply(ph, g.value), env, o)
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
