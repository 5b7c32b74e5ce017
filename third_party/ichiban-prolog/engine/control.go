package engine

import (
	"context"
	"slices"
)

// rlmpl patch (PATCHES.md, "The machine"): the control predicates the
// machine runs itself (call/1..8, catch/3, findall/3,4, the control
// constructs called as goals, once/1, ignore/1, forall/2, repeat/0,
// call_nth/2), and the deterministic builtins a body runs in place
// (unification, comparison, type tests, arithmetic).

var (
	atomSoftThen  = NewAtom("*->")
	atomFindall   = NewAtom("findall")
	atomCatch     = NewAtom("catch")
	atomOnce      = NewAtom("once")
	atomIgnore    = NewAtom("ignore")
	atomForall    = NewAtom("forall")
	atomCallNth   = NewAtom("call_nth")
	atomRepeat    = NewAtom("repeat")
	atomThrow     = NewAtom("throw")
	atomIsList    = NewAtom("is_list")
	atomGround    = NewAtom("ground")
	atomAtomicP   = NewAtom("atomic")
	atomNumberP   = NewAtom("number")
	atomNonvar    = NewAtom("nonvar")
	atomVarP      = NewAtom("var")
	atomCompoundP = NewAtom("compound")

	atomBetween             = NewAtom("between")
	atomInf                 = NewAtom("inf")
	atomInfinite            = NewAtom("infinite")
	atomIs                  = NewAtom("is")
	atomEqualColonEqual     = NewAtom("=:=")
	atomEqualBackSlashEqual = NewAtom(`=\=`)
	atomLessThanOrEqual     = NewAtom("=<")
	atomGreaterThanOrEqual  = NewAtom(">=")
)

// RegisterNatives installs the control predicates above. A native's args
// are the machine's argument buffer: it copies what it keeps.
func (vm *VM) RegisterNatives() {
	if vm.procedures == nil {
		vm.procedures = map[procedureIndicator]procedure{}
	}
	reg := func(name Atom, arity int, n native) {
		vm.procedures[procedureIndicator{name: name, arity: Integer(arity)}] = n
	}
	for n := 1; n <= 8; n++ {
		reg(atomCall, n, callNative)
	}
	reg(atomCatch, 3, catch3)
	reg(atomFindall, 3, findall)
	reg(atomFindall, 4, findall)
	for _, c := range []struct {
		name  Atom
		arity int
	}{{atomComma, 2}, {atomSemiColon, 2}, {atomThen, 2}, {atomSoftThen, 2}, {atomNegation, 1}} {
		name := c.name
		reg(name, c.arity, func(m *machine, args []Term, kf *frame, kpc int) outcome {
			g := name.Apply(slices.Clone(args)...) // args is the machine's buffer
			return m.callGoal(g, kf, kpc, piTerm(name, len(args)))
		})
	}
	reg(atomNot, 1, func(m *machine, args []Term, kf *frame, kpc int) outcome {
		return m.callGoal(atomNegation.Apply(args[0]), kf, kpc, piTerm(atomNot, 1))
	})
	reg(atomOnce, 1, func(m *machine, args []Term, kf *frame, kpc int) outcome {
		return m.callGoal(atomThen.Apply(args[0], atomTrue), kf, kpc, piTerm(atomOnce, 1))
	})
	reg(atomIgnore, 1, func(m *machine, args []Term, kf *frame, kpc int) outcome {
		return m.callGoal(atomSemiColon.Apply(atomThen.Apply(args[0], atomTrue), atomTrue), kf, kpc, piTerm(atomIgnore, 1))
	})
	reg(atomForall, 2, func(m *machine, args []Term, kf *frame, kpc int) outcome {
		return m.callGoal(atomNegation.Apply(atomComma.Apply(args[0], atomNegation.Apply(args[1]))), kf, kpc, piTerm(atomForall, 2))
	})
	reg(atomRepeat, 0, func(m *machine, _ []Term, kf *frame, kpc int) outcome {
		cp := m.push(cpJump)
		cp.f, cp.pc = &frame{code: repeatCode, parent: kf, ppc: kpc}, 0
		m.f, m.pc = kf, kpc
		return goOn
	})
	reg(atomCallNth, 2, callNth)
	reg(atomBetween, 3, between)
	reg(atomTrue, 0, func(m *machine, _ []Term, kf *frame, kpc int) outcome {
		m.f, m.pc = kf, kpc
		return goOn
	})
	reg(atomCut, 0, func(m *machine, _ []Term, kf *frame, kpc int) outcome { // cut inside call/1: local
		m.f, m.pc = kf, kpc
		return goOn
	})
	reg(atomFail, 0, func(*machine, []Term, *frame, int) outcome { return failed })
	reg(atomFalse, 0, func(*machine, []Term, *frame, int) outcome { return failed })
	// The inlined builtins, when they are called (call/N, a variable goal).
	for pi, f := range inlined {
		ctx := pi.Term()
		vm.procedures[pi] = native(func(m *machine, args []Term, kf *frame, kpc int) outcome {
			ins := instr{args: args, ctx: ctx}
			ok, err := f(m, &ins, nil)
			switch {
			case err != nil:
				m.err = err
				m.f, m.pc = kf, -1
				return raised
			case !ok:
				return failed
			}
			m.f, m.pc = kf, kpc
			return goOn
		})
	}
	reg(atomThrow, 1, func(m *machine, args []Term, kf *frame, kpc int) outcome {
		env := m.envCtx(piTerm(atomThrow, 1))
		switch b := deref(args[0]).(type) {
		case *Var:
			m.err = InstantiationError(env)
		default:
			m.err = NewException(b, env)
		}
		m.f, m.pc = kf, -1
		return raised
	})
}

// repeatCode pushes the repeat alternative again and goes on.
var repeatCode = &code{ins: []instr{{op: opTry, a: 0}, {op: opExit}}}

func piTerm(name Atom, arity int) Term {
	return atomSlash.Apply(name, Integer(arity))
}

// callNative is call/1..8: call(G, A1, ...) adds the arguments to G.
func callNative(m *machine, args []Term, kf *frame, kpc int) outcome {
	ctx := piTerm(atomCall, len(args))
	goal := args[0]
	if len(args) > 1 {
		g, err := addArgs(goal, args[1:], m.envCtx(ctx))
		if err != nil {
			m.err = err
			m.f, m.pc = kf, -1
			return raised
		}
		goal = g
	}
	return m.callGoal(goal, kf, kpc, ctx)
}

// addArgs returns closure with extra arguments added.
func addArgs(closure Term, extra []Term, env *Env) (Term, error) {
	switch c := deref(closure).(type) {
	case *Var:
		return nil, InstantiationError(env)
	case Atom:
		return c.Apply(extra...), nil
	case Compound:
		args := make([]Term, 0, c.Arity()+len(extra))
		for i := 0; i < c.Arity(); i++ {
			args = append(args, c.Arg(i))
		}
		return c.Functor().Apply(append(args, extra...)...), nil
	default:
		return nil, typeError(validTypeCallable, c, env)
	}
}

// catch3 is catch(Goal, Catcher, Recovery): Goal runs as call/1 does,
// and the catch is active while it runs (from the call until Goal exits,
// and again when backtracking re-enters Goal).
func catch3(m *machine, args []Term, kf *frame, kpc int) outcome {
	m.serials++
	cp := m.push(cpCatch)
	cp.f, cp.pc, cp.a, cp.b, cp.serial, cp.ctx = kf, kpc, args[1], args[2], m.serials, piTerm(atomCatch, 3)
	marker := &frame{code: popCatchCode, parent: kf, ppc: kpc, serial: m.serials}
	return m.callGoal(args[0], marker, 0, cp.ctx)
}

// findall is findall/3 and findall/4: Goal runs as call/1 does; each
// solution adds a copy of Template and fails; when Goal has no more, the
// choice point below it unifies the copies with the result.
func findall(m *machine, args []Term, kf *frame, kpc int) outcome {
	ctx := piTerm(atomFindall, len(args))
	env := m.envCtx(ctx)
	iter := ListIterator{List: args[2], Env: env, AllowPartial: true}
	for iter.Next() {
	}
	if err := iter.Err(); err != nil {
		m.err = err
		m.f, m.pc = kf, -1
		return raised
	}
	coll := new([]Term)
	cp := m.push(cpFindall)
	cp.f, cp.pc, cp.b, cp.coll = kf, kpc, args[2], coll
	if len(args) == 4 {
		cp.a = args[3]
	}
	collector := &frame{code: collectCode, parent: kf, ppc: kpc, tmpl: args[0], coll: coll}
	return m.callGoal(args[1], collector, 0, ctx)
}

// callNth is call_nth(Goal, Nth): Nth counts Goal's solutions; given, it
// succeeds on the Nth and leaves no choice point in Goal.
// See http://www.complang.tuwien.ac.at/ulrich/iso-prolog/call_nth
func callNth(m *machine, args []Term, kf *frame, kpc int) outcome {
	env := m.envCtx(piTerm(atomCallNth, 2))
	nth := deref(args[1])
	switch n := nth.(type) {
	case *Var:
	case Integer:
		switch {
		case n < 0:
			m.err = domainError(validDomainNotLessThanZero, n, env)
			m.f, m.pc = kf, -1
			return raised
		case n == 0:
			return failed
		}
	default:
		m.err = typeError(validTypeInteger, n, env)
		m.f, m.pc = kf, -1
		return raised
	}
	barrier := len(m.cps)
	var count Integer
	next := m.kAt(kf, kpc)
	k := func(env *Env) *Promise {
		count++
		if n, ok := nth.(Integer); ok {
			if count < n {
				return Bool(false)
			}
			m.cutTo(barrier)
		} else if !m.unify(nth, count, false) {
			return Bool(false)
		}
		return next(env)
	}
	return m.callGoal(args[0], &frame{code: goKCode, k: k, parent: kf, ppc: kpc}, 0, piTerm(atomCallNth, 2))
}

// between is between(Low, High, X), High possibly inf or infinite (as
// in SWI-Prolog): X enumerates Low..High from a choice point of its own,
// a counter, with no allocation per value; the last value leaves no
// choice point.
func between(m *machine, args []Term, kf *frame, kpc int) outcome {
	env := m.envCtx(piTerm(atomBetween, 3))
	raise := func(err error) outcome {
		m.err = err
		m.f, m.pc = kf, -1
		return raised
	}
	bound := func(t Term, infOK bool) (Number, error) {
		switch t := deref(t).(type) {
		case *Var:
			return nil, InstantiationError(env)
		case Integer, *BigInt:
			return t.(Number), nil
		case Atom:
			if infOK && (t == atomInf || t == atomInfinite) {
				return nil, nil
			}
		}
		return nil, typeError(validTypeInteger, t, env)
	}
	lo, err := bound(args[0], false)
	if err != nil {
		return raise(err)
	}
	hi, err := bound(args[1], true)
	if err != nil {
		return raise(err)
	}
	switch x := deref(args[2]).(type) {
	case Integer, *BigInt:
		if compareNumbers(lo, x.(Number)) <= 0 && (hi == nil || compareNumbers(x.(Number), hi) <= 0) {
			m.f, m.pc = kf, kpc
			return goOn
		}
		return failed
	case *Var:
		l, small := lo.(Integer)
		h, smallHigh := hi.(Integer)
		if hi == nil {
			h, smallHigh = maxInt, true // past it, X would be big: unreachable in practice
		}
		if !small || !smallHigh {
			return m.resume(betweenBig(lo, hi, x, m.kAt(kf, kpc), env), kf)
		}
		if l > h {
			return failed
		}
		if l < h {
			cp := m.push(cpCounter)
			cp.f, cp.pc, cp.a, cp.lo, cp.hi = kf, kpc, x, l+1, h
		}
		m.bind(x, l)
		m.f, m.pc = kf, kpc
		return goOn
	default:
		return raise(typeError(validTypeInteger, x, env))
	}
}

// betweenBig enumerates between/3 on big integers, one alternative at a
// time.
func betweenBig(lo, hi Number, x *Var, k Cont, env *Env) *Promise {
	if hi != nil && compareNumbers(lo, hi) > 0 {
		return Bool(false)
	}
	return Delay(func(context.Context) *Promise {
		return Unify(nil, x, lo, k, env)
	}, func(context.Context) *Promise {
		next, err := binaryFunctors[atomPlus](lo, Integer(1))
		if err != nil {
			return Error(err)
		}
		return betweenBig(next, hi, x, k, env)
	})
}

// kAt returns a continuation that goes on at pc kpc of frame kf.
func (m *machine) kAt(kf *frame, kpc int) Cont {
	return func(*Env) *Promise {
		m.nf, m.npc = kf, kpc
		return contPromise
	}
}

// inlined are the builtins a body runs in place: deterministic, with
// their arguments taken from templates in order (order lists the
// arguments' indices in the order they are built, when it is not 0, 1).
var inlined = map[procedureIndicator]func(m *machine, ins *instr, slots []Term) (bool, error){}

// inlineOrder is the order in which an inlined builtin reads its
// arguments, when it is not left to right: is/2 evaluates its expression
// before it unifies the result.
var inlineOrder = map[procedureIndicator][]int{
	{name: atomIs, arity: 2}: {1, 0},
}

func init() {
	inline := func(name Atom, arity int, f func(m *machine, ins *instr, slots []Term) (bool, error)) {
		inlined[procedureIndicator{name: name, arity: Integer(arity)}] = f
	}
	inline(atomEqual, 2, func(m *machine, ins *instr, slots []Term) (bool, error) {
		if s, ok := ins.args[0].(slotRef); ok && s.first && ins.a == 1 {
			slots[s.idx] = m.build(ins.args[1], slots)
			return true, nil
		}
		x := m.build(ins.args[0], slots)
		return m.match(ins.args[1], x, slots), nil
	})
	inline(NewAtom(`\=`), 2, func(m *machine, ins *instr, slots []Term) (bool, error) {
		x, y := m.build(ins.args[0], slots), m.build(ins.args[1], slots)
		return !m.unifiable(x, y), nil
	})
	compare := func(name string, ok func(int) bool) {
		inline(NewAtom(name), 2, func(m *machine, ins *instr, slots []Term) (bool, error) {
			x, y := m.build(ins.args[0], slots), m.build(ins.args[1], slots)
			return ok(x.Compare(y, &m.env)), nil
		})
	}
	compare("==", func(o int) bool { return o == 0 })
	compare(`\==`, func(o int) bool { return o != 0 })
	compare("@<", func(o int) bool { return o < 0 })
	compare("@>", func(o int) bool { return o > 0 })
	compare("@=<", func(o int) bool { return o <= 0 })
	compare("@>=", func(o int) bool { return o >= 0 })
	test := func(name Atom, ok func(t Term) bool) {
		inline(name, 1, func(m *machine, ins *instr, slots []Term) (bool, error) {
			return ok(deref(m.build(ins.args[0], slots))), nil
		})
	}
	test(atomVarP, func(t Term) bool { _, ok := t.(*Var); return ok })
	test(atomNonvar, func(t Term) bool { _, ok := t.(*Var); return !ok })
	test(atomAtom, func(t Term) bool { _, ok := t.(Atom); return ok })
	test(atomInteger, func(t Term) bool {
		switch t.(type) {
		case Integer, *BigInt:
			return true
		}
		return false
	})
	test(atomFloat, func(t Term) bool { _, ok := t.(Float); return ok })
	test(atomNumberP, func(t Term) bool {
		switch t.(type) {
		case Integer, *BigInt, Float:
			return true
		}
		return false
	})
	test(atomAtomicP, func(t Term) bool {
		switch t.(type) {
		case *Var, Compound:
			return false
		}
		return true
	})
	test(atomCompoundP, func(t Term) bool { _, ok := t.(Compound); return ok })
	test(atomCallable, func(t Term) bool {
		switch t.(type) {
		case Atom, Compound:
			return true
		}
		return false
	})
	test(atomIsList, func(t Term) bool {
		iter := ListIterator{List: t}
		for iter.Next() {
		}
		return iter.Err() == nil
	})
	test(atomGround, func(t Term) bool { return ground(t) })
	inline(atomIs, 2, func(m *machine, ins *instr, slots []Term) (bool, error) {
		v, err := m.eval(ins.args[1], slots, ins.ctx)
		if err != nil {
			return false, err
		}
		if s, ok := ins.args[0].(slotRef); ok && s.first {
			slots[s.idx] = v
			return true, nil
		}
		return m.match(ins.args[0], v, slots), nil
	})
	arith := func(name Atom, ok func(int) bool) {
		inline(name, 2, func(m *machine, ins *instr, slots []Term) (bool, error) {
			x, err := m.eval(ins.args[0], slots, ins.ctx)
			if err != nil {
				return false, err
			}
			y, err := m.eval(ins.args[1], slots, ins.ctx)
			if err != nil {
				return false, err
			}
			return ok(compareNumbers(x, y)), nil
		})
	}
	arith(atomEqualColonEqual, func(o int) bool { return o == 0 })
	arith(atomEqualBackSlashEqual, func(o int) bool { return o != 0 })
	arith(atomLessThan, func(o int) bool { return o < 0 })
	arith(atomGreaterThan, func(o int) bool { return o > 0 })
	arith(atomLessThanOrEqual, func(o int) bool { return o <= 0 })
	arith(atomGreaterThanOrEqual, func(o int) bool { return o >= 0 })
}

// unifiable reports whether x and y unify, binding nothing.
func (m *machine) unifiable(x, y Term) bool {
	mark, logMark := len(m.trail), len(m.log)
	m.logging++
	ok := m.unify(x, y, false)
	m.logging--
	for _, v := range m.log[logMark:] {
		v.ref = nil
	}
	clear(m.trail[mark:])
	m.trail = m.trail[:mark]
	clear(m.log[logMark:])
	m.log = m.log[:logMark]
	return ok
}

// ground reports whether t has no free variable.
func ground(t Term) bool {
	var w rationalWalk
	return w.ground(t, 0)
}

func (w *rationalWalk) ground(t Term, depth int) bool {
	for {
		switch c := deref(t).(type) {
		case *Var:
			return false
		case charList, codeList:
			return true
		case Compound:
			if w.visit(depth, c, nil) {
				return true
			}
			n := c.Arity()
			for i := 0; i < n-1; i++ {
				if !w.ground(c.Arg(i), depth+1) {
					return false
				}
			}
			t, depth = c.Arg(n-1), depth+1
		default:
			return true
		}
	}
}

// eval evaluates the arithmetic expression template t. ctx names the
// builtin, for errors; nothing is allocated unless one is raised.
func (m *machine) eval(t Term, slots []Term, ctx Term) (Number, error) {
	switch t := t.(type) {
	case slotRef:
		v := slots[t.idx]
		if t.first || v == nil {
			return nil, InstantiationError(m.envCtx(ctx))
		}
		switch n := deref(v).(type) {
		case Integer:
			return n, nil
		case Float:
			return n, nil
		}
		return eval(v, m.envCtx(ctx))
	case Integer:
		return t, nil
	case Float:
		return t, nil
	case *tmplCompound:
		switch len(t.args) {
		case 1:
			f, ok := unaryFunctors[t.functor]
			if !ok {
				return nil, typeError(validTypeEvaluable, atomSlash.Apply(t.functor, Integer(1)), m.envCtx(ctx))
			}
			x, err := m.eval(t.args[0], slots, ctx)
			if err != nil {
				return nil, err
			}
			r, err := f(x)
			if err != nil {
				return nil, m.evalError(err, ctx)
			}
			return r, nil
		case 2:
			f, ok := binaryFunctors[t.functor]
			if !ok {
				return nil, typeError(validTypeEvaluable, atomSlash.Apply(t.functor, Integer(2)), m.envCtx(ctx))
			}
			x, err := m.eval(t.args[0], slots, ctx)
			if err != nil {
				return nil, err
			}
			y, err := m.eval(t.args[1], slots, ctx)
			if err != nil {
				return nil, err
			}
			if i, ok := x.(Integer); ok {
				if j, ok := y.(Integer); ok {
					switch t.functor {
					case atomPlus:
						if r := i + j; (r > i) == (j > 0) {
							return r, nil
						}
					case atomMinus:
						if r := i - j; (r < i) == (j > 0) {
							return r, nil
						}
					}
				}
			}
			r, err := f(x, y)
			if err != nil {
				return nil, m.evalError(err, ctx)
			}
			return r, nil
		default:
			return nil, typeError(validTypeEvaluable, atomSlash.Apply(t.functor, Integer(len(t.args))), m.envCtx(ctx))
		}
	default:
		return eval(t, m.envCtx(ctx))
	}
}

// evalError turns the exceptional value of an evaluable functor into the
// evaluation error eval makes of it.
func (m *machine) evalError(err error, ctx Term) error {
	if ev, ok := err.(exceptionalValue); ok {
		return evaluationError(ev, m.envCtx(ctx))
	}
	if err == errBigTooLarge {
		return resourceError(resourceMemory, m.envCtx(ctx))
	}
	return err
}
