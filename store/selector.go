package store

import (
	"fmt"
	"math"
)

// Selector picks messages of a conversation for [DB.Messages]. Build one
// with [All], [Recent], [Range], [Before], [After], [Around] or [ByRole];
// the zero value is All. Arguments are checked by [Selector.Validate] (and
// by Messages), not by the constructors.
type Selector struct {
	kind selectorKind
	a, b int64
	role Role
}

type selectorKind uint8

const (
	selAll selectorKind = iota
	selRecent
	selRange
	selBefore
	selAfter
	selAround
	selRole
)

// All selects every message.
func All() Selector { return Selector{} }

// Recent selects the last n messages (n >= 0).
func Recent(n int64) Selector { return Selector{kind: selRecent, a: n} }

// Range selects sequences start..end inclusive (1 <= start <= end).
func Range(start, end int64) Selector { return Selector{kind: selRange, a: start, b: end} }

// Before selects the messages with seq < s (s >= 1).
func Before(s int64) Selector { return Selector{kind: selBefore, a: s} }

// After selects the messages with seq > s (s >= 0).
func After(s int64) Selector { return Selector{kind: selAfter, a: s} }

// Around selects max(1, s-r)..s+r (s >= 1, r >= 0).
func Around(s, r int64) Selector { return Selector{kind: selAround, a: s, b: r} }

// ByRole selects the messages of role r.
func ByRole(r Role) Selector { return Selector{kind: selRole, role: r} }

// String renders s in the Prolog selector syntax, e.g. "range(3,7)".
func (s Selector) String() string {
	switch s.kind {
	case selAll:
		return "all"
	case selRecent:
		return fmt.Sprintf("recent(%d)", s.a)
	case selRange:
		return fmt.Sprintf("range(%d,%d)", s.a, s.b)
	case selBefore:
		return fmt.Sprintf("before(%d)", s.a)
	case selAfter:
		return fmt.Sprintf("after(%d)", s.a)
	case selAround:
		return fmt.Sprintf("around(%d,%d)", s.a, s.b)
	case selRole:
		return fmt.Sprintf("role(%v)", s.role)
	}
	return fmt.Sprintf("selector(%d)", s.kind)
}

func badSelector(s Selector, format string, args ...any) error {
	return &ValidationError{Kind: ErrInvalidSelector, Field: s.String(), Reason: fmt.Sprintf(format, args...)}
}

// Validate reports whether s's arguments are in domain. It returns a
// *[ValidationError] wrapping [ErrInvalidRange] for range(S, E) with S > E
// and [ErrInvalidSelector] for everything else out of domain.
func (s Selector) Validate() error {
	switch s.kind {
	case selAll:
	case selRecent:
		if s.a < 0 {
			return badSelector(s, "N must be >= 0")
		}
	case selRange:
		if s.a < 1 || s.b < 1 {
			return badSelector(s, "bounds must be >= 1")
		}
		if s.a > s.b {
			return &ValidationError{Kind: ErrInvalidRange, Field: s.String(), Reason: "start is after end"}
		}
	case selBefore:
		if s.a < 1 {
			return badSelector(s, "seq must be >= 1")
		}
	case selAfter:
		if s.a < 0 {
			return badSelector(s, "seq must be >= 0")
		}
	case selAround:
		if s.a < 1 || s.b < 0 {
			return badSelector(s, "seq must be >= 1 and radius >= 0")
		}
	case selRole:
		if !s.role.Valid() {
			return badSelector(s, "unknown role")
		}
	default:
		return badSelector(s, "unknown selector")
	}
	return nil
}

// bounds returns the inclusive seq range s selects in a conversation whose
// last seq is last (lo > hi when empty). Role selectors use the whole range.
func (s Selector) bounds(last int64) (lo, hi int64) {
	lo, hi = 1, last
	switch s.kind {
	case selRecent:
		lo = last - s.a + 1
	case selRange:
		lo, hi = s.a, min(s.b, last)
	case selBefore:
		hi = min(s.a-1, last)
	case selAfter:
		lo = s.a + 1
	case selAround:
		lo, hi = s.a-s.b, min(satAdd(s.a, s.b), last)
	}
	return max(lo, 1), hi
}

func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
