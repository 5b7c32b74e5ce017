package prolog

// What the top level needs beyond ichiban, SWI-Prolog style:
//
//	listing/1 of any predicate: a static one without consulted source (a
//	    predicate of ichiban's bootstrap, such as member/2) is listed from
//	    the clauses the engine keeps, a Go one is named as foreign, and an
//	    unknown one is existence_error(procedure, Spec) as in SWI.
//	[user] (consult(user)): clauses read from user_input up to its end
//	    (Ctrl-D on a terminal), consulted as the text "user".
//	statistics/0, statistics/2 (runtime, cputime, process_cputime,
//	    walltime, real_time, epoch), time/1 (toplevel.pl): CPU time is the
//	    process's (every goroutine's), wall time since the interpreter was
//	    built; inferences counts the calls the interpreter made.
//	make/0: consults again each text whose source changed since it was
//	    consulted (through FS, or Options.Reload for texts given to
//	    Consult).
//	singleton warnings: consulting a text warns, on Options.Stderr, of
//	    each clause's named variables that occur once, as SWI does.

import (
	_ "embed" // toplevel.pl
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ichiban/prolog/engine"
)

// procKind is what kind of procedure an indicator names.
type procKind int

const (
	procNone    procKind = iota
	procUser             // clauses (consulted, asserted or ichiban's bootstrap)
	procForeign          // written in Go
)

// procedures returns the procedures called name (of the given arity, or
// any when arity < 0), sorted by arity, and what they are.
func (in *Interpreter) procedures(name string, arity int) ([]indicator, []procKind) {
	var out []engine.ProcedureInfo
	for _, p := range in.ip.VM.Procedures() {
		if p.Name.String() == name && (arity < 0 || p.Arity == arity) {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b engine.ProcedureInfo) int { return a.Arity - b.Arity })
	pis, kinds := make([]indicator, len(out)), make([]procKind, len(out))
	for i, p := range out {
		pis[i] = indicator{name, p.Arity}
		kinds[i] = procForeign
		if p.Kind == engine.ProcedureUser {
			kinds[i] = procUser
		}
	}
	return pis, kinds
}

// rawClauses returns the clauses of the user-defined procedure pi as the
// engine compiled them (no variable names); nil for any other.
func (in *Interpreter) rawClauses(pi indicator) []engine.Term {
	return in.ip.VM.ClauseTerms(engine.NewAtom(pi.name), pi.arity)
}

// consultUser consults what user_input holds up to its end.
func consultUser(c *Call) error {
	s, err := inputStream(c, engine.NewAtom("user_input"))
	if err != nil {
		return err
	}
	var b strings.Builder
	for {
		r, _, err := s.ReadRune()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		b.WriteRune(r)
	}
	if err := c.In.consultText(c.Ctx, "user", b.String()); err != nil {
		var se *SyntaxError
		if errors.As(err, &se) {
			return &ISOError{Formal: engine.NewAtom("syntax_error").Apply(engine.NewAtom(se.Error())), Err: err}
		}
		return err
	}
	return nil
}

// warnSingletons writes SWI-Prolog's warning for each clause of src with
// named variables (not _-prefixed) that occur once.
func (in *Interpreter) warnSingletons(name string, src *source) {
	w := in.opts.Stderr
	if w == nil {
		w = in.opts.Stdout
	}
	if w == nil {
		return
	}
	for _, cl := range src.clauses {
		p := engine.NewParser(&in.ip.VM, &countingReader{s: src.text[cl.start:cl.end]})
		if _, err := p.Term(); err != nil {
			continue
		}
		var once []string
		for _, v := range p.Vars {
			if n := v.Name.String(); v.Count == 1 && !strings.HasPrefix(n, "_") {
				once = append(once, n)
			}
		}
		if once != nil {
			pos := src.origPos(firstToken(src.text, cl.start, cl.end))
			fmt.Fprintf(w, "Warning: %s:%d:\nWarning:    Singleton variables: [%s]\n", name, pos.Line, strings.Join(once, ","))
		}
	}
}

// firstToken returns the offset of the first character of text[start:end]
// that is not layout or a comment.
func firstToken(text string, start, end int) int {
	i := start
	for i < end {
		switch {
		case isLayout(text[i]):
			i++
		case text[i] == '%':
			for i < end && text[i] != '\n' {
				i++
			}
		case strings.HasPrefix(text[i:end], "/*"):
			j := strings.Index(text[i+2:end], "*/")
			if j < 0 {
				return i
			}
			i += 2 + j + 2
		default:
			return i
		}
	}
	return start
}

//go:embed toplevel.pl
var toplevelSource string

var toplevelDefs = []Def{
	Pred0("statistics", "statistics is det", statistics0),
	Pred2("statistics", "statistics(++Key, -Value) is det", statistics2),
	Pred1("time_start_", "time_start_(-Start) is det", timeStart),
	Pred1("time_report_", "time_report_(+Start) is det", timeReport),
	Pred0("make", "make is det", make0),
	Pred1("trace", "trace(+Spec) is det", trace1),
	Pred1("notrace", "notrace(+Spec) is det", notrace1),
	Pred0("notrace", "notrace is det", notrace0),
	Pred2("trace_port_", "trace_port_(+Port, +Goal) is det", tracePort),
}

// statsState is what statistics/2 remembers between calls ("since last").
type statsState struct {
	started                    time.Time
	lastCPU, lastWall, lastSec int64
}

// cpuTime is the CPU time (user and system) the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func statistics2(c *Call, key, value engine.Term) (bool, error) {
	k, err := c.Atom(key)
	if err != nil {
		return false, err
	}
	st := &c.In.stats
	pair := func(total int64, last *int64) engine.Term {
		since := total - *last
		*last = total
		return engine.List(engine.Integer(total), engine.Integer(since))
	}
	var v engine.Term
	switch k {
	case "runtime":
		v = pair(cpuTime().Milliseconds(), &st.lastCPU)
	case "cputime":
		v = engine.Float(cpuTime().Seconds())
	case "process_cputime":
		v = engine.Integer(cpuTime().Milliseconds())
	case "walltime":
		v = pair(time.Since(st.started).Milliseconds(), &st.lastWall)
	case "real_time":
		v = pair(time.Now().Unix(), &st.lastSec)
	case "inferences":
		v = engine.Integer(c.VM.Inferences())
	case "epoch":
		v = engine.Float(float64(st.started.UnixNano()) / 1e9)
	default:
		return false, DomainError("statistics_key", key)
	}
	return c.Unify(value, v), nil
}

func statistics0(c *Call) (bool, error) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	st := &c.In.stats
	preds := len(c.In.ip.VM.Procedures())
	msg := fmt.Sprintf("%% Started at %s\n"+
		"%% %.3f seconds cpu time (the process's), %.3f seconds wall time\n"+
		"%% %s predicates, %d goroutines\n"+
		"%% Go heap: %s bytes in use, %d garbage collections\n",
		st.started.Format("Mon Jan _2 15:04:05 2006"),
		cpuTime().Seconds(), time.Since(st.started).Seconds(),
		groupDigits(int64(preds), 0, true), runtime.NumGoroutine(),
		groupDigits(int64(ms.HeapAlloc), 0, true), ms.NumGC)
	c.In.message(msg)
	return true, nil
}

// message writes msg to Options.Stderr (user_output when nil), where
// print_message/2 writes.
func (in *Interpreter) message(msg string) {
	w := in.opts.Stderr
	if w == nil {
		w = in.opts.Stdout
	}
	if w != nil {
		io.WriteString(w, msg)
	}
}

func timeStart(c *Call, start engine.Term) (bool, error) {
	return c.Unify(start, engine.List(engine.Integer(cpuTime()), engine.Integer(time.Now().UnixNano()), engine.Integer(c.VM.Inferences()))), nil
}

func timeReport(c *Call, start engine.Term) (bool, error) {
	l, err := c.List(start)
	if err != nil || len(l) != 3 {
		return false, DomainError("time_start", start)
	}
	cpu0, err := c.Int(l[0])
	if err != nil {
		return false, err
	}
	wall0, err := c.Int(l[1])
	if err != nil {
		return false, err
	}
	inf0, err := c.Int(l[2])
	if err != nil {
		return false, err
	}
	cpu := (cpuTime() - time.Duration(cpu0)).Seconds()
	wall := time.Duration(time.Now().UnixNano() - wall0).Seconds()
	// time_report_/1 itself is one inference the goal did not make.
	inferences := c.VM.Inferences() - inf0 - 1
	pct := 0.0
	if wall > 0 {
		pct = 100 * cpu / wall
	}
	lips := "Infinite"
	if cpu > 0 {
		lips = strconv.FormatInt(int64(float64(inferences)/cpu), 10)
	}
	c.In.message(fmt.Sprintf("%% %s inferences, %.3f CPU in %.3f seconds (%.0f%% CPU, %s Lips)\n",
		groupDigits(inferences, 0, true), cpu, wall, pct, lips))
	return true, nil
}

// make0 consults again each text consulted from a source that has changed
// since: consult/1's through FS, Consult's through Options.Reload.
func make0(c *Call) (bool, error) {
	in := c.In
	for _, src := range slices.Clone(in.sources) {
		if src.shared {
			continue
		}
		var text string
		switch {
		case src.viaFS:
			_, b, err := in.readFile(src.name)
			if err != nil {
				return false, FileError("source_sink", engine.NewAtom(src.name), err)
			}
			text = string(b)
		case in.opts.Reload != nil:
			t, err := in.opts.Reload(src.name)
			if err != nil {
				return false, FileError("source_sink", engine.NewAtom(src.name), err)
			}
			text = t
		default:
			continue
		}
		if text == src.text {
			continue
		}
		if err := in.consultText(c.Ctx, src.name, text); err != nil {
			var se *SyntaxError
			if errors.As(err, &se) {
				return false, &ISOError{Formal: engine.NewAtom("syntax_error").Apply(engine.NewAtom(se.Error())), Err: err}
			}
			return false, err
		}
		in.message(fmt.Sprintf("%% Reloaded %s\n", src.name))
	}
	return true, nil
}

// viaFS notes that the text called name is consulted through FS (by
// consult/1), so make/0 reads it there again.
func (in *Interpreter) viaFS(name string) {
	for i := range in.sources {
		if in.sources[i].name == name {
			in.sources[i].viaFS = true
			return
		}
	}
	in.sources = append(in.sources, consulted{name: name, viaFS: true})
}

// tracedSuffix renames a traced predicate's own clauses; its name calls
// the wrapper that reports the ports.
const tracedSuffix = "$traced"

// trace1 puts trace points on the static predicates spec names: their
// clauses move to Name$traced, and Name becomes a wrapper that reports
// each port (toplevel.pl's trace_exit_/1 for exit and redo).
func trace1(c *Call, spec engine.Term) (bool, error) {
	name, arity, err := predicateSpec(c, spec)
	if err != nil {
		return false, err
	}
	in := c.In
	pis, kinds := in.procedures(name, arity)
	if len(pis) == 0 {
		return false, ExistenceError("procedure", spec)
	}
	for i, pi := range pis {
		if kinds[i] != procUser {
			return false, PermissionError("trace", "foreign_procedure", engine.NewAtom("/").Apply(engine.NewAtom(pi.name), engine.Integer(pi.arity)))
		}
		if _, ok := in.traced[pi]; ok {
			continue
		}
		orig, renamed, err := in.clauseTexts(c, pi)
		if err != nil {
			return false, err
		}
		if err := in.ip.VM.Compile(c.Ctx, renamed+wrapperText(in, pi)); err != nil {
			return false, err
		}
		if in.traced == nil {
			in.traced = map[indicator]string{}
		}
		in.traced[pi] = orig
	}
	return true, nil
}

func notrace1(c *Call, spec engine.Term) (bool, error) {
	name, arity, err := predicateSpec(c, spec)
	if err != nil {
		return false, err
	}
	for pi, orig := range c.In.traced {
		if pi.name == name && (arity < 0 || pi.arity == arity) {
			if err := c.In.untrace(c, pi, orig); err != nil {
				return false, err
			}
		}
	}
	return true, nil
}

func notrace0(c *Call) (bool, error) {
	for pi, orig := range c.In.traced {
		if err := c.In.untrace(c, pi, orig); err != nil {
			return false, err
		}
	}
	return true, nil
}

// untrace gives pi its own clauses back.
func (in *Interpreter) untrace(c *Call, pi indicator, orig string) error {
	if orig == "" { // no clauses: an empty text would leave the wrapper
		orig = fmt.Sprintf(":- dynamic(%s).\n", in.WriteQ(engine.NewAtom("/").Apply(engine.NewAtom(pi.name), engine.Integer(pi.arity)), nil))
	}
	if err := in.ip.VM.Compile(c.Ctx, orig); err != nil {
		return err
	}
	delete(in.traced, pi)
	return nil
}

// clauseTexts returns the clauses of pi as text, as they are and with the
// head renamed to Name$traced. Dynamic predicates are refused: the
// wrapper would be static.
func (in *Interpreter) clauseTexts(c *Call, pi indicator) (orig, renamed string, err error) {
	terms, names := in.sourceTerms(pi)
	if terms == nil {
		terms = in.rawClauses(pi)
		names = make([]map[engine.Variable]string, len(terms))
	}
	head := engine.NewAtom(pi.name)
	var probe engine.Term = head
	if pi.arity > 0 {
		args := make([]engine.Term, pi.arity)
		for i := range args {
			args[i] = engine.NewVariable()
		}
		probe = head.Apply(args...)
	}
	if ok, _ := engine.Call(c.VM, engine.NewAtom("clause").Apply(probe, engine.NewVariable()), func(*engine.Env) *engine.Promise { return engine.Bool(true) }, c.Env).Force(c.Ctx); ok {
		return "", "", PermissionError("trace", "dynamic_procedure", engine.NewAtom("/").Apply(head, engine.Integer(pi.arity)))
	}
	var o, r strings.Builder
	for i, t := range terms {
		o.WriteString(newClauseWriter(in, t, nil, names[i]).clause(t))
		rt := renameHead(t, pi.name+tracedSuffix)
		r.WriteString(newClauseWriter(in, rt, nil, names[i]).clause(rt))
	}
	if len(terms) == 0 {
		fmt.Fprintf(&r, ":- dynamic(%s).\n", in.WriteQ(engine.NewAtom("/").Apply(engine.NewAtom(pi.name+tracedSuffix), engine.Integer(pi.arity)), nil))
	}
	return o.String(), r.String(), nil
}

// renameHead returns clause t with its head's name changed to name.
func renameHead(t engine.Term, name string) engine.Term {
	rename := func(h engine.Term) engine.Term {
		switch h := h.(type) {
		case engine.Atom:
			return engine.NewAtom(name)
		case engine.Compound:
			args := make([]engine.Term, h.Arity())
			for i := range args {
				args[i] = h.Arg(i)
			}
			return engine.NewAtom(name).Apply(args...)
		}
		return h
	}
	if c, ok := t.(engine.Compound); ok && c.Functor() == atomIf && c.Arity() == 2 {
		return atomIf.Apply(rename(c.Arg(0)), c.Arg(1))
	}
	return rename(t)
}

// wrapperText is the clauses that report pi's ports around Name$traced.
func wrapperText(in *Interpreter, pi indicator) string {
	args := make([]string, pi.arity)
	for i := range args {
		args[i] = fmt.Sprintf("A%d", i+1)
	}
	call := func(name string) string {
		q := in.WriteQ(engine.NewAtom(name), nil)
		if pi.arity == 0 {
			return q
		}
		return q + "(" + strings.Join(args, ", ") + ")"
	}
	g, t := call(pi.name), call(pi.name+tracedSuffix)
	return fmt.Sprintf("%s :-\n    trace_port_(call, %s),\n    catch(%s, E, (trace_port_(exception, %s), throw(E))),\n    trace_exit_(%s).\n"+
		"%s :-\n    trace_port_(fail, %s),\n    fail.\n", g, g, t, g, g, g, g)
}

// tracePort reports a port of a traced goal on Options.Stderr, the goal
// abbreviated as the top level abbreviates answers.
func tracePort(c *Call, port, goal engine.Term) (bool, error) {
	p, err := c.Atom(port)
	if err != nil {
		return false, err
	}
	label := strings.ToUpper(p[:1]) + p[1:]
	// Variables are named _A, _B, … in order of appearance (the engine's
	// numbers would change from run to run).
	counts := map[engine.Variable]int{}
	var order []engine.Variable
	countVars(goal, c.Env, counts, &order, 0)
	eq := engine.NewAtom("=")
	vn := make([]engine.Term, len(order))
	for i, v := range order {
		n := "_" + string(rune('A'+i%26))
		if i >= 26 {
			n += fmt.Sprint(i / 26)
		}
		vn[i] = eq.Apply(engine.NewAtom(n), v)
	}
	o := engine.List(atomQuoted.Apply(atomTrue), engine.NewAtom("variable_names").Apply(engine.List(vn...)))
	c.In.message(fmt.Sprintf(" T %s: %s\n", label, spaceArgs(c.In.writeText(abbreviate(goal, c.Env, answerDepth), c.Env, o))))
	return true, nil
}
