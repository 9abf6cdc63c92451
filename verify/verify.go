package verify

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/capirepo/capirepo/internal/fsafe"
	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/release"
	"github.com/capirepo/capirepo/values"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/version"
	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1" //nolint:staticcheck // clusterctl still reads v1beta1 Clusters (spec.topology.class)
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/config"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/repository"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/yamlprocessor"
	"sigs.k8s.io/cluster-api/util/contract"
)

// Repo is one provider repository as clusterctl addresses it.
type Repo struct {
	ID provider.ID
	// URL is the provider URL of a clusterctl config: file:///abs/<label>/<version>/<components>,
	// https://github.com/<owner>/<repo>/releases/<tag>/<components> or
	// https://gitlab.<host>/api/v4/projects/<slug>/packages/generic/<package>/<version>/<components>.
	URL string
	// Version to read; "" takes the version clusterctl derives from the URL.
	Version string
	// Files names the files the release holds, since clusterctl cannot list
	// a GitHub release or GitLab package. Its cluster-template*.yaml and
	// clusterclass-*.yaml are read. Nil for a file:// URL means the folder is
	// listed; nil for a remote URL means templates are not read.
	Files []string
}

// Options tune a verification.
type Options struct {
	// Version picks the version Dir verifies; "" takes the newest in the tree.
	Version string
	// KubernetesVersion is KUBERNETES_VERSION; "" means values.KubernetesVersion.
	KubernetesVersion string
	// Variables are clusterctl config values set before anything is read:
	// real values for template or components variables (they win over the
	// fixed values and stand-ins), and github-token / gitlab-access-token.
	Variables map[string]string
	// Values are real values for one flavor's template and a Lookup where
	// clusterctl would find values (package values); a variable without a
	// real value gets the stand-in package values chooses for the file.
	Values values.Real
	// HTTPClient gives clusterctl's reads over HTTP their waits: those of a
	// client publish.NewHTTPClient made (--timeout); nil means publish's
	// defaults. Credentials go only to the provider URLs' hosts either way.
	HTTPClient *http.Client
	// Waived are the template and clusterclass files a maintainer knows
	// clusterctl fails to read, by their path in the release
	// (<label>/<version>/<name>), each with the waived lint finding that
	// says why (Waiver): their failure is reported, not an error. The
	// components and metadata.yaml are never excused: clusterctl init
	// fails without them, where a flavor's failure fails only that flavor.
	Waived map[string]string
}

// Waiver is how Options.Waived says a waived lint finding: its rule and the
// maintainer's reason (the lint's report says what it found).
func Waiver(rule, reason string) string {
	return fmt.Sprintf("%s waived: %s", rule, reason)
}

// File name patterns clusterctl derives from flavors and class names
// (yamlprocessor.SimpleProcessor.GetTemplateName, GetClusterClassTemplateName).
const (
	templatePrefix     = "cluster-template"
	clusterClassPrefix = "clusterclass-"
	yamlSuffix         = ".yaml"
)

// Repository reads every target back through clusterctl's repository client.
// It returns what was read, with the errors of every failed step joined:
// each names the provider, version and file and carries clusterctl's message.
func Repository(ctx context.Context, targets []Repo, opts Options) (*Report, error) {
	if len(targets) == 0 {
		return nil, errors.New("verify: no provider repository to read")
	}
	if opts.KubernetesVersion == "" {
		opts.KubernetesVersion = values.KubernetesVersion
	}
	// An empty overrides folder, so files a user keeps under
	// ~/.config/cluster-api/overrides never stand in for the repository's.
	overrides, err := os.MkdirTemp("", "capirepo-verify-overrides-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(overrides) }()

	rep := &Report{}
	var errs []error
	throughCapirepoTransport(targets, opts.HTTPClient, func() {
		for _, t := range targets {
			v := &targetVerifier{t: t, opts: opts, overrides: overrides, vals: newChooser(opts)}
			rep.Providers = append(rep.Providers, v.run(ctx))
			errs = append(errs, v.errs...)
		}
	})
	return rep, errors.Join(errs...)
}

type targetVerifier struct {
	t Repo
	// vals chooses every file's values; it learns the release's CRDs and
	// ClusterClasses as they are read.
	vals *values.Chooser
	// topo says which flavor ships the class a topology flavor needs
	// applied first (package values), from the files learn read.
	topo      *values.Topology
	opts      Options
	overrides string
	version   string
	rep       *ProviderReport
	errs      []error
}

// fail records an error about one file of the target; a template file the
// caller knows fails (Options.Waived) is reported as such instead.
func (v *targetVerifier) fail(file string, err error) {
	if file == "" {
		v.errs = append(v.errs, fmt.Errorf("%s %s: %w", v.t.ID.Label(), v.version, err))
		return
	}
	if why, ok := v.opts.Waived[path.Join(v.t.ID.Label(), v.version, file)]; ok && release.IsTemplate(file) { // read only for generate cluster
		v.rep.Waived = append(v.rep.Waived, WaivedFile{File: file, Error: err.Error(), Waiver: why})
		return
	}
	v.errs = append(v.errs, fmt.Errorf("%s %s: %s: %w", v.t.ID.Label(), v.version, file, err))
}

// newChooser is package values' chooser for one target: the caller's real
// values, the config values among them too.
func newChooser(opts Options) *values.Chooser {
	r := opts.Values
	r.Variables = maps.Clone(opts.Variables)
	if r.Variables == nil {
		r.Variables = map[string]string{}
	}
	maps.Copy(r.Variables, opts.Values.Variables)
	return values.New(values.Options{Real: r})
}

// Session is one clusterctl config with its variables and a repository
// client on it. Each flavor gets its own, as each `clusterctl generate
// cluster` run does, so one flavor's stand-ins never hide another's
// defaults. The install check (package install) processes components and
// templates through one as verify does.
type Session struct {
	reader *config.MemoryReader
	vals   *sessionValues
	repo   repository.Client
	rec    *recorder
}

// NewSession opens a clusterctl config in memory for the provider t, with
// the variables verify sets (the fixed template values, opts.KubernetesVersion
// and opts.Variables) and overrides as clusterctl's overrides folder (give
// an empty folder, so no file of the user's stands in for the repository's).
func NewSession(ctx context.Context, t Repo, opts Options, overrides string) (*Session, error) {
	r := config.NewMemoryReader()
	if _, err := r.AddProvider(t.ID.Name, t.ID.Type, t.URL); err != nil {
		return nil, err
	}
	if err := r.Init(ctx, ""); err != nil {
		return nil, err
	}
	r.Set("overridesFolder", overrides)
	vals := newSessionValues(opts.KubernetesVersion, opts.Variables)
	for k, val := range vals.set {
		r.Set(k, val)
	}
	cfg, err := config.New(ctx, "", config.InjectReader(r))
	if err != nil {
		return nil, err
	}
	p, err := cfg.Providers().Get(t.ID.Name, t.ID.Type)
	if err != nil {
		return nil, err
	}
	rec := &recorder{Processor: yamlprocessor.NewSimpleProcessor()}
	repo, err := repository.New(ctx, p, cfg, repository.InjectYamlProcessor(rec))
	if err != nil {
		return nil, err
	}
	return &Session{reader: r, vals: vals, repo: repo, rec: rec}, nil
}

func (v *targetVerifier) session(ctx context.Context) (*Session, error) {
	return NewSession(ctx, v.t, v.opts, v.overrides)
}

// Repository is clusterctl's repository client on the session's config.
func (s *Session) Repository() repository.Client { return s.repo }

// Values returns a copy of the variables set: the fixed values, the
// caller's, and those set since.
func (s *Session) Values() map[string]string { return maps.Clone(s.vals.set) }

// Set sets a variable to a real value.
func (s *Session) Set(name, value string) {
	s.vals.set[name] = value
	s.reader.Set(name, value)
}

// Apply sets the values package values chose for a file: real values
// and stand-ins.
func (s *Session) Apply(set values.Set) {
	for _, name := range set.Names() {
		s.Set(name, set.Values[name])
		s.vals.placeholder[name] = set.StandIns[name]
	}
}

// choose lists a file's variables through clusterctl (get with
// listVariablesOnly), then sets the values package values chooses for the
// bytes clusterctl fetched: for file, or for file fetched while flavor is
// generated when forFlavor (a class its topology Clusters name, which gets
// the flavor's real values).
func (v *targetVerifier) choose(s *Session, file string, forFlavor bool, flavor string, list func() error) error {
	s.rec.last = nil
	if err := list(); err != nil {
		return err
	}
	pick := v.vals.For
	if forFlavor {
		pick = func(file string, raw []byte, set map[string]string) (values.Set, error) {
			return v.vals.ForClass(flavor, file, raw, set)
		}
	}
	set, err := pick(file, s.rec.last, s.Values())
	if err != nil {
		return err
	}
	s.Apply(set)
	return nil
}

// learn reads every flavor and clusterclass file first, so that the
// values chosen for a flavor know every class the release ships.
func (v *targetVerifier) learn(ctx context.Context, s *Session, files []string) {
	var read []release.File
	for _, f := range files {
		s.rec.last = nil
		if flavor, ok := release.FlavorOf(f); ok {
			_, _ = s.repo.Templates(v.version).Get(ctx, flavor, Namespace, true)
		} else if class, ok := release.ClassOf(f); ok {
			_, _ = s.repo.ClusterClasses(v.version).Get(ctx, class, Namespace, true)
		} else {
			continue
		}
		// A file clusterctl cannot fetch or list fails when it is read.
		if s.rec.last != nil {
			v.vals.LearnTemplate(f, s.rec.last)
			read = append(read, release.File{Name: f, Data: s.rec.last})
		}
	}
	v.topo = values.TopologyOf(read)
}

func (v *targetVerifier) run(ctx context.Context) *ProviderReport {
	v.version = v.t.Version
	v.rep = &ProviderReport{Label: v.t.ID.Label(), URL: v.t.URL, Version: v.t.Version}
	s, err := v.session(ctx)
	if err != nil {
		v.fail("", err)
		return v.rep
	}
	if v.version == "" {
		v.version = s.repo.DefaultVersion()
		v.rep.Version = v.version
	}
	v.rep.ComponentsFile = componentsName(v.t.URL)

	v.versions(ctx, s)
	v.metadata(ctx, s)
	v.components(ctx, s)

	files, listed, err := v.files()
	if err != nil {
		v.fail("", err)
		return v.rep
	}
	v.rep.TemplatesListed = listed
	v.learn(ctx, s, files)
	// Default flavor first, then by name (file order would put
	// cluster-template-x.yaml before cluster-template.yaml).
	type flavorFile struct{ file, flavor string }
	var flavors []flavorFile
	for _, f := range files {
		if flavor, ok := release.FlavorOf(f); ok {
			flavors = append(flavors, flavorFile{f, flavor})
		}
	}
	slices.SortFunc(flavors, func(a, b flavorFile) int { return strings.Compare(a.flavor, b.flavor) })
	for _, f := range flavors {
		v.flavor(ctx, f.file, f.flavor)
	}
	for _, f := range files {
		if name, ok := release.ClassOf(f); ok {
			v.clusterClass(ctx, f, name)
		}
	}
	return v.rep
}

func (v *targetVerifier) versions(ctx context.Context, s *Session) {
	vs, err := s.repo.GetVersions(ctx)
	if err != nil {
		v.fail("", fmt.Errorf("list versions: %w", err))
		return
	}
	v.rep.Versions = vs
	if !slices.Contains(vs, v.version) {
		v.fail("", fmt.Errorf("clusterctl does not list version %s for %s: it lists [%s]", v.version, v.t.URL, strings.Join(vs, ", ")))
	}
}

// metadata reads metadata.yaml and applies the rule `clusterctl init` and
// `generate provider` apply (cluster/installer.go:getProviderContract): a
// release series covers the version's major.minor with a contract this
// clusterctl accepts.
func (v *targetVerifier) metadata(ctx context.Context, s *Session) {
	const file = "metadata.yaml"
	md, err := s.repo.Metadata(v.version).Get(ctx)
	if err != nil {
		v.fail(file, err)
		return
	}
	sv, err := version.ParseSemantic(v.version)
	if err != nil {
		v.fail("", fmt.Errorf("version %q: %w", v.version, err))
		return
	}
	rs := md.GetReleaseSeriesForVersion(sv)
	if rs == nil {
		series := make([]string, 0, len(md.ReleaseSeries))
		for _, r := range md.ReleaseSeries {
			series = append(series, fmt.Sprintf("%d.%d", r.Major, r.Minor))
		}
		v.fail(file, fmt.Errorf("field releaseSeries: invalid provider metadata: version %s for the provider %s does not match any release series. Available series: [%s]; add major: %d, minor: %d",
			v.version, v.t.ID.Label(), strings.Join(series, ", "), sv.Major(), sv.Minor()))
		return
	}
	if !slices.Contains(provider.Contracts, rs.Contract) {
		v.fail(file, fmt.Errorf("field releaseSeries (%d.%d).contract: current version of clusterctl is only compatible with providers implementing the %s contract versions, detected contract version %q for provider %s",
			rs.Major, rs.Minor, strings.Join(provider.Contracts, ", "), rs.Contract, v.t.ID.Label()))
		return
	}
	v.rep.Contract = rs.Contract
}

func (v *targetVerifier) components(ctx context.Context, s *Session) {
	file := v.rep.ComponentsFile
	cc := s.repo.Components()
	raw, err := cc.Raw(ctx, repository.ComponentsOptions{Version: v.version})
	if err != nil {
		v.fail(file, err)
		return
	}
	v.vals.LearnComponents(raw)
	vars, err := yamlprocessor.NewSimpleProcessor().GetVariableMap(raw)
	if err != nil {
		v.fail(file, err)
		return
	}
	set, err := v.vals.For(file, raw, s.Values())
	if err != nil {
		v.fail(file, err)
		return
	}
	s.Apply(set)
	v.rep.Variables = s.vals.describe(vars)

	c, err := cc.Get(ctx, repository.ComponentsOptions{Version: v.version, TargetNamespace: Namespace})
	if err != nil {
		v.fail(file, err)
		return
	}
	v.rep.Objects = len(c.Objs())
	v.rep.Images = c.Images()
	for _, obj := range c.Objs() {
		if err := validateCRDName(obj); err != nil {
			v.fail(file, err)
		}
	}
	// Without a target namespace clusterctl takes the one Namespace object
	// the components hold, and fails on none or several.
	c, err = cc.Get(ctx, repository.ComponentsOptions{Version: v.version})
	if err != nil {
		v.fail(file, fmt.Errorf("without --target-namespace: %w", err))
		return
	}
	v.rep.Namespace = c.TargetNamespace()
}

// validateCRDName replays cluster/installer.go:validateCRDName, which
// `clusterctl init` runs over every CRD of the components unless
// --validate=false. clusterctl reads group and kind after converting to the
// typed CRD; both API versions it accepts keep them at the same paths.
func validateCRDName(obj unstructured.Unstructured) error {
	if obj.GetKind() != "CustomResourceDefinition" {
		return nil
	}
	if gv := obj.GroupVersionKind().Version; gv != "v1" && gv != "v1beta1" {
		return fmt.Errorf("CustomResourceDefinition %s: field apiVersion: failed to read %s CustomResourceDefinition %q", obj.GetName(), gv, obj.GetName())
	}
	if _, ok := obj.GetAnnotations()[clusterctlv1.SkipCRDNamePreflightCheckAnnotation]; ok {
		return nil
	}
	group, _, _ := unstructured.NestedString(obj.Object, "spec", "group")
	kind, _, _ := unstructured.NestedString(obj.Object, "spec", "names", "kind")
	want := contract.CalculateCRDName(group, kind)
	if obj.GetName() == want {
		return nil
	}
	return fmt.Errorf("CustomResourceDefinition %s: field metadata.name: CRD name %q is invalid for a CRD referenced in a core Cluster API CRD, it should be %q "+
		"(clusterctl init refuses it; if no core Cluster API CRD references it, set the %q annotation)",
		obj.GetName(), obj.GetName(), want, clusterctlv1.SkipCRDNamePreflightCheckAnnotation)
}

// componentsName is the components file name clusterctl takes from the
// URL's last path element (repository.Client does not expose it).
func componentsName(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return ""
	}
	return path.Base(u.Path)
}

// files lists the release's files: the caller's list, or the local folder.
func (v *targetVerifier) files() ([]string, bool, error) {
	if v.t.Files != nil {
		return slices.Sorted(slices.Values(v.t.Files)), true, nil
	}
	u, err := url.Parse(v.t.URL)
	if err != nil || (u.Scheme != "file" && u.Scheme != "") {
		return nil, false, nil
	}
	// {base}/{label}/{version}/{components}: list {base}/{label}/{version}.
	dir := filepath.Join(filepath.Dir(filepath.Dir(filepath.FromSlash(u.Path))), v.version)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, false, fmt.Errorf("list templates: %w", err)
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		if err := fsafe.CheckEntry(dir, e); err != nil {
			return nil, false, err
		}
		out = append(out, e.Name())
	}
	return out, true, nil
}

// flavor does what `clusterctl generate cluster --flavor F` does with a
// repository: list the template's variables, process it into the target
// namespace, then add the ClusterClasses its topology Clusters use
// (client/clusterclass.go:addClusterClassIfMissing, as against a management
// cluster that has none of them), but for a class the release ships only
// inside another flavor that its users apply first (package values'
// Topology): against a cluster that flavor was applied to, clusterctl
// finds the class there and fetches nothing; the report names that flavor.
func (v *targetVerifier) flavor(ctx context.Context, file, flavor string) {
	s, err := v.session(ctx)
	if err != nil {
		v.fail(file, err)
		return
	}
	tc := s.repo.Templates(v.version)
	if err := v.choose(s, file, false, "", func() error { _, err := tc.Get(ctx, flavor, Namespace, true); return err }); err != nil {
		v.fail(file, err)
		return
	}
	tmpl, err := tc.Get(ctx, flavor, Namespace, false)
	if err != nil {
		v.fail(file, err)
		return
	}
	classes, err := classesOf(tmpl)
	if err != nil {
		v.fail(file, err)
		return
	}
	var classTemplates []repository.Template
	var names []string
	var after []ClassFlavor
	ccc := s.repo.ClusterClasses(v.version)
	for _, class := range classes {
		if need, ok := v.needed(file, class.Name, s.Values()); ok {
			after = append(after, ClassFlavor{Class: class.String(), As: need.Class, Flavors: need.Flavors(), Files: need.Files})
			continue
		}
		classFile := clusterClassPrefix + class.Name + yamlSuffix
		var ct repository.Template
		err := v.choose(s, classFile, true, flavor, func() error { _, err := ccc.Get(ctx, class.Name, class.Namespace, true); return err })
		if err == nil {
			ct, err = ccc.Get(ctx, class.Name, class.Namespace, false)
		}
		if err != nil {
			v.fail(file, fmt.Errorf("ClusterClass %s used by a topology Cluster: %s: failed to get the cluster class template for %q: %w", class.Name, classFile, class, err))
			return
		}
		classTemplates = append(classTemplates, ct)
		names = append(names, class.String())
	}
	merged := tmpl
	if len(classTemplates) > 0 {
		classTemplate, err := repository.MergeTemplates(classTemplates...)
		if err == nil {
			merged, err = repository.MergeTemplates(classTemplate, tmpl)
		}
		if err != nil {
			v.fail(file, err)
			return
		}
	}
	v.rep.Flavors = append(v.rep.Flavors, &TemplateReport{
		Name:           flavor,
		File:           file,
		Objects:        len(merged.Objs()),
		Variables:      s.vals.describe(merged.VariableMap()),
		ClusterClasses: names,
		After:          after,
	})
}

// needed is the need of flavor file for the class clusterctl names with
// the session's values: a class the release ships only inside another
// flavor, named the same way (package values' Topology).
func (v *targetVerifier) needed(file, class string, set map[string]string) (values.Need, bool) {
	if v.topo == nil {
		return values.Need{}, false
	}
	for _, n := range v.topo.Needs(file) {
		if name, ok := n.Resolve(set); ok && name == class {
			return n, true
		}
	}
	return values.Need{}, false
}

// classesOf replays client/clusterclass.go:clusterClassNamesFromTemplate:
// every Cluster with a topology names a class, in the class namespace or
// else the Cluster's own. clusterctl converts with its internal scheme; the
// unstructured converter fails on the same mistyped fields.
func classesOf(t repository.Template) ([]types.NamespacedName, error) {
	var out []types.NamespacedName
	for _, obj := range t.Objs() {
		gvk := obj.GroupVersionKind()
		if gvk.GroupKind() != clusterv1.GroupVersion.WithKind("Cluster").GroupKind() {
			continue
		}
		switch gvk.Version {
		case clusterv1.GroupVersion.Version:
			c := &clusterv1.Cluster{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, c); err != nil {
				return nil, fmt.Errorf("cluster %s: failed to convert object to Cluster: %w", obj.GetName(), err)
			}
			if c.Spec.Topology.IsDefined() {
				out = append(out, c.GetClassKey())
			}
		case clusterv1beta1.GroupVersion.Version:
			c := &clusterv1beta1.Cluster{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, c); err != nil {
				return nil, fmt.Errorf("cluster %s: failed to convert object to Cluster: %w", obj.GetName(), err)
			}
			if c.Spec.Topology != nil {
				out = append(out, c.GetClassKey())
			}
		}
	}
	return out, nil
}

// clusterClass reads one clusterclass-<name>.yaml as `generate cluster`
// would fetch it for a Cluster in the target namespace.
func (v *targetVerifier) clusterClass(ctx context.Context, file, name string) {
	s, err := v.session(ctx)
	if err != nil {
		v.fail(file, err)
		return
	}
	ccc := s.repo.ClusterClasses(v.version)
	var ct repository.Template
	err = v.choose(s, file, false, "", func() error { _, err := ccc.Get(ctx, name, Namespace, true); return err })
	if err == nil {
		ct, err = ccc.Get(ctx, name, Namespace, false)
	}
	if err != nil {
		v.fail(file, err)
		return
	}
	v.rep.ClusterClasses = append(v.rep.ClusterClasses, &TemplateReport{
		Name:      name,
		File:      file,
		Objects:   len(ct.Objs()),
		Variables: s.vals.describe(ct.VariableMap()),
	})
}
