package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestScriptConfinementRefusesLinks: a script reads the files of its own
// directory, links inside it included, and a symbolic link that leads out
// of it is refused with a permission error that names the path, whoever
// reads it: open/3, consult/1, conversation_import/3, project_instructions
// and skills.
func TestScriptConfinementRefusesLinks(t *testing.T) {
	dir := t.TempDir()
	scripts := filepath.Join(dir, "scripts")
	writeFiles(t, map[string]string{
		filepath.Join(dir, "secret.txt"):         "root:x:0:0\n",
		filepath.Join(dir, "outside.jsonl"):      `{"role":"user","content":"outside"}` + "\n",
		filepath.Join(scripts, "inside.txt"):     "inside\n",
		filepath.Join(scripts, "skills", "a.md"): "a skill\n",
		filepath.Join(scripts, "s.pl"): `:- initialization(main, main).
try(G) :- catch((G, write(read)), error(E, _), print(E)), nl.
main :-
    try(open(link_secret, read, _)),
    try(open('linkparent/secret.txt', read, _)),
    try(consult(link_secret)),
    conversation_store_open(memory, ok(S)),
    conversation_create(S, [], ok(C)),
    try(conversation_import(C, link_conv, _)),
    conversation_append(C, message(user, "hi"), ok(_)),
    try(conversation_context_pack(C, [project_instructions(link_secret)], _)),
    try(conversation_context_pack(C, [skills(linkparent)], _)),
    try(conversation_context_pack(C, [skills(linkskills)], _)),
    try(open(link_inside, read, _)).
`,
	})
	for link, target := range map[string]string{
		"link_secret": filepath.Join(dir, "secret.txt"),
		"linkparent":  dir,
		"link_conv":   filepath.Join(dir, "outside.jsonl"),
		"link_inside": "inside.txt",
		"linkskills":  "skills",
	} {
		if err := os.Symlink(target, filepath.Join(scripts, link)); err != nil {
			t.Fatal(err)
		}
	}
	out, errs, code := rlmpl(t, "run", "--state", t.TempDir(), filepath.Join(scripts, "s.pl"))
	want := strings.Join([]string{
		"permission_error(open,source_sink,link_secret)",
		"permission_error(open,source_sink,'linkparent/secret.txt')",
		"permission_error(open,source_sink,link_secret)",
		"permission_error(open,source_sink,link_conv)",
		"permission_error(open,source_sink,link_secret)",
		"permission_error(open,directory,linkparent)",
		"read",
		"read",
	}, "\n") + "\n"
	if code != 0 || out != want {
		t.Fatalf("exit %d, stderr %q\ngot:\n%s\nwant:\n%s", code, errs, out, want)
	}
}

// writeFiles writes each file, creating its directory.
func writeFiles(t *testing.T, files map[string]string) {
	t.Helper()
	for name, text := range files {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}
