package principal

import (
	"bytes"
	"context"
	"encoding/hex"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// runJava runs a single-file Java program from testdata with the given
// input lines and returns its output lines. A missing JDK fails the test.
func runJava(t *testing.T, program string, lines []string) []string {
	t.Helper()
	javaPath, err := exec.LookPath("java")
	if err != nil {
		t.Fatalf("java is needed to compare with java.util.regex: %v", err)
	}
	src, err := filepath.Abs(filepath.Join("testdata", program))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, javaPath, src)
	cmd.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("java %s: %v\n%s", program, err, stderr.String())
	}
	res := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(res) != len(lines) {
		t.Fatalf("java %s answered %d lines to %d", program, len(res), len(lines))
	}
	return res
}

func hexs(s string) string { return hex.EncodeToString([]byte(s)) }

// randomPattern builds a pattern from constructs that mean the same in
// Java and Go syntax (so both compile it), biased towards the DN shapes
// mapping rules are written for and towards patterns that match empty. \b
// is left out: Java's word boundary knows Unicode letters, Go's only ASCII
// (doc.go lists the differences).
func randomPattern(r *rand.Rand, depth int) string {
	atoms := []string{"CN", "=", ",", "a", "b", ".", `\w`, `\d`, "[a-z]", "[^,]", `\,`, `\\`, " ", "é"}
	var b strings.Builder
	for range r.IntN(4) + 1 {
		switch k := r.IntN(10); {
		case k < 5:
			b.WriteString(atoms[r.IntN(len(atoms))])
		case k < 7 && depth < 2:
			b.WriteString("(" + randomPattern(r, depth+1) + ")")
		case k < 8 && depth < 2:
			b.WriteString("(" + randomPattern(r, depth+1) + "|" + randomPattern(r, depth+1) + ")")
		case k < 9:
			b.WriteString([]string{"^", "$"}[r.IntN(2)])
		default:
			b.WriteString("(?:" + atoms[r.IntN(len(atoms))] + ")")
		}
		if r.IntN(3) == 0 {
			b.WriteString([]string{"*", "+", "?", "*?", "+?", "??", "{1,2}"}[r.IntN(7)])
		}
	}
	return b.String()
}

// randomInput never ends in a line terminator: Java's $ also matches before
// a final one, Go's only at the very end (see doc.go).
func randomInput(r *rand.Rand) string {
	pieces := []string{"CN=", "OU=", ",", "a", "b", "Z", "1", " ", `\,`, `\`, "é", "\r", "名"}
	var b strings.Builder
	for range r.IntN(8) {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	return strings.TrimRight(b.String(), "\r")
}

func randomReplacement(r *rand.Rand) string {
	pieces := []string{"x", "$0", "$1", "$2", "$12", `\$`, `\\`, "@", "${g}", "é"}
	var b strings.Builder
	for range r.IntN(4) {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	return b.String()
}

// goFind renders findAll's matches in JavaRegex's F format. An unset group
// and an empty one print alike: for the empty matches findAll adds, Java
// may report a group as matched-empty where findAll leaves it unset, and
// both expand to nothing.
func goFind(j *javaRegexp, s string) string {
	var parts []string
	for _, m := range j.findAll(s) {
		g1 := ""
		if len(m) > 2 && m[2] >= 0 {
			g1 = hexs(s[m[2]:m[3]])
		}
		parts = append(parts, hexs(s[m[0]:m[1]])+":"+g1)
	}
	return strings.Join(parts, ",")
}

// goReplace renders a whole-match replaceAll in JavaRegex's R format.
func goReplace(pattern, repl, s string) string {
	whole, err := compileJava(pattern, true)
	if err != nil {
		return "ERROR compile: " + err.Error()
	}
	if !whole.re.MatchString(s) {
		return "NOMATCH"
	}
	j, err := compileJava(pattern, false)
	if err != nil {
		return "ERROR compile: " + err.Error()
	}
	out, err := j.replaceAll(s, repl)
	if err != nil {
		return "ERROR " + err.Error()
	}
	return hexs(out)
}

// sameAnswer compares a Go and a Java answer; errors compare by kind only
// (both failed), since the exception texts are Java's own.
func sameAnswer(goAns, javaAns string) bool {
	if strings.HasPrefix(goAns, "ERROR ") || strings.HasPrefix(javaAns, "ERROR ") {
		return strings.HasPrefix(goAns, "ERROR ") && strings.HasPrefix(javaAns, "ERROR ")
	}
	return goAns == javaAns
}

func TestJavaRegexMatchesJava(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	type question struct{ line, goAns string }
	var qs []question
	// Kafka's rule splitter over rule lists, the main user of findAll.
	ruleBits := []string{"DEFAULT", "RULE:", "/", `\/`, ",", " ", "L", "U", "a", "(.*)", `\`, "$1"}
	for range 300 {
		var b strings.Builder
		for range r.IntN(10) {
			b.WriteString(ruleBits[r.IntN(len(ruleBits))])
		}
		s := javaTrim(b.String())
		qs = append(qs, question{"F\t" + hexs(ruleSplitter) + "\t" + hexs(s), goFind(ruleSplitterRe, s)})
	}
	// Random patterns: find loops and whole-match replaceAll.
	for len(qs) < 2500 {
		p, s := randomPattern(r, 0), randomInput(r)
		j, err := compileJava(p, false)
		if err != nil {
			t.Fatalf("pattern %q does not compile in Go: %v", p, err)
		}
		qs = append(qs, question{"F\t" + hexs(p) + "\t" + hexs(s), goFind(j, s)})
		if r.IntN(2) == 0 {
			repl := randomReplacement(r)
			if r.IntN(4) == 0 {
				p = "(?<g>" + p + ")"
			}
			qs = append(qs, question{"R\t" + hexs(p) + "\t" + hexs(repl) + "\t" + hexs(s), goReplace(p, repl, s)})
		}
	}
	lines := make([]string, len(qs))
	for i, q := range qs {
		lines[i] = q.line
	}
	java := runJava(t, "JavaRegex.java", lines)
	bad := 0
	for i, q := range qs {
		if !sameAnswer(q.goAns, java[i]) {
			bad++
			if bad <= 10 {
				t.Errorf("%s\n go   %s\n java %s", q.line, q.goAns, java[i])
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d answers differ from Java", bad, len(qs))
	}
}
