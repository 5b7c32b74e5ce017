package host

// Token family: exact token counts through the tokenizer registry.
//
//	token_count_text(+Text, +Options, -Outcome) is det.
//	token_model_encoding(+Model, -Outcome) is det.
//	token_register_encoding(+Name, +RanksFile, +Options, -Outcome) is det.

import (
	"bytes"
	"errors"
	"io/fs"
	"strings"

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

// tokenCountText counts with the caller's token_counter(C) (labelled
// caller_supplied: the host cannot vouch for it), the named encoding, the
// named model's tokenizer, or else the conservative estimator. An unknown
// model is counted by the estimator and says so (model_known(false)); an
// unknown encoding is an outcome.
func (s *Session) tokenCountText(c *prolog.Call, text, options, out engine.Term) (bool, error) {
	t, err := textArg(c, text)
	if err != nil {
		return false, err
	}
	op, err := s.options(c, "token_count_text/3", options)
	if err != nil {
		return false, err
	}
	reg := s.host.tokenizers()
	counter := reg.Estimator()
	switch {
	case op.has("token_counter"):
		var failed error
		n := s.callerCount(c, op.term("token_counter"), &failed)(t)
		if failed != nil {
			return false, failed
		}
		return c.Unify(out, ok(record("token_count", fld("basis", engine.NewAtom(tokenizer.BasisCaller)),
			fld("encoding", engine.NewAtom("none")), fld("method", engine.NewAtom(tokenizer.CallerSupplied.String())),
			fld("safety_percent", engine.Integer(0)), fld("tokens", engine.Integer(n))))), nil
	case op.has("encoding"):
		counter, err = reg.CounterForEncoding(op.atom("encoding"))
		if err != nil {
			return s.fail(c, out, phCount, err)
		}
	case op.has("model"):
		counter, err = reg.Counter(op.atom("model"))
		if errors.Is(err, tokenizer.ErrUnknownModel) {
			cnt := countTerm(reg.Estimator().Count(t))
			return c.Unify(out, ok(withField(cnt, fld("model_known", engine.NewAtom("false"))))), nil
		}
		if err != nil {
			return s.fail(c, out, phCount, err)
		}
	}
	return c.Unify(out, ok(countTerm(counter.Count(t)))), nil
}

// callerCount makes upstream's token_counter(C) a counter: call(C, Text,
// N) on this call's goroutine, N a non-negative integer. The first failure
// (an exception, no answer, a bad N) is kept in *failed, and every count
// after it is 0: the caller throws *failed once the counting is over.
func (s *Session) callerCount(c *prolog.Call, counter engine.Term, failed *error) func(string) int {
	return func(text string) int {
		if *failed != nil {
			return 0
		}
		called, err := callOnce(c, engine.NewAtom("call").Apply(counter, prolog.Chars(text), engine.NewVariable()))
		var got engine.Term
		switch {
		case err != nil:
			*failed = err
		case called == nil:
			*failed = prolog.ExistenceError("token_count", counter)
		default:
			got = called.(engine.Compound).Arg(2)
			*failed = s.mustBe(c, engine.NewAtom("nonneg"), got)
		}
		if *failed != nil {
			return 0
		}
		return int(got.(engine.Integer))
	}
}

func (s *Session) tokenModelEncoding(c *prolog.Call, model, out engine.Term) (bool, error) {
	m, err := c.Atom(model)
	if err != nil {
		return false, err
	}
	enc, err := s.host.tokenizers().EncodingForModel(m)
	if errors.Is(err, tokenizer.ErrUnknownModel) {
		return c.Unify(out, atomError.Apply(tokenReason("unknown_model", err.Error(), fld("model", engine.NewAtom(m))))), nil
	}
	if err != nil {
		return s.fail(c, out, phModelEncoding, err)
	}
	return c.Unify(out, ok(engine.NewAtom(enc.Name()))), nil
}

// tokenRegisterEncoding adds an encoding from a tiktoken-format ranks file
// (base64 token, space, rank per line) read from the session's file system.
func (s *Session) tokenRegisterEncoding(c *prolog.Call, name, file, options, out engine.Term) (bool, error) {
	n, err := c.Atom(name)
	if err != nil {
		return false, err
	}
	f, err := c.Text(file)
	if err != nil {
		return false, err
	}
	op, err := s.options(c, "token_register_encoding/4", options)
	if err != nil {
		return false, err
	}
	patterns := map[string]string{"r50k": tokenizer.PatternR50k, "cl100k": tokenizer.PatternCl100k, "o200k": tokenizer.PatternO200k}
	elems, err := c.List(op.term("specials"))
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
		return false, prolog.FileError("source_sink", file, err)
	}
	enc, err := tokenizer.NewEncoding(tokenizer.EncodingSpec{Name: n, Ranks: bytes.NewReader(b), Pattern: patterns[op.atom("pattern")], SpecialTokens: sp,
		ChatFormat: strings.TrimPrefix(op.atom("chat_format"), "none")})
	if err == nil {
		err = s.host.addEncoding(enc)
	}
	if err != nil {
		return c.Unify(out, atomError.Apply(tokenReason("invalid_encoding", err.Error(), fld("encoding", engine.NewAtom(n))))), nil
	}
	return c.Unify(out, ok(engine.NewAtom("registered").Apply(engine.NewAtom(n)))), nil
}
