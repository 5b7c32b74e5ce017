package host

// System family: the runtime's identity and clock.
//
//	'$rlm_version'(-Version) is det.    % Version of the runtime, an atom
//	'$rlm_now'(-UnixMillis) is det.     % Options.Now in Unix milliseconds
//	'$rlm_defaults' is det.             % lib's policy for Host.Defaults (policy.go)

import (
	"github.com/ichiban/prolog/engine"

	"github.com/rlmpl/rlmpl/prolog"
)

func (s *Session) version(c *prolog.Call, v engine.Term) (bool, error) {
	return c.Unify(v, engine.NewAtom(Version)), nil
}

func (s *Session) now(c *prolog.Call, t engine.Term) (bool, error) {
	return c.Unify(t, engine.Integer(s.host.opts.Now().UnixMilli())), nil
}
