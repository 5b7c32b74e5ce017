package engine

// rlmpl patch (PATCHES.md, "The machine"): user-defined procedures with
// first-argument indexing and the logical update view.
//
// A call sees the clauses of the procedure's generation at the call
// (ISO's logical update view): assertz/asserta/retract start a new
// generation, and a clause is visible to the generations from its birth
// to its death. A call considers only the clauses whose first indexed
// argument may match its own (the first of the four leading arguments
// that the call binds and some clause does not leave a variable): by a
// scan of the clause keys for a small procedure, by a hash index on that
// argument (built on first need, kept up to date by assert) for a large
// one. A call leaves no choice point when no later clause may match.

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
	keyed uint8  // bit p: some clause has a non-variable argument p (p < indexArgs)
	index [indexArgs]*argIndex
}

// indexThreshold is the number of clauses from which a procedure called
// with a bound argument it is indexed on gets a hash index on it.
const indexThreshold = 8

// indexArgs is how many leading arguments are indexed.
const indexArgs = 4

// indexKey is what an argument of a clause head (or of a call) is, for
// indexing: its type, and a value that tells apart atoms, integers,
// floats and principal functors. kind 0 is a variable: it matches every
// key.
type indexKey struct {
	kind  uint8
	arity int32
	value uint64
}

const (
	keyVar uint8 = iota
	keyAtom
	keyInteger
	keyFloat
	keyCompound
	keyOther // big integers and custom atomic terms: they match each other
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
		return indexKey{kind: keyCompound, value: uint64(t.Functor()), arity: int32(t.Arity())}
	case slotRef:
		return indexKey{}
	case *tmplCompound:
		return indexKey{kind: keyCompound, value: uint64(t.functor), arity: int32(len(t.args))}
	default:
		return indexKey{kind: keyOther}
	}
}

// matches reports whether a clause whose argument is keyed c may match a
// call whose argument is keyed k.
func (c indexKey) matches(k indexKey) bool {
	return c == k || c.kind == keyVar || k.kind == keyVar
}

// clauseKeys returns the keys of the leading arguments of head h.
func clauseKeys(h Compound) (keys [indexArgs]indexKey) {
	for i := 0; i < h.Arity() && i < indexArgs; i++ {
		keys[i] = keyOf(h.Arg(i))
	}
	return keys
}

// argIndex maps a key of argument pos to the clauses that may match it,
// in order: those with that key and those with a variable there.
type argIndex struct {
	pos     int
	buckets map[indexKey][]*clause
	vars    []*clause // the clauses with a variable argument pos
}

// selection is the clauses a call considers: those of cls alive in
// generation gen whose argument pos may match key (pos < 0: all).
type selection struct {
	cls []*clause
	gen uint64
	pos int
	key indexKey
}

// selectClauses returns the selection of a call with args: it filters on
// the first leading argument that is bound in the call and not a variable
// in every clause (just-in-time, as SWI-Prolog picks an argument), by a
// hash index when the procedure is big.
func (u *userDefined) selectClauses(args []Term) selection {
	s := selection{cls: u.clauses, gen: u.gen, pos: -1}
	for p := 0; p < len(args) && p < indexArgs; p++ {
		if u.keyed&(1<<p) == 0 {
			continue
		}
		k := keyOf(args[p])
		if k.kind == keyVar {
			continue
		}
		s.pos, s.key = p, k
		break
	}
	if s.pos < 0 || len(s.cls) < indexThreshold || s.key.kind == keyOther {
		return s
	}
	ix := u.index[s.pos]
	if ix == nil {
		ix = u.buildIndex(s.pos)
	}
	if b, ok := ix.buckets[s.key]; ok {
		s.cls = b
	} else {
		s.cls = ix.vars
	}
	return s
}

// next returns the index of the first clause of the selection from i on
// that is alive in its generation and may match its key, or -1.
func (s *selection) next(i int) int {
	for ; i < len(s.cls); i++ {
		c := s.cls[i]
		if c.born <= s.gen && s.gen < c.died && (s.pos < 0 || c.keys[s.pos].matches(s.key)) {
			return i
		}
	}
	return -1
}

func (u *userDefined) buildIndex(pos int) *argIndex {
	ix := &argIndex{pos: pos, buckets: map[indexKey][]*clause{}}
	for _, c := range u.clauses {
		if c.died == ^uint64(0) {
			ix.add(c, false)
		}
	}
	u.index[pos] = ix
	return ix
}

// add files c at the end (or, front, at the start) of its buckets.
func (ix *argIndex) add(c *clause, front bool) {
	put := func(b []*clause) []*clause {
		if front {
			nb := make([]*clause, 0, len(b)+1)
			return append(append(nb, c), b...)
		}
		return append(b, c)
	}
	k := c.keys[ix.pos]
	if k.kind == keyVar || k.kind == keyOther {
		for key, b := range ix.buckets {
			ix.buckets[key] = put(b)
		}
		ix.vars = put(ix.vars)
		return
	}
	b, ok := ix.buckets[k]
	if !ok {
		b = append([]*clause(nil), ix.vars...)
	}
	ix.buckets[k] = put(b)
}

// note records which arguments of c are keyed.
func (u *userDefined) note(c *clause) {
	for p, k := range c.keys {
		if k.kind != keyVar {
			u.keyed |= 1 << p
		}
	}
}

// addClauses adds cs at the end (or, front, at the start) of u in a new
// generation.
func (u *userDefined) addClauses(cs []*clause, front bool) {
	u.gen++
	for _, c := range cs {
		c.born, c.died = u.gen, ^uint64(0)
		u.note(c)
	}
	if front {
		ncs := make(clauses, 0, len(u.clauses)+len(cs))
		ncs = append(append(ncs, cs...), u.clauses...)
		u.clauses = ncs
	} else {
		u.clauses = append(u.clauses, cs...)
	}
	for _, ix := range u.index {
		if ix == nil {
			continue
		}
		if front {
			for i := len(cs) - 1; i >= 0; i-- {
				ix.add(cs[i], true)
			}
		} else {
			for _, c := range cs {
				ix.add(c, false)
			}
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
	u.index = [indexArgs]*argIndex{}
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
