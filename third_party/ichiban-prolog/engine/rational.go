package engine

// rlmpl patch (see PATCHES.md): rational trees. X = f(X) binds X to a term
// that contains itself; the recursive walks of unification, the occurs
// check, comparison and the free-variable scan would recurse without end
// on it (a fatal Go stack overflow). They carry a rationalWalk, which
// remembers the nodes (or pairs of nodes) it met once the walk is
// rationalCheapDepth deep or rationalCheapSteps long, and so stops where
// it comes back to a node or pair it has already met: the standard
// algorithm for rational-tree unification and comparison (SWI-Prolog's).
// An ordinary small term costs no allocation.

import (
	"reflect"
	"unsafe"
)

const (
	// A walk records nothing before it is rationalCheapDepth deep or
	// rationalCheapSteps long, and from there on only every
	// rationalStride levels: an endless path still meets a recorded node
	// (or pair) again, since it has finitely many, and a long acyclic
	// term records one node in rationalStride.
	rationalCheapDepth = 64
	rationalCheapSteps = 1024
	rationalStride     = 8
)

type rationalWalk struct {
	steps int
	seen  map[nodePair]struct{}
	path  map[nodeID]bool // cyclicTerm: true for a node on the path, false for one done
}

// nodeID identifies a compound by where it lives, so that the same node
// met again has the same identity: the address of a compound, the first
// element and length of a list (a list's tail is a subslice, a new value
// each time), a partial list's prefix and tail.
type nodeID struct {
	p, q uintptr
	n    int
}

type nodePair struct{ x, y nodeID }

// visit reports whether the walk met x (with y, when y is not nil) before,
// and records it. Before the walk is deep or long it records nothing and
// reports false.
func (w *rationalWalk) visit(depth int, x, y Compound) bool {
	w.steps++
	if !w.records(depth) {
		return false
	}
	var k nodePair
	var ok bool
	if k.x, ok = nodeKey(x); !ok {
		return false
	}
	if y != nil {
		if k.y, ok = nodeKey(y); !ok {
			return false
		}
	}
	if w.seen == nil {
		w.seen = map[nodePair]struct{}{}
	}
	if _, ok := w.seen[k]; ok {
		return true
	}
	w.seen[k] = struct{}{}
	return false
}

// records reports whether the walk records the node it is at.
func (w *rationalWalk) records(depth int) bool {
	return (depth >= rationalCheapDepth || w.steps >= rationalCheapSteps) && depth%rationalStride == 0
}

// nodeKey returns the identity of c. Character and code lists hold no
// variables, hence no cycles: they get none, nor does a custom compound
// type that is neither a pointer nor a slice.
func nodeKey(c Compound) (nodeID, bool) {
	switch c := c.(type) {
	case *compound:
		return nodeID{p: uintptr(unsafe.Pointer(c))}, true
	case list:
		if len(c) == 0 {
			return nodeID{}, false
		}
		return nodeID{p: uintptr(unsafe.Pointer(&c[0])), n: len(c)}, true
	case *partial:
		k, ok := nodeKey(c.Compound)
		k.q = uintptr(unsafe.Pointer(c.tail))
		return k, ok
	case charList, codeList:
		return nodeID{}, false
	}
	v := reflect.ValueOf(c)
	switch v.Kind() {
	case reflect.Pointer:
		return nodeID{p: v.Pointer(), n: -1}, true
	case reflect.Slice:
		if v.Len() == 0 {
			return nodeID{}, false
		}
		return nodeID{p: v.Pointer(), n: v.Len(), q: 1}, true
	}
	return nodeID{}, false
}

// cyclicTerm reports whether t is not a finite tree (acyclic_term/1). It
// is linear in the number of distinct nodes of t: upstream compared each
// node with every node on its path (quadratic in depth, and a panic on a
// list, which Go cannot compare) and walked a shared subterm each time.
func cyclicTerm(t Term, env *Env) bool {
	var w rationalWalk
	return w.cyclic(t, env, 0)
}

func (w *rationalWalk) cyclic(t Term, env *Env, depth int) bool {
	c, ok := env.Resolve(t).(Compound)
	if !ok {
		return false
	}
	w.steps++
	var k nodeID
	recorded := false
	if w.records(depth) {
		if key, ok := nodeKey(c); ok {
			if w.path == nil {
				w.path = map[nodeID]bool{}
			}
			if onPath, seen := w.path[key]; seen {
				return onPath
			}
			w.path[key] = true
			k, recorded = key, true
		}
	}
	for i := 0; i < c.Arity(); i++ {
		if w.cyclic(c.Arg(i), env, depth+1) {
			return true
		}
	}
	if recorded {
		w.path[k] = false
	}
	return false
}
