package lint

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The patterns are spelled with escapes and concatenation so that this file
// does not match them itself.
var outsideReferences = []struct {
	re  *regexp.Regexp
	why string
	fix string
}{
	{regexp.MustCompile("\u00a7"), "a section mark (of a document that is not in the repository)",
		"say the rule and why in the comment; name the Kafka source file or KIP in docs/"},
	{regexp.MustCompile(`shared/` + `reference|\.\./` + `shared\b|kafka-zk-` + `replication\.md`),
		"a path outside the repository", "point to a page in docs/ instead"},
	{regexp.MustCompile(`\bS` + `PEC\b`), "a design document that is not in the repository",
		"say the rule in the comment, or cite docs/"},
	{regexp.MustCompile(`(?i)\breference ` + `[0-9]`), "a numbered section of an outside reference",
		"name the Kafka source file or KIP in docs/"},
}

// checkedFile reports whether the file at rel (slash-separated, relative to
// the module root) is text the rule applies to: Go code, docs, scripts and
// build files.
func checkedFile(rel string) bool {
	switch filepath.Ext(rel) {
	case ".go", ".md", ".sh", ".yml", ".yaml", ".properties", ".txt", ".json":
		return true
	}
	switch filepath.Base(rel) {
	case "Makefile", "Dockerfile", "run":
		return true
	}
	return false
}

// skippedDir: git's own files and the ignored build, data and dependency
// directories (see .gitignore); none of them is the project's text.
func skippedDir(rel string) bool {
	switch rel {
	case ".git", "bin", "data", ".cache", "compat/.m2", "compat/lib", "compat/lib39":
		return true
	}
	return false
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	t.Fatal("go.mod not found above the test's directory")
	return ""
}

// findOutsideReferences returns one "file:line: what (fix)" per hit in the
// tree under root.
func findOutsideReferences(root string) ([]string, int, error) {
	var hits []string
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if skippedDir(rel) {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || !checkedFile(rel) {
			return nil
		}
		files++
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
		for n := 1; sc.Scan(); n++ {
			line := sc.Text()
			for _, r := range outsideReferences {
				if r.re.MatchString(line) {
					hits = append(hits, rel+":"+itoa(n)+": "+r.why+" ("+r.fix+"): "+strings.TrimSpace(line))
				}
			}
		}
		return sc.Err()
	})
	return hits, files, err
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}

func TestNoOutsideReferences(t *testing.T) {
	root := moduleRoot(t)
	hits, files, err := findOutsideReferences(root)
	if err != nil {
		t.Fatal(err)
	}
	// The walk must have seen the repository, not an empty directory.
	if files < 100 {
		t.Fatalf("checked only %d files under %s", files, root)
	}
	for _, h := range hits {
		t.Error(h)
	}
}

// The check itself catches each kind of reference, and passes clean text.
func TestOutsideReferencePatterns(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, text string) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a/mark.go", "package a\n\n// The HW rule (\u00a73.7).\n")
	write("a/path.go", "package a\n\n// See ../"+"shared/"+"reference/x.md.\n")
	write("doc.md", "As S"+"PEC 4 says.\n")
	write("b/num.go", "package b\n\n// (Reference "+"4.8).\n")
	write("c/clean.go", "package c\n\n// The HW is min(LEO) over the ISR (Partition.scala).\n")
	write("data/ignored.md", "\u00a71\n")
	write("notes.bin", "\u00a71\n")
	hits, files, err := findOutsideReferences(dir)
	if err != nil {
		t.Fatal(err)
	}
	if files != 5 {
		t.Errorf("checked %d files, want 5 (data/ and .bin skipped)", files)
	}
	want := []string{"a/mark.go:3:", "a/path.go:3:", "b/num.go:3:", "doc.md:1:"}
	if len(hits) != len(want) {
		t.Fatalf("hits %q, want one per %q", hits, want)
	}
	for i, w := range want {
		if !strings.HasPrefix(hits[i], w) {
			t.Errorf("hit %d = %q, want prefix %q", i, hits[i], w)
		}
	}
}
