package engine

// rlmpl patch (see PATCHES.md): rational trees. X = f(X) binds X to a term
// that contains itself; the recursive walks of unification, the occurs
// check, comparison and the free-variable scan would recurse without end
// on it (a fatal Go stack overflow). They carry a rationalWalk, which
// remembers the nodes it meets once the walk is deep or long, and stops
// where it comes back to one. Unification and comparison keep the classes
// of nodes they assume equal (a union-find): a pair of nodes of one class
// is equal, the standard algorithm for rational trees (SWI-Prolog's,
// which links the nodes it unifies). Each pair that is not yet known
// equal merges two classes, so a walk meets at most as many new pairs as
// there are nodes (times rationalStride): two cyclic lists of periods
// 4,999 and 5,000 unify in steps in proportion to their 10,000 cells, not
// to their 25 million pairs of cells. An ordinary small term costs no
// allocation.

import (
	"reflect"
	"unsafe"
)

const (
	// A walk records nothing before it is rationalCheapDepth deep or
	// rationalCheapSteps long, and from there on only every
	// rationalStride levels: an endless path still comes back to a
	// recorded class, since there are finitely many, and a long acyclic
	// term records one node in rationalStride.
	rationalCheapDepth = 64
	rationalCheapSteps = 1024
	rationalStride     = 32
)

type rationalWalk struct {
	steps int
	class map[nodeID]nodeID // the union-find: a node to another of its class; a root is absent or itself
	path  map[nodeID]bool   // cyclicTerm: true for a node on the path, false for one done
}

// nodeID identifies a compound by where it lives, so that the same node
// met again has the same identity: the address of a compound, the first
// element and length of a list (a list's tail is a subslice, a new value
// each time), a partial list's prefix and tail.
type nodeID struct {
	p, q uintptr
	n    int
}

// visit reports whether the walk met x before, or, when y is not nil,
// whether x and y are in one class already; if not, it records x, or
// merges the classes of x and y (assumes them equal). Before the walk is
// deep or long it records nothing and reports false (inlined: on an
// ordinary term it costs a counter, and a call every rationalStride
// levels).
func (w *rationalWalk) visit(depth int, x, y Compound) bool {
	w.steps++
	if depth&(rationalStride-1) != 0 {
		return false
	}
	return w.record(depth, x, y)
}

// records reports whether the walk records the node it is at
// (rationalStride is a power of two).
func (w *rationalWalk) records(depth int) bool {
	return depth&(rationalStride-1) == 0 && (depth >= rationalCheapDepth || w.steps >= rationalCheapSteps)
}

func (w *rationalWalk) record(depth int, x, y Compound) bool {
	if depth < rationalCheapDepth && w.steps < rationalCheapSteps {
		return false
	}
	kx, ok := nodeKey(x)
	if !ok {
		return false
	}
	if w.class == nil {
		w.class = map[nodeID]nodeID{}
	}
	if y == nil {
		if _, ok := w.class[kx]; ok {
			return true
		}
		w.class[kx] = kx
		return false
	}
	ky, ok := nodeKey(y)
	if !ok {
		return false
	}
	rx, ry := w.find(kx), w.find(ky)
	if rx == ry {
		return true
	}
	w.class[rx] = ry
	return false
}

// find returns the root of k's class, halving the path to it.
func (w *rationalWalk) find(k nodeID) nodeID {
	for {
		p, ok := w.class[k]
		if !ok || p == k {
			return k
		}
		if g, ok := w.class[p]; ok && g != p {
			w.class[k] = g
		}
		k = p
	}
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
