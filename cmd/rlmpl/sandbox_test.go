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

// TestCLIWritesOnlyWhereAsked: read-only commands open existing stores
// and create nothing (not the store, not the state directory, not a lock
// file in a directory named by mistake); a command that writes does not
// mix a store into a directory of other files; bad numbers are usage
// errors, not defaults.
func TestCLIWritesOnlyWhereAsked(t *testing.T) {
	dir := t.TempDir()
	state, victim, missing := filepath.Join(dir, "state"), filepath.Join(dir, "etc"), filepath.Join(dir, "nonexistent", "dir")
	writeFiles(t, map[string]string{
		filepath.Join(victim, "passwd"): "root:x:0:0\n",
		filepath.Join(dir, "t.jsonl"):   `{"role":"user","content":"hello"}` + "\n",
	})
	if _, errs, code := rlmpl(t, "conv", "import", "--state", state, "demo", filepath.Join(dir, "t.jsonl")); code != 0 {
		t.Fatalf("import: %d %s", code, errs)
	}
	for _, args := range [][]string{
		{"conv", "list", "--state", state, "--store", victim},
		{"conv", "list", "--state", missing},
		{"conv", "show", "demo", "--state", state, "--store", "defualt"},
		{"conv", "search", "demo", "hello", "--state", state, "--store", "defualt"},
		{"conv", "export", "demo", "--state", state, "--store", "defualt"},
		{"receipt", "list", "--conv", "demo", "--state", state, "--store", "defualt"},
		{"pack", "--conv", "demo", "--state", state, "--store", "defualt"},
		{"warm", "list", "--conv", "demo", "--state", state, "--store", "defualt"},
	} {
		if _, errs, code := rlmpl(t, args...); code != 1 || !strings.Contains(errs, "store not found") {
			t.Errorf("%v: exit %d, stderr %q; want 1 and store not found", args, code, errs)
		}
	}
	if entries, _ := os.ReadDir(victim); len(entries) != 1 {
		t.Errorf("conv list --store %s wrote into it: %v", victim, entries)
	}
	if _, err := os.Lstat(filepath.Join(dir, "nonexistent")); err == nil {
		t.Errorf("conv list --state %s created it", missing)
	}
	if _, err := os.Lstat(filepath.Join(state, "defualt")); err == nil {
		t.Error("a mistyped --store left a store behind")
	}
	if _, errs, code := rlmpl(t, "conv", "import", "--state", state, "--store", victim, "demo", filepath.Join(dir, "t.jsonl")); code != 1 || !strings.Contains(errs, "holds other files") {
		t.Errorf("import into a directory of other files: exit %d, %q", code, errs)
	}
	for _, args := range [][]string{
		{"pack", "--conv", "demo", "--state", state, "--max-context", "-5"},
		{"pack", "--conv", "demo", "--state", state, "--safety", "-3"},
		{"pack", "--conv", "demo", "--state", state, "--max-context", "lots"},
		{"conv", "show", "demo", "--state", state, "--recent", "-3"},
		{"conv", "search", "demo", "hello", "--state", state, "--max", "0"},
		{"chat", "--conv", "demo", "--state", state, "--max-context", "-1"},
	} {
		if _, errs, code := rlmpl(t, args...); code != 2 || !strings.Contains(errs, "want an integer >=") {
			t.Errorf("%v: exit %d, stderr %q; want a usage error", args, code, errs)
		}
	}
}
