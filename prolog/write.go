package prolog

// Text in written terms (see "Text" in doc.go): under double_quotes=chars
// "hello" is the list [h,e,l,l,o], which ichiban's writer prints as such.
// The host writes every text — a non-empty proper list of one-character
// atoms — as text: "hello" in quoted output (it reads back as the same
// list), the bare characters in unquoted output, and as a list in
// canonical output. It does so by handing ichiban's writer a copy of the
// term in which each text is a textTerm, an atomic term that writes
// itself.
//
//	%!  write_term(+Stream, @Term, +Options) is det.

import (
	"context"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ichiban/prolog/engine"
)

var (
	atomEllipsis     = engine.NewAtom("...")
	atomQuoted       = engine.NewAtom("quoted")
	atomIgnoreOps    = engine.NewAtom("ignore_ops")
	atomDoubleQuotes = engine.NewAtom("double_quotes")
)

// registerWrite installs write_term/3 (which write/1,2, print/1,2,
// writeq/1,2 and write_canonical/1,2 call) and set_prolog_flag/2, which
// tracks double_quotes: quoted output writes text as "..." only while
// double quotes read as chars, so that it reads back as the same term.
func (in *Interpreter) registerWrite() {
	vm := &in.ip.VM
	in.dqChars = true
	vm.Register3(engine.NewAtom("write_term"), func(vm *engine.VM, s, t, options engine.Term, k engine.Cont, env *engine.Env) *engine.Promise {
		quoted, canonical := writeMode(options, env)
		if !canonical {
			t = in.portray(t, env, quoted)
		}
		return engine.WriteTerm(vm, s, t, options, k, env)
	})
	vm.Register2(engine.NewAtom("set_prolog_flag"), func(vm *engine.VM, flag, value engine.Term, k engine.Cont, env *engine.Env) *engine.Promise {
		return engine.SetPrologFlag(vm, flag, value, func(env *engine.Env) *engine.Promise {
			if env.Resolve(flag) == atomDoubleQuotes {
				in.dqChars = env.Resolve(value) == atomChars
			}
			return k(env)
		}, env)
	})
}

// writeMode reads quoted(B) and ignore_ops(B) from write options, leaving
// their validation to engine.WriteTerm.
func writeMode(options engine.Term, env *engine.Env) (quoted, canonical bool) {
	it := engine.ListIterator{List: options, Env: env}
	for it.Next() {
		o, ok := env.Resolve(it.Current()).(engine.Compound)
		if !ok || o.Arity() != 1 {
			continue
		}
		switch o.Functor() {
		case atomQuoted:
			quoted = env.Resolve(o.Arg(0)) == atomTrue
		case atomIgnoreOps:
			canonical = env.Resolve(o.Arg(0)) == atomTrue
		}
	}
	return quoted, canonical
}

// portray returns t with its texts written as text: quoted, as "..." (only
// while double_quotes=chars, so the output reads back), or bare.
func (in *Interpreter) portray(t engine.Term, env *engine.Env, quoted bool) engine.Term {
	return in.portrayTo(t, env, quoted, 0)
}

// portrayTo is portray that, when limit > 0, also writes each subterm
// limit deep as ... (ichiban's max_depth does not count the nesting of
// one-element lists, [[[...]]], and its writer is quadratic in depth).
func (in *Interpreter) portrayTo(t engine.Term, env *engine.Env, quoted bool, limit int) engine.Term {
	texts := !quoted || in.dqChars
	if !texts && limit == 0 {
		return t
	}
	p := portrayer{env: env, quoted: quoted, texts: texts, limit: limit, w: walk{env: env}}
	out, _ := p.term(t, 0)
	return out
}

// maxPortrayDepth bounds the nesting portray walks (a cyclic term would
// never end); deeper subterms are written as they are.
const maxPortrayDepth = 10000

type portrayer struct {
	env    *engine.Env
	quoted bool
	texts  bool // write texts as text
	limit  int  // when > 0, the depth written as ...
	w      walk // the compounds on the current path, past the cheap depth
}

// term returns t with its texts replaced, and whether anything changed
// (subterms without text are shared, not copied). A compound met again
// inside itself (a cyclic term) is left as it is: ichiban's writer ends
// cycles.
func (p *portrayer) term(t engine.Term, depth int) (engine.Term, bool) {
	if t == nil { // a Go-built term with a hole: written, not dereferenced
		return atomMissing, true
	}
	c, ok := p.env.Resolve(t).(engine.Compound)
	if !ok || depth > maxPortrayDepth {
		return t, false
	}
	if p.limit > 0 && depth >= p.limit {
		return atomEllipsis, true
	}
	if k := p.w.key(depth, c); k != nil {
		if p.w.state[k] == onPath {
			return c, false
		}
		p.w.state[k] = onPath
		defer delete(p.w.state, k)
	}
	if c.Functor() == atomDot && c.Arity() == 2 {
		if s, ok := textOf(c, p.env); ok && p.texts {
			return textTerm{s: s, quoted: p.quoted}, true
		}
		return p.list(c, depth)
	}
	if c.Functor() == atomCurly && c.Arity() == 1 {
		if seq, ok := p.commaSeq(c.Arg(0), depth+1); ok {
			return atomCurly.Apply(seq), true
		}
	}
	var args []engine.Term
	for i := range c.Arity() {
		a, changed := p.term(c.Arg(i), depth+1)
		if changed && args == nil {
			args = make([]engine.Term, c.Arity())
			for j := range i {
				args[j] = c.Arg(j)
			}
		}
		if args != nil {
			args[i] = a
		}
	}
	if args == nil {
		return c, false
	}
	return c.Functor().Apply(args...), true
}

// list portrays the elements (and the tail) of a list that is not text,
// walking its spine iteratively.
func (p *portrayer) list(c engine.Compound, depth int) (engine.Term, bool) {
	var elems []engine.Term
	changed := false
	it := engine.ListIterator{List: c, Env: p.env, AllowPartial: true}
	for it.Next() {
		e, ch := p.term(it.Current(), depth+1)
		elems = append(elems, e)
		changed = changed || ch
	}
	if it.Err() != nil { // improper (or cyclic)
		tail := it.Suffix()
		if cell, ok := p.env.Resolve(tail).(engine.Compound); ok && cell.Functor() == atomDot && cell.Arity() == 2 {
			// A cyclic list: the iterator stopped where it came round,
			// after at least the cells before the cycle and one period.
			// Portraying the tail again would walk the cycle once more
			// at each level, quadratic in the period; the portrayed
			// list is the elements seen, the cycle closed as a ring.
			if !changed {
				return c, false
			}
			mu, lambda := cycleOf(c, p.env)
			if mu+lambda > len(elems) {
				return engine.PartialList(tail, elems...), true
			}
			r := &ring{elems: elems[mu : mu+lambda]}
			return engine.PartialList(ringCell{r: r}, elems[:mu]...), true
		}
		tail, ch := p.term(tail, depth+1)
		if !changed && !ch {
			return c, false
		}
		return engine.PartialList(tail, elems...), true
	}
	if !changed {
		return c, false
	}
	return engine.PartialList(it.Suffix(), elems...), true
}

// cycleOf returns where the cyclic list l comes round: mu cells before
// the cycle, lambda cells in it (Brent's algorithm on the cells' identity).
func cycleOf(l engine.Term, env *engine.Env) (mu, lambda int) {
	next := func(t engine.Term) engine.Term { return env.Resolve(t.(engine.Compound).Arg(1)) }
	key := func(t engine.Term) any { return nodeKey(t.(engine.Compound)) }
	start := env.Resolve(l)
	power, lambda := 1, 1
	tortoise, hare := start, next(start)
	for key(tortoise) != key(hare) {
		if power == lambda {
			tortoise, power, lambda = hare, power*2, 0
		}
		hare = next(hare)
		lambda++
	}
	tortoise, hare = start, start
	for range lambda {
		hare = next(hare)
	}
	for key(tortoise) != key(hare) {
		tortoise, hare = next(tortoise), next(hare)
		mu++
	}
	return mu, lambda
}

// ring is the period of a portrayed cyclic list; ringCell is its cell i,
// a list cell whose tail after the last element is the first again. A
// ringCell is a comparable value, so ichiban's writer, which identifies
// cells by value, sees the cycle and ends it.
type ring struct{ elems []engine.Term }

type ringCell struct {
	r *ring
	i int
}

func (c ringCell) Functor() engine.Atom { return atomDot }
func (c ringCell) Arity() int           { return 2 }

func (c ringCell) Arg(n int) engine.Term {
	if n == 0 {
		return c.r.elems[c.i]
	}
	return ringCell{r: c.r, i: (c.i + 1) % len(c.r.elems)}
}

func (c ringCell) WriteTerm(w io.Writer, opts *engine.WriteOptions, env *engine.Env) error {
	return engine.WriteCompound(w, c, opts, env)
}

func (c ringCell) Compare(t engine.Term, env *engine.Env) int {
	return engine.CompareCompound(c, t, env)
}

// textOf returns the characters of t when t is text: a proper list of
// one-character atoms that ends in a Go-backed chars list (engine.CharList:
// what "..." literals, atom_chars/2, the string and format predicates and
// the host produce, and what append/3 onto them keeps). Lists built cell by
// cell ([a,b], msort/2, findall/3) are lists, even of characters.
//
// A cyclic list is not text: past cheapSteps cells, Brent's check (the
// cell met at the last power of two comes round again) ends the walk.
func textOf(t engine.Term, env *engine.Env) (string, bool) {
	var sb strings.Builder
	var mark any
	for n := 0; ; n++ {
		c, ok := env.Resolve(t).(engine.Compound)
		if !ok || c.Functor() != atomDot || c.Arity() != 2 {
			return "", false
		}
		if n >= cheapSteps {
			k := nodeKey(c)
			if k == mark {
				return "", false
			}
			if n&(n-1) == 0 {
				mark = k
			}
		}
		if s, ok := compactText(c); ok {
			if _, chars := c.Arg(0).(engine.Atom); !chars { // a codes list
				return "", false
			}
			sb.WriteString(s)
			return sb.String(), true
		}
		a, ok := env.Resolve(c.Arg(0)).(engine.Atom)
		if !ok {
			return "", false
		}
		s := a.String()
		if _, n := utf8.DecodeRuneInString(s); n == 0 || n != len(s) {
			return "", false
		}
		sb.WriteString(s)
		t = c.Arg(1)
	}
}

var (
	atomCurly  = engine.NewAtom("{}")
	atomComma2 = engine.NewAtom(",")
)

// commaSeq returns the conjunction t as a commaTerm (ok=false when t is
// not one), so that {a,b} writes as {a,b} as in SWI-Prolog, not as
// ichiban's {(a,b)}.
func (p *portrayer) commaSeq(t engine.Term, depth int) (engine.Term, bool) {
	var elems []engine.Term
	for {
		c, ok := p.env.Resolve(t).(engine.Compound)
		if !ok || c.Functor() != atomComma2 || c.Arity() != 2 || len(elems) > maxPortrayDepth {
			break
		}
		e, _ := p.term(c.Arg(0), depth)
		elems = append(elems, e)
		t = c.Arg(1)
	}
	if elems == nil {
		return nil, false
	}
	last, _ := p.term(t, depth)
	return commaTerm(append(elems, last)), true
}

// commaTerm is the goals of a conjunction, written A,B,… each as an
// argument (operators above 999 bracketed).
type commaTerm []engine.Term

func (s commaTerm) WriteTerm(w io.Writer, opts *engine.WriteOptions, env *engine.Env) error {
	for i, e := range s {
		if i > 0 {
			if _, err := io.WriteString(w, ","); err != nil {
				return err
			}
		}
		// NB: ichiban has no priority option; f(E) writes E at 999.
		var sb strings.Builder
		if err := engine.NewAtom("f").Apply(e).WriteTerm(&sb, opts, env); err != nil {
			return err
		}
		if _, err := io.WriteString(w, sb.String()[2:sb.Len()-1]); err != nil {
			return err
		}
	}
	return nil
}

func (s commaTerm) Compare(u engine.Term, env *engine.Env) int {
	return engine.CompareAtomic(s, u, func(a, b commaTerm) int { return len(a) - len(b) }, env)
}

// textTerm is a text in a term handed to ichiban's writer.
type textTerm struct {
	s      string
	quoted bool
}

func (t textTerm) WriteTerm(w io.Writer, _ *engine.WriteOptions, _ *engine.Env) error {
	s := t.s
	if t.quoted {
		s = quoteText(s)
	}
	_, err := io.WriteString(w, s)
	return err
}

func (t textTerm) Compare(u engine.Term, env *engine.Env) int {
	return engine.CompareAtomic(t, u, func(a, b textTerm) int { return strings.Compare(a.s, b.s) }, env)
}

// quoteText writes s as a double-quoted string that reads back as s: the
// usual escapes, and \xHEX\ for other control and invisible characters.
func quoteText(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < ' ' || r == 0x7f || r >= utf8.RuneSelf && !unicode.IsGraphic(r) {
				fmt.Fprintf(&b, `\x%X\`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// writeText renders t with write_term options opts (a list), text
// portrayed as write_term/3 does.
func (in *Interpreter) writeText(t engine.Term, env *engine.Env, opts engine.Term) string {
	var sb strings.Builder
	in.writeTo(&sb, t, env, opts, 0)
	return sb.String()
}

func (in *Interpreter) writeTo(w io.Writer, t engine.Term, env *engine.Env, opts engine.Term, limit int) {
	quoted, canonical := writeMode(opts, env)
	if !canonical {
		t = in.portrayTo(t, env, quoted, limit)
	}
	s := engine.NewOutputTextStream(w)
	_, _ = engine.WriteTerm(&in.ip.VM, s, t, opts, engine.Success, env).Force(context.Background())
}

// The caps of Describe: an error shows its culprit to describeDepth
// (SWI-Prolog's max_depth: deeper subterms and list elements past it are
// written ...) and describeBytes, so that describing a huge, deep or
// cyclic argument costs little (ichiban's writer copies a set of the
// compounds above it at every level, quadratic in the depth it writes).
const (
	describeDepth = 20
	describeBytes = 2000
)

var optsDescribe = engine.List(engine.NewAtom("quoted").Apply(atomTrue), engine.NewAtom("numbervars").Apply(atomTrue),
	engine.NewAtom("max_depth").Apply(engine.Integer(describeDepth)))

// Describe renders t as writeq/1 would within the caps above, ending in
// "..." when cut: the text of a culprit in an error message.
func (in *Interpreter) Describe(t engine.Term, env *engine.Env) string {
	w := capWriter{max: describeBytes}
	in.writeTo(&w, t, env, optsDescribe, describeDepth)
	if w.cut {
		return w.sb.String() + "..."
	}
	return w.sb.String()
}

// capWriter keeps the first max bytes written to it.
type capWriter struct {
	sb  strings.Builder
	max int
	cut bool
}

func (w *capWriter) Write(p []byte) (int, error) {
	if room := w.max - w.sb.Len(); len(p) > room {
		w.sb.Write(p[:max(room, 0)])
		w.cut = true
		return len(p), nil
	}
	return w.sb.Write(p)
}
