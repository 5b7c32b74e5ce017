package engine

// rlmpl patch (PATCHES.md, "Hooks for the host"): what the host reads of
// the engine's internals, exported, instead of reflect and unsafe.

// ProcedureKind is what defines a procedure.
type ProcedureKind int

const (
	ProcedureNone    ProcedureKind = iota
	ProcedureUser                  // clauses (consulted or asserted)
	ProcedureForeign               // Go: a registered predicate or the machine's own
)

// ProcedureInfo describes a procedure of a VM.
type ProcedureInfo struct {
	Name    Atom
	Arity   int
	Kind    ProcedureKind
	Dynamic bool
}

// Procedure returns what vm knows of name/arity.
func (vm *VM) Procedure(name Atom, arity int) ProcedureInfo {
	info := ProcedureInfo{Name: name, Arity: arity}
	switch p := vm.procedures[procedureIndicator{name: name, arity: Integer(arity)}].(type) {
	case nil:
	case *userDefined:
		info.Kind, info.Dynamic = ProcedureUser, p.dynamic
	default:
		info.Kind = ProcedureForeign
	}
	return info
}

// Procedures returns every procedure of vm, in no particular order.
func (vm *VM) Procedures() []ProcedureInfo {
	out := make([]ProcedureInfo, 0, len(vm.procedures))
	for pi := range vm.procedures {
		out = append(out, vm.Procedure(pi.name, int(pi.arity)))
	}
	return out
}

// ClauseTerms returns the clauses of the user-defined procedure
// name/arity as they were consulted or asserted (H or H :- B), the live
// ones in order; nil for any other procedure. The terms are the engine's
// own: callers must not bind their variables (copy them first).
func (vm *VM) ClauseTerms(name Atom, arity int) []Term {
	u, ok := vm.procedures[procedureIndicator{name: name, arity: Integer(arity)}].(*userDefined)
	if !ok {
		return nil
	}
	cls := u.live()
	out := make([]Term, 0, len(cls))
	for _, c := range cls {
		out = append(out, c.raw)
	}
	return out
}

// UserProcedures is a set of user-defined procedures taken from a VM.
type UserProcedures struct {
	procs map[procedureIndicator]*userDefined
}

// UserProcedures returns the user-defined procedures of vm as they are.
func (vm *VM) UserProcedures() UserProcedures {
	s := UserProcedures{procs: map[procedureIndicator]*userDefined{}}
	for pi, p := range vm.procedures {
		if u, ok := p.(*userDefined); ok {
			s.procs[pi] = u
		}
	}
	return s
}

// Since returns the procedures of s that are not in before, or were
// replaced since.
func (s UserProcedures) Since(before UserProcedures) UserProcedures {
	out := UserProcedures{procs: map[procedureIndicator]*userDefined{}}
	for pi, u := range s.procs {
		if before.procs[pi] != u {
			out.procs[pi] = u
		}
	}
	return out
}

// Share returns a copy of s that other VMs may install while vm goes on
// changing its own procedures: the dynamic ones are copied, clause by
// clause, as they are now; the static ones never change in place.
func (s UserProcedures) Share() UserProcedures {
	out := UserProcedures{procs: make(map[procedureIndicator]*userDefined, len(s.procs))}
	for pi, u := range s.procs {
		out.procs[pi] = u.own()
	}
	return out
}

// Install puts the procedures of s into vm, replacing any of the same
// indicators. Each VM gets procedures of its own (its index, its
// generations); static clauses are shared, dynamic ones copied.
func (vm *VM) Install(s UserProcedures) {
	if vm.procedures == nil {
		vm.procedures = map[procedureIndicator]procedure{}
	}
	for pi, u := range s.procs {
		vm.procedures[pi] = u.own()
	}
}

// own returns a copy of u for another VM.
func (u *userDefined) own() *userDefined {
	c := &userDefined{public: u.public, dynamic: u.dynamic, multifile: u.multifile, discontiguous: u.discontiguous, keyed: u.keyed}
	live := u.live()
	c.clauses = make(clauses, len(live))
	for i, cl := range live {
		if u.dynamic {
			cp := *cl
			cp.born, cp.died = 0, ^uint64(0)
			cl = &cp
		}
		c.clauses[i] = cl
	}
	return c
}

// IsAcyclic reports whether t is a finite tree. It is linear in the
// number of distinct nodes of t.
func IsAcyclic(t Term) bool {
	return !cyclicTerm(t, nil)
}

// IsGround reports whether t has no free variable (cycle-safe).
func IsGround(t Term) bool {
	return ground(t)
}

// NodeKey identifies compound c by where it lives, so that a walk meets
// the same node again with the same key; false for compact text (which
// holds no variable, hence no cycle).
func NodeKey(c Compound) (any, bool) {
	k, ok := nodeKey(c)
	return k, ok
}
