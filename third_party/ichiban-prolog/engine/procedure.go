package engine

// rlmpl patch (PATCHES.md, "The machine"): user-defined procedures with
// first-argument indexing and the logical update view.
//
// A call sees the clauses of the procedure's generation at the call
// (ISO's logical update view): assertz/asserta/retract start a new
// generation, and a clause is visible to the generations from its birth
// to its death. A call whose first argument is bound considers only the
// clauses whose first argument may match it: by a scan of the clause
// keys for a small procedure, by a hash index (built on first need,
// kept up to date by assert) for a large one. A call leaves no choice
// point when no later clause may match.

import (
	"errors"
	"math"
)

type userDefined struct {
	public        bool
	dynamic       bool
	multifile     bool
	discontiguous bool

	// 7.4.3 says "If no clauses are defined for a procedure indicated by a directive ... then the procedure shall exist but have no clauses."
	clauses

	gen   uint64 // the current generation
	dead  int    // retracted clauses still in clauses
	index *firstArgIndex
}

// indexThreshold is the number of clauses from which a procedure called
// with a bound first argument gets a hash index.
const indexThreshold = 8

// indexKey is what a clause's first argument (or a call's) is, for
// indexing: its type, and a value that tells apart atoms, integers,
// floats and principal functors. kind 0 is a variable (or no argument):
// it matches every key.
type indexKey struct {
	kind  uint8
	value uint64
	arity int
}

const (
	keyVar uint8 = iota
	keyAtom
	keyInteger
	keyFloat
	keyCompound
	keyOther // big integers and custom atomic terms: one bucket each kind
)

func keyOf(t Term) indexKey {
	switch t := deref(t).(type) {
	case *Var:
		return indexKey{}
	case Atom:
		return indexKey{kind: keyAtom, value: uint64(t)}
	case Integer:
		return indexKey{kind: keyInteger, value: uint64(t)}
	case Float:
		return indexKey{kind: keyFloat, value: math.Float64bits(float64(t))}
	case Compound:
		return indexKey{kind: keyCompound, value: uint64(t.Functor()), arity: t.Arity()}
	case slotRef:
		return indexKey{}
	case *tmplCompound:
		return indexKey{kind: keyCompound, value: uint64(t.functor), arity: len(t.args)}
	default:
		return indexKey{kind: keyOther}
	}
}

// firstArgIndex maps a first-argument key to the clauses that may match
// it, in order: those with that key and those with a variable there.
type firstArgIndex struct {
	buckets map[indexKey][]*clause
	vars    []*clause // the clauses with a variable first argument
}

// candidates returns the clauses a call with args may match (others may
// be in it too: nextClause checks) and the generation the call sees.
func (u *userDefined) candidates(args []Term) ([]*clause, uint64) {
	cls := u.clauses
	if len(cls) < indexThreshold || len(args) == 0 {
		return cls, u.gen
	}
	k := keyOf(args[0])
	if k.kind == keyVar || k.kind == keyOther {
		return cls, u.gen
	}
	if u.index == nil {
		u.buildIndex()
	}
	if b, ok := u.index.buckets[k]; ok {
		return b, u.gen
	}
	return u.index.vars, u.gen
}

// nextClause returns the index of the first clause of cls from i on that
// is alive in generation gen and may match key, or -1.
func nextClause(cls []*clause, i int, key indexKey, gen uint64) int {
	for ; i < len(cls); i++ {
		c := cls[i]
		if c.born <= gen && gen < c.died && (c.key.kind == keyVar || key.kind == keyVar || c.key == key || c.key.kind == keyOther && key.kind == keyOther) {
			return i
		}
	}
	return -1
}

func (u *userDefined) buildIndex() {
	ix := &firstArgIndex{buckets: map[indexKey][]*clause{}}
	for _, c := range u.clauses {
		if c.died != ^uint64(0) {
			continue
		}
		ix.add(c, false)
	}
	u.index = ix
}

// add files c at the end (or, front, at the start) of its buckets.
func (ix *firstArgIndex) add(c *clause, front bool) {
	put := func(b []*clause) []*clause {
		if front {
			nb := make([]*clause, 0, len(b)+1)
			return append(append(nb, c), b...)
		}
		return append(b, c)
	}
	if c.key.kind == keyVar || c.key.kind == keyOther {
		for k, b := range ix.buckets {
			ix.buckets[k] = put(b)
		}
		ix.vars = put(ix.vars)
		return
	}
	b, ok := ix.buckets[c.key]
	if !ok {
		b = append([]*clause(nil), ix.vars...)
	}
	ix.buckets[c.key] = put(b)
}

// addClauses adds cs at the end (or, front, at the start) of u in a new
// generation.
func (u *userDefined) addClauses(cs []*clause, front bool) {
	u.gen++
	for _, c := range cs {
		c.born, c.died = u.gen, ^uint64(0)
	}
	if front {
		ncs := make(clauses, 0, len(u.clauses)+len(cs))
		ncs = append(append(ncs, cs...), u.clauses...)
		u.clauses = ncs
		if u.index != nil {
			for i := len(cs) - 1; i >= 0; i-- {
				u.index.add(cs[i], true)
			}
		}
		return
	}
	u.clauses = append(u.clauses, cs...)
	if u.index != nil {
		for _, c := range cs {
			u.index.add(c, false)
		}
	}
}

// retractClause kills c in a new generation; running calls still see it.
func (u *userDefined) retractClause(c *clause) {
	if c.died != ^uint64(0) {
		return
	}
	u.gen++
	c.died = u.gen
	u.dead++
	if u.dead > 8 && u.dead > len(u.clauses)/2 {
		u.compact()
	}
}

// compact drops dead clauses: a new slice, so that running calls keep
// theirs.
func (u *userDefined) compact() {
	live := make(clauses, 0, len(u.clauses)-u.dead)
	for _, c := range u.clauses {
		if c.died == ^uint64(0) {
			live = append(live, c)
		}
	}
	u.clauses, u.dead = live, 0
	u.index = nil
}

// live returns the clauses alive now.
func (u *userDefined) live() []*clause {
	if u.dead == 0 {
		return u.clauses
	}
	live := make([]*clause, 0, len(u.clauses)-u.dead)
	for _, c := range u.clauses {
		if c.died == ^uint64(0) {
			live = append(live, c)
		}
	}
	return live
}

var errMachineOnly = errors.New("engine: a procedure the machine runs itself was called directly")

// call is never used: the machine runs user-defined procedures itself,
// and VM.Arrive hands them to it.
func (u *userDefined) call(*VM, []Term, Cont, *Env) *Promise { return Error(errMachineOnly) }

// native is a procedure the machine runs itself (call/N, catch/3,
// findall/3, ...): it gets the machine and the continuation.
type native func(m *machine, args []Term, kf *frame, kpc int) outcome

func (n native) call(*VM, []Term, Cont, *Env) *Promise { return Error(errMachineOnly) }
