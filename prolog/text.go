package prolog

// ISO's atom predicates over this dialect's text: "hello" is a chars list,
// so where SWI-Prolog's atom_length("hello", N) sees a string, ichiban's
// sees a list and throws. These take any text, as SWI's do, and answer
// atoms (SWI's behaviour for its strings).
//
//	%!  atom_length(+Text, ?Length) is det.
//	%!  atom_concat(?Text1, ?Text2, ?Atom) is nondet.
//	%!  atom_codes(?Atom, ?Codes) is det.
//	%!  number_codes(?Number, ?Codes) is det.
//	%!  text_to_string(+Text, -String) is det.
//	%!  sleep(+Seconds) is det.
//	%!  read_line_to_string(+Stream, -String) is det.
//	%!  read_line_to_codes(+Stream, -Codes) is det.
//
// sleep/1 ends early, with the query, when the query is cancelled. The
// read_line predicates are SWI's: the line without its newline (or \r\n),
// and end_of_file (codes: -1) at the end of the input.

import (
	"context"
	"errors"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ichiban/prolog/engine"
)

var textDefs = []Def{
	Pred2("atom_length", "atom_length(+Text, ?Length) is det", atomLength),
	Pred2("atom_codes", "atom_codes(?Atom, ?Codes) is det", atomCodes2),
	Pred2("number_codes", "number_codes(?Number, ?Codes) is det", numberCodes),
	Pred2("text_to_string", "text_to_string(+Text, -String) is det", textToString),
	Pred1("sleep", "sleep(+Seconds) is det", sleep),
	Pred2("read_line_to_string", "read_line_to_string(+Stream, -String) is det", readLineToString),
	Pred2("read_line_to_codes", "read_line_to_codes(+Stream, -Codes) is det", readLineToCodes),
}

func readLineToString(c *Call, stream, str engine.Term) (bool, error) {
	line, eof, err := readLine(c, stream)
	if err != nil {
		return false, err
	}
	if eof {
		return c.Unify(str, engine.NewAtom("end_of_file")), nil
	}
	return c.Unify(str, Chars(line)), nil
}

func readLineToCodes(c *Call, stream, codes engine.Term) (bool, error) {
	line, eof, err := readLine(c, stream)
	if err != nil {
		return false, err
	}
	if eof {
		return c.Unify(codes, engine.Integer(-1)), nil
	}
	return c.Unify(codes, codeList(line)), nil
}

// readLine reads one line of an input stream (or alias); eof is true when
// the input had ended before it.
func readLine(c *Call, stream engine.Term) (line string, eof bool, err error) {
	s, err := inputStream(c, stream)
	if err != nil {
		return "", false, err
	}
	var sb strings.Builder
	for {
		r, _, err := s.ReadRune()
		if err != nil {
			if errors.Is(err, io.EOF) {
				if sb.Len() == 0 {
					return "", true, nil
				}
				return sb.String(), false, nil
			}
			return "", false, err
		}
		if r == '\n' {
			return strings.TrimSuffix(sb.String(), "\r"), false, nil
		}
		sb.WriteRune(r)
	}
}

// inputStream resolves a stream or an alias (user_input).
func inputStream(c *Call, t engine.Term) (*engine.Stream, error) {
	switch v := c.Resolve(t).(type) {
	case engine.Variable:
		return nil, InstantiationError()
	case *engine.Stream:
		return v, nil
	case engine.Atom:
		sv := engine.NewVariable()
		var s *engine.Stream
		_, _ = engine.Call(c.VM, engine.NewAtom("stream_property").Apply(sv, engine.NewAtom("alias").Apply(v)), func(env *engine.Env) *engine.Promise {
			s, _ = env.Resolve(sv).(*engine.Stream)
			return engine.Bool(true)
		}, c.Env).Force(c.Ctx)
		if s == nil {
			return nil, ExistenceError("stream", v)
		}
		return s, nil
	}
	return nil, DomainError("stream_or_alias", t)
}

func atomLength(c *Call, text, length engine.Term) (bool, error) {
	s, err := textAs(c, text, "atom")
	if err != nil {
		return false, err
	}
	switch n := c.Resolve(length).(type) {
	case engine.Variable:
	case engine.Integer:
		if n < 0 {
			return false, DomainError("not_less_than_zero", n)
		}
	default:
		return false, TypeError("integer", length)
	}
	return c.Unify(length, engine.Integer(utf8.RuneCountInString(s))), nil
}

// atomCodes2 is ISO's atom_codes/2, but Codes may be any text when Atom is
// unbound ("hi" is chars here).
func atomCodes2(c *Call, atom, codes engine.Term) (bool, error) {
	if _, free := c.Resolve(atom).(engine.Variable); !free {
		s, err := textAs(c, atom, "atom")
		if err != nil {
			return false, err
		}
		return c.Unify(codes, codeList(s)), nil
	}
	s, err := textAs(c, codes, "list")
	if err != nil {
		return false, err
	}
	return c.Unify(atom, engine.NewAtom(s)), nil
}

// numberCodes is ISO's number_codes/2, Codes any text when Number is
// unbound; text that is not a number is a syntax error, as ISO says.
func numberCodes(c *Call, num, codes engine.Term) (bool, error) {
	switch n := c.Resolve(num).(type) {
	case engine.Integer, engine.Float:
		if _, free := c.Resolve(codes).(engine.Variable); free {
			s, _ := c.Text(n)
			return c.Unify(codes, codeList(s)), nil
		}
	case engine.Variable:
	default:
		return false, TypeError("number", num)
	}
	s, err := textAs(c, codes, "list")
	if err != nil {
		return false, err
	}
	v, ok := parseNumber(c, strings.TrimLeftFunc(s, isLayoutRune))
	if !ok {
		return false, iso("syntax_error", engine.NewAtom("illegal_number"))
	}
	return c.Unify(num, v), nil
}

func codeList(s string) engine.Term {
	codes := make([]engine.Term, 0, len(s))
	for _, r := range s {
		codes = append(codes, engine.Integer(r))
	}
	return engine.List(codes...)
}

func textToString(c *Call, text, str engine.Term) (bool, error) {
	s, err := textAs(c, text, "text")
	if err != nil {
		return false, err
	}
	return c.Unify(str, Chars(s)), nil
}

func sleep(c *Call, secs engine.Term) (bool, error) {
	var d time.Duration
	switch v := c.Resolve(secs).(type) {
	case engine.Variable:
		return false, InstantiationError()
	case engine.Integer:
		d = time.Duration(v) * time.Second
	case engine.Float:
		d = time.Duration(float64(v) * float64(time.Second))
	default:
		return false, TypeError("number", secs)
	}
	if d <= 0 {
		return true, nil
	}
	ctx := c.Ctx
	if ctx == nil {
		ctx = context.Background()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true, nil
	case <-ctx.Done():
		return false, context.Cause(ctx)
	}
}

var piAtomConcat = engine.NewAtom("/").Apply(engine.NewAtom("atom_concat"), engine.Integer(3))

// atomConcat is atom_concat/3 over any text: with Text1 and Text2 given it
// joins them, else it enumerates the splits of Atom.
func atomConcat(vm *engine.VM, a1, a2, a3 engine.Term, k engine.Cont, env *engine.Env) *engine.Promise {
	_, free1 := env.Resolve(a1).(engine.Variable)
	_, free2 := env.Resolve(a2).(engine.Variable)
	if !free1 && !free2 {
		s1, err := TextOf(a1, env)
		if err != nil {
			return raise(err, piAtomConcat, env)
		}
		s2, err := TextOf(a2, env)
		if err != nil {
			return raise(err, piAtomConcat, env)
		}
		return engine.Unify(vm, a3, engine.NewAtom(s1+s2), k, env)
	}
	s, err := TextOf(a3, env)
	if err != nil {
		return raise(err, piAtomConcat, env)
	}
	pair := engine.NewAtom("-")
	var ks []func(context.Context) *engine.Promise
	for i := 0; ; {
		left, right := engine.NewAtom(s[:i]), engine.NewAtom(s[i:])
		ks = append(ks, func(context.Context) *engine.Promise {
			return engine.Unify(vm, pair.Apply(a1, a2), pair.Apply(left, right), k, env)
		})
		if i == len(s) {
			break
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return engine.Delay(ks...)
}
