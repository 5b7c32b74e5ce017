package host

import (
	"fmt"
	"io"
	"strings"
	"testing"
)

// TestStoragePhasesReportStorageFailure: a failure the outcome table does
// not know (here a torn read from the backend) is storage_failure in every
// operation that touches a store — receipts, turns and warm units
// included, which once came out as internal_error — and internal_error
// in one that does not.
func TestStoragePhasesReportStorageFailure(t *testing.T) {
	s := internalSession(t)
	unknown := fmt.Errorf("backend: read value log: %w", io.ErrUnexpectedEOF)
	for _, tc := range []struct {
		ph   phase
		want string
	}{
		{phReceipts, "storage_failure"}, {phReceipt, "storage_failure"}, {phTurn, "storage_failure"},
		{phUnits, "storage_failure"}, {phPublish, "storage_failure"}, {phDerive, "storage_failure"},
		{phRetire, "storage_failure"}, {phAppend, "storage_failure"}, {phWait, "storage_failure"},
		{phPlan, "internal_error"}, {phPolicy, "internal_error"}, {phCount, "internal_error"},
	} {
		reason, isOutcome := s.reason(tc.ph, unknown, nil)
		if !isOutcome {
			t.Fatalf("%s: thrown, want an outcome", tc.ph.name)
		}
		text := s.in.WriteQ(reason, nil)
		if !strings.Contains(text, tc.want) || !strings.Contains(text, "phase("+tc.ph.name+")") {
			t.Errorf("%s: reason %s, want %s naming the phase", tc.ph.name, text, tc.want)
		}
	}
}
