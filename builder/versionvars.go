package builder

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/capirepo/capirepo/provider"
)

// versionPackageVars maps the variables of a version package in cluster-api's
// pattern (sigs.k8s.io/cluster-api/version, which providers copy into their
// own module) to what capirepo stamps into them.
var versionPackageVars = map[string]func(stamp) string{
	"gitVersion":   func(s stamp) string { return s.Version },
	"gitCommit":    func(s stamp) string { return s.Commit },
	"buildDate":    func(s stamp) string { return s.Date },
	"gitMajor":     func(s stamp) string { return s.Major },
	"gitMinor":     func(s stamp) string { return s.Minor },
	"gitTreeState": func(s stamp) string { return s.TreeState },
}

// stamp is what the version variables are set to.
type stamp struct {
	BuildInfo
	Major, Minor string
	// TreeState is clean or dirty, as git status says; "" outside a checkout.
	TreeState string
}

// goPackage is a package of the manager's build, as go list reports it.
type goPackage struct {
	ImportPath, Dir, Name string
	Main                  bool // of the main module
}

// versionLdflags completes the ldflags with the version variables the
// manager has, and says what they stamp. With the default ldflags, a
// version package of the provider's own module in cluster-api's pattern
// (gitVersion, gitCommit, buildDate, gitMajor, gitMinor, gitTreeState) is
// stamped too, as the providers' Makefiles do through hack/version.sh.
// Every -X whose variable the manager lacks sets nothing (the linker says
// nothing of it), so notes names them; when no -X sets anything, it says
// that the manager's version stays unset.
func versionLdflags(ctx context.Context, o BinaryOptions, dir, pkg, ldflags string, s stamp) (string, []string, error) {
	pkgs, err := listPackages(ctx, o, dir, pkg)
	if err != nil {
		return "", nil, err
	}
	vars := map[string]bool{} // -X targets that exist: main.version, example.com/p/version.gitVersion
	var versionPkg *goPackage
	for i, p := range pkgs {
		target := p.ImportPath
		switch {
		case p.Name == "main" && p.Main:
			target = "main"
		case p.Main && path.Base(p.ImportPath) == "version" && versionPkg == nil:
			versionPkg = &pkgs[i]
		default:
			continue
		}
		names, err := stringVars(p.Dir)
		if err != nil {
			return "", nil, err
		}
		for _, n := range names {
			vars[target+"."+n] = true
		}
	}
	var notes []string
	if o.Build.Ldflags == "" && versionPkg != nil {
		var added []string
		for _, name := range slices.Sorted(maps.Keys(versionPackageVars)) {
			if target := versionPkg.ImportPath + "." + name; vars[target] {
				ldflags += fmt.Sprintf(" -X '%s=%s'", target, versionPackageVars[name](s))
				added = append(added, name)
			}
		}
		if len(added) > 0 {
			notes = append(notes, fmt.Sprintf("version stamped into %s (%s), the provider's version package", versionPkg.ImportPath, strings.Join(added, ", ")))
		}
	}
	targets := xTargets(ldflags)
	var missing, set []string
	for _, t := range targets {
		if vars[t] {
			set = append(set, t)
		} else {
			missing = append(missing, t)
		}
	}
	switch {
	case len(set) == 0:
		notes = append(notes, fmt.Sprintf("warning: the ldflags set no variable of the manager (%s: %s has none of them, and no version package of its module was found): its version stays unset; name the variables in build.ldflags, e.g. -X <module>/version.gitVersion={{.Version}}",
			xFlags(targets), pkg))
	case o.Build.Ldflags != "" && len(missing) > 0:
		notes = append(notes, fmt.Sprintf("warning: build.ldflags sets %s, which the manager does not have: the linker ignores them", strings.Join(missing, ", ")))
	}
	return ldflags, notes, nil
}

func xFlags(ts []string) string {
	if len(ts) == 0 {
		return "no -X"
	}
	return "-X " + strings.Join(ts, ", -X ")
}

// xTargets lists the variables the -X flags of ldflags name (-X a.b=c,
// -X=a.b=c, quoted or not).
func xTargets(ldflags string) []string {
	fields := strings.Fields(ldflags)
	var out []string
	for i := 0; i < len(fields); i++ {
		f := strings.Trim(fields[i], `'"`)
		var arg string
		switch {
		case f == "-X" && i+1 < len(fields):
			i++
			arg = strings.Trim(fields[i], `'"`)
		case strings.HasPrefix(f, "-X="):
			arg = strings.TrimPrefix(f, "-X=")
		default:
			continue
		}
		if name, _, ok := strings.Cut(arg, "="); ok {
			out = append(out, name)
		}
	}
	return out
}

// listPackages lists the packages the manager is built from.
func listPackages(ctx context.Context, o BinaryOptions, dir, pkg string) ([]goPackage, error) {
	cmd := exec.CommandContext(ctx, o.GoCommand, "list", "-e", "-deps", "-f", "{{.ImportPath}}\t{{.Dir}}\t{{.Name}}\t{{with .Module}}{{.Main}}{{end}}", pkg)
	cmd.Dir = dir
	env := o.Env
	if env == nil {
		env = os.Environ()
	}
	cmd.Env = withEnv(env, map[string]string{"CGO_ENABLED": "0", "GOFLAGS": "-mod=readonly"})
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list %s (in %s) failed:\n%s", pkg, o.Dir, strings.TrimSpace(stderr.String()))
	}
	var pkgs []goPackage
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) == 4 {
			pkgs = append(pkgs, goPackage{ImportPath: f[0], Dir: f[1], Name: f[2], Main: f[3] == "true"})
		}
	}
	return pkgs, nil
}

// stringVars lists the package-level variables of the package in dir that
// -X can set: strings, declared without a value or with a constant string.
func stringVars(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	var out []string
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			continue // go build says what is wrong with it
		}
		for _, d := range file.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				typ, _ := vs.Type.(*ast.Ident)
				for i, n := range vs.Names {
					isString := typ != nil && typ.Name == "string"
					if vs.Type == nil && i < len(vs.Values) {
						lit, ok := vs.Values[i].(*ast.BasicLit)
						isString = ok && lit.Kind == token.STRING
					}
					if isString {
						out = append(out, n.Name)
					}
				}
			}
		}
	}
	return out, nil
}

// stampOf is what the version variables get for info.
func stampOf(ctx context.Context, dir string, info BuildInfo) stamp {
	s := stamp{BuildInfo: info}
	if v, err := provider.ParseVersion(info.Version); err == nil {
		s.Major, s.Minor = fmt.Sprint(v.Major()), fmt.Sprint(v.Minor())
	}
	if git(ctx, dir, "rev-parse", "--is-inside-work-tree") == "true" {
		s.TreeState = "clean"
		if git(ctx, dir, "status", "--porcelain") != "" {
			s.TreeState = "dirty"
		}
	}
	return s
}
