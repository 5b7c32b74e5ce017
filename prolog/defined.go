package prolog

import (
	"github.com/ichiban/prolog/engine"
)

// CheckClosure checks, before anything runs, that calling closure with
// extra more arguments would find a procedure (user-defined, foreign or
// builtin): instantiation_error for a variable, type_error(callable, C)
// for a non-callable term, existence_error(procedure, Name/Arity) for an
// undefined one, as the call itself would throw under unknown=error. A
// handler that is only called later (an event handler) is checked up
// front this way, so a typo fails the call instead of being ignored.
func (c *Call) CheckClosure(closure engine.Term, extra int) error {
	var name engine.Atom
	arity := extra
	switch t := c.Resolve(closure).(type) {
	case engine.Variable:
		return InstantiationError()
	case engine.Atom:
		name = t
	case engine.Compound:
		name, arity = t.Functor(), t.Arity()+extra
	default:
		return TypeError("callable", closure)
	}
	if c.VM.Procedure(name, arity).Kind != engine.ProcedureNone {
		return nil
	}
	return ExistenceError("procedure", engine.NewAtom("/").Apply(name, engine.Integer(arity)))
}
