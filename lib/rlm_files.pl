/** <module> Temporary files and deletion, inside the state directory

SWI's file predicates that upstream programs use, confined: a program
writes nothing outside its stores, so temporary names live under the
state directory and deletion reaches only the state directory and the
directories the host granted (the CLI's --grant). The SWI builtins
atomics_to_string/2,3, string_bytes/3, =@=/2, \=@=/2 (operators, 700
xfx) and term_hash/2 are the interpreter's (prolog/swi.go).

Exports:
    tmp_file/2                   % +Base, -TmpName
    delete_file/1                % +File
*/

%!  tmp_file(+Base, -TmpName) is det.
%
%   TmpName is a fresh absolute path StateDir/tmp/Base_Random (Base keeps
%   its letters, digits, _ and -); the directory is created, the file is
%   not. Use it for a scratch store, persist(TmpName), and remove what you
%   made with delete_file/1. Without a state directory:
%   permission_error(create, tmp_file, Base).
%
%   ?- tmp_file(scratch, F), conversation_store_open(persist(F), ok(S)).

%!  delete_file(+File) is det.
%
%   Removes File (a relative name is under the state directory). Outside
%   the state directory and every grant, or inside a store, it is
%   permission_error(delete, source_sink, File); a directory is
%   permission_error(delete, directory, File); a missing file
%   existence_error(file, File). Links are resolved before the check, so a
%   link cannot lead a deletion out; a link itself is removed, not its
%   target.
