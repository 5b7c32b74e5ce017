package prolog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"path"
	"strings"
	"time"

	ichiban "github.com/ichiban/prolog"
	"github.com/ichiban/prolog/engine"
)

// Options configure an [Interpreter]. The zero value (or nil) is valid.
type Options struct {
	// Stdin is user_input. Nil means an empty input.
	Stdin io.Reader
	// Stdout is user_output (and user_error, which ichiban lacks). Nil
	// discards output.
	Stdout io.Writer
	// Stderr is where print_message/2 writes. Nil means user_output.
	Stderr io.Writer
	// FS is what consult/1, include/1, ensure_loaded/1 and open/3,4 in read
	// mode see. Nil means no files at all. Writing files is never allowed.
	// NB: os.DirFS follows symbolic links out of its directory; confine a
	// directory with (*os.Root).FS, which refuses them.
	FS fs.FS
	// Argv is the value of the argv flag (the script's arguments).
	Argv []string
	// MapError maps Go errors returned by foreign predicates to ISO formals.
	// Nil maps none: unknown errors throw error(rlm_error(internal, Msg), PI).
	MapError ErrorMapper
	// Now is the clock of get_time/1. Nil means time.Now.
	Now func() time.Time
	// Seed seeds the generator of random/1, random_between/3 and the
	// like. Zero means a random seed; set_random(seed(N)) reseeds.
	Seed uint64
	// Reload returns the current text of a source consulted with
	// [Interpreter.Consult] under name, for make/0 (texts consulted with
	// consult/1 are read again through FS). Nil means make/0 reloads only
	// those.
	Reload func(name string) (string, error)
	// Grace is how long a cancelled query may keep running inside a Go
	// builtin that ignores its context before the watchdog abandons it.
	// Zero means 2s.
	Grace time.Duration
}

// Interpreter is one ichiban interpreter with rlmpl's flags, safe edges and
// prelude. It is not safe for concurrent use: ichiban's VM has no locks and a
// concurrent mutation kills the process, so one goroutine owns it (several
// Interpreters run in parallel safely).
type Interpreter struct {
	ip        *ichiban.Interpreter
	opts      Options
	installed map[string]*Def

	// Halt and cancellation state of the running query.
	cancel   context.CancelCauseFunc
	halted   bool
	haltCode int
	broken   error // set when the watchdog abandoned a query

	mains   []engine.Term // initialization(Goal, main) goals, run by RunMain
	globals map[string]engine.Term
	dqChars bool                 // double_quotes is chars (write.go)
	sources []consulted          // the texts consulted, for listing/1 and help/1
	rng     *rand.Rand           // random/1 and friends (library.go)
	quiet   bool                 // consulting shared texts: no singleton warnings
	stats   statsState           // statistics/2 (toplevel.go)
	traced  map[indicator]string // trace/1: the traced predicates' own clauses
	plunit  plunit               // loaded test units (plunit.go)
}

// ErrAbandoned is returned when a cancelled query did not stop within
// Options.Grace (stuck in a Go builtin); the Interpreter is unusable after.
var ErrAbandoned = errors.New("prolog: query abandoned: engine did not honour cancellation; create a new interpreter")

// HaltError is returned when the program called halt/0,1.
type HaltError struct{ Code int }

func (e *HaltError) Error() string { return fmt.Sprintf("prolog: halt(%d)", e.Code) }

var errHalt = errors.New("prolog: halt")

// New builds an interpreter: ichiban's builtins, flags double_quotes=chars
// and unknown=error, halt/0,1 that ends the query instead of the process,
// open/3,4 confined to Options.FS, and the compatibility prelude.
func New(opts *Options) *Interpreter {
	in := &Interpreter{installed: map[string]*Def{}, globals: map[string]engine.Term{}, stats: statsState{started: time.Now()}}
	if opts != nil {
		in.opts = *opts
	}
	if in.opts.Grace == 0 {
		in.opts.Grace = 2 * time.Second
	}
	stdin, stdout := in.opts.Stdin, in.opts.Stdout
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	if stdout == nil {
		stdout = io.Discard
	}
	in.ip = ichiban.New(stdin, consoleSink{stdout})
	in.ip.FS = emptyFS{}
	if in.opts.FS != nil {
		in.ip.FS = in.opts.FS
	}
	// NB: double_quotes=chars is ichiban's default; set it anyway so the
	// choice is stated once, here. Text arguments accept atoms, chars and codes.
	if err := in.ip.Exec(`:- set_prolog_flag(double_quotes, chars). :- set_prolog_flag(unknown, error).`); err != nil {
		panic("prolog: New: " + err.Error())
	}
	in.Install(edgeDefs...)
	in.registerCyclic()
	in.registerFast()
	in.registerWrite()
	in.registerLibrary()
	in.registerFlags()
	in.Install(preludeDefs...)
	in.Install(textDefs...)
	in.Install(swiDefs...)
	in.Install(toplevelDefs...)
	in.Install(plunitDefs...)
	if err := in.ConsultShared(context.Background(), []Text{{"prelude.pl", preludeSource}, {"toplevel.pl", toplevelSource}, {"plunit.pl", plunitSource}}); err != nil {
		panic("prolog: New: prelude: " + err.Error())
	}
	return in
}

// VM exposes the engine for foreign predicates built outside this package.
func (in *Interpreter) VM() *engine.VM { return &in.ip.VM }

type emptyFS struct{}

func (emptyFS) Open(name string) (fs.File, error) {
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}

// run executes f under a cancellable context that halt/0,1 can cancel, and
// a watchdog that gives up after Options.Grace once ctx is done.
func (in *Interpreter) run(ctx context.Context, f func(ctx context.Context) error) error {
	if in.broken != nil {
		return in.broken
	}
	qctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	prev := in.cancel
	in.cancel = cancel
	defer func() { in.cancel = prev }()

	done := make(chan error, 1)
	go func() { done <- f(qctx) }()
	var err error
	select {
	case err = <-done:
	case <-qctx.Done():
		select {
		case err = <-done:
		case <-time.After(in.opts.Grace):
			in.broken = ErrAbandoned
			return ErrAbandoned
		}
	}
	return in.haltOr(qctx, err)
}

// haltOr turns the cancellation caused by halt/1 into a *HaltError.
func (in *Interpreter) haltOr(ctx context.Context, err error) error {
	if in.halted && errors.Is(context.Cause(ctx), errHalt) {
		return &HaltError{Code: in.haltCode}
	}
	if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		if cause := context.Cause(ctx); cause != nil {
			return cause
		}
	}
	return err
}

// Consult loads Prolog text named name (used in error positions). Non-ASCII
// runes in quoted atoms are escaped so they read, a syntax error is a
// *SyntaxError naming file:line:column, and nothing of the text is loaded
// when it has one. initialization/1 goals run after the text loads.
func (in *Interpreter) Consult(ctx context.Context, name, text string) error {
	return in.run(ctx, func(ctx context.Context) error { return in.consultText(ctx, name, text) })
}

func (in *Interpreter) consultText(ctx context.Context, name, text string) error {
	in.remember(name, text)
	src, err := scan(text)
	if err != nil {
		var se *SyntaxError
		if errors.As(err, &se) {
			se.File = name
		}
		return err
	}
	if !in.quiet {
		in.warnSingletons(name, src)
	}
	err = in.ip.VM.Compile(ctx, src.text)
	if err == nil {
		return nil
	}
	var ex engine.Exception
	if ctx.Err() != nil || errors.As(err, &ex) {
		return err
	}
	// ichiban reports no position: find the first clause that does not parse.
	// Directives of the text already ran, so its op/3 declarations are in
	// effect, as they were for the failed compile.
	if se := in.locate(src, name); se != nil {
		return se
	}
	return fmt.Errorf("%s: %w", name, err)
}

// locate re-parses src clause by clause and reports the first failure.
func (in *Interpreter) locate(src *source, name string) *SyntaxError {
	for _, cl := range src.clauses {
		r := &countingReader{s: src.text[cl.start:cl.end]}
		p := engine.NewParser(&in.ip.VM, r)
		if _, err := p.Term(); err != nil {
			off := cl.start + tokenStart(r.s, r.off, err)
			msg := err.Error()
			if errors.Is(err, io.EOF) || err.Error() == "EOF" {
				msg = "unexpected end of clause"
			}
			return &SyntaxError{File: name, Pos: src.origPos(off), Msg: msg}
		}
	}
	return nil
}

// RunMain runs the goals declared with initialization(Goal, main), in order.
// It returns a *HaltError when one halts, and the first goal's failure or
// exception otherwise.
func (in *Interpreter) RunMain(ctx context.Context) error {
	mains := in.mains
	in.mains = nil
	for _, g := range mains {
		err := in.run(ctx, func(ctx context.Context) error {
			ok, err := engine.Call(&in.ip.VM, g, engine.Success, nil).Force(ctx)
			if err == nil && !ok {
				return &GoalFailedError{Goal: in.WriteQ(g, nil)}
			}
			return err
		})
		var ex engine.Exception
		if errors.As(err, &ex) {
			return &GoalError{Goal: in.WriteQ(g, nil), Err: err}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// GoalError is an uncaught exception raised by a goal the host ran on the
// program's behalf (an initialization(main) goal).
type GoalError struct {
	Goal string
	Err  error
}

func (e *GoalError) Error() string { return fmt.Sprintf("prolog: goal %s raised: %v", e.Goal, e.Err) }

func (e *GoalError) Unwrap() error { return e.Err }

// GoalFailedError reports a goal that had to succeed and failed.
type GoalFailedError struct{ Goal string }

func (e *GoalFailedError) Error() string { return "prolog: goal failed: " + e.Goal }

// termText renders t with writeq (standard operators unknown) for messages.
func termText(t engine.Term) string {
	var sb strings.Builder
	s := engine.NewOutputTextStream(&sb)
	var vm engine.VM
	_, _ = engine.WriteTerm(&vm, s, t, engine.List(engine.NewAtom("quoted").Apply(engine.NewAtom("true"))), engine.Success, nil).Force(context.Background())
	return sb.String()
}

// readFile resolves a consult/open name the way ichiban does (name, then
// name.pl), relative to FS. Only a missing name falls through to the next:
// a refusal (a link out of the FS's root) is returned as it is.
func (in *Interpreter) readFile(name string) (string, []byte, error) {
	name = strings.TrimPrefix(path.Clean(name), "/")
	for _, n := range []string{name, name + ".pl"} {
		b, err := fs.ReadFile(in.ip.FS, n)
		if err == nil || !errors.Is(err, fs.ErrNotExist) {
			return n, b, err
		}
	}
	return "", nil, fs.ErrNotExist
}

// tokenStart points an error at the start of the unexpected token when the
// message names it ("unexpected token: graphic(:-)"); the parser has read
// the token and usually one rune of lookahead.
func tokenStart(text string, off int, err error) int {
	msg := err.Error()
	if i, j := strings.IndexByte(msg, '('), strings.LastIndexByte(msg, ')'); i >= 0 && j > i {
		val := msg[i+1 : j]
		for _, end := range []int{off, off - 1} {
			if start := end - len(val); val != "" && start >= 0 && end <= len(text) && text[start:end] == val {
				return start
			}
		}
	}
	return max(0, off-1)
}

// consoleSink is user_output's sink. flush_output/0 flushes what Go
// buffers but never fsyncs, which ichiban does to an *os.File: fsync of a
// pipe or a terminal fails with EINVAL ("rlmpl run x.pl | cat" died on
// flush_output), and SWI's flush_output does not sync to disk either.
type consoleSink struct{ io.Writer }

func (c consoleSink) Flush() error {
	if f, ok := c.Writer.(interface{ Flush() error }); ok {
		return f.Flush()
	}
	return nil
}
