package host

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ichiban/prolog/engine"
)

// optsReads are opts' typed reads, each named by its option.
var optsReads = map[string]bool{"has": true, "term": true, "int": true, "limit": true, "bool": true, "atom": true, "text": true, "number": true}

// TestOptionKeysAreDeclared: every option the Go side reads by a literal
// name is declared in lib's rlm_option/4 — for the predicate whose options
// it reads, where the code names the predicate literally, else for some
// predicate. A read of an undeclared key finds nothing and reads as zero,
// so a typo would change behaviour silently; this test is where it fails.
func TestOptionKeysAreDeclared(t *testing.T) {
	declared := declaredOptions(t)
	all := map[string]bool{}
	for _, names := range declared {
		for n := range names {
			all[n] = true
		}
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	reads := 0
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, isFunc := d.(*ast.FuncDecl)
			if !isFunc || fn.Body == nil {
				continue
			}
			// The predicate each opts variable of this function holds:
			// "" when it is a parameter or the predicate is not literal.
			pred := map[string]string{}
			for _, p := range fn.Type.Params.List {
				if id, isIdent := p.Type.(*ast.Ident); isIdent && id.Name == "opts" {
					for _, n := range p.Names {
						pred[n.Name] = ""
					}
				}
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if as, isAssign := n.(*ast.AssignStmt); isAssign && len(as.Rhs) == 1 {
					if call, isCall := as.Rhs[0].(*ast.CallExpr); isCall && isSelector(call.Fun, "options") && len(call.Args) == 3 {
						if id, isIdent := as.Lhs[0].(*ast.Ident); isIdent {
							pred[id.Name] = stringLit(call.Args[1])
						}
					}
				}
				call, isCall := n.(*ast.CallExpr)
				if !isCall || len(call.Args) != 1 {
					return true
				}
				sel, isSel := call.Fun.(*ast.SelectorExpr)
				key := stringLit(call.Args[0])
				if !isSel || !optsReads[sel.Sel.Name] || key == "" {
					return true
				}
				p, isOpts := "", false
				switch x := sel.X.(type) {
				case *ast.Ident:
					p, isOpts = pred[x.Name]
				case *ast.SelectorExpr: // a struct's op field
					isOpts = x.Sel.Name == "op"
				}
				if !isOpts {
					return true
				}
				reads++
				at := fset.Position(call.Pos())
				switch {
				case p != "" && declared[p] == nil:
					t.Errorf("%s: options of %s, which has no rlm_option/4 rows", at, p)
				case p != "" && !declared[p][key]:
					t.Errorf("%s: reads option %s, not declared for %s in rlm_option/4", at, key, p)
				case !all[key]:
					t.Errorf("%s: reads option %s, declared for no predicate in rlm_option/4", at, key)
				}
				return true
			})
		}
	}
	if reads < 100 {
		t.Fatalf("found %d option reads; the scan lost them", reads)
	}
}

// declaredOptions are lib's rlm_option/4 rows: option names by predicate.
func declaredOptions(t *testing.T) map[string]map[string]bool {
	s := internalSession(t)
	b, err := s.in.Once(context.Background(), `findall(R, (rlm_option(P, N, _, _), format(atom(R), '~q ~q', [P, N])), Rs), atomic_list_concat(Rs, '\n', A)`)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]bool{}
	for _, row := range strings.Split(b[len(b)-1].Value.(engine.Atom).String(), "\n") {
		pred, name, _ := strings.Cut(row, " ")
		if out[pred] == nil {
			out[pred] = map[string]bool{}
		}
		out[pred][name] = true
	}
	return out
}

func isSelector(e ast.Expr, name string) bool {
	sel, isSel := e.(*ast.SelectorExpr)
	return isSel && sel.Sel.Name == name
}

// stringLit is the value of a string literal, "" for any other expression.
func stringLit(e ast.Expr) string {
	lit, isLit := e.(*ast.BasicLit)
	if !isLit || lit.Kind != token.STRING {
		return ""
	}
	s, _ := strconv.Unquote(lit.Value)
	return s
}
