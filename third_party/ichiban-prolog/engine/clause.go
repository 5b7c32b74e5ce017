package engine

// rlmpl patch (PATCHES.md, "The machine"): clauses compile to argument
// templates for the head and a small instruction set for the body, with
// the control constructs (',', ';', '->', '*->', '\+') compiled inline.

import (
	"errors"
	"io"
)

type opcode uint8

const (
	opCall     opcode = iota // call pi with args built from templates
	opExit                   // the body is done: go on with the continuation
	opCut                    // cut to the frame's barrier
	opSaveB                  // bars[a] = height of the choice point stack
	opCutTo                  // cut to bars[a]
	opSoftCut                // disable the alternative pushed at bars[a]
	opTry                    // push an alternative that resumes at a
	opJump                   // go to a
	opFail                   // fail
	opCallVar                // call/1 the term built from args[0]
	opInline                 // a deterministic builtin run in place
	opGoK                    // call the frame's Go continuation
	opPopCatch               // catch/3's goal exited
	opCollect                // findall/3: record a copy of the template and fail
)

type instr struct {
	op     opcode
	a      int
	pi     procedureIndicator
	args   []Term // templates
	inline func(m *machine, ins *instr, slots []Term) (bool, error)
	ctx    Term // an inline builtin's indicator, for its errors
}

// code is a compiled body.
type code struct {
	ins   []instr
	nbars int
	init  []int // slots that start as fresh variables (first met inside a control construct)
	ctx   Term  // the predicate the body belongs to, for errors of its calls
}

var (
	exitCode     = &code{ins: []instr{{op: opExit}}}
	goKCode      = &code{ins: []instr{{op: opGoK}}}
	popCatchCode = &code{ins: []instr{{op: opPopCatch}}}
	collectCode  = &code{ins: []instr{{op: opCollect}}}
)

// slotRef is a clause variable in a template: slot idx of the frame.
// first marks its first occurrence, which sets the slot.
type slotRef struct {
	idx   int
	first bool
}

func (s slotRef) WriteTerm(w io.Writer, _ *WriteOptions, _ *Env) error {
	_, err := io.WriteString(w, "_S")
	return err
}

func (s slotRef) Compare(Term, *Env) int { return 0 }

// tmplCompound is a compound template with clause variables in it; a
// compound without any is a constant.
type tmplCompound struct {
	functor Atom
	args    []Term
}

func (t *tmplCompound) WriteTerm(w io.Writer, _ *WriteOptions, _ *Env) error {
	_, err := io.WriteString(w, "_T")
	return err
}

func (t *tmplCompound) Compare(Term, *Env) int { return 0 }

// build makes the term a template stands for.
func (m *machine) build(t Term, slots []Term) Term {
	switch t := t.(type) {
	case slotRef:
		if t.first {
			v := NewVariable()
			slots[t.idx] = v
			return v
		}
		return slots[t.idx]
	case *tmplCompound:
		c := newCompound(t.functor, len(t.args))
		for i, a := range t.args {
			c.args[i] = m.build(a, slots)
		}
		return c
	default:
		return t
	}
}

// match unifies the term a template stands for with x, reading x where it
// is bound and building where it is not (the WAM's read and write modes).
func (m *machine) match(t Term, x Term, slots []Term) bool {
	switch t := t.(type) {
	case slotRef:
		if t.first {
			slots[t.idx] = x
			return true
		}
		return m.unify(slots[t.idx], x, false)
	case *tmplCompound:
		switch x := deref(x).(type) {
		case *Var:
			m.bind(x, m.build(t, slots))
			return true
		case *compound:
			if x.functor != t.functor || len(x.args) != len(t.args) {
				return false
			}
			for i, a := range t.args {
				if !m.match(a, x.args[i], slots) {
					return false
				}
			}
			return true
		case Compound:
			if x.Functor() != t.functor || x.Arity() != len(t.args) {
				return false
			}
			for i, a := range t.args {
				if !m.match(a, x.Arg(i), slots) {
					return false
				}
			}
			return true
		default:
			return false
		}
	case Atom, Integer:
		switch x := deref(x).(type) {
		case *Var:
			m.bind(x, t)
			return true
		default:
			return x == t
		}
	default:
		return m.unify(t, x, false)
	}
}

// clause is one compiled clause.
type clause struct {
	pi     procedureIndicator
	raw    Term // the clause as it was asserted: clause/2, retract/1, listing/1
	nslots int
	head   []Term // argument templates
	body   *code  // nil for a fact
	keys   [indexArgs]indexKey
	born   uint64 // generations of the predicate in which the clause is visible:
	died   uint64 // born <= g < died
}

var errNotCallable = errors.New("not callable")

// compile compiles the clause term t (H or H :- B; a body with
// alternatives at its top is kept as one clause).
func compile(t Term, env *Env) (clauses, error) {
	t = env.Resolve(t)
	var head, body Term = t, nil
	if c, ok := t.(Compound); ok && c.Functor() == atomIf && c.Arity() == 2 {
		head, body = c.Arg(0), c.Arg(1)
	}
	c, err := compileClause(head, body, env)
	if err != nil {
		return nil, err
	}
	c.raw = env.simplify(t)
	return clauses{c}, nil
}

type clauses []*clause

func compileClause(head Term, body Term, env *Env) (*clause, error) {
	cp := compiler{slots: map[*Var]int{}, seen: map[*Var]bool{}}
	c := &clause{died: ^uint64(0)}
	switch h := deref(head).(type) {
	case Atom:
		c.pi = procedureIndicator{name: h, arity: 0}
	case Compound:
		c.pi = procedureIndicator{name: h.Functor(), arity: Integer(h.Arity())}
		for i := 0; i < h.Arity(); i++ {
			cp.collect(h.Arg(i), 0)
		}
	case *Var:
		return nil, InstantiationError(env)
	default:
		return nil, typeError(validTypeCallable, h, env)
	}
	if body != nil {
		cp.root = body
		if err := cp.collectGoal(body, 0); err != nil {
			return nil, goalError(err, body, env)
		}
		cp.steps = 0
	}
	if h, ok := deref(head).(Compound); ok {
		c.head = make([]Term, h.Arity())
		for i := range c.head {
			c.head[i] = cp.tmpl(h.Arg(i))
		}
		c.keys = clauseKeys(h)
	}
	if body != nil {
		cp.ctx = c.pi.Term()
		if err := cp.goal(body, -1); err != nil {
			return nil, goalError(err, body, env)
		}
		if len(cp.ins) > 0 {
			cp.ins = append(cp.ins, instr{op: opExit})
			c.body = &code{ins: cp.ins, nbars: cp.nbars, init: cp.init, ctx: cp.ctx}
		}
	}
	c.nslots = len(cp.slots)
	return c, nil
}

// compileGoal compiles a goal called with call/1 whose principal functor
// is a control construct. Its variables are the goal's own: constants of
// the code, not slots.
func (vm *VM) compileGoal(g Term, ctx Term) (*code, error) {
	cp := compiler{vm: vm, ctx: ctx, root: g}
	if err := cp.goal(g, -1); err != nil {
		return nil, goalError(err, g, &Env{ctx: ctx})
	}
	cp.ins = append(cp.ins, instr{op: opExit})
	return &code{ins: cp.ins, nbars: cp.nbars, ctx: ctx}, nil
}

// goalError is the error for a goal that does not compile: a cyclic
// control structure, or one with a part that is not callable.
func goalError(err error, g Term, env *Env) error {
	if err == errCyclicGoal {
		return RepresentationError(NewAtom("cyclic_term"), env)
	}
	return typeError(validTypeCallable, g, env)
}

// isControl reports whether g is a control construct compiled inline.
func isControl(g Compound) bool {
	switch g.Arity() {
	case 1:
		return g.Functor() == atomNegation
	case 2:
		switch g.Functor() {
		case atomComma, atomSemiColon, atomThen, atomSoftThen:
			return true
		}
	}
	return false
}

type compiler struct {
	root  Term // the goal or body compiled, checked for cycles once it is big
	steps int  // control constructs met so far
	vm    *VM
	slots map[*Var]int // a clause's variables; nil for a called goal
	seen  map[*Var]bool
	pre   map[*Var]bool // variables first met inside a control construct
	init  []int
	ins   []instr
	nbars int
	ctx   Term
}

// collect numbers the variables of t in the order the clause meets them.
// depth > 0 is inside a control construct: a variable first met there
// starts as a fresh variable at the clause's entry, so that every path
// through the construct finds it set.
func (c *compiler) collect(t Term, depth int) {
	var w rationalWalk
	c.collectWalk(&w, t, depth, 0)
}

func (c *compiler) collectWalk(w *rationalWalk, t Term, depth, level int) {
	switch t := deref(t).(type) {
	case *Var:
		if _, ok := c.slots[t]; !ok {
			c.slots[t] = len(c.slots)
			if depth > 0 {
				if c.pre == nil {
					c.pre = map[*Var]bool{}
				}
				c.pre[t] = true
				c.init = append(c.init, c.slots[t])
			}
		}
	case charList, codeList:
	case Compound:
		if w.visit(level, t, nil) {
			return
		}
		for i := 0; i < t.Arity(); i++ {
			c.collectWalk(w, t.Arg(i), depth, level+1)
		}
	}
}

func (c *compiler) collectGoal(g Term, depth int) error {
	for {
		t, ok := deref(g).(Compound)
		if !ok || t.Functor() != atomComma || t.Arity() != 2 {
			break
		}
		if err := c.control(); err != nil {
			return err
		}
		if err := c.collectGoal(t.Arg(0), depth); err != nil {
			return err
		}
		g = t.Arg(1)
	}
	switch g := deref(g).(type) {
	case *Var:
		c.collect(g, depth)
	case Atom:
	case Compound:
		if isControl(g) {
			if err := c.control(); err != nil {
				return err
			}
			for i := 0; i < g.Arity(); i++ {
				d := depth
				if g.Functor() != atomComma {
					d++
				}
				if err := c.collectGoal(g.Arg(i), d); err != nil {
					return err
				}
			}
			return nil
		}
		c.collect(g, depth)
	default:
		return errNotCallable
	}
	return nil
}

// tmpl returns the template of t: clause variables become slot references.
func (c *compiler) tmpl(t Term) Term {
	var w rationalWalk
	return c.tmplWalk(&w, t, 0)
}

func (c *compiler) tmplWalk(w *rationalWalk, t Term, level int) Term {
	t = deref(t)
	switch t := t.(type) {
	case *Var:
		idx, ok := c.slots[t]
		if !ok {
			return t // a called goal's variable: a constant
		}
		first := !c.seen[t] && !c.pre[t]
		c.seen[t] = true
		return slotRef{idx: idx, first: first}
	case charList, codeList:
		return t
	case Compound:
		if c.slots == nil || w.visit(level, t, nil) {
			return t
		}
		args := make([]Term, t.Arity())
		constant := true
		for i := range args {
			args[i] = c.tmplWalk(w, t.Arg(i), level+1)
			switch args[i].(type) {
			case slotRef, *tmplCompound:
				constant = false
			}
		}
		if constant {
			return t
		}
		return &tmplCompound{functor: t.Functor(), args: args}
	default:
		return t
	}
}

func (c *compiler) bar() int {
	c.nbars++
	return c.nbars - 1
}

func (c *compiler) emit(ins instr) int {
	c.ins = append(c.ins, ins)
	return len(c.ins) - 1
}

var errCyclicGoal = errors.New("cyclic goal")

// control counts a control construct met, and reports a cyclic root
// once the count says the goal is big (a cyclic goal never ends).
func (c *compiler) control() error {
	c.steps++
	if c.steps == 10000 && cyclicTerm(c.root, nil) {
		return errCyclicGoal
	}
	return nil
}

// goal compiles g. cut is where ! cuts to: -1 for the frame's barrier,
// or a saved height (inside the condition of an if-then-else).
func (c *compiler) goal(g Term, cut int) error {
	for {
		// A conjunction's right side is compiled in this loop, so that a
		// long conjunction costs no Go stack.
		t, ok := deref(g).(Compound)
		if !ok || t.Functor() != atomComma || t.Arity() != 2 {
			break
		}
		if err := c.control(); err != nil {
			return err
		}
		if err := c.goal(t.Arg(0), cut); err != nil {
			return err
		}
		g = t.Arg(1)
	}
	switch g := deref(g).(type) {
	case *Var:
		c.emit(instr{op: opCallVar, args: []Term{c.tmpl(g)}})
	case Atom:
		switch g {
		case atomCut:
			if cut < 0 {
				c.emit(instr{op: opCut})
			} else {
				c.emit(instr{op: opCutTo, a: cut})
			}
		case atomTrue:
		case atomFail, atomFalse:
			c.emit(instr{op: opFail})
		default:
			c.emit(instr{op: opCall, pi: procedureIndicator{name: g, arity: 0}})
		}
	case Compound:
		if isControl(g) {
			if err := c.control(); err != nil {
				return err
			}
		}
		switch {
		case g.Functor() == atomSemiColon && g.Arity() == 2:
			if cond, ok := deref(g.Arg(0)).(Compound); ok && cond.Arity() == 2 {
				switch cond.Functor() {
				case atomThen:
					return c.ifThenElse(cond.Arg(0), cond.Arg(1), g.Arg(1), false, cut)
				case atomSoftThen:
					return c.ifThenElse(cond.Arg(0), cond.Arg(1), g.Arg(1), true, cut)
				}
			}
			try := c.emit(instr{op: opTry})
			if err := c.goal(g.Arg(0), cut); err != nil {
				return err
			}
			jump := c.emit(instr{op: opJump})
			c.ins[try].a = len(c.ins)
			if err := c.goal(g.Arg(1), cut); err != nil {
				return err
			}
			c.ins[jump].a = len(c.ins)
		case g.Functor() == atomThen && g.Arity() == 2:
			return c.ifThenElse(g.Arg(0), g.Arg(1), atomFail, false, cut)
		case g.Functor() == atomSoftThen && g.Arity() == 2:
			return c.ifThenElse(g.Arg(0), g.Arg(1), atomFail, true, cut)
		case g.Functor() == atomNegation && g.Arity() == 1:
			// \+ G: (G -> fail ; true)
			b1, b2 := c.bar(), c.bar()
			c.emit(instr{op: opSaveB, a: b1})
			try := c.emit(instr{op: opTry})
			c.emit(instr{op: opSaveB, a: b2})
			if err := c.goal(g.Arg(0), b2); err != nil {
				return err
			}
			c.emit(instr{op: opCutTo, a: b1})
			c.emit(instr{op: opFail})
			c.ins[try].a = len(c.ins)
		default:
			pi := procedureIndicator{name: g.Functor(), arity: Integer(g.Arity())}
			args := make([]Term, g.Arity())
			if f, ok := inlined[pi]; ok && !c.redefined(pi) {
				order := inlineOrder[pi]
				if order == nil {
					order = []int{0, 1}[:len(args)]
				}
				for _, i := range order {
					args[i] = c.tmpl(g.Arg(i))
				}
				ins := instr{op: opInline, pi: pi, args: args, inline: f, ctx: pi.Term()}
				if s, ok := args[0].(slotRef); ok && s.first && len(args) == 2 && !refersTo(args[1], s.idx) {
					ins.a = 1 // X = T with X new and not in T: X is T
				}
				c.emit(ins)
				return nil
			}
			for i := range args {
				args[i] = c.tmpl(g.Arg(i))
			}
			c.emit(instr{op: opCall, pi: pi, args: args})
		}
	default:
		return errNotCallable
	}
	return nil
}

// refersTo reports whether template t refers to slot idx.
func refersTo(t Term, idx int) bool {
	switch t := t.(type) {
	case slotRef:
		return t.idx == idx
	case *tmplCompound:
		for _, a := range t.args {
			if refersTo(a, idx) {
				return true
			}
		}
	}
	return false
}

// redefined reports whether the program defined pi itself.
func (c *compiler) redefined(pi procedureIndicator) bool {
	if c.vm == nil {
		return false
	}
	_, ok := c.vm.procedures[pi].(*userDefined)
	return ok
}

func (c *compiler) ifThenElse(cond, then, els Term, soft bool, cut int) error {
	b1, b2 := c.bar(), c.bar()
	c.emit(instr{op: opSaveB, a: b1})
	try := c.emit(instr{op: opTry})
	c.emit(instr{op: opSaveB, a: b2})
	if err := c.goal(cond, b2); err != nil {
		return err
	}
	if soft {
		c.emit(instr{op: opSoftCut, a: b1})
	} else {
		c.emit(instr{op: opCutTo, a: b1})
	}
	if err := c.goal(then, cut); err != nil {
		return err
	}
	jump := c.emit(instr{op: opJump})
	c.ins[try].a = len(c.ins)
	if err := c.goal(els, cut); err != nil {
		return err
	}
	c.ins[jump].a = len(c.ins)
	return nil
}
