package store

import (
	"errors"
	"fmt"
)

// Sentinel errors. Callers branch on them with [errors.Is]; messages are
// lower-case and carry the "store:" prefix.
var (
	// ErrNotFound reports a missing conversation or message.
	ErrNotFound = errors.New("store: not found")
	// ErrExists reports a conversation id that is already taken.
	ErrExists = errors.New("store: already exists")
	// ErrClosed reports a call on a closed [DB].
	ErrClosed = errors.New("store: closed")
	// ErrLocked reports that another process holds the store directory.
	ErrLocked = errors.New("store: directory locked by another process")
	// ErrInvalid reports a malformed argument: a bad message, id, option or
	// query. The wrapping *[ValidationError] names the field.
	ErrInvalid = errors.New("store: invalid argument")
	// ErrInvalidSelector reports a selector whose kind or arguments are out
	// of domain (for example recent(-1) or before(0)).
	ErrInvalidSelector = errors.New("store: invalid selector")
	// ErrInvalidRange reports range(S, E) with S > E.
	ErrInvalidRange = errors.New("store: invalid range")
	// ErrIdempotencyMismatch reports an append whose idempotency key was
	// already used for different content.
	ErrIdempotencyMismatch = errors.New("store: idempotency key reused with different content")
	// ErrTokenCountMismatch reports a second, different token count for the
	// same message and encoding (counts are settable once).
	ErrTokenCountMismatch = errors.New("store: token count already set to a different value")
	// ErrCorrupt reports a stored value that does not decode.
	ErrCorrupt = errors.New("store: corrupt record")
	// ErrVersion reports a stored value written by a newer format version.
	ErrVersion = errors.New("store: unsupported record version")
	// ErrUnavailable reports a PostgreSQL store whose server cannot be
	// reached or dropped the connection (down, restarting, the network):
	// the call failed and may succeed later. The error wraps the driver's
	// too.
	ErrUnavailable = errors.New("store: database unavailable")
)

// ValidationError names the field of an argument that failed validation.
// It unwraps to its Kind ([ErrInvalid], [ErrInvalidSelector] or
// [ErrInvalidRange]).
type ValidationError struct {
	Kind   error  // sentinel the error unwraps to
	Field  string // dotted path of the offending field, e.g. "content[1].image_url.detail"
	Reason string // what is wrong, e.g. `must be auto, low or high (got "huge")`
}

func (e *ValidationError) Error() string {
	kind := ErrInvalid
	if e.Kind != nil {
		kind = e.Kind
	}
	if e.Field == "" {
		return fmt.Sprintf("%v: %s", kind, e.Reason)
	}
	return fmt.Sprintf("%v: %s: %s", kind, e.Field, e.Reason)
}

func (e *ValidationError) Unwrap() error {
	if e.Kind == nil {
		return ErrInvalid
	}
	return e.Kind
}

func invalid(field, format string, args ...any) error {
	return &ValidationError{Kind: ErrInvalid, Field: field, Reason: fmt.Sprintf(format, args...)}
}

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}
