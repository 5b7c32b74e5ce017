package prolog

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/ichiban/prolog/engine"
)

// ISOError is a Go error that stands for an ISO error formal such as
// type_error(integer, abc). A foreign predicate returning one throws
// error(Formal, Name/Arity).
type ISOError struct {
	Formal engine.Term
	Err    error // the Go cause, if any
}

func (e *ISOError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("prolog: %s: %v", termText(e.Formal), e.Err)
	}
	return "prolog: " + termText(e.Formal)
}

func (e *ISOError) Unwrap() error { return e.Err }

// atomMissing stands for a term a Go caller did not have (an absent
// record field): the error constructors and the writer put it where a nil
// term would otherwise reach ichiban's writer, which dereferences it.
var atomMissing = engine.NewAtom("<missing>")

// iso builds the error formal name(args...). A nil argument becomes
// '<missing>', so that no error carries a nil term.
func iso(name string, args ...engine.Term) error {
	for i, a := range args {
		if a == nil {
			args[i] = atomMissing
		}
	}
	if len(args) == 0 {
		return &ISOError{Formal: engine.NewAtom(name)}
	}
	return &ISOError{Formal: engine.NewAtom(name).Apply(args...)}
}

// InstantiationError is the ISO instantiation_error: an argument is unbound.
func InstantiationError() error { return iso("instantiation_error") }

// TypeError is type_error(Type, Culprit).
func TypeError(typ string, culprit engine.Term) error {
	return iso("type_error", engine.NewAtom(typ), culprit)
}

// DomainError is domain_error(Domain, Culprit).
func DomainError(domain string, culprit engine.Term) error {
	return iso("domain_error", engine.NewAtom(domain), culprit)
}

// ExistenceError is existence_error(Kind, Culprit).
func ExistenceError(kind string, culprit engine.Term) error {
	return iso("existence_error", engine.NewAtom(kind), culprit)
}

// PermissionError is permission_error(Action, Type, Culprit).
func PermissionError(action, typ string, culprit engine.Term) error {
	return iso("permission_error", engine.NewAtom(action), engine.NewAtom(typ), culprit)
}

// FileError is the ISO error for a file or directory that a confined
// file system could not open: existence_error(Kind, Culprit) when it is
// not there, else permission_error(open, Kind, Culprit) — a path or link
// that leaves the root, or a file the process may not read, is refused,
// not reported missing.
func FileError(kind string, culprit engine.Term, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return ExistenceError(kind, culprit)
	}
	return PermissionError("open", kind, culprit)
}

// RepresentationError is representation_error(Limit).
func RepresentationError(limit string) error {
	return iso("representation_error", engine.NewAtom(limit))
}

// ResourceError is resource_error(Resource).
func ResourceError(resource string) error { return iso("resource_error", engine.NewAtom(resource)) }

// EvaluationError is evaluation_error(What).
func EvaluationError(what string) error { return iso("evaluation_error", engine.NewAtom(what)) }

// ErrorMapper turns a Go error into an ISO error formal. It returns false for
// errors it does not know. The host supplies its single table of sentinels
// through [Options.MapError].
type ErrorMapper func(err error) (formal engine.Term, ok bool)

// exception converts a foreign predicate's error into what the engine
// throws. Cancellation passes through unchanged: the engine stops at its next
// step, so a catch/3 cannot swallow it.
func (in *Interpreter) exception(c *Call, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var ex engine.Exception
	if errors.As(err, &ex) {
		return ex
	}
	ctx := c.def.indicator()
	var ie *ISOError
	if errors.As(err, &ie) {
		return engine.NewException(engine.NewAtom("error").Apply(ie.Formal, ctx), c.Env)
	}
	var pe *panicError
	if errors.As(err, &pe) {
		return engine.NewException(engine.NewAtom("error").Apply(
			engine.NewAtom("system_error"),
			engine.NewAtom("context").Apply(ctx, engine.NewAtom(fmt.Sprint(pe.value)))), c.Env)
	}
	if in.opts.MapError != nil {
		if formal, ok := in.opts.MapError(err); ok {
			return engine.NewException(engine.NewAtom("error").Apply(formal, ctx), c.Env)
		}
	}
	return engine.NewException(engine.NewAtom("error").Apply(
		engine.NewAtom("rlm_error").Apply(engine.NewAtom("internal"), engine.NewAtom(err.Error())), ctx), c.Env)
}
