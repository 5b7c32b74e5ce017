package prolog

// The core of library(assoc), in Go (prelude.pl has the traversals):
//
//	%!  get_assoc(+Key, +Assoc, -Value) is semidet.
//	%!  put_assoc(+Key, +Assoc0, +Value, -Assoc) is det.
//	%!  list_to_assoc(+Pairs, -Assoc) is det.
//
// Assocs are SWI-Prolog's AVL trees t(Key, Value, Balance, Left, Right),
// t when empty, with Balance <, = or > as the left subtree is shorter,
// as tall or taller than the right; keys are compared in standard order.
// list_to_assoc/2 raises domain_error(unique_key_pairs, Pairs) on a
// repeated key. Lookups and insertions walk one path, O(log n), without
// running a Prolog clause.

import (
	"math/bits"
	"slices"

	"github.com/ichiban/prolog/engine"
)

var (
	atomT  = engine.NewAtom("t")
	atomLt = engine.NewAtom("<")
	atomEq = engine.NewAtom("=")
	atomGt = engine.NewAtom(">")
)

// avl is a node t(K, V, Balance, L, R) read from a term.
type avl struct {
	k, v, bal, l, r engine.Term
}

// node reads t as a non-empty AVL node; ok is false for t (empty).
func node(c *Call, t engine.Term) (avl, bool, error) {
	switch n := c.Resolve(t).(type) {
	case engine.Variable:
		return avl{}, false, InstantiationError()
	case engine.Atom:
		if n == atomT {
			return avl{}, false, nil
		}
	case engine.Compound:
		if n.Functor() == atomT && n.Arity() == 5 {
			return avl{n.Arg(0), n.Arg(1), c.Resolve(n.Arg(2)), n.Arg(3), n.Arg(4)}, true, nil
		}
	}
	return avl{}, false, TypeError("assoc", t)
}

func (n avl) term() engine.Term { return atomT.Apply(n.k, n.v, n.bal, n.l, n.r) }

func getAssoc(c *Call, key, assoc, value engine.Term) (bool, error) {
	t := assoc
	for i := 0; ; i++ {
		if i&1023 == 1023 && c.Ctx.Err() != nil {
			return false, c.Ctx.Err()
		}
		n, ok, err := node(c, t)
		if err != nil || !ok {
			return false, err
		}
		switch o := c.compare(key, n.k); {
		case o == 0:
			return c.Unify(value, n.v), nil
		case o < 0:
			t = n.l
		default:
			t = n.r
		}
	}
}

func putAssoc(c *Call, key, assoc0, value, assoc engine.Term) (bool, error) {
	t, _, err := insert(c, assoc0, key, value, 0)
	if err != nil {
		return false, err
	}
	return c.Unify(assoc, t), nil
}

// insert puts key-value into tree and reports whether it grew taller.
// Balance < means the right subtree is the taller, > the left.
func insert(c *Call, tree, key, value engine.Term, depth int) (engine.Term, bool, error) {
	if depth > 200 {
		return nil, false, TypeError("assoc", tree) // deeper than any AVL tree
	}
	n, ok, err := node(c, tree)
	if err != nil {
		return nil, false, err
	}
	if !ok {
		return atomT.Apply(key, value, atomEq, atomT, atomT), true, nil
	}
	o := c.compare(key, n.k)
	if o == 0 {
		n.v = value
		return n.term(), false, nil
	}
	left := o < 0
	sub := n.r
	if left {
		sub = n.l
	}
	sub, grew, err := insert(c, sub, key, value, depth+1)
	if err != nil {
		return nil, false, err
	}
	if left {
		n.l = sub
	} else {
		n.r = sub
	}
	if !grew {
		return n.term(), false, nil
	}
	shorter, taller := atomLt, atomGt // the balance before, when the left grew
	if !left {
		shorter, taller = atomGt, atomLt
	}
	switch n.bal {
	case shorter:
		n.bal = atomEq
		return n.term(), false, nil
	case atomEq:
		n.bal = taller
		return n.term(), true, nil
	}
	// The grown side is now two levels taller: rotate.
	s, _, err := node(c, sub)
	if err != nil {
		return nil, false, err
	}
	if s.bal == taller { // single rotation
		if left {
			n.l, n.bal = s.r, atomEq
			s.r, s.bal = n.term(), atomEq
		} else {
			n.r, n.bal = s.l, atomEq
			s.l, s.bal = n.term(), atomEq
		}
		return s.term(), false, nil
	}
	// Double rotation through the inner grandchild g.
	inner := s.r
	if !left {
		inner = s.l
	}
	g, _, err := node(c, inner)
	if err != nil {
		return nil, false, err
	}
	nBal, sBal := engine.Term(atomEq), engine.Term(atomEq)
	if left {
		if g.bal == atomLt {
			sBal = atomGt
		} else if g.bal == atomGt {
			nBal = atomLt
		}
		s.r, s.bal = g.l, sBal
		n.l, n.bal = g.r, nBal
		g.l, g.r = s.term(), n.term()
	} else {
		if g.bal == atomGt {
			sBal = atomLt
		} else if g.bal == atomLt {
			nBal = atomGt
		}
		s.l, s.bal = g.r, sBal
		n.r, n.bal = g.l, nBal
		g.l, g.r = n.term(), s.term()
	}
	g.bal = atomEq
	return g.term(), false, nil
}

func listToAssoc(c *Call, pairs, assoc engine.Term) (bool, error) {
	elems, err := c.List(pairs)
	if err != nil {
		return false, err
	}
	type kv struct{ k, v engine.Term }
	kvs := make([]kv, len(elems))
	for i, e := range elems {
		p, ok := c.Resolve(e).(engine.Compound)
		if !ok || p.Functor() != engine.NewAtom("-") || p.Arity() != 2 {
			if _, free := c.Resolve(e).(engine.Variable); free {
				return false, InstantiationError()
			}
			return false, TypeError("pair", e)
		}
		kvs[i] = kv{p.Arg(0), p.Arg(1)}
	}
	slices.SortStableFunc(kvs, func(a, b kv) int { return c.compare(a.k, b.k) })
	for i := 1; i < len(kvs); i++ {
		if c.compare(kvs[i-1].k, kvs[i].k) == 0 {
			return false, DomainError("unique_key_pairs", pairs)
		}
	}
	// A balanced tree from the sorted pairs: the middle one at the root.
	var build func(kvs []kv) engine.Term
	build = func(kvs []kv) engine.Term {
		if len(kvs) == 0 {
			return atomT
		}
		m := len(kvs) / 2
		bal := atomEq
		switch hl, hr := bits.Len(uint(m)), bits.Len(uint(len(kvs)-m-1)); {
		case hl < hr:
			bal = atomLt
		case hl > hr:
			bal = atomGt
		}
		return atomT.Apply(kvs[m].k, kvs[m].v, bal, build(kvs[:m]), build(kvs[m+1:]))
	}
	return c.Unify(assoc, build(kvs)), nil
}
