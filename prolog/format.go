package prolog

// Formatted output, SWI-Prolog style:
//
//	%!  format(+Format) is det.
//	%!  format(+Format, :Arguments) is det.
//	%!  format(+Output, +Format, :Arguments) is det.
//	%!  with_output_to(+Sink, :Goal) is semidet.
//	%!  tab(+N) is det.
//	%!  tab(+Stream, +N) is det.
//
// Format is an atom, a chars list or a codes list. Arguments is a list, or
// any other term standing for a single argument. Output is a stream or
// alias (user_error writes to user_output) or one of the sinks atom(A),
// string(S) (chars: there are no strings), codes(C), codes(C, Tail),
// chars(C) and chars(C, Tail); with_output_to/2 takes the same sinks.
//
// Directives: ~w ~p ~q ~k ~a ~d ~D ~s ~e ~f ~g ~n ~c ~r ~R ~i ~@ ~~, the
// column directives ~t ~| ~+, a numeric argument given as digits, as * (the
// next argument) or as `c (the character c), and the ignored colon
// modifier (~:d). Column positions count from the start of the format
// call's output or its last newline (SWI uses the stream's line position).

import (
	"context"
	"io"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ichiban/prolog/engine"
)

var (
	atomAtom    = engine.NewAtom("atom")
	atomString  = engine.NewAtom("string")
	atomCodes   = engine.NewAtom("codes")
	atomChars   = engine.NewAtom("chars")
	atomUserErr = engine.NewAtom("user_error")
	atomUserOut = engine.NewAtom("user_output")

	optsWrite     = engine.List(engine.NewAtom("quoted").Apply(engine.NewAtom("false")), engine.NewAtom("numbervars").Apply(atomTrue))
	optsWriteQ    = engine.List(engine.NewAtom("quoted").Apply(atomTrue), engine.NewAtom("numbervars").Apply(atomTrue))
	optsCanonical = engine.List(engine.NewAtom("quoted").Apply(atomTrue), engine.NewAtom("ignore_ops").Apply(atomTrue))
)

// maxFormatCount bounds numeric arguments that repeat output.
const maxFormatCount = 1 << 20

// formatError is SWI's error(format(Message), _).
func formatError(msg string) error {
	return &ISOError{Formal: engine.NewAtom("format").Apply(engine.NewAtom(msg))}
}

// formatArgError is SWI's error(format_argument_type(Directive, Arg), _).
func formatArgError(d rune, arg engine.Term) error {
	return &ISOError{Formal: engine.NewAtom("format_argument_type").Apply(engine.NewAtom(string(d)), arg)}
}

func format1(c *Call, f engine.Term) (bool, error) {
	return formatTo(c, nil, f, atomNil)
}

func format2(c *Call, f, args engine.Term) (bool, error) {
	return formatTo(c, nil, f, args)
}

func format3(c *Call, out, f, args engine.Term) (bool, error) {
	return formatTo(c, out, f, args)
}

// formatTo formats to out (nil: the current output).
func formatTo(c *Call, out, f, args engine.Term) (bool, error) {
	var (
		sk     sink
		isSink bool
	)
	if out != nil {
		var err error
		if sk, isSink, err = sinkOf(c, out); err != nil {
			return false, err
		}
	}
	spec, err := formatText(c, f)
	if err != nil {
		return false, err
	}
	fs := &formatter{c: c, args: formatArgs(c, args)}
	ok, err := fs.run(spec)
	if err != nil || !ok {
		return false, err
	}
	if isSink {
		return sk.deliver(c, string(fs.out)), nil
	}
	return writeRaw(c, out, string(fs.out))
}

// formatText reads the format: text, but not a number (SWI).
func formatText(c *Call, f engine.Term) (string, error) {
	switch v := c.Resolve(f).(type) {
	case engine.Integer, *engine.BigInt, engine.Float:
		return "", TypeError("text", v)
	case engine.Compound:
		if s, ok := compactText(v); ok {
			return s, nil
		}
	}
	return c.Text(f)
}

// compactText returns the text of ichiban's string-backed chars and codes
// lists without walking them.
func compactText(t engine.Term) (string, bool) {
	if l, ok := t.(interface {
		engine.Compound
		String() string
	}); ok && l.Functor() == atomDot && l.Arity() == 2 {
		return l.String(), true
	}
	return "", false
}

// formatArgs reads Arguments: a proper list, or a single argument.
func formatArgs(c *Call, args engine.Term) []engine.Term {
	switch v := c.Resolve(args).(type) {
	case engine.Atom:
		if v == atomNil {
			return nil
		}
	case engine.Compound:
		if isList(v, c.Env) {
			if elems, err := listOf(v, c.Env); err == nil {
				return elems
			}
		}
	}
	return []engine.Term{args}
}

// writeRaw writes s to the stream or alias out (nil: current output).
func writeRaw(c *Call, out engine.Term, s string) (bool, error) {
	if out == nil {
		st, err := currentOutput(c)
		if err != nil {
			return false, err
		}
		out = st
	} else if a, ok := c.Resolve(out).(engine.Atom); ok && a == atomUserErr {
		out = atomUserOut // ichiban has no user_error
	}
	return engine.WriteTerm(c.VM, out, rawText(s), atomNil, engine.Success, c.Env).Force(c.Ctx)
}

// rawText is a term that writes its text verbatim; it carries format's
// output through engine.WriteTerm, which resolves streams and aliases.
type rawText string

func (r rawText) WriteTerm(w io.Writer, _ *engine.WriteOptions, _ *engine.Env) error {
	_, err := w.Write([]byte(r))
	return err
}

func (r rawText) Compare(t engine.Term, env *engine.Env) int {
	return engine.CompareAtomic[rawText](r, t, func(a, b rawText) int { return strings.Compare(string(a), string(b)) }, env)
}

// currentOutput returns the current output stream.
func currentOutput(c *Call) (*engine.Stream, error) {
	v := engine.NewVariable()
	var s *engine.Stream
	_, err := engine.CurrentOutput(c.VM, v, func(env *engine.Env) *engine.Promise {
		s, _ = env.Resolve(v).(*engine.Stream)
		return engine.Bool(true)
	}, c.Env).Force(context.Background())
	if err != nil {
		return nil, err
	}
	if s == nil {
		return nil, ExistenceError("stream", atomUserOut)
	}
	return s, nil
}

// sink is a capturing output: atom(A), string(S), codes(C), codes(C, T),
// chars(C) or chars(C, T).
type sink struct {
	kind engine.Atom
	text engine.Term
	tail engine.Term // nil for the one-argument forms
}

// sinkOf reads a capture sink. It returns false (and no error) for
// anything else that is not a compound, which format/3 treats as a stream.
func sinkOf(c *Call, t engine.Term) (sink, bool, error) {
	switch v := c.Resolve(t).(type) {
	case engine.Variable:
		return sink{}, false, InstantiationError()
	case engine.Compound:
		f, n := v.Functor(), v.Arity()
		switch {
		case n == 1 && (f == atomAtom || f == atomString || f == atomCodes || f == atomChars):
			return sink{kind: f, text: v.Arg(0)}, true, nil
		case n == 2 && (f == atomCodes || f == atomChars):
			return sink{kind: f, text: v.Arg(0), tail: v.Arg(1)}, true, nil
		}
		return sink{}, false, TypeError("output", v)
	}
	return sink{}, false, nil
}

// deliver unifies the sink with the captured text s.
func (sk sink) deliver(c *Call, s string) bool {
	var t engine.Term
	switch sk.kind {
	case atomAtom:
		t = engine.NewAtom(s)
	case atomString:
		t = Chars(s)
	case atomCodes:
		if sk.tail == nil {
			if s == "" {
				t = atomNil
			} else {
				t = engine.CodeList(s)
			}
		} else {
			ts := make([]engine.Term, 0, len(s))
			for _, r := range s {
				ts = append(ts, engine.Integer(r))
			}
			t = engine.PartialList(sk.tail, ts...)
		}
	case atomChars:
		if sk.tail == nil {
			t = Chars(s)
		} else {
			ts := make([]engine.Term, 0, len(s))
			for _, r := range s {
				ts = append(ts, engine.NewAtom(string(r)))
			}
			t = engine.PartialList(sk.tail, ts...)
		}
	}
	return c.Unify(sk.text, t)
}

// withOutputTo runs Goal once with the current output captured, and
// unifies the sink with the output when Goal succeeds. The previous output
// is restored however Goal ends.
func withOutputTo(c *Call, out, goal engine.Term) (bool, error) {
	sk, ok, err := sinkOf(c, out)
	if err != nil {
		return false, err
	}
	if !ok {
		return false, TypeError("output", out)
	}
	s, ok, err := captureOutput(c, goal)
	if err != nil || !ok {
		return false, err
	}
	return sk.deliver(c, s), nil
}

// captureOutput runs goal once with the current output redirected to a
// buffer and returns what it wrote.
func captureOutput(c *Call, goal engine.Term) (string, bool, error) {
	prev, err := currentOutput(c)
	if err != nil {
		return "", false, err
	}
	var sb strings.Builder
	s := engine.NewOutputTextStream(&sb)
	if _, err := engine.SetOutput(c.VM, s, engine.Success, c.Env).Force(context.Background()); err != nil {
		return "", false, err
	}
	defer func() { _, _ = engine.SetOutput(c.VM, prev, engine.Success, c.Env).Force(context.Background()) }()
	ok, err := solveOnce(c, goal)
	return sb.String(), ok, err
}

// solveOnce runs goal for its first solution, keeping its bindings.
func solveOnce(c *Call, goal engine.Term) (bool, error) {
	var got *engine.Env
	ok, err := engine.Call(c.VM, goal, func(env *engine.Env) *engine.Promise {
		got = env
		return engine.Bool(true)
	}, c.Env).Force(c.Ctx)
	if err != nil || !ok || got == nil {
		return false, err
	}
	c.Env = got
	return true, nil
}

// tab1 and tab2 write N spaces; N is evaluated.
func tab1(c *Call, n engine.Term) (bool, error) { return tabTo(c, nil, n) }

func tab2(c *Call, s, n engine.Term) (bool, error) { return tabTo(c, s, n) }

func tabTo(c *Call, s, n engine.Term) (bool, error) {
	v, err := evalArith(c, n)
	if err != nil {
		return false, err
	}
	i, ok := v.(engine.Integer)
	if !ok {
		return false, TypeError("integer", v)
	}
	if i > maxFormatCount {
		return false, ResourceError("memory")
	}
	return writeRaw(c, s, strings.Repeat(" ", int(max(0, i))))
}

// evalArith evaluates t as an arithmetic expression (is/2).
func evalArith(c *Call, t engine.Term) (engine.Term, error) {
	switch v := c.Resolve(t).(type) {
	case engine.Integer, *engine.BigInt, engine.Float:
		return v, nil
	case engine.Variable:
		return nil, InstantiationError()
	}
	r := engine.NewVariable()
	var out engine.Term
	_, err := engine.Is(c.VM, r, t, func(env *engine.Env) *engine.Promise {
		out = env.Resolve(r)
		return engine.Bool(true)
	}, c.Env).Force(c.Ctx)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// formatter holds the state of one format call. Output is buffered, and the
// text since the last column stop (the segment) is kept open so that fill
// points can pad it when the next column stop is reached.
type formatter struct {
	c        *Call
	args     []engine.Term
	out      []byte
	segStart int         // where the pending segment starts in out
	fills    []fillPoint // fill points (~t) of the segment
	col      int         // column: runes since the last newline or stop
	lastStop int         // column of the last column stop
	ws       *engine.Stream
}

type fillPoint struct {
	off int  // byte offset in out
	ch  rune // fill character
}

// Write lets terms be written straight into the buffer.
func (f *formatter) Write(p []byte) (int, error) {
	f.out = append(f.out, p...)
	return len(p), nil
}

func (f *formatter) emit(s string) {
	f.out = append(f.out, s...)
	f.advance(s)
}

func (f *formatter) emitRune(r rune, n int) {
	for range n {
		f.out = utf8.AppendRune(f.out, r)
		if r == '\n' {
			f.col = 0
		} else {
			f.col++
		}
	}
}

// advance moves the column over s.
func (f *formatter) advance(s string) {
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		f.col = utf8.RuneCountInString(s[i+1:])
		return
	}
	f.col += utf8.RuneCountInString(s)
}

func (f *formatter) next() (engine.Term, error) {
	if len(f.args) == 0 {
		return nil, formatError("not enough arguments")
	}
	a := f.args[0]
	f.args = f.args[1:]
	return a, nil
}

// writeTerm writes t with write_term options opts.
func (f *formatter) writeTerm(t, opts engine.Term) error {
	if f.ws == nil {
		f.ws = engine.NewOutputTextStream(f)
	}
	start := len(f.out)
	if quoted, canonical := writeMode(opts, f.c.Env); !canonical {
		t = f.c.In.portray(t, f.c.Env, quoted)
	}
	_, err := engine.WriteTerm(f.c.VM, f.ws, t, opts, engine.Success, f.c.Env).Force(f.c.Ctx)
	f.advance(string(f.out[start:]))
	return err
}

// columnStop pads the segment to target, at its fill points (or at its
// end when it has none). As in SWI, the column becomes target even when
// the segment overflows it.
func (f *formatter) columnStop(target int) {
	if pad := target - f.col; pad > 0 {
		fills := f.fills
		if len(fills) == 0 {
			fills = []fillPoint{{off: len(f.out), ch: ' '}}
		}
		pads := distribute(len(fills), pad)
		seg := append([]byte(nil), f.out[f.segStart:]...)
		f.out = f.out[:f.segStart]
		prev := 0
		for i, fp := range fills {
			rel := fp.off - f.segStart
			f.out = append(f.out, seg[prev:rel]...)
			for range pads[i] {
				f.out = utf8.AppendRune(f.out, fp.ch)
			}
			prev = rel
		}
		f.out = append(f.out, seg[prev:]...)
	}
	f.col, f.lastStop = target, target
	f.segStart, f.fills = len(f.out), f.fills[:0]
}

// distribute splits pad over n fill points as SWI does: evenly, with the
// remainder handed out from the middle point onwards.
func distribute(n, pad int) []int {
	pads := make([]int, n)
	for i := range pads {
		pads[i] = pad / n
	}
	for j := range pad % n {
		pads[(n/2+j)%n]++
	}
	return pads
}

// run interprets the format text.
func (f *formatter) run(spec string) (bool, error) {
	for i := 0; i < len(spec); {
		j := strings.IndexByte(spec[i:], '~')
		if j < 0 {
			f.emit(spec[i:])
			break
		}
		if j > 0 {
			f.emit(spec[i : i+j])
		}
		i += j + 1
		// Numeric argument.
		arg, hasArg := 0, false
		switch {
		case i < len(spec) && spec[i] == '*':
			a, err := f.next()
			if err != nil {
				return false, err
			}
			n, ok := f.c.Resolve(a).(engine.Integer)
			if !ok || n < 0 {
				return false, formatError("no or negative integer for `*' argument")
			}
			arg, hasArg = int(min(n, math.MaxInt32)), true
			i++
		case i < len(spec) && spec[i] == '`':
			r, n := utf8.DecodeRuneInString(spec[i+1:])
			if n == 0 {
				return false, formatError("truncated format directive")
			}
			arg, hasArg = int(r), true
			i += 1 + n
		default:
			k := i
			for k < len(spec) && spec[k] >= '0' && spec[k] <= '9' {
				k++
			}
			if k > i {
				n, err := strconv.Atoi(spec[i:k])
				if err != nil || n > math.MaxInt32 {
					n = math.MaxInt32
				}
				arg, hasArg = n, true
				i = k
			}
		}
		if i < len(spec) && spec[i] == ':' {
			i++
		}
		if i >= len(spec) {
			return false, formatError("truncated format directive")
		}
		d, n := utf8.DecodeRuneInString(spec[i:])
		i += n
		ok, err := f.directive(d, arg, hasArg)
		if err != nil || !ok {
			return false, err
		}
	}
	if len(f.args) > 0 {
		return false, formatError("too many arguments")
	}
	return true, nil
}

// directive runs one directive d with its numeric argument.
func (f *formatter) directive(d rune, arg int, hasArg bool) (bool, error) {
	c := f.c
	orDefault := func(def int) int {
		if hasArg {
			return arg
		}
		return def
	}
	// Counts, columns and precisions are bounded: the Go loops that honour
	// them do not see the query's cancellation.
	if hasArg && arg > maxFormatCount && strings.ContainsRune("ncdDefg|+", d) {
		return false, ResourceError("memory")
	}
	switch d {
	case '~':
		f.emit("~")
	case 'n':
		f.emitRune('\n', orDefault(1))
	case 'w', 'p', 'q', 'k':
		a, err := f.next()
		if err != nil {
			return false, err
		}
		if d == 'w' { // fast paths: write/1 of an atom or an integer
			switch v := c.Resolve(a).(type) {
			case engine.Atom:
				f.emit(v.String())
				return true, nil
			case engine.Integer:
				f.emit(strconv.FormatInt(int64(v), 10))
				return true, nil
			}
		}
		opts := optsWrite
		switch d {
		case 'p', 'q':
			opts = optsWriteQ
		case 'k':
			opts = optsCanonical
		}
		if err := f.writeTerm(a, opts); err != nil {
			return false, err
		}
	case 'a':
		a, err := f.next()
		if err != nil {
			return false, err
		}
		s, err := f.atomicText(d, a)
		if err != nil {
			return false, err
		}
		f.emit(s)
	case 's':
		a, err := f.next()
		if err != nil {
			return false, err
		}
		s, err := f.stringText(a)
		if err != nil {
			return false, err
		}
		f.emit(s)
	case 'c':
		a, err := f.next()
		if err != nil {
			return false, err
		}
		code, ok := c.Resolve(a).(engine.Integer)
		if !ok || code < 0 || code > utf8.MaxRune {
			return false, formatArgError(d, a)
		}
		f.emitRune(rune(code), orDefault(1))
	case 'd', 'D':
		a, err := f.next()
		if err != nil {
			return false, err
		}
		n, err := f.integer(d, a)
		if err != nil {
			return false, err
		}
		f.emit(groupBig(n, orDefault(0), d == 'D'))
	case 'r', 'R':
		a, err := f.next()
		if err != nil {
			return false, err
		}
		n, err := f.integer(d, a)
		if err != nil {
			return false, err
		}
		radix := orDefault(8)
		if radix < 2 || radix > 36 {
			return false, DomainError("radix", engine.Integer(radix))
		}
		s := n.Text(radix)
		if d == 'R' {
			s = strings.ToUpper(s)
		}
		f.emit(s)
	case 'e', 'f', 'g':
		a, err := f.next()
		if err != nil {
			return false, err
		}
		v, err := evalArith(c, a)
		if err != nil {
			return false, err
		}
		prec := orDefault(6)
		switch v := v.(type) {
		case engine.Integer:
			if d == 'f' {
				f.emit(fixedInt(big.NewInt(int64(v)), prec))
			} else {
				f.emit(formatC(float64(v), byte(d), prec))
			}
		case *engine.BigInt:
			if d == 'f' {
				f.emit(fixedInt(v.Big(), prec))
			} else {
				x, _ := new(big.Float).SetInt(v.Big()).Float64()
				f.emit(formatC(x, byte(d), prec))
			}
		case engine.Float:
			f.emit(formatC(float64(v), byte(d), prec))
		default:
			return false, formatArgError(d, a)
		}
	case 'i':
		if _, err := f.next(); err != nil {
			return false, err
		}
	case '@':
		a, err := f.next()
		if err != nil {
			return false, err
		}
		s, ok, err := captureOutput(c, a)
		if err != nil || !ok {
			return false, err
		}
		f.emit(s)
	case 't':
		f.fills = append(f.fills, fillPoint{off: len(f.out), ch: rune(orDefault(' '))})
	case '|':
		f.columnStop(orDefault(f.col))
	case '+':
		if f.lastStop+orDefault(8) > maxFormatCount {
			return false, ResourceError("memory")
		}
		f.columnStop(f.lastStop + orDefault(8))
	default:
		return false, ExistenceError("format_character", engine.NewAtom(string(d)))
	}
	return true, nil
}

// atomicText is ~a: atomic, or text (chars and codes lists stand in for
// SWI's strings).
func (f *formatter) atomicText(d rune, a engine.Term) (string, error) {
	switch v := f.c.Resolve(a).(type) {
	case engine.Variable:
		return "", formatArgError(d, a)
	case engine.Compound:
		if s, ok := compactText(v); ok {
			return s, nil
		}
		if !isList(v, f.c.Env) {
			return "", formatArgError(d, a)
		}
	}
	s, err := f.c.Text(a)
	if err != nil {
		return "", formatArgError(d, a)
	}
	return s, nil
}

// stringText is ~s: a codes or chars list, or an atom.
func (f *formatter) stringText(a engine.Term) (string, error) {
	switch v := f.c.Resolve(a).(type) {
	case engine.Atom:
		if v == atomNil {
			return "", nil
		}
		return v.String(), nil
	case engine.Compound:
		if s, ok := compactText(v); ok {
			return s, nil
		}
		if isList(v, f.c.Env) {
			if s, err := f.c.Text(a); err == nil {
				return s, nil
			}
		}
	}
	return "", formatArgError('s', a)
}

// integer evaluates a for ~d and ~r: an integer, or an expression whose
// value is one.
func (f *formatter) integer(d rune, a engine.Term) (*big.Int, error) {
	switch v := f.c.Resolve(a).(type) {
	case engine.Integer:
		return big.NewInt(int64(v)), nil
	case *engine.BigInt:
		return v.Big(), nil
	case engine.Float:
		return nil, formatArgError(d, a)
	}
	v, err := evalArith(f.c, a)
	if err != nil {
		return nil, err
	}
	switch n := v.(type) {
	case engine.Integer:
		return big.NewInt(int64(n)), nil
	case *engine.BigInt:
		return n.Big(), nil
	}
	return nil, formatArgError(d, a)
}

// groupDigits renders n for ~Nd and ~ND: a decimal point N digits from the
// right, and for ~D a comma between groups of three integer digits.
func groupDigits(n int64, frac int, thousands bool) string {
	return groupBig(big.NewInt(n), frac, thousands)
}

// groupBig is groupDigits for an integer of any size.
func groupBig(n *big.Int, frac int, thousands bool) string {
	neg := n.Sign() < 0
	digits := new(big.Int).Abs(n).String()
	var intPart, fracPart string
	if frac > 0 {
		if len(digits) <= frac {
			digits = strings.Repeat("0", frac-len(digits)+1) + digits
		}
		intPart, fracPart = digits[:len(digits)-frac], digits[len(digits)-frac:]
	} else {
		intPart = digits
	}
	if thousands && len(intPart) > 3 {
		var sb strings.Builder
		lead := len(intPart) % 3
		if lead > 0 {
			sb.WriteString(intPart[:lead])
		}
		for i := lead; i < len(intPart); i += 3 {
			if sb.Len() > 0 {
				sb.WriteByte(',')
			}
			sb.WriteString(intPart[i : i+3])
		}
		intPart = sb.String()
	}
	s := intPart
	if fracPart != "" {
		s += "." + fracPart
	}
	if neg {
		s = "-" + s
	}
	return s
}

// fixedInt renders an integer for ~Nf exactly, as SWI does for integers.
func fixedInt(n *big.Int, prec int) string {
	s := n.String()
	if prec > 0 {
		s += "." + strings.Repeat("0", prec)
	}
	return s
}

// formatC renders f as C's printf %.<prec>e, %.<prec>f or %.<prec>g.
func formatC(f float64, verb byte, prec int) string {
	if verb == 'g' {
		if prec == 0 {
			prec = 1
		}
		s := strconv.FormatFloat(f, 'g', prec, 64)
		return s
	}
	return strconv.FormatFloat(f, verb, prec, 64)
}
