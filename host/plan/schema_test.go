package plan_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rlmpl/rlmpl/host/plan"
)

// TestSchemaFollowsCapabilities: the plan schema offers exactly the steps
// the capabilities allow, names only granted providers and tools, is
// deterministic, and with nothing that binds a name admits one final step
// whose value names no variable.
func TestSchemaFollowsCapabilities(t *testing.T) {
	b := plan.DefaultBudget()
	caps := plan.MustCapabilities("rlm", "context(search)", "model(local)", "tool(count)")
	s := plan.Schema(caps, []string{"local", "other"}, []string{"count", "hidden"}, b)
	if !json.Valid(s) || !bytes.Equal(s, plan.Schema(caps, []string{"other", "local"}, []string{"hidden", "count"}, b)) {
		t.Fatalf("schema invalid or not deterministic: %s", s)
	}
	text := string(s)
	for _, want := range []string{`"const":"search"`, `"enum":["local"]`, `"enum":["count"]`, `"const":"rlm"`, `"plan_1"`} {
		if !strings.Contains(text, want) {
			t.Errorf("schema lacks %s", want)
		}
	}
	for _, not := range []string{`"slice"`, `"other"`, `"hidden"`, `"const":"parallel"`, `"const":"checkpoint"`} {
		if strings.Contains(text, not) {
			t.Errorf("schema offers %s, which the capabilities do not grant", not)
		}
	}
	bare := string(plan.Schema(nil, nil, nil, b))
	if !strings.Contains(bare, `"maxItems":1`) || !strings.Contains(bare, `"expr_novar"`) || strings.Contains(bare, `"const":"context"`) {
		t.Errorf("no-capability schema: %s", bare)
	}
	// The grammar's example plan has the schema's shape: every key it uses
	// is one the schema names.
	ex := `{"steps":[{"op":"context","handle":{"ref":"input","name":"context"},"action":{"type":"search","pattern":"needle"},"bind":"hits"},{"op":"final","value":{"ref":"var","name":"hits"}}]}`
	if _, err := plan.ParseJSON(ex); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"op"`, `"handle"`, `"action"`, `"pattern"`, `"bind"`, `"value"`, `"ref"`, `"name"`, `"steps"`} {
		if !strings.Contains(text, key) {
			t.Errorf("schema lacks the key %s of the example plan", key)
		}
	}
}
