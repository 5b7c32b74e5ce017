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

import "reflect"

const (
	rationalCheapDepth = 64
	rationalCheapSteps = 1024
)

type rationalWalk struct {
	steps int
	seen  map[any]struct{}
	path  map[any]bool // cyclicTerm: true for a node on the path, false for one done
}

// visit reports whether the walk met x (with y, when y is not nil) before,
// and records it. Before the walk is deep or long it records nothing and
// reports false.
func (w *rationalWalk) visit(depth int, x, y Compound) bool {
	w.steps++
	if depth < rationalCheapDepth && w.steps < rationalCheapSteps {
		return false
	}
	k, ok := nodeKey(x)
	if !ok {
		return false
	}
	if y != nil {
		ky, ok := nodeKey(y)
		if !ok {
			return false
		}
		k = [2]any{k, ky}
	}
	if w.seen == nil {
		w.seen = map[any]struct{}{}
	}
	if _, ok := w.seen[k]; ok {
		return true
	}
	w.seen[k] = struct{}{}
	return false
}

// nodeKey identifies a compound by where it lives, so that the same node
// met again has the same key. Character and code lists hold no variables,
// hence no cycles: they get none, nor does a custom compound type this
// function cannot identify.
func nodeKey(c Compound) (any, bool) {
	switch c := c.(type) {
	case charList, codeList:
		return nil, false
	case termIDer: // list, *partial
		return c.termID(), true
	}
	v := reflect.ValueOf(c)
	switch v.Kind() {
	case reflect.Pointer:
		return v.Pointer(), true
	case reflect.Slice:
		return [2]uintptr{v.Pointer(), uintptr(v.Len())}, true
	}
	return nil, false
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
	var k any
	if depth >= rationalCheapDepth || w.steps >= rationalCheapSteps {
		if key, ok := nodeKey(c); ok {
			if w.path == nil {
				w.path = map[any]bool{}
			}
			if onPath, seen := w.path[key]; seen {
				return onPath
			}
			w.path[key] = true
			k = key
		}
	}
	for i := 0; i < c.Arity(); i++ {
		if w.cyclic(c.Arg(i), env, depth+1) {
			return true
		}
	}
	if k != nil {
		w.path[k] = false
	}
	return false
}
