package host

// System family: the runtime's identity and clock.
//
//	'$rlm_version'(-Version) is det.    % Version of the runtime, an atom
//	'$rlm_now'(-UnixMillis) is det.     % Options.Now in Unix milliseconds
//	'$rlm_defaults' is det.             % lib's policy for Host.Defaults (policy.go)
//	tmp_file(+Base, -TmpName) is det.
//	delete_file(+File) is det.
//
// Files: a program writes nothing outside its stores, so tmp_file/2 names
// a fresh path under the state directory (StateDir/tmp, for a persist(...)
// store or another program's file), and delete_file/1 removes a file only
// under the state directory or a grant, never a store's own files.

import (
	"errors"
	"io/fs"
	"os"

	"github.com/ichiban/prolog/engine"

	"github.com/rlmpl/rlmpl/host/runtime"
	"github.com/rlmpl/rlmpl/prolog"
)

// tmpFile is SWI's tmp_file/2 inside the state directory: the name is
// fresh, the file is not created. Without a state directory it is
// permission_error(create, tmp_file, Base).
func (s *Session) tmpFile(c *prolog.Call, base, name engine.Term) (bool, error) {
	b, err := c.Text(base)
	if err != nil {
		return false, err
	}
	p, err := s.host.rt.TmpName(b)
	if errors.Is(err, runtime.ErrNoStateDir) {
		return false, prolog.PermissionError("create", "tmp_file", prolog.Resolved(base, c.Env))
	}
	if err != nil {
		return false, err
	}
	return c.Unify(name, engine.NewAtom(p)), nil
}

// deleteFile is SWI's delete_file/1 under the state directory and grants:
// elsewhere, or inside a store, permission_error(delete, source_sink, F);
// a missing file existence_error(file, F); a directory
// permission_error(delete, directory, F).
func (s *Session) deleteFile(c *prolog.Call, file engine.Term) (bool, error) {
	name, err := c.Text(file)
	if err != nil {
		return false, err
	}
	culprit := prolog.Resolved(file, c.Env)
	p, err := s.host.rt.DeletableFile(name)
	if err != nil {
		return false, prolog.PermissionError("delete", "source_sink", culprit)
	}
	st, err := os.Lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, prolog.ExistenceError("file", culprit)
	case err != nil:
		return false, prolog.PermissionError("delete", "source_sink", culprit)
	case st.IsDir():
		return false, prolog.PermissionError("delete", "directory", culprit)
	}
	if err := os.Remove(p); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, prolog.ExistenceError("file", culprit)
		}
		return false, prolog.PermissionError("delete", "source_sink", culprit)
	}
	return true, nil
}

func (s *Session) version(c *prolog.Call, v engine.Term) (bool, error) {
	return c.Unify(v, engine.NewAtom(Version)), nil
}

func (s *Session) now(c *prolog.Call, t engine.Term) (bool, error) {
	return c.Unify(t, engine.Integer(s.host.opts.Now().UnixMilli())), nil
}
