package host

import (
	"errors"

	"github.com/ichiban/prolog/engine"

	"github.com/rlmpl/rlmpl/prolog"
	"github.com/rlmpl/rlmpl/tokenizer"
)

// ErrNoSolution is returned when a goal that must succeed fails. For a det
// facade predicate of lib/ this always means a lib bug.
var ErrNoSolution = errors.New("host: goal failed (no solution)")

// errorRow is one line of the two-way table between Go sentinels and ISO
// error formals: a foreign predicate returning Err throws
// error(Formal, Name/Arity), and an uncaught exception with that formal
// unwraps to Err in Go.
type errorRow struct {
	Err    error
	Formal func() engine.Term
}

// errorTable is the single translation table (STYLE.md §6). Families add
// their sentinels here.
var errorTable = []errorRow{
	{tokenizer.ErrUnknownEncoding, func() engine.Term {
		return engine.NewAtom("existence_error").Apply(engine.NewAtom("tokenizer_encoding"), engine.NewAtom("unknown"))
	}},
	{tokenizer.ErrUnknownModel, func() engine.Term {
		return engine.NewAtom("existence_error").Apply(engine.NewAtom("tokenizer_model"), engine.NewAtom("unknown"))
	}},
	{ErrClosed, func() engine.Term {
		return engine.NewAtom("permission_error").Apply(engine.NewAtom("access"), engine.NewAtom("session"), engine.NewAtom("closed"))
	}},
}

func mapError(err error) (engine.Term, bool) {
	for _, r := range errorTable {
		if errors.Is(err, r.Err) {
			return r.Formal(), true
		}
	}
	return nil, false
}

// PrologError is an uncaught Prolog exception reaching Go. Text is the
// exception rendered with writeq; Message is the readable, SWI-like form.
// It unwraps to the matching sentinel of the error table, if any.
type PrologError struct {
	Goal    string // the goal the host ran, when it was not the caller's query
	Term    engine.Term
	Text    string
	Message string
	cause   error
}

func (e *PrologError) Error() string { return e.Message }

func (e *PrologError) Unwrap() error { return e.cause }

func wrapPrologError(in *prolog.Interpreter, err error) error {
	var ex engine.Exception
	if err == nil || !errors.As(err, &ex) {
		return err
	}
	pe := &PrologError{Term: ex.Term(), Text: in.WriteQ(ex.Term(), nil), Message: prolog.Message(in, ex.Term())}
	var ge *prolog.GoalError
	if errors.As(err, &ge) {
		pe.Goal = ge.Goal
	}
	if c, ok := ex.Term().(engine.Compound); ok && c.Functor() == engine.NewAtom("error") && c.Arity() == 2 {
		for _, r := range errorTable {
			if c.Arg(0).Compare(r.Formal(), nil) == 0 {
				pe.cause = r.Err
			}
		}
	}
	return pe
}
