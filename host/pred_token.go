package host

// Token family: exact token counts through the tokenizer registry.
// lib/rlm_tokens.pl wraps them in token_count_text/3 and friends.
//
//	token_count_(+Text, +Model, +Encoding, -Outcome) is det.
//	token_model_encoding_(+Model, -Outcome) is det.
//	token_register_encoding_(+Name, +File, +Pattern, +Specials, -Outcome) is det.

import (
	"bytes"
	"errors"
	"io/fs"

	"github.com/ichiban/prolog/engine"

	"github.com/rlmpl/rlmpl/prolog"
	"github.com/rlmpl/rlmpl/tokenizer"
)

// countTerm renders a count as token_count([...]) with sorted keys.
func countTerm(c tokenizer.Count) engine.Term {
	enc := engine.NewAtom("none")
	if c.Encoding != "" {
		enc = engine.NewAtom(c.Encoding)
	}
	return record("token_count",
		fld("basis", engine.NewAtom(c.Basis)),
		fld("encoding", enc),
		fld("method", engine.NewAtom(c.Method.String())),
		fld("safety_percent", engine.Integer(c.SafetyPercent)),
		fld("tokens", engine.Integer(c.Tokens)),
	)
}

func tokenError(kind, message string, details ...prolog.Field) engine.Term {
	fields := append([]prolog.Field{fld("kind", engine.NewAtom(kind)), fld("message", prolog.Chars(message))}, details...)
	return atomError.Apply(record("token_error", fields...))
}

// tokenCount counts Text with the named model's tokenizer, or the named
// encoding, or (both none) the conservative estimator. An unknown model is
// counted by the estimator and says so (method estimated, model_known
// false); an unknown encoding is an error outcome.
func (s *Session) tokenCount(c *prolog.Call, text, model, encoding, out engine.Term) (bool, error) {
	t, err := c.Text(text)
	if err != nil {
		return false, err
	}
	m, err := c.Atom(model)
	if err != nil {
		return false, err
	}
	e, err := c.Atom(encoding)
	if err != nil {
		return false, err
	}
	reg := s.host.tokenizers()
	counter := reg.Estimator()
	switch {
	case e != "none":
		counter, err = reg.CounterForEncoding(e)
		if errors.Is(err, tokenizer.ErrUnknownEncoding) {
			return c.Unify(out, tokenError("unknown_encoding", err.Error(), fld("encoding", engine.NewAtom(e)))), nil
		}
	case m != "none":
		counter, err = reg.Counter(m)
		if errors.Is(err, tokenizer.ErrUnknownModel) {
			cnt := countTerm(reg.Estimator().Count(t))
			return c.Unify(out, ok(withField(cnt, fld("model_known", engine.NewAtom("false"))))), nil
		}
	}
	if err != nil {
		return false, err
	}
	return c.Unify(out, ok(countTerm(counter.Count(t)))), nil
}

// withField adds a field to a record built by record, keeping keys sorted.
func withField(rec engine.Term, f prolog.Field) engine.Term {
	r := rec.(engine.Compound)
	var fields []prolog.Field
	it := engine.ListIterator{List: r.Arg(0)}
	for it.Next() {
		p := it.Current().(engine.Compound)
		fields = append(fields, fld(p.Functor().String(), p.Arg(0)))
	}
	return record(r.Functor().String(), append(fields, f)...)
}

func (s *Session) tokenModelEncoding(c *prolog.Call, model, out engine.Term) (bool, error) {
	m, err := c.Atom(model)
	if err != nil {
		return false, err
	}
	enc, err := s.host.tokenizers().EncodingForModel(m)
	if errors.Is(err, tokenizer.ErrUnknownModel) {
		return c.Unify(out, tokenError("unknown_model", err.Error(), fld("model", engine.NewAtom(m)))), nil
	}
	if err != nil {
		return false, err
	}
	return c.Unify(out, ok(engine.NewAtom(enc.Name()))), nil
}

// tokenRegisterEncoding adds an encoding from a tiktoken-format ranks file
// (base64 token, space, rank per line) read from the session's file system.
func (s *Session) tokenRegisterEncoding(c *prolog.Call, name, file, pattern, specials, out engine.Term) (bool, error) {
	n, err := c.Atom(name)
	if err != nil {
		return false, err
	}
	f, err := c.Atom(file)
	if err != nil {
		return false, err
	}
	p, err := c.Atom(pattern)
	if err != nil {
		return false, err
	}
	patterns := map[string]string{"r50k": tokenizer.PatternR50k, "cl100k": tokenizer.PatternCl100k, "o200k": tokenizer.PatternO200k}
	re, known := patterns[p]
	if !known {
		return false, prolog.DomainError("token_pattern", engine.NewAtom(p))
	}
	elems, err := c.List(specials)
	if err != nil {
		return false, err
	}
	sp := map[string]int{}
	for _, e := range elems {
		pair, isPair := c.Resolve(e).(engine.Compound)
		if !isPair || pair.Functor().String() != "-" || pair.Arity() != 2 {
			return false, prolog.TypeError("pair", e)
		}
		tok, err := c.Text(pair.Arg(0))
		if err != nil {
			return false, err
		}
		id, err := c.NonNeg(pair.Arg(1))
		if err != nil {
			return false, err
		}
		sp[tok] = int(id)
	}
	if s.host.opts.FS == nil {
		return false, prolog.ExistenceError("source_sink", file)
	}
	b, err := fs.ReadFile(s.host.opts.FS, f)
	if err != nil {
		return false, prolog.ExistenceError("source_sink", file)
	}
	enc, err := tokenizer.NewEncoding(tokenizer.EncodingSpec{Name: n, Ranks: bytes.NewReader(b), Pattern: re, SpecialTokens: sp})
	if err != nil {
		return c.Unify(out, tokenError("invalid_encoding", err.Error(), fld("encoding", engine.NewAtom(n)))), nil
	}
	if err := s.host.addEncoding(enc); err != nil {
		return c.Unify(out, tokenError("invalid_encoding", err.Error(), fld("encoding", engine.NewAtom(n)))), nil
	}
	return c.Unify(out, ok(engine.NewAtom("registered").Apply(engine.NewAtom(n)))), nil
}
