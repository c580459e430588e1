package server

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// Issue 10: a handler never asks whether the broker is standalone or part
// of a ZooKeeper cluster; standalone is a cluster of one and runs the same
// code. This lint keeps it that way: it parses every handler file
// (server/NN_name.go) and fails on any reference that can only serve to
// tell the two modes apart.
//
// modeForkIdentifiers are names a handler must not mention at all, as an
// identifier or as a selector (x.Name): each exists to say which mode the
// broker runs in. Add a name here when the code grows a new way to ask.
var modeForkIdentifiers = []string{
	"Standalone",       // config.Config.Standalone()
	"IsStandalone",     // a likely future spelling of the same question
	"ZooKeeperConnect", // the controller's option naming ZooKeeper
	"ZookeeperConnect", // config.Config's zookeeper.connect
}

// modeForkNilFields are fields whose comparison with nil (x.f == nil,
// x.f != nil, nil == x.f, nil != x.f) tells the modes apart: today
// Broker.cluster is nil exactly when the broker is standalone.
var modeForkNilFields = []string{
	"cluster",
}

// handlerFileName matches the file-per-API handlers: two digits, an
// underscore, the API's name.
var handlerFileName = regexp.MustCompile(`^[0-9]{2}_[a-z0-9_]+\.go$`)

// modeFork is one reference the lint refuses.
type modeFork struct {
	Pos  token.Position
	What string
}

func (f modeFork) String() string {
	return fmt.Sprintf("%s:%d:%d: %s", filepath.Base(f.Pos.Filename), f.Pos.Line, f.Pos.Column, f.What)
}

// findModeForks lists every mode fork in one parsed file, in source order.
func findModeForks(fset *token.FileSet, file *ast.File) []modeFork {
	// A selector's Sel is reported with its selector (cfg.Standalone), not
	// again as a bare identifier.
	sels := map[*ast.Ident]bool{}
	ast.Inspect(file, func(n ast.Node) bool {
		if s, ok := n.(*ast.SelectorExpr); ok {
			sels[s.Sel] = true
		}
		return true
	})
	var out []modeFork
	ast.Inspect(file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BinaryExpr:
			if n.Op != token.EQL && n.Op != token.NEQ {
				return true
			}
			for _, pair := range [][2]ast.Expr{{n.X, n.Y}, {n.Y, n.X}} {
				if !isNil(pair[1]) {
					continue
				}
				if name, ok := fieldName(pair[0]); ok && slices.Contains(modeForkNilFields, name) {
					out = append(out, modeFork{fset.Position(n.Pos()),
						fmt.Sprintf("compares %s with nil (%s)", name, exprString(n))})
				}
			}
		case *ast.SelectorExpr:
			if slices.Contains(modeForkIdentifiers, n.Sel.Name) {
				out = append(out, modeFork{fset.Position(n.Pos()), "mentions " + exprString(n)})
			}
		case *ast.Ident:
			// A bare name: a local variable, a function, or a
			// composite-literal key named like a mode question.
			if !sels[n] && slices.Contains(modeForkIdentifiers, n.Name) {
				out = append(out, modeFork{fset.Position(n.Pos()), "mentions " + n.Name})
			}
		}
		return true
	})
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Pos.Line != out[j].Pos.Line {
			return out[i].Pos.Line < out[j].Pos.Line
		}
		return out[i].Pos.Column < out[j].Pos.Column
	})
	return out
}

func isNil(e ast.Expr) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == "nil"
}

// fieldName is f for x.f and for a bare f (a field used inside a method
// through an embedded receiver, or a local copy named like the field).
func fieldName(e ast.Expr) (string, bool) {
	switch e := e.(type) {
	case *ast.SelectorExpr:
		return e.Sel.Name, true
	case *ast.Ident:
		return e.Name, true
	case *ast.ParenExpr:
		return fieldName(e.X)
	}
	return "", false
}

func exprString(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return exprString(e.X) + "." + e.Sel.Name
	case *ast.ParenExpr:
		return "(" + exprString(e.X) + ")"
	case *ast.CallExpr:
		return exprString(e.Fun) + "(...)"
	case *ast.BinaryExpr:
		return exprString(e.X) + " " + e.Op.String() + " " + exprString(e.Y)
	case *ast.StarExpr:
		return "*" + exprString(e.X)
	}
	return fmt.Sprintf("%T", e)
}

func TestHandlersDoNotForkOnMode(t *testing.T) {
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var handlers int
	var forks []modeFork
	for _, name := range names {
		if !handlerFileName.MatchString(name) || strings.HasSuffix(name, "_test.go") {
			continue
		}
		handlers++
		file, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatalf("parse %s: %v", name, err)
		}
		forks = append(forks, findModeForks(fset, file)...)
	}
	// The handlers are many (one per API); finding few means the glob or
	// the name pattern broke, and the lint would pass on nothing.
	if handlers < 30 {
		t.Fatalf("found %d handler files (NN_name.go), want at least 30", handlers)
	}
	if len(forks) > 0 {
		var b strings.Builder
		files := map[string]bool{}
		for _, f := range forks {
			files[filepath.Base(f.Pos.Filename)] = true
			fmt.Fprintf(&b, "\n  %s", f)
		}
		t.Errorf("%d standalone-versus-cluster forks in %d handler files (a handler must not ask which mode the broker runs in; standalone is a cluster of one):%s",
			len(forks), len(files), b.String())
	}
}

// The lint's own cases: each fork shape is caught, and the look-alikes a
// handler may legitimately contain are not.
func TestFindModeForks(t *testing.T) {
	const src = `package server

func f(b *Broker, cfg Config) {
	if b.cluster == nil {}           // 1
	if nil != b.cluster {}           // 2
	if (b.cluster) != nil {}         // 3
	_ = cfg.Standalone()             // 4
	_ = cfg.ZookeeperConnect         // 5
	_ = Options{ZooKeeperConnect: x} // 6 (a composite-literal key is an identifier)
	var Standalone bool              // 7
	_ = Standalone                   // 8

	// Look-alikes that are not forks:
	if b.clusterID == nil {}
	if b.cluster.control == nil {}
	_ = b.cluster.control.IsController()
	if b.groups == nil {}
}
`
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "99_example.go", src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	got := findModeForks(fset, file)
	wantLines := []int{4, 5, 6, 7, 8, 9, 10, 11}
	var gotLines []int
	for _, f := range got {
		gotLines = append(gotLines, f.Pos.Line)
	}
	if fmt.Sprint(gotLines) != fmt.Sprint(wantLines) {
		var b strings.Builder
		for _, f := range got {
			fmt.Fprintf(&b, "\n  %s", f)
		}
		t.Errorf("forks on lines %v, want %v:%s", gotLines, wantLines, b.String())
	}
}
