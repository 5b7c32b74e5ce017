// Package enginebench measures the Prolog engine on classic workloads
// beside SWI-Prolog, in the same run on the same machine.
//
// Each workload is a Prolog file in workloads/ with workload(Name, Goal)
// facts (and optional setup(Name, Setup) ones). A run is one fresh
// process of a system: the driver (driver.pl), the workload's file and a
// directive that runs one workload, whose goal is timed by the system
// itself with statistics(cputime, _) (setup untimed), so that process
// start-up and loading are left out. The same files run unchanged under
// rlmpl and SWI-Prolog.
//
// The peak resident set of a process is GNU time's (/usr/bin/time, Debian
// package time) when it is installed, else the largest VmHWM read from
// /proc while the process runs (sampled: growth in its last milliseconds
// may be missed). The kernel's own figure for a child (rusage) cannot
// serve: it counts the memory of the parent it was forked from.
//
// The package knows nothing of rlmpl: a System is any command that runs
// a Prolog file (rlmpl run FILE, swipl FILE).
package enginebench

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

//go:embed driver.pl workloads/*.pl
var files embed.FS

// Workload is one workload(Name, Goal) of a workload file.
type Workload struct {
	Name string
	File string // its file under workloads/
}

var workloadFact = regexp.MustCompile(`(?m)^workload\(([a-z0-9_]+),`)

// Workloads lists every workload, by file name and then in file order.
func Workloads() []Workload {
	entries, err := files.ReadDir("workloads")
	if err != nil {
		panic(err) // embedded: cannot fail
	}
	var out []Workload
	for _, e := range entries {
		b, err := files.ReadFile("workloads/" + e.Name())
		if err != nil {
			panic(err)
		}
		for _, m := range workloadFact.FindAllStringSubmatch(string(b), -1) {
			out = append(out, Workload{Name: m[1], File: e.Name()})
		}
	}
	return out
}

// Script returns the Prolog text that runs w: the driver, w's file, and
// an initialization(main) directive that runs w and halts.
func (w Workload) Script() string {
	driver, _ := files.ReadFile("driver.pl")
	body, _ := files.ReadFile("workloads/" + w.File)
	return string(driver) + "\n" + string(body) + "\n:- initialization(bench_run(" + w.Name + "), main).\n"
}

// System is a Prolog system to measure: Argv followed by a file name
// runs that file (its initialization(main) goal, then exit).
type System struct {
	Name string
	Argv []string
	Env  []string // added to the environment
}

// Result is one run of a workload by a system.
type Result struct {
	Workload string  `json:"workload"`
	System   string  `json:"system"`
	Status   string  `json:"status"`           // ok, failed (the goal failed or threw), error (the process did not report)
	CPU      float64 `json:"cpu_seconds"`      // CPU time of the goal, as the system measured it
	RSSKB    int64   `json:"peak_rss_kb"`      // peak resident set of the process
	Detail   string  `json:"detail,omitempty"` // what went wrong
}

var resultLine = regexp.MustCompile(`bench_result\(([a-z0-9_]+),\s*(\w+),\s*([0-9.eE+-]+)\)`)

// Run runs w once under sys in a fresh process, in dir, giving up after
// timeout.
func Run(ctx context.Context, w Workload, sys System, dir string, timeout time.Duration) Result {
	r := Result{Workload: w.Name, System: sys.Name, Status: "error"}
	script := filepath.Join(dir, "bench_"+w.Name+".pl")
	if err := os.WriteFile(script, []byte(w.Script()), 0o644); err != nil {
		r.Detail = err.Error()
		return r
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	argv := append(slices.Clone(sys.Argv), script)
	rssFile := filepath.Join(dir, "rss_"+w.Name)
	if _, err := os.Stat(gnuTime); err == nil {
		argv = append([]string{gnuTime, "-q", "-f", "%M", "-o", rssFile}, argv...)
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), sys.Env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		r.Detail = err.Error()
		return r
	}
	sampled := sampleHWM(cmd.Process.Pid)
	err := cmd.Wait()
	r.RSSKB = <-sampled
	if b, rerr := os.ReadFile(rssFile); rerr == nil {
		if kb, perr := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); perr == nil {
			r.RSSKB = kb
		}
		os.Remove(rssFile)
	}
	m := resultLine.FindStringSubmatch(out.String())
	if m == nil {
		r.Detail = tail(out.String(), err)
		if ctx.Err() != nil {
			r.Detail = fmt.Sprintf("timed out after %s", timeout)
		}
		return r
	}
	r.Status = m[2]
	r.CPU, _ = strconv.ParseFloat(m[3], 64)
	if r.Status != "ok" {
		r.Detail = tail(out.String(), err)
	}
	return r
}

const gnuTime = "/usr/bin/time"

// sampleHWM reads the VmHWM of pid (and of its child, when pid is GNU
// time) every few milliseconds until the process is gone, and sends the
// largest, in KB.
func sampleHWM(pid int) <-chan int64 {
	done := make(chan int64, 1)
	go func() {
		var peak int64
		for {
			alive := false
			for _, p := range append([]int{pid}, children(pid)...) {
				if kb, ok := vmHWM(p); ok {
					alive = true
					peak = max(peak, kb)
				}
			}
			if !alive {
				done <- peak
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	return done
}

func vmHWM(pid int) (int64, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb, err == nil
		}
	}
	return 0, false
}

func children(pid int) []int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if n, err := strconv.Atoi(f); err == nil {
			out = append(out, n)
		}
	}
	return out
}

func tail(out string, err error) string {
	out = strings.TrimSpace(out)
	if len(out) > 300 {
		out = "…" + out[len(out)-300:]
	}
	if err != nil {
		out = strings.TrimSpace(out + " (" + err.Error() + ")")
	}
	return out
}

// Summary is the runs of one workload by one system.
type Summary struct {
	Workload string
	System   string
	Runs     []Result
}

// Median returns the median CPU time of the successful runs, and whether
// every run succeeded.
func (s Summary) Median() (float64, bool) {
	var ts []float64
	for _, r := range s.Runs {
		if r.Status != "ok" {
			return 0, false
		}
		ts = append(ts, r.CPU)
	}
	if len(ts) == 0 {
		return 0, false
	}
	slices.Sort(ts)
	return ts[len(ts)/2], true
}

// PeakRSS returns the largest peak resident set of the runs, in KB.
func (s Summary) PeakRSS() int64 {
	var m int64
	for _, r := range s.Runs {
		m = max(m, r.RSSKB)
	}
	return m
}

// LIPS is the logical inferences of workloads measured in LIPS: naive
// reverse of 30 elements is 496 inferences, run 3,000 times.
var LIPS = map[string]float64{"nrev30": 496 * 3000}

// Report writes the table of summaries: for each workload, each system's
// median CPU time and peak RSS, and the ratio of the first system's time
// to the second's.
func Report(w io.Writer, sums []Summary, systems []string) error {
	by := map[string]map[string]Summary{}
	var order []string
	for _, s := range sums {
		if by[s.Workload] == nil {
			by[s.Workload] = map[string]Summary{}
			order = append(order, s.Workload)
		}
		by[s.Workload][s.System] = s
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	header := "workload\t"
	for _, sys := range systems {
		header += sys + " s\t"
	}
	if len(systems) == 2 {
		header += "ratio\t"
	}
	for _, sys := range systems {
		header += sys + " RSS\t"
	}
	fmt.Fprintln(tw, header)
	for _, name := range order {
		line := name + "\t"
		var times []float64
		for _, sys := range systems {
			t, ok := by[name][sys].Median()
			if !ok {
				line += status(by[name][sys]) + "\t"
				times = append(times, -1)
				continue
			}
			line += fmt.Sprintf("%.3f\t", t)
			times = append(times, t)
		}
		if len(systems) == 2 {
			if times[0] > 0 && times[1] > 0 {
				line += fmt.Sprintf("%.1f×\t", times[0]/times[1])
			} else {
				line += "–\t"
			}
		}
		for _, sys := range systems {
			line += fmt.Sprintf("%d MB\t", by[name][sys].PeakRSS()/1024)
		}
		fmt.Fprintln(tw, line)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, name := range order {
		li, ok := LIPS[name]
		if !ok {
			continue
		}
		var parts []string
		for _, sys := range systems {
			if t, ok := by[name][sys].Median(); ok && t > 0 {
				parts = append(parts, fmt.Sprintf("%s %.2fM LIPS", sys, li/t/1e6))
			}
		}
		if len(parts) > 0 {
			fmt.Fprintf(w, "%s: %s\n", name, strings.Join(parts, ", "))
		}
	}
	return nil
}

func status(s Summary) string {
	for _, r := range s.Runs {
		if r.Status != "ok" {
			return r.Status
		}
	}
	return "–"
}

// WriteJSON writes every run as a JSON line.
func WriteJSON(w io.Writer, sums []Summary) error {
	enc := json.NewEncoder(w)
	for _, s := range sums {
		for _, r := range s.Runs {
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
	}
	return nil
}
