// tally reads `go test -json` on standard input, prints one line per top-level test as it
// ends (with the output of those that failed), and a closing line
// "go: N passed, N failed". A test that skipped, or started and never ended (a package that
// panicked or timed out), counts as failed; so does a package that failed outside any test
// (its build, or its emulator's stop in TestMain). Exit status 1 unless all passed and at
// least one ran.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
)

type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

func main() {
	prefix := "go"
	if len(os.Args) > 1 {
		prefix = os.Args[1]
	}
	type key struct{ pkg, test string }
	output := map[key]*strings.Builder{}
	started := map[key]bool{}
	pkgOut := map[string]*strings.Builder{}
	pkgFailedTests := map[string]int{}
	passed, failed := 0, 0
	var failures []string

	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var ev event
		if err := json.Unmarshal(line, &ev); err != nil {
			fmt.Println(string(line)) // build errors come as plain text
			continue
		}
		top := ev.Test
		if i := strings.IndexByte(top, '/'); i >= 0 {
			top = top[:i]
		}
		k := key{ev.Package, top}
		switch {
		case ev.Test == "" && ev.Action == "output":
			if pkgOut[ev.Package] == nil {
				pkgOut[ev.Package] = &strings.Builder{}
			}
			pkgOut[ev.Package].WriteString(ev.Output)
		case ev.Test != "" && ev.Action == "output":
			if output[k] == nil {
				output[k] = &strings.Builder{}
			}
			output[k].WriteString(ev.Output)
		case ev.Test != "" && ev.Action == "run" && ev.Test == top:
			started[k] = true
		case ev.Test != "" && ev.Test == top && (ev.Action == "pass" || ev.Action == "fail" || ev.Action == "skip"):
			delete(started, k)
			name := fmt.Sprintf("%s.%s", shortPkg(ev.Package), ev.Test)
			if ev.Action == "pass" {
				passed++
				fmt.Printf("  ok    %-60s %6.1fs\n", name, ev.Elapsed)
			} else {
				failed++
				pkgFailedTests[ev.Package]++
				fmt.Printf("  %-5s %-60s %6.1fs\n", strings.ToUpper(ev.Action), name, ev.Elapsed)
				if output[k] != nil {
					fmt.Print(indent(output[k].String()))
				}
				failures = append(failures, name+" ("+ev.Action+")")
			}
		case ev.Test == "" && (ev.Action == "pass" || ev.Action == "fail" || ev.Action == "skip"):
			// Tests that started but never ended: the package panicked or hit its time limit.
			var left []string
			for s := range started {
				if s.pkg == ev.Package {
					left = append(left, s.test)
				}
			}
			sort.Strings(left)
			for _, tname := range left {
				delete(started, key{ev.Package, tname})
				failed++
				pkgFailedTests[ev.Package]++
				name := shortPkg(ev.Package) + "." + tname
				fmt.Printf("  FAIL  %-60s (never ended)\n", name)
				if o := output[key{ev.Package, tname}]; o != nil {
					fmt.Print(indent(o.String()))
				}
				failures = append(failures, name+" (never ended)")
			}
			if ev.Action == "fail" && pkgFailedTests[ev.Package] == 0 {
				failed++
				fmt.Printf("  FAIL  %s (outside any test: build, emulator start/stop or TestMain)\n", shortPkg(ev.Package))
				if o := pkgOut[ev.Package]; o != nil {
					fmt.Print(indent(o.String()))
				}
				failures = append(failures, shortPkg(ev.Package)+" (package)")
			} else if ev.Action == "fail" {
				// the emulator's log, printed by TestMain after a failure
				if o := pkgOut[ev.Package]; o != nil {
					fmt.Print(indent(o.String()))
				}
			}
			fmt.Printf("%s %s (%.1fs)\n", strings.ToUpper(ev.Action), shortPkg(ev.Package), ev.Elapsed)
		}
	}
	// Whatever is left started and never ended, and its package never said so either.
	for k := range started {
		failed++
		failures = append(failures, shortPkg(k.pkg)+"."+k.test+" (never ended)")
	}
	if len(failures) > 0 {
		fmt.Println("failed:")
		for _, f := range failures {
			fmt.Println("  " + f)
		}
	}
	fmt.Printf("%s: %d passed, %d failed\n", prefix, passed, failed)
	if failed > 0 || passed == 0 {
		os.Exit(1)
	}
}

func shortPkg(p string) string {
	return strings.TrimPrefix(p, "sbemu/tests/e2e/go/")
}

func indent(s string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if l != "" {
			b.WriteString("      " + l)
		}
	}
	return b.String()
}
