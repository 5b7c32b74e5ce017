package prolog

import (
	"context"
	"errors"

	"github.com/ichiban/prolog/engine"
)

// edgeDefs replace the builtins that would reach outside the interpreter:
// halt (os.Exit in ichiban), open (the real file system), consult (no
// positions, no Unicode escaping), plus what scripts need from their host.
var edgeDefs = []Def{
	Pred1("halt", "halt(+Code) is det", haltPred),
	Pred4("open", "open(+File, +Mode, -Stream, +Options) is det", openPred),
	Pred1("consult", "consult(+FileOrFiles) is det", consultPred),
	Pred2("initialization", "initialization(:Goal, +When) is det", initialization2),
}

// haltPred ends the running query (not the process): the host sees a
// *HaltError with the code. It cancels the query's context, so catch/3
// cannot swallow it.
func haltPred(c *Call, code engine.Term) (bool, error) {
	n, err := c.Int(code)
	if err != nil {
		return false, err
	}
	in := c.In
	if in.cancel == nil {
		return false, PermissionError("execute", "halt", code)
	}
	in.halted, in.haltCode = true, int(n)
	in.cancel(errHalt)
	return false, context.Canceled
}

// openPred opens files of Options.FS for reading; every other mode is a
// permission error, so a script can never write the file system. A file
// the FS refuses (a link out of its root) is a permission error too.
func openPred(c *Call, file, mode, stream, options engine.Term) (bool, error) {
	name, err := c.Atom(file)
	if err != nil {
		return false, err
	}
	m, err := c.Atom(mode)
	if err != nil {
		return false, err
	}
	if _, err := c.List(options); err != nil {
		return false, err
	}
	switch m {
	case "read":
	case "write", "append":
		return false, PermissionError("open", "source_sink", file)
	default:
		return false, DomainError("io_mode", mode)
	}
	f, err := c.In.ip.FS.Open(name)
	if err != nil {
		return false, FileError("source_sink", file, err)
	}
	return c.Unify(stream, engine.NewInputTextStream(f)), nil
}

func consultPred(c *Call, files engine.Term) (bool, error) {
	var names []engine.Term
	switch t := c.Resolve(files).(type) {
	case engine.Atom:
		names = []engine.Term{t}
	default:
		l, err := c.List(files)
		if err != nil {
			return false, err
		}
		names = l
	}
	for _, f := range names {
		name, err := c.Atom(f)
		if err != nil {
			return false, err
		}
		if name == "user" { // [user]: clauses typed at user_input (toplevel.go)
			if err := consultUser(c); err != nil {
				return false, err
			}
			continue
		}
		n, b, err := c.In.readFile(name)
		if err != nil {
			return false, FileError("source_sink", f, err)
		}
		c.In.viaFS(n)
		if err := c.In.consultText(c.Ctx, n, string(b)); err != nil {
			var se *SyntaxError
			if errors.As(err, &se) {
				return false, &ISOError{Formal: engine.NewAtom("syntax_error").Apply(engine.NewAtom(se.Error())), Err: err}
			}
			return false, err
		}
	}
	return true, nil
}

var atomArgv = engine.NewAtom("argv")

// registerFlags replaces current_prolog_flag/2 with one that adds argv to
// ichiban's fixed set. It is registered raw because it is nondeterministic.
func (in *Interpreter) registerFlags() {
	vm := &in.ip.VM
	argv := func() engine.Term {
		ts := make([]engine.Term, len(in.opts.Argv))
		for i, a := range in.opts.Argv {
			ts[i] = engine.NewAtom(a)
		}
		return engine.List(ts...)
	}
	vm.Register2(engine.NewAtom("current_prolog_flag"), func(vm *engine.VM, flag, value engine.Term, k engine.Cont, env *engine.Env) *engine.Promise {
		switch f := env.Resolve(flag).(type) {
		case engine.Atom:
			if f == atomArgv {
				return engine.Unify(vm, value, argv(), k, env)
			}
		case engine.Variable:
			return engine.Delay(func(context.Context) *engine.Promise {
				return engine.CurrentPrologFlag(vm, flag, value, k, env)
			}, func(context.Context) *engine.Promise {
				pair := engine.NewAtom("-")
				return engine.Unify(vm, pair.Apply(flag, value), pair.Apply(atomArgv, argv()), k, env)
			})
		}
		return engine.CurrentPrologFlag(vm, flag, value, k, env)
	})
}

// initialization2 implements initialization(Goal, When): main goals run
// after loading (RunMain), now goals run at once.
func initialization2(c *Call, goal, when engine.Term) (bool, error) {
	w, err := c.Atom(when)
	if err != nil {
		return false, err
	}
	g := c.Resolve(goal)
	switch g.(type) {
	case engine.Variable:
		return false, InstantiationError()
	case engine.Atom, engine.Compound:
	default:
		return false, TypeError("callable", goal)
	}
	switch w {
	case "main":
		c.In.mains = append(c.In.mains, Resolved(g, c.Env))
		return true, nil
	case "now":
		ok, err := engine.Call(c.VM, g, engine.Success, c.Env).Force(c.Ctx)
		return ok, err
	default:
		return false, DomainError("initialization_type", when)
	}
}
