package prolog

import (
	"fmt"
	"io"
	"strings"

	"github.com/ichiban/prolog/engine"
)

// Message renders an exception term the way SWI-Prolog's message system
// does, without the "ERROR: " prefix: "atom_length/2: Type error: `integer'
// expected, found `abc' (an atom)". Terms it does not know print as
// "Unknown message: T". A record that carries its own message
// (Tag([..., message(M), ...]), the reason of an error(Reason) outcome)
// reads "Tag: M".
func Message(in *Interpreter, ex engine.Term) string {
	if line, ok := recordMessage(ex); ok {
		return line
	}
	q := func(t engine.Term) string { return in.Describe(t, nil) }
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
	q := func(t engine.Term) string { return in.Describe(t, nil) }
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
	case engine.Integer, *engine.BigInt:
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

// Messages, SWI-Prolog style:
//
//	%!  print_message(+Kind, +Term) is det.
//	%!  message_to_codes(+Term, +Kind, -Codes) is det.
//
// The lines of a message come from the program's message//1 (a DCG:
// message(my_event(X)) --> ['Saw ~w'-[X], nl, 'done']) when it has one
// that succeeds for Term, else from [Message] for error(_, _) terms, else
// "Unknown message: Term". A line element is Format-Args, Format (text),
// nl, ansi(Attributes, Format, Args) or flush. print_message/2 writes the
// lines to Options.Stderr (user_output when nil), each prefixed by
// "ERROR: " (error), "Warning: " (warning), "% " (informational, debug(_))
// or nothing (help, query, banner); silent messages are not printed.
// message_to_codes/3 gives the text without prefixes.

var atomMessage = engine.NewAtom("message")

// recordMessage reads the line people need from a record term that says
// its own message, Tag([..., message(M), ...]), or the outcome
// error(Record) around one: "Tag: M" (the whole term is what the program
// holds, and writeq prints it). False for any other term.
func recordMessage(t engine.Term) (string, bool) {
	if e, ok := t.(engine.Compound); ok && e.Functor() == engine.NewAtom("error") && e.Arity() == 1 {
		t = e.Arg(0)
	}
	c, ok := t.(engine.Compound)
	if !ok {
		return "", false
	}
	r, ok, err := recordOf(c, nil)
	if !ok || err != nil {
		return "", false
	}
	for _, f := range r.Fields {
		if f.Key != "message" {
			continue
		}
		switch m := f.Value.(type) {
		case string:
			if m != "" {
				return r.Tag + ": " + m, true
			}
		case Atom:
			return r.Tag + ": " + string(m), true
		}
	}
	return "", false
}

// messageText renders Term as message lines, one string per line.
func messageText(c *Call, term engine.Term) ([]string, error) {
	lines := engine.NewVariable()
	var elems []engine.Term
	if ok, err := solveOnce(c, atomMessage.Apply(term, lines, atomNil)); err == nil && ok {
		elems, _ = listOf(lines, c.Env)
	} else if f, isFormat := c.Resolve(term).(engine.Compound); isFormat && f.Functor() == engine.NewAtom("format") && f.Arity() == 2 {
		elems = []engine.Term{engine.NewAtom("-").Apply(f.Arg(0), f.Arg(1))} // SWI's format(Format, Args) message
	}
	if elems == nil {
		return strings.Split(Message(c.In, Resolved(term, c.Env)), "\n"), nil
	}
	var (
		out []string
		cur strings.Builder
	)
	for _, e := range elems {
		var spec, args engine.Term
		switch v := c.Resolve(e).(type) {
		case engine.Atom:
			switch v.String() {
			case "nl":
				out = append(out, cur.String())
				cur.Reset()
				continue
			case "flush", "at_same_line":
				continue
			}
			spec, args = v, atomNil
		case engine.Compound:
			switch {
			case v.Functor() == engine.NewAtom("-") && v.Arity() == 2:
				spec, args = v.Arg(0), v.Arg(1)
			case v.Functor() == engine.NewAtom("ansi") && v.Arity() == 3:
				spec, args = v.Arg(1), v.Arg(2)
			default:
				spec, args = v, atomNil // text
			}
		default:
			return nil, DomainError("message_line", e)
		}
		s, err := formatText(c, spec)
		if err != nil {
			return nil, err
		}
		f := &formatter{c: c, args: formatArgs(c, args)}
		if _, err := f.run(s); err != nil {
			return nil, err
		}
		cur.Write(f.out)
	}
	return append(out, cur.String()), nil
}

// messagePrefix is the line prefix of a message kind, and whether the kind
// is printed at all.
func messagePrefix(c *Call, kind engine.Term) (string, bool, error) {
	switch k := c.Resolve(kind).(type) {
	case engine.Variable:
		return "", false, InstantiationError()
	case engine.Atom:
		switch k.String() {
		case "error":
			return "ERROR: ", true, nil
		case "warning":
			return "Warning: ", true, nil
		case "informational":
			return "% ", true, nil
		case "help", "query", "banner":
			return "", true, nil
		case "silent":
			return "", false, nil
		}
	case engine.Compound:
		if k.Functor() == engine.NewAtom("debug") && k.Arity() == 1 {
			return "% ", true, nil
		}
	}
	return "", false, DomainError("message_kind", kind)
}

func printMessage(c *Call, kind, term engine.Term) (bool, error) {
	prefix, show, err := messagePrefix(c, kind)
	if err != nil || !show {
		return err == nil, err
	}
	lines, err := messageText(c, term)
	if err != nil {
		return false, err
	}
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(prefix + l + "\n")
	}
	if w := c.In.opts.Stderr; w != nil {
		_, err := io.WriteString(w, b.String())
		return err == nil, err
	}
	return writeRaw(c, atomUserErr, b.String())
}

func messageToCodes(c *Call, term, kind, codes engine.Term) (bool, error) {
	if _, _, err := messagePrefix(c, kind); err != nil {
		return false, err
	}
	lines, err := messageText(c, term)
	if err != nil {
		return false, err
	}
	s := strings.Join(lines, "\n")
	if s == "" {
		return c.Unify(codes, atomNil), nil
	}
	return c.Unify(codes, engine.CodeList(s)), nil
}
