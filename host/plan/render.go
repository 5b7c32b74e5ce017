package plan

import (
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/rlmpl/rlmpl/host/handle"
)

// String renders the plan in the term syntax, canonically: [ParseTerm]
// reads it back to an equal plan, and equal plans render equally (this is
// what recursive-call fingerprints hash).
func (p *Plan) String() string {
	var sb strings.Builder
	writePlan(&sb, p, 0)
	return sb.String()
}

// fingerprint hashes a plan's canonical rendering (FNV-1a 64).
func fingerprint(p *Plan) uint64 {
	h := fnv.New64a()
	h.Write([]byte(p.String()))
	return h.Sum64()
}

const maxRenderDepth = 256

func writePlan(sb *strings.Builder, p *Plan, depth int) {
	if p == nil || depth > maxRenderDepth {
		sb.WriteString("plan([])")
		return
	}
	sb.WriteString("plan([")
	for i, s := range p.Steps {
		if i > 0 {
			sb.WriteString(", ")
		}
		writeStep(sb, s, depth+1)
	}
	sb.WriteString("])")
}

func writeStep(sb *strings.Builder, s Step, depth int) {
	switch s := s.(type) {
	case *ContextStep:
		sb.WriteString("context(")
		writeExpr(sb, s.Handle, depth)
		sb.WriteString(", " + s.Action.String() + ", " + atomText(s.Bind) + ")")
	case *ModelStep:
		sb.WriteString("model(" + atomText(s.Provider) + ", ")
		writeExpr(sb, s.Prompt, depth)
		sb.WriteString(", [")
		keys := make([]string, 0, len(s.Options))
		for k := range s.Options {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for i, k := range keys {
			if i > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString(atomText(k) + "(")
			writeValue(sb, s.Options[k], depth)
			sb.WriteString(")")
		}
		sb.WriteString("], " + atomText(s.Bind) + ")")
	case *RLMStep:
		sb.WriteString("rlm(")
		if s.Plan != nil {
			writePlan(sb, s.Plan, depth+1)
		} else {
			sb.WriteString("query(")
			writeExpr(sb, s.Query, depth)
			if s.Context != nil {
				sb.WriteString(", ")
				writeExpr(sb, s.Context, depth)
			}
			sb.WriteString(")")
		}
		sb.WriteString(", " + atomText(s.Bind) + ")")
	case *ToolStep:
		sb.WriteString("tool(" + atomText(s.Name) + ", ")
		writeExpr(sb, s.Args, depth)
		sb.WriteString(", " + atomText(s.Bind) + ")")
	case *ParallelStep:
		sb.WriteString("parallel([")
		for i, p := range s.Plans {
			if i > 0 {
				sb.WriteString(", ")
			}
			writePlan(sb, p, depth+1)
		}
		sb.WriteString("], " + atomText(s.Bind) + ")")
	case *RetryStep:
		sb.WriteString("retry(" + strconv.Itoa(s.Attempts) + ", ")
		writePlan(sb, s.Plan, depth+1)
		sb.WriteString(", " + atomText(s.Bind) + ")")
	case *RespondStep:
		sb.WriteString("respond(" + atomText(s.Provider) + ", " + atomText(s.Bind) + ")")
	case *CheckpointStep:
		sb.WriteString("checkpoint(" + quoteString(s.Label) + ")")
	case *FinalStep:
		sb.WriteString("final(")
		writeExpr(sb, s.Value, depth)
		sb.WriteString(")")
	default:
		fmt.Fprintf(sb, "unknown_step(%T)", s)
	}
}

func writeExpr(sb *strings.Builder, e Expr, depth int) {
	if depth > maxRenderDepth {
		sb.WriteString("literal(deep)")
		return
	}
	switch e := e.(type) {
	case Literal:
		sb.WriteString("literal(")
		writeValue(sb, e.Value, depth)
		sb.WriteString(")")
	case InputRef:
		sb.WriteString("input(" + atomText(e.Name) + ")")
	case VarRef:
		sb.WriteString("var(" + atomText(e.Name) + ")")
	case FieldOf:
		sb.WriteString("field(")
		writeExpr(sb, e.Value, depth+1)
		sb.WriteString(", " + atomText(e.Key) + ")")
	case List:
		sb.WriteString("list([")
		for i, x := range e.Elems {
			if i > 0 {
				sb.WriteString(", ")
			}
			writeExpr(sb, x, depth+1)
		}
		sb.WriteString("])")
	case Object:
		sb.WriteString("object([")
		for i, p := range e.Pairs {
			if i > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString(atomText(p.Key) + "-")
			writeExpr(sb, p.Value, depth+1)
		}
		sb.WriteString("])")
	default:
		sb.WriteString("literal(unknown_expression)")
	}
}

// writeValue writes a literal value as a term that [FromTerm] reads back
// to the same value where the term mapping allows (a map is written as
// json([k(V), ...]), which reads back as a record).
func writeValue(sb *strings.Builder, v any, depth int) {
	if depth > maxRenderDepth {
		sb.WriteString("deep")
		return
	}
	switch v := v.(type) {
	case nil:
		sb.WriteString("null")
	case bool:
		sb.WriteString(strconv.FormatBool(v))
	case int:
		sb.WriteString(strconv.Itoa(v))
	case int64:
		sb.WriteString(strconv.FormatInt(v, 10))
	case float64:
		switch {
		case math.IsNaN(v) || math.IsInf(v, 0):
			sb.WriteString("null")
		case v == math.Trunc(v) && math.Abs(v) < 1e15:
			sb.WriteString(strconv.FormatFloat(v, 'f', 1, 64))
		default:
			s := strconv.FormatFloat(v, 'g', -1, 64)
			if !strings.ContainsAny(s, ".") {
				// 1e+20 is not a Prolog float; write a mantissa with a dot.
				m, ex, _ := strings.Cut(s, "e")
				s = m + ".0e" + ex
			}
			sb.WriteString(s)
		}
	case string:
		sb.WriteString(quoteString(v))
	case Atom:
		sb.WriteString(atomText(string(v)))
	case []any:
		sb.WriteString("[")
		for i, x := range v {
			if i > 0 {
				sb.WriteString(", ")
			}
			writeValue(sb, x, depth+1)
		}
		sb.WriteString("]")
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		sb.WriteString("json([")
		for i, k := range keys {
			if i > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString(atomText(k) + "(")
			writeValue(sb, v[k], depth+1)
			sb.WriteString(")")
		}
		sb.WriteString("])")
	case Record:
		sb.WriteString(atomText(v.Tag) + "([")
		for i, f := range v.Fields {
			if i > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString(atomText(f.Key) + "(")
			writeValue(sb, f.Value, depth+1)
			sb.WriteString(")")
		}
		sb.WriteString("])")
	case Compound:
		sb.WriteString(atomText(v.Functor) + "(")
		for i, a := range v.Args {
			if i > 0 {
				sb.WriteString(", ")
			}
			writeValue(sb, a, depth+1)
		}
		sb.WriteString(")")
	case handle.Ref:
		sb.WriteString(quoteString(v.String()))
	default:
		sb.WriteString(quoteString(Encode(v)))
	}
}

// atomText writes name as an atom, quoted unless it is a plain
// lower-case identifier.
func atomText(name string) string {
	if name != "" && name[0] >= 'a' && name[0] <= 'z' {
		plain := true
		for i := 0; i < len(name); i++ {
			if !isIdent(name[i]) {
				plain = false
				break
			}
		}
		if plain {
			return name
		}
	}
	if name == "[]" {
		return "[]"
	}
	var sb strings.Builder
	sb.WriteByte('\'')
	for _, r := range name {
		switch r {
		case '\'':
			sb.WriteString(`\'`)
		case '\\':
			sb.WriteString(`\\`)
		case '\n':
			sb.WriteString(`\n`)
		case '\t':
			sb.WriteString(`\t`)
		default:
			if r < 0x20 || r == 0x7f {
				fmt.Fprintf(&sb, `\x%x\`, r)
				continue
			}
			sb.WriteRune(r)
		}
	}
	sb.WriteByte('\'')
	return sb.String()
}
