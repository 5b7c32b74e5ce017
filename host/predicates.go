package host

import "github.com/rlmpl/rlmpl/prolog"

// predicates is the one registration table of the session's foreign
// predicates, grouped by family (one file each: pred_<family>.go). Install
// panics on a duplicate indicator. Every row's mode string matches the
// pldoc line of the predicate, and every family has a testdata/lib suite.
func (s *Session) predicates() []prolog.Def {
	return []prolog.Def{
		// System (pred_sys.go)
		prolog.Pred1("$rlm_version", "'$rlm_version'(-Version) is det", s.version),
		prolog.Pred1("$rlm_now", "'$rlm_now'(-UnixMillis) is det", s.now),
	}
}
