package engine

// rlmpl patch (PATCHES.md, "The machine"): the execution core.
//
// Upstream ran every call as a Go closure on a trampoline of promises,
// with bindings in a persistent map: a deterministic loop kept every
// binding and every promise it ever made, and each call tried every
// clause. The machine instead keeps
//
//   - frames: a clause body being run, its variables (slots), and the
//     continuation (the frame and instruction to go on with once the body
//     exits). A last call passes its own continuation on (last-call
//     optimisation), so a deterministic loop holds no frames;
//   - a stack of choice points, each with the trail length and variable
//     age at its creation: backtracking undoes the bindings recorded since,
//     and only variables older than the newest choice point are recorded
//     (the WAM's conditional trail), so a deterministic loop records none;
//   - the cut barrier of every frame: the height of the choice point
//     stack when its predicate was called.
//
// Foreign predicates keep upstream's continuation-passing signature: the
// machine hands them a k that records where to go on, and reads the
// promise they return (promise.go).

import (
	"context"
	"fmt"
)

type cpKind uint8

const (
	cpBase    cpKind = iota // the bottom of a solve: backtracking into it ends the solve
	cpClauses               // the remaining clauses of a call
	cpJump                  // an alternative inside a body: resume the frame at pc
	cpForeign               // the remaining alternatives of a foreign predicate
	cpCatch                 // a running catch/3: not an alternative, found by throw
	cpFindall               // the end of a findall/3 goal
	cpDead                  // an alternative removed by a soft cut
	cpCounter               // between/3's next values: lo up to hi
)

type choicepoint struct {
	kind    cpKind
	trail   int   // len(trail) at creation
	argMark int   // len(argStack) at creation
	age     int64 // variables with an id up to age existed at creation

	// where to go on: the continuation of a call (cpClauses, cpCatch,
	// cpFindall, cpForeign's origin), or the frame to resume (cpJump)
	f  *frame
	pc int

	// cpClauses
	sel  selection
	next int
	args []Term
	ctx  Term

	// cpForeign
	alts []func(context.Context) *Promise

	// cpCatch: catcher, recovery; cpFindall: template, result; cpCounter:
	// the variable (a) and the values left (lo to hi)
	a, b   Term
	lo, hi Integer
	serial int64
	coll   *[]Term
}

// frameSlots is how many slots a frame holds in itself: a clause with
// more variables gets a slice of its own.
const frameSlots = 5

// newFrame allocates a frame for code with n slots: one allocation for the
// frame and its slots when they are few.
func newFrame(c *code, n int, parent *frame, ppc, barrier int) *frame {
	f := &frame{code: c, parent: parent, ppc: ppc, barrier: barrier}
	switch {
	case n <= frameSlots:
		f.slots = f.inline[:n:n]
	default:
		f.slots = make([]Term, n)
	}
	return f
}

// frame is one activation of a clause body (or a special frame: code
// says which).
type frame struct {
	code    *code
	slots   []Term
	bars    []int // choice point heights saved by the body's control constructs
	parent  *frame
	ppc     int
	barrier int   // the height of the choice point stack at the call: where ! cuts to
	cpTop   int   // the height when the body began: above it, choice points may come back to the frame
	serial  int64 // catch/3's marker: the catch it ends
	k       Cont  // a Go continuation
	coll    *[]Term
	tmpl    Term
	inline  [frameSlots]Term
}

type machine struct {
	vm  *VM
	ctx context.Context

	trail []*Var
	cps   []choicepoint
	age   int64 // the age of the newest choice point

	// Env.Unify logs the bindings of one unification to undo them when it
	// fails (logging > 0).
	log     []*Var
	logging int

	// registers
	f  *frame
	pc int
	// set by a foreign predicate's k: where to go on
	nf  *frame
	npc int
	err error // the exception being raised

	env      Env          // the machine's root env
	envs     map[any]*Env // an Env per predicate indicator, for error contexts
	steps    uint64
	serials  int64
	scratch  []Term // slots of facts, which outlive no match
	argBuf   []Term // the arguments of the call being made
	argStack []Term // the arguments choice points keep (saveArgs)
	spare    *frame // the frame of the last call being made, if no choice point refers to it
}

func newMachine(vm *VM) *machine {
	m := &machine{vm: vm}
	m.env.m = m
	return m
}

type outcome uint8

const (
	goOn      outcome = iota // the registers say what runs next
	failed                   // backtrack
	raised                   // m.err is being thrown
	succeeded                // the solve succeeds
)

// envFor returns the Env that foreign predicate pi is called with.
func (m *machine) envFor(pi procedureIndicator) *Env {
	if m.envs == nil {
		m.envs = map[any]*Env{}
	}
	if e, ok := m.envs[pi]; ok {
		return e
	}
	e := &Env{m: m, ctx: pi.Term()}
	m.envs[pi] = e
	return e
}

// envCtx returns an Env whose errors name ctx.
func (m *machine) envCtx(ctx Term) *Env {
	if ctx == nil {
		return &m.env
	}
	return &Env{m: m, ctx: ctx}
}

// bind binds v to t, recording it on the trail when a choice point older
// than v must undo it.
func (m *machine) bind(v *Var, t Term) {
	v.ref = t
	if v.id <= m.age {
		m.trail = append(m.trail, v)
	}
	if m.logging > 0 {
		m.log = append(m.log, v)
	}
}

func (m *machine) undo(mark int) {
	t := m.trail
	for i := len(t) - 1; i >= mark; i-- {
		t[i].ref = nil
		t[i] = nil
	}
	m.trail = t[:mark]
}

// push pushes a choice point of kind with the current trail and age.
func (m *machine) push(kind cpKind) *choicepoint {
	m.age = varCounter.Load()
	m.cps = append(m.cps, choicepoint{kind: kind, trail: len(m.trail), age: m.age, argMark: len(m.argStack)})
	return &m.cps[len(m.cps)-1]
}

// saveArgs keeps a copy of args for a choice point on the argument stack:
// choice points go in last-in-first-out order, so their arguments do too,
// with no allocation of their own.
func (m *machine) saveArgs(args []Term) []Term {
	off := len(m.argStack)
	m.argStack = append(m.argStack, args...)
	return m.argStack[off:len(m.argStack):len(m.argStack)]
}

// dropArgs shrinks the argument stack to mark.
func (m *machine) dropArgs(mark int) {
	clear(m.argStack[mark:])
	m.argStack = m.argStack[:mark]
}

// cutTo removes the choice points from height h up.
func (m *machine) cutTo(h int) {
	if h >= len(m.cps) {
		return
	}
	m.dropArgs(m.cps[h].argMark)
	clear(m.cps[h:])
	m.cps = m.cps[:h]
	m.age = m.cps[h-1].age
	// Trail entries of variables younger than the choice point now on
	// top undo nothing anyone can reach: drop them.
	top := &m.cps[h-1]
	t := m.trail
	j := top.trail
	for i := top.trail; i < len(t); i++ {
		if t[i].id <= m.age {
			t[j] = t[i]
			j++
		}
	}
	clear(t[j:])
	m.trail = t[:j]
}

func (m *machine) pop() {
	n := len(m.cps) - 1
	m.dropArgs(m.cps[n].argMark)
	m.cps[n] = choicepoint{}
	m.cps = m.cps[:n]
	m.age = m.cps[n-1].age
}

// solve runs p to its first success. It is reentrant: a foreign
// predicate may solve a goal on the machine that called it. On success
// the bindings stay (the caller's backtracking undoes them) and the
// goal's choice points are discarded; on failure or error the bindings it
// made are undone.
func (m *machine) solve(ctx context.Context, p *Promise, origin *frame) (bool, error) {
	type registers struct {
		ctx     context.Context
		f       *frame
		pc      int
		nf      *frame
		npc     int
		err     error
		logging int
	}
	saved := registers{m.ctx, m.f, m.pc, m.nf, m.npc, m.err, m.logging}
	defer func() {
		m.ctx, m.f, m.pc, m.nf, m.npc, m.err, m.logging = saved.ctx, saved.f, saved.pc, saved.nf, saved.npc, saved.err, saved.logging
	}()
	if ctx == nil {
		ctx = context.Background()
	}
	m.ctx, m.logging = ctx, 0
	base := len(m.cps)
	m.push(cpBase)
	ok, err := m.loop(m.resume(p, origin))
	if !ok {
		m.undo(m.cps[base].trail)
	}
	m.dropArgs(m.cps[base].argMark)
	clear(m.cps[base:])
	m.cps = m.cps[:base]
	if base > 0 {
		m.age = m.cps[base-1].age
	} else {
		m.age = 0
	}
	if ok && base == 0 {
		// No choice point is left to undo anything: the trail is garbage.
		clear(m.trail)
		m.trail = m.trail[:0]
	}
	return ok, err
}

// Solve runs goal and calls yield with each solution and whether a choice
// point remains (more solutions may follow). It stops when yield returns
// false or the goal has no more solutions, and returns the error that
// ended the run.
func (vm *VM) Solve(ctx context.Context, goal Term, env *Env, yield func(env *Env, more bool) bool) error {
	m := env.machine()
	if m == nil {
		m = newMachine(vm)
	}
	var base int
	k := func(env *Env) *Promise {
		if !yield(env, m.moreAbove(base)) {
			return Bool(true)
		}
		return Bool(false)
	}
	p := callGoal(vm, goal, k, env)
	base = len(m.cps) // solve pushes its base here
	_, err := m.solve(ctx, p, nil)
	return err
}

// moreAbove reports whether a choice point above the base at height base
// is an alternative (not a catch/3 marker).
func (m *machine) moreAbove(base int) bool {
	for i := len(m.cps) - 1; i > base; i-- {
		switch m.cps[i].kind {
		case cpClauses, cpJump, cpForeign, cpCounter:
			return true
		}
	}
	return false
}

// resume acts on what a foreign predicate (or its continuation) answered.
// origin is the continuation of the foreign call: the catches active
// there are active for what it throws.
func (m *machine) resume(p *Promise, origin *frame) outcome {
	for {
		if m.tick() {
			return raised
		}
		if p == nil {
			return failed
		}
		switch p.kind {
		case promiseCont:
			m.f, m.pc = m.nf, m.npc
			return goOn
		case promiseTrue:
			return succeeded
		case promiseFalse:
			return failed
		case promiseError:
			m.err = p.err
			m.f, m.pc = origin, -1
			return raised
		case promiseDelay:
			switch len(p.delayed) {
			case 0:
				return failed
			case 1:
			default:
				cp := m.push(cpForeign)
				cp.alts = p.delayed[1:]
				cp.f = origin
			}
			p = m.callAlt(p.delayed[0])
		case promiseGoal, promiseCall:
			var ctx Term
			if p.env != nil {
				ctx = p.env.ctx
			}
			kf := &frame{code: goKCode, k: p.k, parent: origin}
			if p.kind == promiseCall {
				return m.call(p.pi, p.args, kf, 0, ctx)
			}
			return m.callGoal(p.goal, kf, 0, ctx)
		default:
			return failed
		}
	}
}

func (m *machine) callAlt(alt func(context.Context) *Promise) (p *Promise) {
	defer ensurePromise(&p)
	return alt(m.ctx)
}

func (m *machine) callK(k Cont) (p *Promise) {
	defer ensurePromise(&p)
	return k(&m.env)
}

// tick counts a step; every 1024 steps it checks the query's context,
// and reports true (with m.err set) when the query is cancelled.
func (m *machine) tick() bool {
	m.steps++
	if m.steps&1023 != 0 {
		return false
	}
	if err := m.cancelled(); err != nil {
		m.err = err
		return true
	}
	return false
}

// cancelled returns the cause of the query's cancellation, if any.
func (m *machine) cancelled() error {
	if err := m.ctx.Err(); err != nil {
		if cause := context.Cause(m.ctx); cause != nil && cause != err {
			return cause
		}
		return err
	}
	return nil
}

// loop runs the machine from outcome o until the solve succeeds, fails or
// raises an exception nothing catches.
func (m *machine) loop(o outcome) (bool, error) {
	for {
		switch o {
		case goOn:
			o = m.step()
		case failed:
			if !m.backtrack(&o) {
				return false, nil
			}
		case raised:
			if !m.handle(&o) {
				return false, m.err
			}
		case succeeded:
			return true, nil
		}
	}
}

// step runs instructions from the registers until one leaves the
// straight line (a failure, an exception, a success).
func (m *machine) step() outcome {
	for {
		if m.tick() {
			return raised
		}
		f := m.f
		ins := &f.code.ins[m.pc]
		switch ins.op {
		case opCall:
			args := m.buildArgs(ins.args, f.slots)
			kf, kpc := f, m.pc+1
			if f.code.ins[kpc].op == opExit {
				kf, kpc = f.parent, f.ppc // last call
				if len(m.cps) <= f.cpTop {
					// No choice point can come back to this frame: the
					// callee's body may run in it.
					m.spare = f
				}
			}
			if o := m.call(ins.pi, args, kf, kpc, f.code.ctx); o != goOn {
				return o
			}
		case opExit:
			m.f, m.pc = f.parent, f.ppc
		case opCut:
			m.cutTo(f.barrier)
			m.pc++
		case opSaveB:
			f.bars[ins.a] = len(m.cps)
			m.pc++
		case opCutTo:
			m.cutTo(f.bars[ins.a])
			m.pc++
		case opSoftCut:
			if h := f.bars[ins.a]; h < len(m.cps) && m.cps[h].kind == cpJump && m.cps[h].f == f {
				m.cps[h].kind = cpDead
			}
			m.pc++
		case opTry:
			cp := m.push(cpJump)
			cp.f, cp.pc = f, ins.a
			m.pc++
		case opJump:
			m.pc = ins.a
		case opFail:
			return failed
		case opCallVar:
			g := m.build(ins.args[0], f.slots)
			kf, kpc := f, m.pc+1
			if f.code.ins[kpc].op == opExit {
				kf, kpc = f.parent, f.ppc
			}
			if o := m.callGoal(g, kf, kpc, f.code.ctx); o != goOn {
				return o
			}
		case opInline:
			ok, err := ins.inline(m, ins, f.slots)
			if err != nil {
				m.err = err
				return raised
			}
			if !ok {
				return failed
			}
			m.pc++
		case opGoK:
			p := m.callK(f.k)
			if o := m.resume(p, f.parent); o != goOn {
				return o
			}
		case opPopCatch:
			if n := len(m.cps) - 1; m.cps[n].kind == cpCatch && m.cps[n].serial == f.serial {
				m.pop()
			}
			m.f, m.pc = f.parent, f.ppc
		case opCollect:
			c, err := renamedCopy(f.tmpl, nil, &m.env)
			if err != nil {
				m.err = err
				return raised
			}
			*f.coll = append(*f.coll, c)
			return failed
		default:
			panic(fmt.Sprintf("engine: bad opcode %d", ins.op))
		}
	}
}

// call calls the procedure pi with args; the continuation is pc kpc of
// frame kf. ctx names the predicate making the call, for the existence
// error of an unknown procedure.
func (m *machine) call(pi procedureIndicator, args []Term, kf *frame, kpc int, ctx Term) outcome {
	m.vm.inferences++
	spare := m.spare
	m.spare = nil
	p, ok := m.vm.procedures[pi]
	if !ok {
		switch m.vm.unknown {
		case unknownWarning:
			if m.vm.Unknown != nil {
				m.vm.Unknown(pi.name, args, m.envCtx(ctx))
			}
			fallthrough
		case unknownFail:
			return failed
		default:
			m.err = existenceError(objectTypeProcedure, pi.Term(), m.envCtx(ctx))
			m.f, m.pc = kf, -1
			return raised
		}
	}
	switch p := p.(type) {
	case *userDefined:
		return m.callUser(p, args, kf, kpc, spare)
	case native:
		return p(m, args, kf, kpc)
	default:
		return m.resume(callProcedure(m.vm, p, args, m.kAt(kf, kpc), m.envFor(pi)), kf)
	}
}

func callProcedure(vm *VM, p procedure, args []Term, k Cont, env *Env) (promise *Promise) {
	defer ensurePromise(&promise)
	return p.call(vm, args, k, env)
}

// callUser calls user-defined procedure u: it tries the clauses that may
// match args, in order, leaving a choice point only while another one
// remains.
func (m *machine) callUser(u *userDefined, args []Term, kf *frame, kpc int, spare *frame) outcome {
	sel := u.selectClauses(args)
	i := sel.next(0)
	if i < 0 {
		return failed
	}
	barrier := len(m.cps)
	if j := sel.next(i + 1); j >= 0 {
		cp := m.push(cpClauses)
		cp.f, cp.pc, cp.sel, cp.next = kf, kpc, sel, j
		cp.args = m.saveArgs(args)
	}
	return m.tryClause(sel.cls[i], args, kf, kpc, barrier, spare)
}

// tryClause matches c's head with args and enters its body.
func (m *machine) tryClause(c *clause, args []Term, kf *frame, kpc int, barrier int, spare *frame) outcome {
	if c.body == nil { // a fact
		slots := m.scratch
		if cap(slots) < c.nslots {
			slots = make([]Term, c.nslots)
			m.scratch = slots
		}
		slots = slots[:c.nslots]
		for i, h := range c.head {
			if !m.match(h, args[i], slots) {
				clear(slots)
				return failed
			}
		}
		clear(slots)
		m.f, m.pc = kf, kpc
		return goOn
	}
	var f *frame
	if spare != nil && cap(spare.slots) >= c.nslots && spare.k == nil && spare.serial == 0 {
		// The caller's frame, which nothing can come back to (a last
		// call): reused instead of a new one.
		f = spare
		slots := f.slots[:c.nslots]
		clear(slots)
		*f = frame{code: c.body, parent: kf, ppc: kpc, barrier: barrier, slots: slots, bars: f.bars[:0]}
	} else {
		f = newFrame(c.body, c.nslots, kf, kpc, barrier)
	}
	for i, h := range c.head {
		if !m.match(h, args[i], f.slots) {
			return failed
		}
	}
	m.enter(f)
	return goOn
}

// enter starts running frame f's body.
func (m *machine) enter(f *frame) {
	c := f.code
	f.cpTop = len(m.cps)
	if c.nbars > 0 {
		if cap(f.bars) >= c.nbars {
			f.bars = f.bars[:c.nbars]
		} else {
			f.bars = make([]int, c.nbars)
		}
	}
	if len(c.init) > 0 {
		vs := newVars(len(c.init))
		for i, s := range c.init {
			f.slots[s] = &vs[i]
		}
	}
	m.f, m.pc = f, 0
}

// backtrack resumes the newest alternative. It reports false when the
// solve's base is reached.
func (m *machine) backtrack(o *outcome) bool {
	for {
		if m.tick() {
			*o = raised
			return true
		}
		n := len(m.cps) - 1
		cp := &m.cps[n]
		m.undo(cp.trail)
		switch cp.kind {
		case cpBase:
			return false
		case cpClauses:
			c, args, kf, kpc := cp.sel.cls[cp.next], cp.args, cp.f, cp.pc
			if j := cp.sel.next(cp.next + 1); j >= 0 {
				cp.next = j
				m.age = cp.age
			} else {
				// The last alternative: its arguments leave the stack
				// with the choice point.
				args = append(m.argBuf[:0], args...)
				m.argBuf = args
				m.pop()
			}
			if r := m.tryClause(c, args, kf, kpc, n, nil); r != failed {
				*o = r
				return true
			}
		case cpJump:
			f, pc := cp.f, cp.pc
			m.pop()
			m.f, m.pc = f, pc
			*o = goOn
			return true
		case cpForeign:
			alt, origin := cp.alts[0], cp.f
			if len(cp.alts) == 1 {
				m.pop()
			} else {
				cp.alts = cp.alts[1:]
			}
			if r := m.resume(m.callAlt(alt), origin); r != failed {
				*o = r
				return true
			}
		case cpCounter:
			n, x, kf, kpc := cp.lo, cp.a.(*Var), cp.f, cp.pc
			if n == cp.hi {
				m.pop()
			} else {
				cp.lo++
				m.age = cp.age
			}
			m.bind(x, n)
			m.f, m.pc = kf, kpc
			*o = goOn
			return true
		case cpCatch, cpDead:
			m.pop()
		case cpFindall:
			result, coll, kf, kpc := cp.b, cp.coll, cp.f, cp.pc
			m.pop()
			if m.unify(result, List(*coll...), false) {
				m.f, m.pc = kf, kpc
				*o = goOn
				return true
			}
		}
	}
}

// handle looks for a catch/3 that is active where m.err was raised (the
// continuation in m.f) and whose catcher unifies with the ball. It
// reports false when none does before the solve's base.
func (m *machine) handle(o *outcome) bool {
	err := m.err
	if m.ctx.Err() != nil { // the query is cancelled (or halted): no catch/3 sees it
		return false
	}
	var ball Term
	if e, ok := err.(Exception); ok {
		ball = e.term
	} else {
		ball = atomError.Apply(NewAtom("system_error"), NewAtom(err.Error()))
	}
	var active map[int64]bool
	for f := m.f; f != nil; f = f.parent {
		if f.serial != 0 {
			if active == nil {
				active = map[int64]bool{}
			}
			active[f.serial] = true
		}
	}
	for i := len(m.cps) - 1; i >= 0; i-- {
		cp := &m.cps[i]
		if cp.kind == cpBase {
			return false
		}
		if cp.kind != cpCatch || !active[cp.serial] {
			continue
		}
		catcher, recovery, kf, kpc, mark, ctx := cp.a, cp.b, cp.f, cp.pc, cp.trail, cp.ctx
		m.undo(mark)
		m.cutTo(i)
		if m.unify(catcher, ball, false) {
			m.err = nil
			*o = m.callGoal(recovery, kf, kpc, ctx)
			return true
		}
		m.undo(mark)
	}
	return false
}

// buildArgs builds the arguments of a call from their templates, into a
// buffer of the machine's that the next call reuses: a callee that keeps
// its arguments past its head copies them (a choice point does).
func (m *machine) buildArgs(tmpls []Term, slots []Term) []Term {
	args := m.argBuf[:0]
	for _, t := range tmpls {
		args = append(args, m.build(t, slots))
	}
	m.argBuf = args
	return args
}

// callGoal calls goal as call/1 does: a cut inside it is local.
func (m *machine) callGoal(goal Term, kf *frame, kpc int, ctx Term) outcome {
	switch g := deref(goal).(type) {
	case *Var:
		m.err = InstantiationError(m.envCtx(ctx))
		m.f, m.pc = kf, -1
		return raised
	case Atom:
		switch g {
		case atomCut, atomTrue:
			m.f, m.pc = kf, kpc
			return goOn
		case atomFail, atomFalse:
			return failed
		}
		return m.call(procedureIndicator{name: g, arity: 0}, nil, kf, kpc, ctx)
	case Compound:
		if isControl(g) {
			c, err := m.vm.compileGoal(g, ctx)
			if err != nil {
				m.err = err
				m.f, m.pc = kf, -1
				return raised
			}
			f := &frame{code: c, parent: kf, ppc: kpc, barrier: len(m.cps)}
			m.enter(f)
			return goOn
		}
		var args []Term
		if c, ok := g.(*compound); ok {
			args = c.args
		} else {
			args = make([]Term, g.Arity())
			for i := range args {
				args[i] = g.Arg(i)
			}
		}
		return m.call(procedureIndicator{name: g.Functor(), arity: Integer(g.Arity())}, args, kf, kpc, ctx)
	default:
		m.err = typeError(validTypeCallable, g, m.envCtx(ctx))
		m.f, m.pc = kf, -1
		return raised
	}
}
