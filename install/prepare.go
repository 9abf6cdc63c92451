package install

import (
	"context"
	"errors"
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/capirepo/capirepo/release"
)

// Prepared is a release as the install check processes it, with nothing
// sent: the values of every provider's components variables and every
// template file's objects, as Check would send them. The upgrade rehearsal
// (package rehearse) installs and creates them for real.
type Prepared struct {
	// Components holds each provider's components file, in clusterctl's
	// order, with the value of each required variable (File.Variables: a
	// real value, or a stand-in).
	Components []*File
	// Templates holds every flavor and ClusterClass file in the order Check
	// sends them: each provider's flavors first, a flavor that ships the
	// class of another flavor's topology before that flavor.
	Templates []Template
}

// Template is one flavor or ClusterClass file processed by clusterctl.
type Template struct {
	// File names the file and holds its variables' values; NotChecked says
	// why clusterctl could not process it (then Objects is empty).
	File *File
	// Namespace is the namespace it was processed into (NAMESPACE).
	Namespace string
	// Objects are its objects as Check sends them, with Cluster API's
	// webhook defaults applied (File.Defaulted names them).
	Objects []unstructured.Unstructured
}

// Prepare processes rel as Check does, with the same values (package
// values' answer: Options.Values, else stand-ins the fields' schemas
// accept, the server's schemas of built-in kinds and the cluster's CRDs
// included) and in the same order, and sends nothing. namespace names the namespace each template file is
// processed into, by provider label and file name; nil processes the
// components only.
func Prepare(ctx context.Context, rel *release.Release, opts Options, namespace func(label, file string) string) (*Prepared, error) {
	in, err := start(rel, opts)
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(in.tmp) }()
	provs, err := in.providers(rel)
	if err != nil {
		return nil, err
	}
	var errs []error
	out := &Prepared{}
	for _, ip := range provs {
		if err := in.components(ctx, ip); err != nil {
			errs = append(errs, fmt.Errorf("install check: %s %s: %s: %w", ip.p.Label(), ip.p.Version, ip.p.ComponentsFile, err))
			continue
		}
		out.Components = append(out.Components, ip.file)
	}
	if err := errors.Join(errs...); err != nil || namespace == nil {
		return out, err
	}
	crds, err := in.c.crds(ctx)
	if err != nil {
		return nil, fmt.Errorf("install check: %w", err)
	}
	for i := range crds { // the cluster's CRDs serve the kinds the release does not
		in.vals.AddCRD(&crds[i])
	}
	in.learnTemplates(provs)
	for _, ip := range provs {
		for _, t := range templateFiles(ip.p) {
			ns := namespace(ip.p.Label(), t.file)
			f, objs, _, err := in.process(ctx, ip, t, ns)
			if err != nil {
				return nil, err
			}
			for i := range objs {
				if coreDefaults(&objs[i]) {
					f.Defaulted = append(f.Defaulted, objectName(&objs[i]))
				}
			}
			out.Templates = append(out.Templates, Template{File: f, Namespace: ns, Objects: objs})
		}
	}
	return out, nil
}
