package plan

// TermsForTest reads term-syntax plans in this package's tests. The
// external test package sets it to the host's reader (see
// planterm_test.go): the package itself never imports the Prolog engine.
var TermsForTest TermReader
