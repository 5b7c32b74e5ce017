package runtime

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A one-shot `rlmpl pack` or a short script pays its process's first pack
// or first managed turn; BenchmarkFreshProcess measures that first call
// against the later ones of the same process, over fresh processes (the
// test binary re-executed as TestFreshProcessChild, packing or taking
// turns six times on a 2,000-message conversation). -benchtime Nx runs N
// processes of each kind. It reports the medians over processes of the
// first call, of the second, of the median of the later five, and of the
// ratio first/later.
const envFreshDir, envFreshKind = "RLMPL_FRESH_DIR", "RLMPL_FRESH_KIND"

func TestFreshProcessChild(t *testing.T) {
	dir, kind := os.Getenv(envFreshDir), os.Getenv(envFreshKind)
	if dir == "" {
		t.Skip("only run as BenchmarkFreshProcess's child")
	}
	rt, err := New(&Options{StateDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	st, err := rt.OpenStore(StoreSpec{Dir: "s"})
	if err != nil {
		t.Fatal(err)
	}
	c := st.Conversation("c")
	ctx := context.Background()
	var ms []string
	for i := range 6 {
		opts := benchTurnOptions()
		t0 := time.Now()
		if kind == "pack" {
			_, err = c.Pack(ctx, opts.Pack)
		} else {
			opts.TurnID = fmt.Sprintf("p%d-%d", os.Getpid(), i)
			_, err = c.Turn(ctx, user("what about the lease path?"), opts)
		}
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, strconv.FormatFloat(float64(time.Since(t0).Microseconds())/1000, 'f', 3, 64))
	}
	fmt.Println("FRESH", strings.Join(ms, " "))
}

func BenchmarkFreshProcess(b *testing.B) {
	dir := b.TempDir()
	rt, err := New(&Options{StateDir: dir})
	if err != nil {
		b.Fatal(err)
	}
	st, err := rt.OpenStore(StoreSpec{Dir: "s"})
	if err != nil {
		b.Fatal(err)
	}
	st.Create("c", nil)
	if _, err := st.Conversation("c").Import(strings.NewReader(benchTranscript(2000)), ImportOptions{Encodings: []string{"o200k_base"}, WaitIndexed: time.Minute}); err != nil {
		b.Fatal(err)
	}
	rt.Close()
	for _, kind := range []string{"pack", "turn"} {
		b.Run(kind, func(b *testing.B) {
			var first, second, later, ratio []float64
			for range b.N {
				cmd := exec.Command(os.Args[0], "-test.run=^TestFreshProcessChild$", "-test.count=1")
				cmd.Env = append(os.Environ(), envFreshDir+"="+dir, envFreshKind+"="+kind)
				out, err := cmd.Output()
				if err != nil {
					b.Fatalf("child: %v\n%s", err, out)
				}
				var ms []float64
				for _, line := range strings.Split(string(out), "\n") {
					if f, ok := strings.CutPrefix(line, "FRESH "); ok {
						for _, v := range strings.Fields(f) {
							x, _ := strconv.ParseFloat(v, 64)
							ms = append(ms, x)
						}
					}
				}
				if len(ms) != 6 {
					b.Fatalf("child printed %q", out)
				}
				med := median(ms[1:])
				first, second, later, ratio = append(first, ms[0]), append(second, ms[1]), append(later, med), append(ratio, ms[0]/med)
			}
			b.ReportMetric(median(first), "first-ms")
			b.ReportMetric(median(second), "second-ms")
			b.ReportMetric(median(later), "later-p50-ms")
			b.ReportMetric(median(ratio), "first/later")
		})
	}
}

func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	return s[len(s)/2]
}
