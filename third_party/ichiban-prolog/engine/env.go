package engine

// rlmpl patch (PATCHES.md, "The machine"): Env no longer maps variables to
// terms. Bindings live in the variables themselves (variable.go); an Env
// names the machine whose trail records them, and the predicate whose
// errors it builds (the context of error(Formal, Context)).

var rootContext = NewAtom("root")

// Env is what a foreign predicate binds variables through. A nil *Env is
// valid: bindings made through it are not recorded for backtracking, which
// suits terms that no query has seen.
type Env struct {
	m   *machine
	ctx Term // the calling predicate's indicator; nil at the root
}

// NewEnv creates an empty environment.
func NewEnv() *Env {
	return nil
}

// context returns the predicate indicator errors are raised in.
func (e *Env) context() Term {
	if e == nil || e.ctx == nil {
		return rootContext
	}
	return e.ctx
}

func (e *Env) machine() *machine {
	if e == nil {
		return nil
	}
	return e.m
}

// Resolve follows the variable chain and returns the first non-variable term or the last free variable.
func (e *Env) Resolve(t Term) Term {
	return deref(t)
}

// simplify trys to remove as many variables as possible from term t.
func (e *Env) simplify(t Term) Term {
	return simplify(t, nil, e)
}

func simplify(t Term, simplified map[termID]Compound, env *Env) Term {
	if simplified == nil {
		simplified = map[termID]Compound{}
	}
	t = deref(t)
	if c, ok := simplified[id(t)]; ok {
		return c
	}
	switch t := t.(type) {
	case charList, codeList:
		return t
	case list:
		l := make(list, len(t))
		simplified[id(t)] = l
		for i, e := range t {
			l[i] = simplify(e, simplified, env)
		}
		return l
	case *partial:
		var p partial
		simplified[id(t)] = &p
		p.Compound = simplify(t.Compound, simplified, env).(Compound)
		tail := simplify(*t.tail, simplified, env)
		p.tail = &tail
		return &p
	case Compound:
		c := compound{
			functor: t.Functor(),
			args:    make([]Term, t.Arity()),
		}
		simplified[id(t)] = &c
		for i := 0; i < t.Arity(); i++ {
			c.args[i] = simplify(t.Arg(i), simplified, env)
		}
		return &c
	default:
		return t
	}
}

type variables []Variable

// freeVariables extracts variables in the given Term.
func (e *Env) freeVariables(t Term) []Variable {
	return e.appendFreeVariables(nil, t)
}

func (e *Env) appendFreeVariables(fvs variables, t Term) variables {
	var w rationalWalk // rlmpl patch: rational trees
	return w.appendFreeVariables(e, fvs, t, 0)
}

func (w *rationalWalk) appendFreeVariables(e *Env, fvs variables, t Term, depth int) variables {
	switch t := deref(t).(type) {
	case Variable:
		for _, v := range fvs {
			if v == t {
				return fvs
			}
		}
		return append(fvs, t)
	case Compound:
		if w.visit(depth, t, nil) {
			return fvs
		}
		for i := 0; i < t.Arity(); i++ {
			fvs = w.appendFreeVariables(e, fvs, t.Arg(i), depth+1)
		}
	}
	return fvs
}

// bind binds v to t.
func (e *Env) bind(v Variable, t Term) *Env {
	m := e.machine()
	if m == nil {
		v.ref = t
		return e
	}
	m.bind(v, t)
	return e
}

// Unify unifies 2 terms. The bindings are made in place; when unification
// fails, those it made are undone.
func (e *Env) Unify(x, y Term) (*Env, bool) {
	return e, e.unifyLogged(x, y, false)
}

// Unifiable reports whether x and y unify, binding nothing.
func (e *Env) Unifiable(x, y Term) bool {
	m := e.machine()
	if m == nil {
		m = &machine{}
	}
	return m.unifiable(x, y)
}

func (e *Env) unifyWithOccursCheck(x, y Term) (*Env, bool) {
	return e, e.unifyLogged(x, y, true)
}

func (e *Env) unifyLogged(x, y Term, occursCheck bool) bool {
	m := e.machine()
	if m == nil {
		m = &machine{} // no trail: nothing older than a choice point
	}
	mark, logMark := len(m.trail), len(m.log)
	m.logging++
	ok := m.unify(x, y, occursCheck)
	m.logging--
	if !ok {
		for _, v := range m.log[logMark:] {
			v.ref = nil
		}
		clear(m.trail[mark:])
		m.trail = m.trail[:mark]
	}
	clear(m.log[logMark:])
	m.log = m.log[:logMark]
	return ok
}

// unify unifies x and y, binding through m.
func (m *machine) unify(x, y Term, occursCheck bool) bool {
	x, y = deref(x), deref(y)
	// The common cases first: an atomic term against an atomic term or a
	// free variable.
	if vx, ok := x.(*Var); ok {
		if vx == y {
			return true
		}
		if !occursCheck {
			m.bind(vx, y)
			return true
		}
	} else if vy, ok := y.(*Var); ok {
		if !occursCheck {
			m.bind(vy, x)
			return true
		}
	} else if _, ok := x.(Compound); !ok {
		return atomicEqual(x, y)
	}
	var w rationalWalk // rlmpl patch: rational trees
	return w.unify(m, x, y, occursCheck, 0)
}

// atomicEqual reports whether atomic x unifies with y, which is not a
// variable.
func atomicEqual(x, y Term) bool {
	switch x := x.(type) {
	case Atom, Integer, Float:
		return x == y
	case *BigInt:
		y, ok := y.(*BigInt)
		return ok && x.v.Cmp(&y.v) == 0
	default:
		return x == y
	}
}

// unify recurses on every argument but the last, which it loops on, so
// that a long list costs no Go stack.
func (w *rationalWalk) unify(m *machine, x, y Term, occursCheck bool, depth int) bool {
	for {
		x, y = deref(x), deref(y)
		switch tx := x.(type) {
		case *Var:
			switch {
			case tx == y:
				return true
			case occursCheck && contains(y, tx, nil):
				return false
			default:
				m.bind(tx, y)
				return true
			}
		case Compound:
			switch ty := y.(type) {
			case *Var:
				x, y = y, x
				continue
			case Compound:
				if tx.Functor() != ty.Functor() {
					return false
				}
				if tx.Arity() != ty.Arity() {
					return false
				}
				// A pair of one class (met again, or assumed
				// equal) unifies.
				if w.visit(depth, tx, ty) {
					return true
				}
				n := tx.Arity()
				if n == 0 {
					return true
				}
				if cx, ok := tx.(*compound); ok {
					if cy, ok := ty.(*compound); ok {
						for i := 0; i < n-1; i++ {
							if !w.unify(m, cx.args[i], cy.args[i], occursCheck, depth+1) {
								return false
							}
						}
						x, y, depth = cx.args[n-1], cy.args[n-1], depth+1
						continue
					}
				}
				for i := 0; i < n-1; i++ {
					if !w.unify(m, tx.Arg(i), ty.Arg(i), occursCheck, depth+1) {
						return false
					}
				}
				x, y, depth = tx.Arg(n-1), ty.Arg(n-1), depth+1
			default:
				return false
			}
		default: // atomic
			if _, ok := y.(*Var); ok {
				x, y = y, x
				continue
			}
			return atomicEqual(x, y)
		}
	}
}

func contains(t, s Term, env *Env) bool {
	var w rationalWalk // rlmpl patch: rational trees
	return w.contains(t, s, env, 0)
}

func (w *rationalWalk) contains(t, s Term, env *Env, depth int) bool {
	switch t := deref(t).(type) {
	case *Var:
		return t == s
	case Compound:
		if s, ok := s.(Atom); ok && t.Functor() == s {
			return true
		}
		// A node met again is being (or was) searched already.
		if w.visit(depth, t, nil) {
			return false
		}
		for i := 0; i < t.Arity(); i++ {
			if w.contains(t.Arg(i), s, env, depth+1) {
				return true
			}
		}
		return false
	default:
		return t == s
	}
}
