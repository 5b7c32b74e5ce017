package prolog

import (
	"fmt"

	"github.com/ichiban/prolog/engine"
)

// Message renders an exception term the way SWI-Prolog's message system
// does, without the "ERROR: " prefix: "atom_length/2: Type error: `integer'
// expected, found `abc' (an atom)". Terms it does not know print as
// "Unknown message: T".
func Message(in *Interpreter, ex engine.Term) string {
	q := func(t engine.Term) string { return in.WriteQ(t, nil) }
	c, ok := ex.(engine.Compound)
	if !ok || c.Functor() != engine.NewAtom("error") || c.Arity() != 2 {
		return "Unknown message: " + q(ex)
	}
	prefix := ""
	ctx := c.Arg(1)
	if f, ok := c.Arg(0).(engine.Compound); ok && f.Functor() == engine.NewAtom("existence_error") && f.Arity() == 2 && f.Arg(0) == engine.NewAtom("procedure") {
		ctx = nil // ichiban's context for unknown procedures is unrelated
	}
	if pi, ok := ctx.(engine.Compound); ok {
		switch {
		case pi.Functor() == engine.NewAtom("/") && pi.Arity() == 2:
			prefix = indicatorText(in, pi) + ": "
		case pi.Functor() == engine.NewAtom("context") && pi.Arity() == 2:
			if _, unbound := pi.Arg(0).(engine.Variable); !unbound {
				prefix = indicatorText(in, pi.Arg(0)) + ": "
			}
			if m, ok := pi.Arg(1).(engine.Atom); ok {
				return prefix + formalMessage(in, c.Arg(0)) + " (" + m.String() + ")"
			}
		}
	}
	return prefix + formalMessage(in, c.Arg(0))
}

func formalMessage(in *Interpreter, formal engine.Term) string {
	q := func(t engine.Term) string { return in.WriteQ(t, nil) }
	w := func(t engine.Term) string { return in.Write(t, nil) }
	if a, ok := formal.(engine.Atom); ok {
		switch a.String() {
		case "instantiation_error":
			return "Arguments are not sufficiently instantiated"
		case "system_error":
			return "System error"
		}
		return "Unknown error term: " + q(a)
	}
	f, ok := formal.(engine.Compound)
	if !ok {
		return "Unknown error term: " + q(formal)
	}
	arg := func(i int) engine.Term { return f.Arg(i) }
	switch name, n := f.Functor().String(), f.Arity(); {
	case name == "existence_error" && n == 2 && arg(0) == engine.NewAtom("procedure"):
		return "Unknown procedure: " + q(arg(1))
	case name == "existence_error" && n == 2:
		return fmt.Sprintf("%s `%s' does not exist", w(arg(0)), q(arg(1)))
	case name == "type_error" && n == 2:
		return fmt.Sprintf("Type error: `%s' expected, found `%s' (%s)", w(arg(0)), q(arg(1)), typeName(arg(1)))
	case name == "domain_error" && n == 2:
		return fmt.Sprintf("Domain error: `%s' expected, found `%s'", w(arg(0)), q(arg(1)))
	case name == "permission_error" && n == 3:
		return fmt.Sprintf("No permission to %s %s `%s'", w(arg(0)), w(arg(1)), q(arg(2)))
	case name == "representation_error" && n == 1:
		return fmt.Sprintf("Cannot represent due to `%s'", w(arg(0)))
	case name == "evaluation_error" && n == 1:
		return "Arithmetic: evaluation error: " + q(arg(0))
	case name == "resource_error" && n == 1:
		return "Not enough resources: " + w(arg(0))
	case name == "syntax_error" && n == 1:
		return "Syntax error: " + w(arg(0))
	}
	return "Unknown error term: " + q(formal)
}

// typeName describes a culprit as SWI does: "an atom", "a compound".
func typeName(t engine.Term) string {
	switch t := t.(type) {
	case engine.Variable:
		return "a var"
	case engine.Atom:
		if t == atomNil {
			return "an empty_list"
		}
		return "an atom"
	case engine.Integer:
		return "an integer"
	case engine.Float:
		return "a float"
	case engine.Compound:
		if isList(t, nil) {
			return "a list"
		}
		return "a compound"
	}
	return "a " + fmt.Sprintf("%T", t)
}

// indicatorText writes Name/Arity without operator brackets: is/2, not (is)/2.
func indicatorText(in *Interpreter, t engine.Term) string {
	if pi, ok := t.(engine.Compound); ok && pi.Functor() == engine.NewAtom("/") && pi.Arity() == 2 {
		if a, ok := pi.Arg(0).(engine.Atom); ok {
			return a.String() + "/" + in.Write(pi.Arg(1), nil)
		}
	}
	return in.Write(t, nil)
}
