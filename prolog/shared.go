package prolog

import (
	"context"
	"crypto/sha256"
	"strings"
	"sync"

	"github.com/ichiban/prolog/engine"
)

// Shared consults. Consulting the same texts in every interpreter (the
// prelude, the host's library) is most of an interpreter's start-up, so
// the first consult of a set of texts keeps the procedures it compiled,
// and later interpreters get them without parsing or compiling again:
// static procedures are shared (a consult replaces a procedure, it never
// changes one in place), dynamic ones copied (assert and retract change
// them in place). The texts' directives run again in each interpreter,
// except the declarations the procedures already carry.
//
// The procedures are taken and installed through the engine's hooks
// (engine.VM.UserProcedures, Install).

// Text is a named Prolog text.
type Text struct{ Name, Text string }

// ConsultShared consults texts, in order, as Consult would, sharing the
// compiled procedures with every other interpreter of this process that
// consults the same texts.
func (in *Interpreter) ConsultShared(ctx context.Context, texts []Text) error {
	in.quiet = true // library texts: their singletons are their authors' business
	defer func() { in.quiet = false }()
	key := textsKey(texts)
	sharedMu.Lock()
	snap, ok := shared[key]
	sharedMu.Unlock()
	vm := &in.ip.VM
	if !ok {
		before := vm.UserProcedures()
		if err := in.consultAll(ctx, texts); err != nil {
			return err
		}
		// A dynamic procedure is kept as it stands now: this interpreter
		// goes on changing its own.
		snap = &snapshot{procs: vm.UserProcedures().Since(before).Share(), directives: directivesOf(texts)}
		sharedMu.Lock()
		shared[key] = snap
		sharedMu.Unlock()
		return nil
	}
	for _, t := range texts {
		in.remember(t.Name, t.Text)
	}
	return in.run(ctx, func(ctx context.Context) error {
		vm.Install(snap.procs)
		for _, d := range snap.directives {
			if err := vm.Compile(ctx, d); err != nil {
				return err
			}
		}
		return nil
	})
}

func (in *Interpreter) consultAll(ctx context.Context, texts []Text) error {
	for _, t := range texts {
		if err := in.Consult(ctx, t.Name, t.Text); err != nil {
			return err
		}
	}
	return nil
}

// snapshot is what consulting a set of texts left in a VM.
type snapshot struct {
	procs      engine.UserProcedures
	directives []string // ":- D." texts to run again
}

var (
	sharedMu sync.Mutex
	shared   = map[[32]byte]*snapshot{}
)

func textsKey(texts []Text) [32]byte {
	h := sha256.New()
	for _, t := range texts {
		h.Write([]byte(t.Name))
		h.Write([]byte{0})
		h.Write([]byte(t.Text))
		h.Write([]byte{0})
	}
	var k [32]byte
	h.Sum(k[:0])
	return k
}

// declarations are the directives whose effect the shared procedures
// carry: running them again would replace a procedure with an empty one.
var declarations = []string{"dynamic", "multifile", "discontiguous"}

// directivesOf returns the texts' directives that must run in each
// interpreter, in order.
func directivesOf(texts []Text) []string {
	var out []string
	for _, t := range texts {
		src, err := scan(t.Text)
		if err != nil {
			continue // the consult succeeded, so this does not happen
		}
		for _, cl := range src.clauses {
			text := strings.TrimSpace(src.text[cl.start:cl.end])
			body, isDirective := strings.CutPrefix(text, ":-")
			if !isDirective {
				continue
			}
			body = strings.TrimSpace(body)
			declares := false
			for _, d := range declarations {
				declares = declares || strings.HasPrefix(body, d+"(") || strings.HasPrefix(body, d+" ")
			}
			if !declares {
				out = append(out, text)
			}
		}
	}
	return out
}
