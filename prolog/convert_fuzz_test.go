package prolog_test

import (
	"reflect"
	"testing"

	"github.com/rlmpl/rlmpl/prolog"
)

// valueFrom decodes fuzz bytes into a Go value of the term mapping: a tiny
// prefix language so the fuzzer explores nesting, text, atoms and records.
func valueFrom(b []byte, depth int) (any, []byte) {
	if len(b) == 0 {
		return int64(0), b
	}
	op, b := b[0], b[1:]
	take := func() string {
		n := 0
		if len(b) > 0 {
			n, b = int(b[0]%8), b[1:]
		}
		n = min(n, len(b))
		s := string(b[:n])
		b = b[n:]
		return s
	}
	switch {
	case op%7 == 0:
		return take(), b
	case op%7 == 1:
		return prolog.Atom(take()), b
	case op%7 == 2:
		return int64(int8(op)) * 1e15, b
	case op%7 == 3:
		return float64(op) / 7, b
	case op%7 == 4 && depth < 4:
		var l []any
		for i := 0; i < int(op%4); i++ {
			var v any
			v, b = valueFrom(b, depth+1)
			l = append(l, v)
		}
		if l == nil {
			l = []any{}
		}
		return l, b
	case op%7 == 5 && depth < 4:
		r := prolog.Record{Tag: "r" + take()}
		for i := 0; i < int(op%3); i++ {
			var v any
			v, b = valueFrom(b, depth+1)
			r.Fields = append(r.Fields, prolog.Field{Key: "k" + take(), Value: v})
		}
		return r, b
	case op%7 == 6 && depth < 4:
		c := prolog.Compound{Functor: "f" + take()}
		for i := 0; i < int(op%3)+1; i++ {
			var v any
			v, b = valueFrom(b, depth+1)
			c.Args = append(c.Args, v)
		}
		return c, b
	}
	return true, b
}

// FuzzTermRoundTrip: converting a Go value to a term and back preserves
// the term (ToTerm(Value(ToTerm(v))) is the same term), the decoded value is
// a fixed point, and nothing panics. Go values the mapping identifies (text
// and one-character atom lists, records and compounds of their shape) may
// decode to the other form; the term never changes.
func FuzzTermRoundTrip(f *testing.F) {
	f.Add([]byte{0, 3, 'a', 'b', 'c'})
	f.Add([]byte{5, 2, 'm', 4, 1, 2, 'x', 'y'})
	f.Add([]byte{4 + 7*3, 0, 1, 1, 'q', 2})
	f.Fuzz(func(t *testing.T, b []byte) {
		v, _ := valueFrom(b, 0)
		t1, err := prolog.ToTerm(v)
		if err != nil {
			return
		}
		v2, err := prolog.Value(t1, nil)
		if err != nil {
			t.Fatalf("Value(%v): %v", v, err)
		}
		t2, err := prolog.ToTerm(v2)
		if err != nil {
			t.Fatalf("ToTerm(%#v): %v", v2, err)
		}
		if t1.Compare(t2, nil) != 0 {
			t.Fatalf("term changed: %#v -> %#v", v, v2)
		}
		v3, err := prolog.Value(t2, nil)
		if err != nil || !reflect.DeepEqual(v2, v3) {
			t.Fatalf("decoded value not a fixed point: %#v -> %#v (%v)", v2, v3, err)
		}
	})
}
