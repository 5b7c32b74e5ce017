package prolog

import (
	"reflect"

	"github.com/ichiban/prolog/engine"
)

// procedureKey is the shape of ichiban's procedure indicator, the key of
// VM.procedures; keyShapeOK says the running ichiban has it.
type procedureKey struct {
	name  engine.Atom
	arity engine.Integer
}

var keyShapeOK = func() bool {
	// NB: not proceduresField, which checkShapes may set after this runs.
	f, ok := reflect.TypeFor[engine.VM]().FieldByName("procedures")
	if !ok || f.Type.Kind() != reflect.Map || f.Type.Elem().Kind() != reflect.Interface {
		return false
	}
	k := f.Type.Key()
	return k.Kind() == reflect.Struct && k.NumField() == 2 && k.Size() == reflect.TypeFor[procedureKey]().Size() &&
		k.Field(0).Type == reflect.TypeFor[engine.Atom]() && k.Field(1).Type == reflect.TypeFor[engine.Integer]()
}()

// CheckClosure checks, before anything runs, that calling closure with
// extra more arguments would find a procedure (user-defined, foreign or
// builtin): instantiation_error for a variable, type_error(callable, C)
// for a non-callable term, existence_error(procedure, Name/Arity) for an
// undefined one, as the call itself would throw under unknown=error. A
// handler that is only called later (an event handler) is checked up
// front this way, so a typo fails the call instead of being ignored. If
// ichiban's layout is not the one checked at load, existence is not
// checked (the call reports it).
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
	if !keyShapeOK {
		return nil
	}
	key := reflect.New(proceduresField.Type.Key()).Elem()
	*(*procedureKey)(key.Addr().UnsafePointer()) = procedureKey{name: name, arity: engine.Integer(arity)}
	if procedureMap(c.VM).MapIndex(key).IsValid() {
		return nil
	}
	return ExistenceError("procedure", engine.NewAtom("/").Apply(name, engine.Integer(arity)))
}
