package handle

import (
	"fmt"
	"strings"
)

// Op names an operation, as errors and traces report it.
type Op string

// Operations.
const (
	OpRegister  Op = "register"
	OpResolve   Op = "resolve"
	OpOptions   Op = "options"
	OpMetadata  Op = "metadata"
	OpPeek      Op = "peek"
	OpSlice     Op = "slice"
	OpSearch    Op = "search"
	OpPartition Op = "partition"
	OpMap       Op = "map"
	OpReduce    Op = "reduce"
	OpDelete    Op = "delete"
	OpTrace     Op = "trace"
	OpAdapter   Op = "adapter"
)

// Kind classifies an [*Error]; Prolog sees it as the kind field of a
// context_error record.
type Kind string

// Error kinds.
const (
	KindInvalidHandle        Kind = "invalid_handle"
	KindUnknownHandle        Kind = "unknown_handle"
	KindStaleHandle          Kind = "stale_handle"
	KindInvalidLimit         Kind = "invalid_limit"
	KindInvalidArgument      Kind = "invalid_argument"
	KindOutOfRange           Kind = "out_of_range"
	KindUnsupportedSource    Kind = "unsupported_source"
	KindInvalidSource        Kind = "invalid_source"
	KindUnsupportedSelector  Kind = "unsupported_selector"
	KindUnsupportedPartition Kind = "unsupported_partition"
	KindInvalidPattern       Kind = "invalid_pattern"
	KindCapabilityDenied     Kind = "capability_denied"
	KindTimeLimitExceeded    Kind = "time_limit_exceeded"
	KindAdapterNotRegistered Kind = "adapter_not_registered"
	KindAdapterConflict      Kind = "adapter_conflict"
	KindAdapterInUse         Kind = "adapter_in_use"
	KindAdapterMetadataLarge Kind = "adapter_metadata_too_large"
	KindAdapterFailed        Kind = "adapter_operation_failed"
	KindInvalidAdapter       Kind = "invalid_adapter"
)

// Field is one named detail of an error or of metadata. Values are Go
// values of the host's term mapping (string, int, bool, []any, ...).
type Field struct {
	Key   string
	Value any
}

// F builds a Field.
func F(key string, value any) Field { return Field{key, value} }

// Error is a structured context-operation error: expected outcomes such as
// an unknown handle or an exhausted limit, never a Go fault.
type Error struct {
	Op      Op
	Kind    Kind
	Message string
	Details []Field
}

func (e *Error) Error() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "handle: %s: %s: %s", e.Op, e.Kind, e.Message)
	for _, d := range e.Details {
		fmt.Fprintf(&sb, " %s=%v", d.Key, d.Value)
	}
	return sb.String()
}

func errorf(op Op, kind Kind, msg string, details ...Field) *Error {
	return &Error{Op: op, Kind: kind, Message: msg, Details: details}
}
