package contract

import (
	"maps"
	"slices"
	"strings"

	"github.com/distribution/reference"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/capirepo/capirepo/internal/option"
	"github.com/capirepo/capirepo/internal/text"
	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/release"
)

// clusterScoped are the built-in and cert-manager kinds without a namespace.
// Kinds defined by a cluster-scoped CRD in the same file are added per file.
var clusterScoped = map[string]bool{
	"Namespace": true, "CustomResourceDefinition": true, "ClusterRole": true, "ClusterRoleBinding": true,
	"ValidatingWebhookConfiguration": true, "MutatingWebhookConfiguration": true,
	"ValidatingAdmissionPolicy": true, "ValidatingAdmissionPolicyBinding": true,
	"MutatingAdmissionPolicy": true, "MutatingAdmissionPolicyBinding": true,
	"APIService": true, "PriorityClass": true, "StorageClass": true, "CSIDriver": true, "CSINode": true,
	"PersistentVolume": true, "IngressClass": true, "RuntimeClass": true, "Node": true,
	"ClusterIssuer": true, "VolumeSnapshotClass": true, "FlowSchema": true, "PriorityLevelConfiguration": true,
}

// floatingTags move under users; a release must not ship them.
var floatingTags = []string{"latest", "main", "master", "dev", "develop", "edge", "nightly"}

// transformed are the kinds clusterctl converts to typed objects, with the
// only API version it can convert them from that current API servers serve.
var transformed = map[string]string{
	"CustomResourceDefinition":       "apiextensions.k8s.io/v1",
	"ValidatingWebhookConfiguration": "admissionregistration.k8s.io/v1",
	"MutatingWebhookConfiguration":   "admissionregistration.k8s.io/v1",
	"Deployment":                     "apps/v1",
	"DaemonSet":                      "apps/v1",
	"RoleBinding":                    "rbac.authorization.k8s.io/v1",
	"ClusterRoleBinding":             "rbac.authorization.k8s.io/v1",
}

const injectCAAnnotation = "cert-manager.io/inject-ca-from"

// lintComponents checks one components file and returns the kinds its
// CRDs define, as group/kind.
func (l *linter) lintComponents(v *view, f release.File, rs refs) []string {
	file := v.path(f.Name)
	objs := l.lintDuplicates(file, l.parse(v, f, true))
	crds := parseCRDs(objs)
	l.lintCRDDecode(file, objs)
	ptype, label := v.providerTypeAndLabel(f.Name, objs)

	scoped := maps.Clone(clusterScoped)
	for _, c := range crds {
		if c.crd.Spec.Scope == "Cluster" {
			scoped[c.crd.Spec.Names.Kind] = true
		}
	}

	// Target namespace.
	var namespaces []*object
	for _, o := range objs {
		if o.kind == "Namespace" && o.group() == "" {
			namespaces = append(namespaces, o)
		}
	}
	target := ""
	switch len(namespaces) {
	case 0:
		l.add(RuleNamespaceCount, file, "", "", "no Namespace object: clusterctl cannot default the target namespace ('target namespace can't be defaulted')")
	case 1:
		target = namespaces[0].name
	default:
		for _, ns := range namespaces[1:] {
			l.add(RuleNamespaceCount, file, ns.ID(), "kind", "%s: clusterctl accepts no more than one Namespace (first is Namespace/%s)", text.Plural(len(namespaces), "Namespace", "Namespaces"), namespaces[0].name)
		}
	}
	if target != "" {
		for _, o := range objs {
			if scoped[o.kind] {
				continue
			}
			switch o.namespace {
			case target:
			case "":
				l.addSev(RuleTargetNamespace, Warning, file, o.ID(), "metadata.namespace", "no namespace: clusterctl moves it into %s, kubectl apply into the default namespace", target)
			default:
				l.add(RuleTargetNamespace, file, o.ID(), "metadata.namespace", "namespace %q is not the target namespace %q", o.namespace, target)
			}
		}
	}

	// Provider label.
	for _, o := range objs {
		got, ok := o.labels()[provider.ProviderLabel]
		switch {
		case !ok:
			l.add(RuleProviderLabel, file, o.ID(), labelField("labels", provider.ProviderLabel), "label missing; want %q", label)
		case label != "" && got != label:
			l.add(RuleProviderLabel, file, o.ID(), labelField("labels", provider.ProviderLabel), "label is %q; want %q", got, label)
		}
	}

	// API versions clusterctl converts.
	for _, o := range objs {
		if want, ok := transformed[o.kind]; ok && o.group() == strings.Split(want, "/")[0] && o.apiVersion != want {
			l.add(RuleComponentsObject, file, o.ID(), "apiVersion", "apiVersion %s; clusterctl converts %s only from %s", o.apiVersion, o.kind, want)
		}
		if o.group() == "cert-manager.io" && o.apiVersion != "cert-manager.io/v1" {
			l.add(RuleComponentsObject, file, o.ID(), "apiVersion", "apiVersion %s; cert-manager serves cert-manager.io/v1", o.apiVersion)
		}
	}

	l.lintWorkloads(v, file, objs)
	l.lintInjectCA(file, objs, target)
	kinds := classifyKinds(crds, rs, ptype)
	l.lintCRDs(v, file, crds, ptype, kinds)
	l.lintMove(file, crds, kinds)
	l.lintAggregation(file, objs, crds, kinds)
	return definedKinds(objs)
}

// definedKinds lists the group/kind of every CustomResourceDefinition of a
// file, from its raw fields, so a CRD that does not decode still counts.
func definedKinds(objs []*object) []string {
	var out []string
	for _, o := range objs {
		if o.is("apiextensions.k8s.io", "CustomResourceDefinition") {
			if g, k := getString(o.m, "spec", "group"), getString(o.m, "spec", "names", "kind"); g != "" && k != "" {
				out = append(out, g+"/"+k)
			}
		}
	}
	return out
}

// providerTypeAndLabel returns the provider type and label, from the view
// or, for a loose file, from the objects' provider labels or the file name.
func (v *view) providerTypeAndLabel(name string, objs []*object) (provider.Type, string) {
	if v.id != nil {
		return v.id.Type, v.label
	}
	count := map[string]int{}
	for _, o := range objs {
		if l := o.labels()[provider.ProviderLabel]; l != "" {
			count[l]++
		}
	}
	best := ""
	for _, l := range slices.Sorted(maps.Keys(count)) {
		if count[l] > count[best] {
			best = l
		}
	}
	if id, err := provider.ParseLabel(best); err == nil {
		return id.Type, best
	}
	for _, t := range provider.Types() {
		if (provider.ID{Name: "x", Type: t}).DefaultComponentsFile() == name {
			return t, ""
		}
	}
	return "", ""
}

func (l *linter) lintWorkloads(v *view, file string, objs []*object) {
	// A bundled operator may have a container named manager too: when one
	// manager is tagged with the release version, it is the provider's.
	for _, o := range objs {
		if o.is("apps", "Deployment") {
			for _, c := range release.Containers(o.m) {
				if c.List == "containers" && c.Name == "manager" && v.releaseTag(tagOf(c.Image)) {
					v.managerTagged = true
				}
			}
		}
	}
	managers := 0
	var deployments []*object
	for _, o := range objs {
		if o.is("apps", "Deployment") {
			deployments = append(deployments, o)
		}
		// Every container of every pod-bearing kind (release.Containers,
		// the walk verify and mirror use); clusterctl parses the images of
		// Deployments and DaemonSets only.
		for _, c := range release.Containers(o.m) {
			if o.kind == "Deployment" && o.group() == "apps" && c.List == "containers" && c.Name == "manager" {
				managers++
			}
			l.lintImage(v, file, o, c.Field+".image", c.Name, c.Image, release.ClusterctlReads(o.kind, c.List))
		}
	}
	if managers > 0 {
		return
	}
	if len(deployments) == 0 {
		l.add(RuleManager, file, "", "", "no Deployment: the controller must run in a Deployment with a container named manager")
	}
	for _, d := range deployments {
		var names []string
		for _, c := range release.Containers(d.m) {
			if c.List == "containers" {
				names = append(names, c.Name)
			}
		}
		l.add(RuleManager, file, d.ID(), "spec.template.spec.containers", "no container named manager (containers: %s)", strings.Join(names, ", "))
	}
}

// lintImage checks the image of one container; clusterctl says whether
// clusterctl parses it (release.ClusterctlReads): an image it does not
// parse only has to be one the kubelet can pull.
func (l *linter) lintImage(v *view, file string, o *object, field, container, image string, clusterctl bool) {
	if image == "" {
		l.add(RuleImageQualified, file, o.ID(), field, "container %s has no image", container)
		return
	}
	if strings.Contains(image, "${") {
		if clusterctl {
			l.addSev(RuleImageQualified, Warning, file, o.ID(), field, "image %q holds a variable: clusterctl parses it only after substitution, so init --list-images fails", image)
		}
		return
	}
	var named reference.Named
	var err error
	if clusterctl {
		named, err = reference.ParseNamed(image)
	} else if named, err = reference.ParseNormalizedNamed(image); err != nil {
		l.addSev(RuleImageQualified, Warning, file, o.ID(), field, "image %q is not a reference the kubelet can pull (%v): write registry/path/name:tag", image, err)
		return
	}
	if err != nil {
		l.add(RuleImageQualified, file, o.ID(), field, "image %q is not a fully qualified reference clusterctl can parse (%v): write registry/path/name:tag", image, err)
		return
	}
	if stagingRegistry(named) {
		l.add(RuleImageStaging, file, o.ID(), field, "image %q is a staging registry's, not a promoted release image: set the release image (image.newName in capirepo.yaml, or %s)", image, option.Image)
	}
	if _, ok := named.(reference.Digested); ok {
		return // pinned
	}
	tag := ""
	if t, ok := named.(reference.Tagged); ok {
		tag = t.Tag()
	}
	if tag == "" || slices.Contains(floatingTags, tag) {
		shown := tag
		if shown == "" {
			shown = "no tag, i.e. latest"
		}
		l.add(RuleImageFloating, file, o.ID(), field, "image %q uses a floating tag (%s): tag it with the release version or pin a digest", image, shown)
		return
	}
	if clusterctl && container == "manager" && v.version != "" && !v.releaseTag(tag) && !v.managerTagged {
		if otherReleaseTag(tag, v.version) {
			l.add(RuleImageVersion, file, o.ID(), field, "manager image %q has tag %s, another release's version, not %s: users of %s would run the code of %s; tag it %s (or waive CAPI206 with the reason for the reuse)", image, tag, v.version, v.version, tag, v.version)
			return
		}
		l.addSev(RuleImageVersion, Warning, file, o.ID(), field, "manager image %q has tag %s, not the release version %s", image, tag, v.version)
	}
}

// tagOf is the tag of an image reference ("" with none or a digest).
func tagOf(image string) string {
	named, err := reference.ParseNamed(image)
	if err != nil {
		return ""
	}
	if t, ok := named.(reference.Tagged); ok {
		return t.Tag()
	}
	return ""
}

func (l *linter) lintInjectCA(file string, objs []*object, target string) {
	certs := map[string]bool{}
	for _, o := range objs {
		if o.is("cert-manager.io", "Certificate") {
			ns := o.namespace
			if ns == "" {
				ns = target
			}
			certs[ns+"/"+o.name] = true
		}
	}
	for _, o := range objs {
		ref, ok := o.annotations()[injectCAAnnotation]
		if !ok {
			continue
		}
		field := labelField("annotations", injectCAAnnotation)
		// A CRD's CA serves only its conversion webhook, which the API
		// server calls only between two served versions with strategy
		// Webhook: on any other CRD a bad reference leaves nothing broken.
		sev, idle := Error, ""
		if o.crd != nil {
			if why := conversionIdle(o.crd); why != "" {
				sev, idle = Warning, "; the API server never calls this CRD's conversion webhook ("+why+"), so nothing fails today, but it will once the CRD serves a second version"
			}
		}
		ns, name, ok := strings.Cut(ref, "/")
		if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
			l.addSev(RuleInjectCA, sev, file, o.ID(), field, "%q is not <namespace>/<certificate>%s", ref, idle)
			continue
		}
		if !certs[ref] {
			l.addSev(RuleInjectCA, sev, file, o.ID(), field, "no cert-manager.io Certificate %s in the file to inject the CA from%s", ref, idle)
		}
	}
}

// conversionIdle says why the API server never calls a CRD's conversion
// webhook ("" when it may): fewer than two served versions, or a strategy
// other than Webhook.
func conversionIdle(crd *apiextensionsv1.CustomResourceDefinition) string {
	served := 0
	for _, v := range crd.Spec.Versions {
		if v.Served {
			served++
		}
	}
	switch {
	case crd.Spec.Conversion == nil || crd.Spec.Conversion.Strategy != apiextensionsv1.WebhookConverter:
		return "conversion strategy is not Webhook"
	case served < 2:
		return text.Plural(served, "version is", "versions are") + " served"
	}
	return ""
}

// stagingRegistry says whether an image is in a Kubernetes staging
// registry: gcr.io/k8s-staging-<project>, its Artifact Registry
// successor <region>-docker.pkg.dev/k8s-staging-images, or the old
// staging-k8s.gcr.io.
func stagingRegistry(named reference.Named) bool {
	domain, path := reference.Domain(named), reference.Path(named)
	switch {
	case domain == "staging-k8s.gcr.io":
		return true
	case domain == "gcr.io", strings.HasSuffix(domain, ".gcr.io"), strings.HasSuffix(domain, "-docker.pkg.dev"):
		return strings.HasPrefix(path, "k8s-staging-")
	}
	return false
}
