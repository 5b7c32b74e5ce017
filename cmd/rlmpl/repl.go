package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/term"

	"github.com/rlmpl/rlmpl/host"
	"github.com/rlmpl/rlmpl/prolog"
)

const replUsage = `usage: rlmpl repl [--state DIR] [--grant DIR]... [FILE...]

The top level: consult FILEs, then read goals and print their answers as
SWI-Prolog does. A goal ends with a full stop; it may span lines, and a
line may hold several. A deterministic answer ends with "."; after one that
left a choice point, type ; (or n, r, space, tab) for the next answer, or
return (or ., c, a) to stop, w or p to write it whole or abbreviated (long
answers are cut at depth 10, as in SWI). Ctrl-C interrupts a running goal
and, at the prompt, drops what was typed. halt. or end of input (Ctrl-D)
leaves.
help(Name), apropos(Text) and listing(Name) document and show predicates;
$X is X's value in the latest answer; [user] consults what follows, make
reloads changed files, time(Goal), statistics and trace(Pred) as in SWI.

On a terminal, lines are edited as in bash (arrows, Ctrl-A/E/K/U/W/Y);
Up and Down walk the history of goals, Ctrl-R searches it, and it is kept
in DIR/repl_history (the last 1,000 goals).

Without a terminal, goals are read from the input one by one; the line
after an answer that left a choice point is taken as the reply when it is
";" (next answer) or empty (stop), and read as the next goal otherwise.
` + storesUsage

// runREPL implements `rlmpl repl [FILE...]`.
func runREPL(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("repl", flag.ContinueOnError)
	sf := addStoreFlags(fs)
	files, code, ok := parseFlags(fs, replUsage, args, stdout, stderr)
	if !ok {
		return code
	}
	t := newToplevel(stdin, stdout, stderr, filepath.Join(*sf.state, historyFile))
	first := ""
	if len(files) > 0 {
		first = files[0]
	}
	// The program's user_input is the top level's own input: a goal reading
	// it consumes what follows, as in SWI-Prolog. Its user_output is the top
	// level's, which tracks whether a line is open.
	sess, closeAll, code := openSession(ctx, sf, first, nil, t, t.out, stderr, files...)
	if sess == nil {
		return code
	}
	defer closeAll()
	for _, f := range files {
		if code := consultFile(ctx, sess, f, stderr); code >= 0 && code != 1 {
			return code
		}
	}
	return t.loop(ctx, sess)
}

// toplevel reads goals and replies from its input and prints answers.
type toplevel struct {
	lineReader
	buf    string // input read but not consumed yet
	out    *lineWriter
	errOut io.Writer
	fd     int             // the terminal's file descriptor, or -1
	ed     *editor         // the line editor, on a terminal
	tty    *ttyReader      // the terminal's input (t.in is not read then)
	goal   context.Context // the running goal's, which ends what it reads

	values map[string]prolog.SavedValue // the latest value of each answer variable, for $Var
}

// newToplevel returns a top level reading stdin; on a terminal, lines are
// edited and goals kept in the history file.
func newToplevel(stdin io.Reader, stdout, stderr io.Writer, history string) *toplevel {
	t := &toplevel{lineReader: lineReader{in: bufio.NewReader(stdin)}, out: &lineWriter{w: stdout, bol: true}, errOut: stderr, fd: -1, values: map[string]prolog.SavedValue{}}
	if f, ok := stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		t.fd = int(f.Fd())
		t.tty = newTTYReader(f)
		t.ed = newEditor(t.tty, stdout, t.fd, history, stderr)
	}
	return t
}

// loop runs goals until halt/0,1 or the end of the input and returns the
// exit status. On a terminal an interrupt at the prompt drops the input
// typed so far; without one, ctx ending (SIGINT) ends the top level with
// status 130.
func (t *toplevel) loop(ctx context.Context, sess *host.Session) int {
	if t.fd >= 0 {
		// On a terminal, SIGINT interrupts the running goal only, so the
		// top level does not use the process context, which the first
		// SIGINT ends for good.
		ctx = context.WithoutCancel(ctx)
		t.interrupts = make(chan os.Signal, 1)
		signal.Notify(t.interrupts, os.Interrupt)
		defer signal.Stop(t.interrupts)
	}
	for {
		goal, err := t.readGoal(ctx)
		switch {
		case errors.Is(err, errInterrupted) && t.fd >= 0:
			if prolog.Blank(t.buf) {
				fmt.Fprint(t.out, "\n% halt. or Ctrl-D leaves the top level\n")
			} else {
				fmt.Fprintln(t.out)
			}
			t.buf = "" // the terminal dropped the line too
			continue
		case errors.Is(err, errInterrupted):
			fmt.Fprintln(t.out)
			return 130
		case errors.Is(err, io.EOF):
			if t.fd >= 0 {
				fmt.Fprintln(t.out)
			}
			return 0
		case errors.Is(err, errNoFullStop):
			t.out.endLine()
			fmt.Fprintf(t.errOut, "ERROR: %v\n", err)
			continue
		case err != nil:
			fmt.Fprintf(t.errOut, "rlmpl repl: reading input: %v\n", err)
			return 1
		}
		t.out.bol = true // the goal's line ended (the terminal echoed it)
		if t.ed != nil {
			t.ed.add(goal)
			drain(t.interrupts) // a SIGINT sent while at the prompt is not for this goal
		}
		if code, done := t.solve(ctx, sess, goal); done {
			return code
		}
	}
}

// Read makes the top level's input the program's user_input: what it has
// buffered first, then at most a line per call, so that a program reading
// a term does not swallow the goals that follow it. On a terminal, each
// line is prompted with "|: ", as in SWI-Prolog ([user], read/1).
func (t *toplevel) Read(p []byte) (int, error) {
	if t.buf == "" {
		var line string
		var err error
		if t.fd >= 0 && t.goal != nil && t.goal.Err() != nil {
			return 0, t.goal.Err() // interrupted: no more prompts
		}
		if t.fd >= 0 {
			fmt.Fprint(t.out, "|: ") // SWI's prompt for what a goal reads
			line, err = t.cookedLine()
		} else {
			line, err = t.in.ReadString('\n')
		}
		t.out.bol = true // the line was echoed
		if line == "" {
			return 0, err
		}
		t.buf = line
	}
	n := copy(p, t.buf)
	t.buf = t.buf[n:]
	return n, nil
}

// cookedLine reads a line from the terminal, which is in its own (cooked)
// mode while a goal runs. What the user typed ahead while the editor held
// the terminal raw is already buffered, unechoed and raw: it is echoed
// here, with Return as a newline and Ctrl-D as the end of the input, as
// the terminal would have taken it.
func (t *toplevel) cookedLine() (string, error) {
	var b strings.Builder
	for t.tty.Buffered() > 0 {
		c, err := t.tty.ReadByte()
		if err != nil {
			fmt.Fprintln(t.out)
			return b.String(), err
		}
		switch c {
		case '\r', '\n':
			b.WriteByte('\n')
			fmt.Fprint(t.out, "\n")
			return b.String(), nil
		case 4: // Ctrl-D
			fmt.Fprintln(t.out)
			if b.Len() == 0 {
				return "", io.EOF
			}
			return b.String(), nil
		case 127, 8:
			if s := b.String(); s != "" {
				b.Reset()
				b.WriteString(s[:len(s)-1])
				fmt.Fprint(t.out, "\b \b")
			}
		default:
			b.WriteByte(c)
			t.out.Write([]byte{c})
		}
	}
	done := make(<-chan struct{})
	if t.goal != nil {
		done = t.goal.Done()
	}
	for {
		c, err := t.tty.readByte(done)
		if err != nil {
			if b.Len() == 0 && errors.Is(err, io.EOF) {
				fmt.Fprintln(t.out) // Ctrl-D: the terminal echoed nothing
			}
			return b.String(), err
		}
		b.WriteByte(c)
		if c == '\n' {
			return b.String(), nil
		}
	}
}

// readLine reads a line into buf: edited after a prompt on a terminal
// (see editor.readLine), else as it comes (see lineReader.next).
func (t *toplevel) readLine(ctx context.Context) error {
	var line string
	var err error
	switch {
	case t.ed == nil:
		line, err = t.next(ctx)
	case prolog.Blank(t.buf):
		line, err = t.ed.readLine("?- ")
	default:
		line, err = t.ed.readLine("|    ")
	}
	t.buf += line
	return err
}

// drain empties ch (nil: nothing to do).
func drain(ch chan os.Signal) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}

// readGoal returns the next goal (through its full stop), prompting on a
// terminal. A goal left without a full stop at the end of the input is
// returned as it is; blank input at the end is io.EOF.
func (t *toplevel) readGoal(ctx context.Context) (string, error) {
	for {
		if goal, rest, ok := prolog.NextClause(t.buf); ok {
			// The rest of the goal's line goes with it when it is blank, so
			// that the next line is the reply or the next goal.
			if line, after, found := strings.Cut(rest, "\n"); found && strings.TrimSpace(line) == "" {
				rest = after
			}
			t.buf = rest
			return goal, nil
		}
		if err := t.readLine(ctx); err != nil {
			if errors.Is(err, errInterrupted) || prolog.Blank(t.buf) {
				return "", err
			}
			if _, _, ok := prolog.NextClause(t.buf); ok {
				continue // the last line, with no newline after its full stop
			}
			// As SWI-Prolog: a goal must end with a full stop; one the end
			// of the input cut short is not run.
			t.buf = ""
			return "", errNoFullStop
		}
	}
}

// errNoFullStop is what readGoal returns when the input ends inside a goal.
var errNoFullStop = errors.New("Syntax error: Unexpected end of file")

// solve runs one goal and prints its answers. It reports done with an exit
// code when the goal halted or the process was interrupted.
func (t *toplevel) solve(ctx context.Context, sess *host.Session, goal string) (int, bool) {
	goal, names, hide, err := expandValues(goal, t.values)
	if err != nil {
		t.out.endLine()
		fmt.Fprintf(t.errOut, "ERROR: %v\n", err)
		return 0, false
	}
	qctx, stop := interruptible(ctx, t.interrupts)
	defer stop()
	t.goal = qctx
	q, err := sess.Query(qctx, goal)
	if err != nil {
		return t.report(ctx, err)
	}
	defer q.Close()
	q.ShowLast(names...)
	q.Hide(hide...)
	for q.Next() {
		t.out.endLine()
		maps.Copy(t.values, q.Values())
		answer := q.Answer()
		if q.Last() {
			fmt.Fprintf(t.out, "%s.\n\n", answer)
			return 0, false
		}
		fmt.Fprintf(t.out, "%s ", answer)
	again:
		switch t.reply(ctx) {
		case replyWrite: // w: the answer again, whole
			fmt.Fprintf(t.out, "[write]\n%s ", q.FullAnswer())
			goto again
		case replyPrint: // p: abbreviated again
			fmt.Fprintf(t.out, "[print]\n%s ", answer)
			goto again
		case replyMore:
			fmt.Fprintln(t.out, ";")
		case replyStop:
			fmt.Fprint(t.out, ".\n\n")
			return 0, false
		case replyAbort:
			fmt.Fprintln(t.out)
			fmt.Fprintln(t.errOut, "% Execution Aborted")
			return 0, false
		case replyInterrupted:
			fmt.Fprintln(t.out)
			return 130, true
		}
	}
	if qctx.Err() != nil && stop() {
		fmt.Fprintln(t.out) // after the ^C the terminal echoed
		fmt.Fprintln(t.errOut, "% Execution Aborted")
		return 0, false
	}
	t.out.endLine()
	if err := q.Err(); err != nil {
		return t.report(ctx, err)
	}
	fmt.Fprint(t.out, "false.\n\n")
	return 0, false
}

// lineWriter remembers whether the last byte written ended a line, so that
// an answer after output such as write(hi) starts on a line of its own, as
// in SWI-Prolog.
type lineWriter struct {
	w   io.Writer
	bol bool // at the beginning of a line
}

func (l *lineWriter) Write(p []byte) (int, error) {
	if len(p) > 0 {
		l.bol = p[len(p)-1] == '\n'
	}
	return l.w.Write(p)
}

// endLine ends the open line, if any.
func (l *lineWriter) endLine() {
	if !l.bol {
		fmt.Fprintln(l)
	}
}

// report prints a goal's error as SWI-Prolog does and reports done when
// the goal halted, the interpreter is unusable or the process was
// interrupted.
func (t *toplevel) report(ctx context.Context, err error) (int, bool) {
	var halt *prolog.HaltError
	switch {
	case errors.As(err, &halt):
		return halt.Code, true
	case ctx.Err() != nil:
		return 130, true
	case errors.Is(err, prolog.ErrAbandoned):
		fmt.Fprintf(t.errOut, "ERROR: %v\n", err)
		return 1, true
	}
	exitCode(err, t.errOut)
	return 0, false
}

type reply int

const (
	replyMore reply = iota
	replyStop
	replyAbort
	replyInterrupted
	replyWrite
	replyPrint
)

// reply reads what the user wants after an answer that left a choice
// point: a key press on a terminal, a line otherwise.
func (t *toplevel) reply(ctx context.Context) reply {
	if t.fd < 0 {
		return t.pipedReply(ctx)
	}
	for {
		switch c := t.key(); c {
		case ';', 'n', 'r', ' ', '\t':
			return replyMore
		case '\r', '\n', '.', 'c', 'a', 4, 0:
			return replyStop
		case 3: // Ctrl-C: raw mode delivers it as a key
			return replyAbort
		case 'w':
			return replyWrite
		case 'p':
			return replyPrint
		case 'h', '?':
			fmt.Fprint(t.out, "\n  Possible actions:\n"+
				"  ; (n,r,space,TAB): redo    | c (a,RET,.): stop\n"+
				"  w:                 write   | p:           print\n"+
				"  h (?):             help    | Ctrl-C:      abort\n"+
				"Action? ")
		default:
			fmt.Fprintf(t.out, "\nUnknown action: %c (h for help)\nAction? ", c)
		}
	}
}

// key reads one key press with the terminal in raw mode; 0 at the end of
// the input.
func (t *toplevel) key() byte {
	if state, err := term.MakeRaw(t.fd); err == nil {
		defer term.Restore(t.fd, state)
	}
	c, err := t.tty.ReadByte()
	if err != nil {
		return 0
	}
	return c
}

// pipedReply takes the next input line as the reply when it is one: ";"
// (or n, r) for the next answer, an empty line (or ., c, a) to stop, w or
// p to write the answer again, whole or abbreviated. Any other line stops
// too and stays to be read as the next goal.
func (t *toplevel) pipedReply(ctx context.Context) reply {
	if t.buf == "" {
		if err := t.readLine(ctx); errors.Is(err, errInterrupted) {
			return replyInterrupted
		}
	}
	line, rest, _ := strings.Cut(t.buf, "\n")
	switch strings.TrimSpace(line) {
	case ";", "n", "r":
		t.buf = rest
		return replyMore
	case "w":
		t.buf = rest
		return replyWrite
	case "p":
		t.buf = rest
		return replyPrint
	case "", ".", "c", "a":
		t.buf = rest
	}
	return replyStop
}

// expandValues makes each $Var of goal (outside quotes and comments) the
// variable Var bound to the value it had in the latest answer that bound
// it, as SWI-Prolog's top level does: the goal runs as
// "Var = (Value), (Goal)" and Var is shown after the goal's own variables
// (names lists them; hide lists the names the values give their
// variables). A $Var no answer bound is an error.
func expandValues(goal string, values map[string]prolog.SavedValue) (_ string, names, hide []string, err error) {
	if !strings.Contains(goal, "$") {
		return goal, nil, nil, nil
	}
	var b strings.Builder
	for i := 0; i < len(goal); i++ {
		c := goal[i]
		switch {
		case c == '\'' || c == '"' || c == '`':
			j := i + 1
			for j < len(goal) && goal[j] != c {
				if goal[j] == '\\' {
					j++
				}
				j++
			}
			j = min(j, len(goal)-1)
			b.WriteString(goal[i : j+1])
			i = j
		case c == '0' && i+1 < len(goal) && goal[i+1] == '\'' && (i == 0 || !isAlnumByte(goal[i-1])):
			j := min(i+2, len(goal)-1) // 0'c: the character is not a quote
			if goal[j] == '\\' {
				j = min(j+1, len(goal)-1)
			}
			b.WriteString(goal[i : j+1])
			i = j
		case c == '%':
			j := strings.IndexByte(goal[i:], '\n')
			if j < 0 {
				j = len(goal) - i
			}
			b.WriteString(goal[i : i+j])
			i += j - 1
		case c == '/' && i+1 < len(goal) && goal[i+1] == '*':
			j := strings.Index(goal[i+2:], "*/")
			end := len(goal)
			if j >= 0 {
				end = i + 2 + j + 2
			}
			b.WriteString(goal[i:end])
			i = end - 1
		case c == '$' && i+1 < len(goal) && (goal[i+1] == '_' || goal[i+1] >= 'A' && goal[i+1] <= 'Z'):
			j := i + 1
			for j < len(goal) && isAlnumByte(goal[j]) {
				j++
			}
			name := goal[i+1 : j]
			if _, ok := values[name]; !ok {
				return "", nil, nil, fmt.Errorf("$%s was not bound by a previous query", name)
			}
			if !slices.Contains(names, name) {
				names = append(names, name)
			}
			b.WriteString(name)
			i = j - 1
		default:
			b.WriteByte(c)
		}
	}
	if names == nil {
		return goal, nil, nil, nil
	}
	var pre strings.Builder
	for _, n := range names {
		fmt.Fprintf(&pre, "%s = (%s), ", n, values[n].Text)
		hide = append(hide, values[n].Vars...)
	}
	// The goal's own full stop (and a comment after it) ends the line.
	body := strings.TrimRight(b.String(), " \t\r\n")
	body = strings.TrimSuffix(body, ".")
	return pre.String() + "(" + body + "\n).", names, hide, nil
}

func isAlnumByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
