package host

import (
	"context"
	"errors"

	"github.com/ichiban/prolog/engine"

	"github.com/rlmpl/rlmpl/host/handle"
	"github.com/rlmpl/rlmpl/host/mcp"
	"github.com/rlmpl/rlmpl/host/pack"
	"github.com/rlmpl/rlmpl/host/plan"
	"github.com/rlmpl/rlmpl/host/planterm"
	"github.com/rlmpl/rlmpl/host/provider"
	"github.com/rlmpl/rlmpl/host/runtime"
	"github.com/rlmpl/rlmpl/prolog"
	"github.com/rlmpl/rlmpl/store"
	"github.com/rlmpl/rlmpl/tokenizer"
)

// ErrNoSolution is returned when a goal that must succeed fails. For a det
// facade predicate of lib/ this always means a lib bug.
var ErrNoSolution = errors.New("host: goal failed (no solution)")

// errorRow is one line of the two-way table between Go sentinels and ISO
// error formals: a foreign predicate returning Err throws
// error(Formal, Name/Arity), and an uncaught exception with that formal
// unwraps to Err in Go.
type errorRow struct {
	Err    error
	Formal func() engine.Term
}

// errorTable is the single translation table (STYLE.md §6). Families add
// their sentinels here.
var errorTable = []errorRow{
	{tokenizer.ErrUnknownEncoding, func() engine.Term {
		return engine.NewAtom("existence_error").Apply(engine.NewAtom("tokenizer_encoding"), engine.NewAtom("unknown"))
	}},
	{tokenizer.ErrUnknownModel, func() engine.Term {
		return engine.NewAtom("existence_error").Apply(engine.NewAtom("tokenizer_model"), engine.NewAtom("unknown"))
	}},
	{ErrClosed, func() engine.Term {
		return engine.NewAtom("permission_error").Apply(engine.NewAtom("access"), engine.NewAtom("session"), engine.NewAtom("closed"))
	}},
}

func mapError(err error) (engine.Term, bool) {
	for _, r := range errorTable {
		if errors.Is(err, r.Err) {
			return r.Formal(), true
		}
	}
	return nil, false
}

// PrologError is an uncaught Prolog exception reaching Go. Text is the
// exception rendered with writeq; Message is the readable, SWI-like form.
// It unwraps to the matching sentinel of the error table, if any.
type PrologError struct {
	Goal    string // the goal the host ran, when it was not the caller's query
	Term    engine.Term
	Text    string
	Message string
	cause   error
}

func (e *PrologError) Error() string { return e.Message }

func (e *PrologError) Unwrap() error { return e.cause }

func wrapPrologError(in *prolog.Interpreter, err error) error {
	var ex engine.Exception
	if err == nil || !errors.As(err, &ex) {
		return err
	}
	pe := &PrologError{Term: ex.Term(), Text: in.Describe(ex.Term(), nil), Message: prolog.Message(in, ex.Term())}
	var ge *prolog.GoalError
	if errors.As(err, &ge) {
		pe.Goal = ge.Goal
	}
	if c, ok := ex.Term().(engine.Compound); ok && c.Functor() == engine.NewAtom("error") && c.Arity() == 2 {
		for _, r := range errorTable {
			if c.Arg(0).Compare(r.Formal(), nil) == 0 {
				pe.cause = r.Err
			}
		}
	}
	return pe
}

// fail unifies out with the error(Reason) outcome of err, through the one
// table below, or returns err to be thrown: ISO errors (a program's
// mistake), cancellation and engine exceptions are never outcomes. ph is
// the operation; subject is what it was about (a conversation id, a
// selector), when the reason names it.
func (s *Session) fail(c *prolog.Call, out engine.Term, ph phase, err error, subject ...engine.Term) (bool, error) {
	if reason, isOutcome := s.reason(ph, err, subject); isOutcome {
		return c.Unify(out, atomError.Apply(reason)), nil
	}
	return false, err
}

// reason is the outcome table: every Go error a predicate returns as
// error(Reason), by family. Anything it does not know is thrown.
func (s *Session) reason(ph phase, err error, subject []engine.Term) (engine.Term, bool) {
	var (
		iso   *prolog.ISOError
		ex    engine.Exception
		ve    *store.ValidationError
		pe    *pack.Error
		fe    *pack.FieldError
		he    *handle.Error
		se    *runtime.SchemaError
		we    *warmError
		ple   *plan.Error
		fault *faultError
		named = func(name string) engine.Term { return engine.NewAtom(name).Apply(subject...) }
		conv  = func(detail engine.Term) (engine.Term, bool) { return convReason(ph, detail, err.Error()), true }
	)
	switch {
	case errors.As(err, &ple):
		// Before the context cases: a completion's cancellation and time
		// limit are outcomes (the query's own cancellation is thrown
		// before this table is asked).
		return completionReason(ple, subject)
	case errors.As(err, &iso), errors.As(err, &ex), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return nil, false
	case isProviderError(err):
		return providerReason(err, ""), true
	case errors.As(err, &fault):
		return record("completion_error", fld("detail", fault.detail), fld("kind", engine.NewAtom("completion_fault")),
			fld("message", prolog.Chars(fault.msg)), fld("phase", engine.NewAtom("runtime"))), true
	case errors.Is(err, store.ErrNotFound):
		return conv(named("not_found"))
	case errors.Is(err, store.ErrExists):
		return conv(named("conversation_exists"))
	case errors.Is(err, store.ErrClosed):
		return conv(engine.NewAtom("closed_store"))
	case errors.Is(err, store.ErrLocked):
		return conv(engine.NewAtom("store_locked"))
	case errors.Is(err, store.ErrNoSpace), errors.Is(err, store.ErrStoreGone):
		return conv(engine.NewAtom("storage_failure"))
	case errors.Is(err, runtime.ErrPathNotGranted):
		return conv(named("store_path_not_granted"))
	case errors.Is(err, runtime.ErrStorePath):
		return conv(named("store_path_refused"))
	case errors.Is(err, runtime.ErrStoreOpen):
		return conv(named("store_unavailable"))
	case errors.Is(err, store.ErrUnavailable):
		// A PostgreSQL store's server went down or is restarting (after
		// the store opened: opening is store_unavailable above); the
		// store retried what was safe for its connect timeout.
		return conv(engine.NewAtom("storage_failure"))
	case errors.Is(err, runtime.ErrNotUserMessage):
		return conv(engine.NewAtom("not_user_message"))
	case errors.Is(err, store.ErrIdempotencyMismatch):
		return conv(engine.NewAtom("idempotency_key_reused"))
	case errors.Is(err, runtime.ErrOrphanToolResult):
		return conv(engine.NewAtom("orphan_tool_result"))
	case errors.Is(err, runtime.ErrUnpinnable):
		return conv(named("unpinnable_message"))
	case errors.Is(err, store.ErrInvalidRange):
		return conv(named("invalid_range"))
	case errors.Is(err, store.ErrInvalidSelector):
		return conv(named("invalid_selector"))
	case errors.As(err, &ve):
		name := "invalid_argument"
		if ph == phAppend {
			name = "invalid_message"
		}
		return conv(engine.NewAtom(name).Apply(engine.NewAtom(ve.Field)))
	case errors.As(err, &pe):
		return packReason(pe), true
	case errors.As(err, &fe):
		return budgetReason("policy", "validation_error", fld("field", engine.NewAtom(fe.Field)), fld("message", prolog.Chars(fe.Msg))), true
	case errors.Is(err, tokenizer.ErrUnknownEncoding):
		return tokenReason("unknown_encoding", err.Error()), true
	case errors.As(err, &he):
		return contextReason(he), true
	case errors.As(err, &se):
		return warmReason(ph, se.Kind, err, fld("field", engine.NewAtom(se.Field))), true
	case errors.As(err, &we):
		return warmReason(ph, we.kind, err), true
	case errors.Is(err, runtime.ErrEmptyRange):
		return warmReason(ph, "empty_source_range", err, fld("range", named("range"))), true
	case errors.Is(err, runtime.ErrNoArtifact):
		return warmReason(ph, "no_such_artifact", err, fld("range", named("range"))), true
	case errors.Is(err, runtime.ErrUnsupportedSignal):
		return warmReason(ph, "unsupported_signal_kind", err), true
	case errors.Is(err, ErrWarmStoreMismatch):
		return warmReason(ph, "warm_store_mismatch", err), true
	case errors.Is(err, ErrHookFailed):
		return budgetReason("hook", "pack_hook_failed", fld("message", prolog.Chars(err.Error()))), true
	case isMCPError(err):
		return mcpReason(err), true
	case ph.storage:
		return conv(engine.NewAtom("storage_failure"))
	}
	return record("internal_error", fld("message", prolog.Chars(err.Error())), fld("phase", engine.NewAtom(ph.name))), true
}

// warmReason is warm_error([kind(K), message(M), phase(P), ...]).
func warmReason(ph phase, kind string, err error, details ...prolog.Field) engine.Term {
	return record("warm_error", append([]prolog.Field{fld("kind", engine.NewAtom(kind)), fld("message", prolog.Chars(err.Error())),
		fld("phase", engine.NewAtom(ph.name))}, details...)...)
}

// A phase is the operation an outcome names in its phase(P) field. A
// storage phase reads or writes a store, so a failure the outcome table
// does not know is storage_failure there; elsewhere it is internal_error.
type phase struct {
	name    string
	storage bool
}

// The phases. Each says whether it is storage, so no list of storage
// phases can miss one.
var (
	phStoreOpen     = phase{"store_open", true}
	phStoreClose    = phase{"store_close", true}
	phCreate        = phase{"create", true}
	phOpen          = phase{"open", true}
	phList          = phase{"list", true}
	phAppend        = phase{"append", true}
	phMessage       = phase{"message", true}
	phMessages      = phase{"messages", true}
	phStats         = phase{"stats", true}
	phExport        = phase{"export", true}
	phSearch        = phase{"search", true}
	phColdContext   = phase{"cold_context", true}
	phImport        = phase{"import", true}
	phContextPack   = phase{"context_pack", true}
	phPin           = phase{"pin", true}
	phWait          = phase{"wait", true}
	phReceipt       = phase{"receipt", true}
	phReceipts      = phase{"receipts", true}
	phTurn          = phase{"turn", true}
	phUnits         = phase{"units", true}
	phRetire        = phase{"retire", true}
	phPublish       = phase{"publish", true}
	phDerive        = phase{"derive", true}
	phArtifactStore = phase{"artifact_store", true}
	phAwait         = phase{"await", true}

	phAdapter       = phase{"adapter", false}
	phRegister      = phase{"register", false}
	phMetadata      = phase{"metadata", false}
	phDelete        = phase{"delete", false}
	phTrace         = phase{"trace", false}
	phMCP           = phase{"mcp", false}
	phCount         = phase{"count", false}
	phModelEncoding = phase{"model_encoding", false}
	phPolicy        = phase{"policy", false}
	phPack          = phase{"pack", false}
	phPlan          = phase{"plan", false}
	phCompletion    = phase{"completion", false}
	phQuery         = phase{"query", false}
)

// opPhase is a context operation's phase: a handle's, never storage (a
// handle's failures are *handle.Error, known to the table).
func opPhase(op handle.Op) phase { return phase{string(op), false} }

// convReason is conversation_error([detail(D), kind(conversation_error), message(M), phase(P)]).
func convReason(ph phase, detail engine.Term, msg string) engine.Term {
	return record("conversation_error",
		fld("detail", detail), fld("kind", engine.NewAtom("conversation_error")),
		fld("message", prolog.Chars(msg)), fld("phase", engine.NewAtom(ph.name)))
}

// convError is the outcome error(conversation_error([...])).
func convError(ph phase, detail engine.Term, msg string) engine.Term {
	return atomError.Apply(convReason(ph, detail, msg))
}

// budgetReason is context_budget_error([kind(K), phase(P), ...]).
func budgetReason(phase, kind string, details ...prolog.Field) engine.Term {
	return record("context_budget_error", append([]prolog.Field{fld("kind", engine.NewAtom(kind)), fld("phase", engine.NewAtom(phase))}, details...)...)
}

// packReason names what does not fit, and by how much.
func packReason(e *pack.Error) engine.Term {
	ids := make([]engine.Term, len(e.Units))
	for i, u := range e.Units {
		ids[i] = engine.NewAtom(u)
	}
	fields := []prolog.Field{fld("available", engine.Integer(e.Available)), fld("base", engine.Integer(e.Base)),
		fld("excess", engine.Integer(e.Excess)), fld("limit", engine.Integer(e.Effective)),
		fld("message", prolog.Chars(e.Error()))}
	if e.Kind == pack.KindFixedExceeds {
		fields = append(fields, fld("reserve_output_tokens", engine.Integer(e.Reserve)),
			fld("safety_margin_tokens", engine.Integer(e.Safety)))
	}
	return budgetReason("pack", e.Kind, append(fields, fld("units", engine.List(ids...)))...)
}

// tokenReason is token_error([kind(K), message(M), ...]).
func tokenReason(kind, message string, details ...prolog.Field) engine.Term {
	return record("token_error", append([]prolog.Field{fld("kind", engine.NewAtom(kind)), fld("message", prolog.Chars(message))}, details...)...)
}

// contextReason is context_error([kind(K), message(M), operation(Op), ...]).
func contextReason(e *handle.Error) engine.Term {
	fields := []prolog.Field{
		fld("kind", engine.NewAtom(string(e.Kind))),
		fld("message", prolog.Chars(e.Message)),
		fld("operation", engine.NewAtom(string(e.Op))),
	}
	for _, d := range e.Details {
		fields = append(fields, fld(d.Key, goTerm(d.Value)))
	}
	return record("context_error", fields...)
}

// completionReason is a plan or completion error record. A provider's
// failure passes through as the provider_error it is (upstream's
// passthrough), with the phase it happened in; a cancelled completion
// names its token (subject) when it ran under one.
func completionReason(e *plan.Error, subject []engine.Term) (engine.Term, bool) {
	if isProviderError(e) {
		return providerReason(e, string(e.Phase)), true
	}
	t, err := planterm.ToTerm(e.Record())
	if err != nil {
		return record("internal_error", fld("message", prolog.Chars(err.Error())), fld("phase", engine.NewAtom(string(e.Phase)))), true
	}
	if e.Kind == plan.KindCancelled && len(subject) == 1 {
		t = withField(t, fld("token", subject[0]))
	}
	return t, true
}

func isMCPError(err error) bool {
	var (
		me *mcp.Error
		ce *mcp.CeilingError
		fe *mcp.ConfigError
	)
	return errors.As(err, &me) || errors.As(err, &ce) || errors.As(err, &fe) || errors.Is(err, mcp.ErrClosed)
}

// mcpReason is mcp_error([kind(K), message(M), server(S), ...]): tool(T)
// when a tool is named; field(F) for a configuration_error; limit(L),
// tokens(N) and tools(K) for ceiling_exceeded. Messages never show a
// header value or a token.
func mcpReason(err error) engine.Term {
	var (
		me *mcp.Error
		ce *mcp.CeilingError
		fe *mcp.ConfigError
		fs []prolog.Field
	)
	switch {
	case errors.As(err, &ce):
		fs = []prolog.Field{fld("kind", engine.NewAtom("ceiling_exceeded")), fld("limit", engine.Integer(ce.Limit)),
			fld("message", prolog.Chars(ce.Error())), fld("server", engine.NewAtom(ce.Server)),
			fld("tokens", engine.Integer(ce.Tokens)), fld("tools", engine.Integer(ce.Tools))}
	case errors.As(err, &fe):
		fs = []prolog.Field{fld("field", engine.NewAtom(fe.Field)), fld("kind", engine.NewAtom("configuration_error")),
			fld("message", prolog.Chars(fe.Message)), fld("server", engine.NewAtom(fe.Server))}
	case errors.As(err, &me):
		fs = []prolog.Field{fld("kind", engine.NewAtom(me.Kind)), fld("message", prolog.Chars(me.Message)), fld("server", engine.NewAtom(me.Server))}
		if me.Tool != "" {
			fs = append(fs, fld("tool", engine.NewAtom(me.Tool)))
		}
	default:
		fs = []prolog.Field{fld("kind", engine.NewAtom("closed")), fld("message", prolog.Chars(err.Error()))}
	}
	return record("mcp_error", fs...)
}

func isProviderError(err error) bool {
	var pe *provider.Error
	var ce *provider.ConfigError
	return errors.As(err, &pe) || errors.As(err, &ce)
}

// providerReason is provider_error([kind(K), message(M), ...]): for a
// configuration problem field(F) and provider(P) (kind
// configuration_error); for a failed call attempts(N), status(S) (0 when
// no response came), retryable(B), and code(C), type(T), credential(env(V))
// when known. Messages are the provider's, keys already redacted.
func providerReason(err error, phase string) engine.Term {
	var (
		pe *provider.Error
		ce *provider.ConfigError
		fs []prolog.Field
	)
	if phase != "" {
		fs = append(fs, fld("phase", engine.NewAtom(phase)))
	}
	if errors.As(err, &ce) {
		fs = append(fs, fld("field", engine.NewAtom(ce.Field)), fld("kind", engine.NewAtom("configuration_error")),
			fld("message", prolog.Chars(ce.Message)))
		if ce.Provider != "" {
			fs = append(fs, fld("provider", engine.NewAtom(ce.Provider)))
		}
		return record("provider_error", fs...)
	}
	errors.As(err, &pe)
	fs = append(fs, fld("attempts", engine.Integer(pe.Attempts)), fld("kind", engine.NewAtom(pe.Kind.String())),
		fld("message", prolog.Chars(pe.Message)), fld("retryable", boolTerm(pe.Retryable)), fld("status", engine.Integer(pe.Status)))
	if pe.Code != "" {
		fs = append(fs, fld("code", prolog.Chars(pe.Code)))
	}
	if pe.Type != "" {
		fs = append(fs, fld("type", prolog.Chars(pe.Type)))
	}
	if pe.Credential != "" {
		fs = append(fs, fld("credential", engine.NewAtom("env").Apply(engine.NewAtom(pe.Credential))))
	}
	return record("provider_error", fs...)
}
