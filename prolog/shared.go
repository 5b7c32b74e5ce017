package prolog

import (
	"context"
	"crypto/sha256"
	"reflect"
	"strings"
	"sync"
	"unsafe"

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
// The procedures live in an unexported field of ichiban's VM, reached
// through reflect and unsafe. If its shape is not the one expected
// (another ichiban version), shared consults fall back to consulting.

// Text is a named Prolog text.
type Text struct{ Name, Text string }

// ConsultShared consults texts, in order, as Consult would, sharing the
// compiled procedures with every other interpreter of this process that
// consults the same texts.
func (in *Interpreter) ConsultShared(ctx context.Context, texts []Text) error {
	in.quiet = true // library texts: their singletons are their authors' business
	defer func() { in.quiet = false }()
	if !sharable {
		return in.consultAll(ctx, texts)
	}
	key := textsKey(texts)
	sharedMu.Lock()
	snap, ok := shared[key]
	sharedMu.Unlock()
	if !ok {
		before := procedureMap(&in.ip.VM)
		was := make(map[any]any, before.Len())
		for it := before.MapRange(); it.Next(); {
			was[it.Key().Interface()] = it.Value().Interface()
		}
		if err := in.consultAll(ctx, texts); err != nil {
			return err
		}
		snap = &snapshot{}
		after := procedureMap(&in.ip.VM)
		for it := after.MapRange(); it.Next(); {
			k, v := it.Key(), it.Value()
			if v.Elem().Type() != userDefinedPtr {
				continue // a Go predicate: each interpreter registers its own
			}
			if old, seen := was[k.Interface()]; !seen || old != v.Interface() {
				// A dynamic procedure is kept as it stands now: this
				// interpreter goes on changing its own.
				snap.keys, snap.procs = append(snap.keys, k), append(snap.procs, ownCopy(v))
			}
		}
		snap.directives = directivesOf(texts)
		sharedMu.Lock()
		shared[key] = snap
		sharedMu.Unlock()
		return nil
	}
	for _, t := range texts {
		in.remember(t.Name, t.Text)
	}
	return in.run(ctx, func(ctx context.Context) error {
		procs := procedureMap(&in.ip.VM)
		for i, k := range snap.keys {
			procs.SetMapIndex(k, ownCopy(snap.procs[i]))
		}
		for _, d := range snap.directives {
			if err := in.ip.VM.Compile(ctx, d); err != nil {
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
	keys, procs []reflect.Value // procedure indicators and their *userDefined
	directives  []string        // ":- D." texts to run again
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

// The shapes shared consults rely on: VM.procedures, a map from procedure
// indicators to procedures, and the *userDefined procedures with their
// dynamic flag and clauses slice.
var (
	proceduresField reflect.StructField
	userDefinedPtr  reflect.Type
	sharable        = checkShapes()
)

func checkShapes() bool {
	f, ok := reflect.TypeFor[engine.VM]().FieldByName("procedures")
	if !ok || f.Type.Kind() != reflect.Map || f.Type.Elem().Kind() != reflect.Interface {
		return false
	}
	proceduresField = f
	// Find the *userDefined type by compiling a clause in a scratch VM.
	var vm engine.VM
	if err := vm.Compile(context.Background(), "shape_probe_."); err != nil {
		return false
	}
	m := procedureMap(&vm)
	for it := m.MapRange(); it.Next(); {
		t := it.Value().Elem().Type()
		if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
			return false
		}
		dyn, okDyn := t.Elem().FieldByName("dynamic")
		cls, okCls := t.Elem().FieldByName("clauses")
		if !okDyn || dyn.Type.Kind() != reflect.Bool || !okCls || cls.Type.Kind() != reflect.Slice {
			return false
		}
		userDefinedPtr = t
		return true
	}
	return false
}

// procedureMap is vm's procedures map, settable.
func procedureMap(vm *engine.VM) reflect.Value {
	f := reflect.NewAt(proceduresField.Type, unsafe.Add(unsafe.Pointer(vm), proceduresField.Offset)).Elem()
	if f.IsNil() {
		f.Set(reflect.MakeMap(proceduresField.Type))
	}
	return f
}

// ownCopy is the procedure v as one interpreter may hold it: v itself when
// static, a copy with its own clauses when dynamic.
func ownCopy(v reflect.Value) reflect.Value {
	p := v.Elem() // *userDefined
	s := reflect.NewAt(p.Type().Elem(), p.UnsafePointer()).Elem()
	if !s.FieldByName("dynamic").Bool() {
		return v
	}
	c := reflect.New(p.Type().Elem())
	reflect.NewAt(s.Type(), c.UnsafePointer()).Elem().Set(s)
	cls := reflect.NewAt(s.Type(), c.UnsafePointer()).Elem().FieldByName("clauses")
	cls = reflect.NewAt(cls.Type(), unsafe.Pointer(cls.UnsafeAddr())).Elem()
	own := reflect.MakeSlice(cls.Type(), cls.Len(), cls.Len())
	reflect.Copy(own, cls)
	cls.Set(own)
	out := reflect.New(v.Type()).Elem()
	out.Set(c)
	return out
}
