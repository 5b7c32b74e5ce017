package prolog

// Documentation at the top level:
//
//	%!  help(+Spec) is det.
//	%!  apropos(+Text) is det.
//
// help/1 prints the pldoc of Name or Name/Arity: the %! blocks of every
// consulted text (the prelude, the host's library, the user's files) and
// the mode line of every predicate defined in Go. apropos/1 lists the
// documented predicates whose name or documentation mentions Text. ichiban's
// own built-ins (ISO) carry no documentation here.

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ichiban/prolog/engine"
)

// docBlock is one pldoc block: its %! lines and the comment that follows.
type docBlock struct {
	heads []string
	pis   []indicator
	body  []string
	file  string
}

// docs returns the documentation of the consulted texts and of the Go
// predicates, in that order.
func (in *Interpreter) docs() []docBlock {
	var out []docBlock
	for _, src := range in.sources {
		out = append(out, pldoc(src.name, src.text)...)
	}
	var defs []*Def
	for _, d := range in.installed {
		if !strings.HasSuffix(d.Name, "_") && !strings.HasPrefix(d.Name, "$") {
			defs = append(defs, d)
		}
	}
	slices.SortFunc(defs, func(a, b *Def) int { return strings.Compare(a.Indicator(), b.Indicator()) })
	for _, d := range defs {
		out = append(out, docBlock{heads: []string{d.Mode + "."}, pis: []indicator{{d.Name, d.Arity}}, file: "Go"})
	}
	return out
}

// pldoc extracts the %! blocks of a Prolog text.
func pldoc(file, text string) []docBlock {
	var out []docBlock
	var cur *docBlock
	for _, line := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(line, "%!"):
			if cur == nil || len(cur.body) > 0 {
				out = append(out, docBlock{file: file})
				cur = &out[len(out)-1]
			}
			head := strings.TrimSpace(line[2:])
			cur.heads = append(cur.heads, head)
			if pi, ok := headIndicator(head); ok {
				cur.pis = append(cur.pis, pi)
			}
		case cur != nil && strings.HasPrefix(line, "%"):
			cur.body = append(cur.body, strings.TrimPrefix(strings.TrimPrefix(line, "%"), "   "))
		default:
			cur = nil
		}
	}
	return out
}

// headIndicator reads the indicator of a pldoc head such as
// "foldl(:Goal, ?List, +V0, -V) is nondet." or ">>(+Params, :Lambda)".
func headIndicator(head string) (indicator, bool) {
	name, args, found := strings.Cut(head, "(")
	if !found {
		name, _, _ = strings.Cut(head, " ")
		name = strings.TrimSuffix(name, ".")
		return indicator{strings.Trim(name, "'"), 0}, name != ""
	}
	arity, depth := 1, 0
	for _, r := range args {
		switch r {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			if depth == 0 {
				return indicator{strings.Trim(name, "'"), arity}, name != ""
			}
			depth--
		case ',':
			if depth == 0 {
				arity++
			}
		}
	}
	return indicator{}, false
}

func (d docBlock) matches(name string, arity int) bool {
	for _, pi := range d.pis {
		if pi.name == name && (arity < 0 || pi.arity == arity) {
			return true
		}
	}
	return false
}

func (d docBlock) String() string {
	var b strings.Builder
	for i, h := range d.heads {
		b.WriteString(h)
		if i == 0 {
			fmt.Fprintf(&b, "    [%s]", d.file)
		}
		b.WriteString("\n")
	}
	for _, l := range d.body {
		b.WriteString(strings.TrimRight("    "+strings.TrimLeft(l, " "), " ") + "\n")
	}
	return b.String()
}

// summary is the first line of prose of the block.
func (d docBlock) summary() string {
	for _, l := range d.body {
		if s := strings.TrimSpace(l); s != "" {
			return s
		}
	}
	return strings.TrimSuffix(d.heads[0], ".")
}

func help1(c *Call, spec engine.Term) (bool, error) {
	var (
		name  string
		arity = -1
		err   error
	)
	if s, terr := c.Text(spec); terr == nil {
		name = s
	} else if name, arity, err = predicateSpec(c, spec); err != nil {
		return false, err
	}
	var b strings.Builder
	documented := map[indicator]bool{}
	for _, d := range c.In.docs() {
		// A Go mode line adds nothing to the prose of the same predicate.
		if !d.matches(name, arity) || d.file == "Go" && documented[d.pis[0]] {
			continue
		}
		for _, pi := range d.pis {
			documented[pi] = true
		}
		b.WriteString(d.String())
		b.WriteString("\n")
	}
	if b.Len() == 0 {
		what := name
		if arity >= 0 {
			what = fmt.Sprintf("%s/%d", name, arity)
		}
		fmt.Fprintf(&b, "No help for %s: it is not documented here (ichiban's ISO built-ins are not).\nTry apropos(%s).\n", what, c.In.WriteQ(engine.NewAtom(name), nil))
	}
	return writeRaw(c, nil, b.String())
}

func apropos1(c *Call, text engine.Term) (bool, error) {
	s, err := c.Text(text)
	if err != nil {
		return false, err
	}
	s = strings.ToLower(s)
	var b strings.Builder
	seen := map[indicator]bool{} // a predicate once: its first block, the prose before a Go mode line
	for _, d := range c.In.docs() {
		if strings.Contains(strings.ToLower(strings.Join(d.heads, " ")+" "+strings.Join(d.body, " ")), s) {
			for _, pi := range d.pis {
				if !seen[pi] {
					seen[pi] = true
					fmt.Fprintf(&b, "%-28s %s\n", pi, d.summary())
				}
			}
		}
	}
	if b.Len() == 0 {
		fmt.Fprintf(&b, "Nothing documented mentions %q.\n", s)
	}
	return writeRaw(c, nil, b.String())
}
