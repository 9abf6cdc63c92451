package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/config"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/repository"

	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/release"
	"github.com/capirepo/capirepo/verify"
	"github.com/capirepo/capirepo/versions"
)

// certManager mirrors cert-manager's manifest at the version clusterctl
// would install with the config (config/cert_manager_client.go: the
// config's version wins over the URL's; the default is clusterctl's).
func (m *mirror) certManager(ctx context.Context, cfg config.Client) error {
	cm, err := cfg.CertManager().Get()
	if err != nil {
		return err
	}
	if cm.ExternallyProvisioned() {
		m.logf("cert-manager is provisioned outside clusterctl in this config: not mirrored")
		return nil
	}
	if m.reach.ProviderURL == nil { // clusterctl installs cert-manager, by a URL
		m.sum.Warnings = append(m.sum.Warnings, fmt.Sprintf("%s cannot hold cert-manager's manifest for clusterctl (%s): mirror it yourself and set cert-manager: url: in the site's config", m.o.To.URL, m.reach.Why))
		return nil
	}
	v := cm.Version()
	p := &MirroredProvider{Label: provider.CertManager.Name, Name: provider.CertManager.Name, Source: cm.URL()}
	r, err := m.source(ctx, p)
	if err != nil {
		return err
	}
	rp, err := certManagerRelease(ctx, r, v, p.components)
	if err != nil {
		return err
	}
	m.certManagerComponents = rp.Components().Data
	sum, err := m.o.Target.Publish(ctx, &release.Release{Version: v, Providers: []*release.Provider{rp}})
	if err != nil {
		return fmt.Errorf("version %s: %w", v, err)
	}
	mv := &MirroredVersion{Version: v, Uploaded: sum.Uploaded, Skipped: sum.Skipped, Replaced: sum.Replaced, Bytes: sum.BytesUploaded}
	if len(sum.Providers) > 0 {
		mv.URL = sum.Providers[0].URL
	}
	m.sum.CertManager = mv
	m.logf("cert-manager %s: %d written, %d already there", v, len(mv.Uploaded), len(mv.Skipped))
	return nil
}

// siteConfig is what the air-gapped site installs from: for a target
// clusterctl reads, the clusterctl config; for one only another reader reads
// (an OCI registry), that reader's resources (operatorResources).
func (m *mirror) siteConfig() (string, error) {
	if m.reach.ProviderURL == nil {
		return m.operatorResources()
	}
	return m.clusterctlConfig(), nil
}

// clusterctlConfig is the clusterctl config for the air-gapped site: every
// mirrored provider at its latest mirrored version (newestVersion; a GitLab
// repository has no version list, so the URL names one; the others are
// installed as name:version), cert-manager, and the image overrides.
func (m *mirror) clusterctlConfig() string {
	var c publish.ClusterctlConfig
	var b strings.Builder
	b.WriteString("# clusterctl config for the mirror " + m.o.To.URL + ", written by capirepo mirror.\n")
	b.WriteString("# Each provider URL names the mirrored version clusterctl's latest would pick; install\n# another mirrored version as NAME:VERSION (clusterctl init --infrastructure aws:v2.5.1).\n")
	for _, p := range m.sum.Providers {
		if len(p.Versions) == 0 {
			continue
		}
		newest := newestVersion(p.Versions)
		c.Providers = append(c.Providers, publish.ProviderURL{Name: p.Name, Type: p.Type, URL: newest.URL})
		var vs []string
		for _, v := range p.Versions {
			vs = append(vs, v.Version)
		}
		fmt.Fprintf(&b, "#   %s: %s\n", p.Label, strings.Join(vs, ", "))
	}
	if cm := m.sum.CertManager; cm != nil {
		c.CertManager = &publish.CertManagerURL{URL: cm.URL, Version: cm.Version}
	}
	if len(m.sum.Images) > 0 {
		c.Images = map[string]publish.ImageOverride{}
		for _, img := range m.sum.Images {
			c.Images[img.Provider] = publish.ImageOverride{Repository: img.Copy[:strings.LastIndex(img.Copy, "/")]}
		}
		fmt.Fprintf(&b, "# Images were copied to %s/<key>/<image-name>; each images: key maps\n# its provider's images there (clusterctl replaces everything before the last '/').\n",
			strings.TrimSuffix(m.o.Images, "/"))
	}
	return b.String() + c.YAML()
}

// operatorResources are the cluster-api-operator Provider resources that
// install every mirrored provider at its latest mirrored version from a
// target clusterctl cannot read, as publish oci prints them, headed by what
// the site can and cannot do with the mirror.
func (m *mirror) operatorResources() (string, error) {
	t, ok := m.o.Target.(publish.Operator)
	if !ok {
		return "", nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# cluster-api-operator Provider resources for the mirror %s, written by capirepo mirror.\n", m.o.To.URL)
	fmt.Fprintf(&b, "# %s, so it cannot install from this mirror: apply these where\n# cluster-api-operator runs. Each installs the mirrored version clusterctl's\n# latest would pick (set spec.version to install another).\n", m.reach.Why)
	for _, p := range m.sum.Providers {
		if len(p.Versions) == 0 {
			continue
		}
		newest := newestVersion(p.Versions)
		rp, ok := p.read[newest.Version]
		if !ok {
			return "", fmt.Errorf("%s %s: not read, so no Provider resource", p.Label, newest.Version)
		}
		res, err := t.Resources(&release.Release{Version: newest.Version, Providers: []*release.Provider{rp}}, "")
		if err != nil {
			return "", fmt.Errorf("%s %s: %w", p.Label, newest.Version, err)
		}
		var vs []string
		for _, v := range p.Versions {
			vs = append(vs, v.Version)
		}
		fmt.Fprintf(&b, "#   %s: %s\n", p.Label, strings.Join(vs, ", "))
		for _, r := range res {
			y, err := r.YAML()
			if err != nil {
				return "", err
			}
			b.WriteString("---\n")
			b.Write(y)
		}
	}
	if len(m.sum.Images) > 0 {
		fmt.Fprintf(&b, "# Images were copied to %s/<provider-label>/<image-name>: point the providers'\n# containers there (the Provider resources' spec.deployment.containers[].imageUrl).\n",
			strings.TrimSuffix(m.o.Images, "/"))
	}
	return b.String(), nil
}

// newestVersion is the mirrored version clusterctl installs for latest
// (versions.Newest: the newest release, else the newest pre-release).
func newestVersion(vs []*MirroredVersion) *MirroredVersion {
	names := make([]string, len(vs))
	for i, v := range vs {
		names[i] = v.Version
	}
	newest := versions.Newest(names)
	return vs[slices.IndexFunc(vs, func(v *MirroredVersion) bool { return v.Version == newest })]
}

// verify reads every mirrored version back as release reads a target back
// (readBack): through clusterctl's repository client by the mirror's
// provider URLs; a target clusterctl cannot read (an OCI registry) through
// its Source by its reader's rules (the operator's), and what that reader
// gets through clusterctl's client from memory. cert-manager is read back
// as clusterctl reads it.
func (m *mirror) verify(ctx context.Context) error {
	var vs []readBackVersion
	for _, p := range m.sum.Providers {
		for _, v := range p.Versions {
			vs = append(vs, readBackVersion{Ref: p.ref(v.Version), Files: v.files})
		}
	}
	rep, bySource, err := readBack(ctx, m.o.Target, m.o.To.URL, vs, verify.Options{Variables: m.o.Variables, HTTPClient: m.o.TargetOptions.HTTPClient}, m.o.Log)
	if rep != nil {
		m.sum.Verified = len(rep.Providers)
	}
	if err == nil && bySource {
		m.logf("%d provider versions read back from %s %s", len(vs), m.o.To.URL, readBackWay(m.reach))
	}
	errs := []error{err}
	if cm := m.sum.CertManager; cm != nil {
		errs = append(errs, m.verifyCertManager(ctx, cm))
	}
	return errors.Join(errs...)
}

// verifyCertManager reads cert-manager's manifest from the mirror as
// clusterctl does (cluster/cert_manager.go getManifestObjs: a provider
// named cert-manager with no type, at the config's version) and compares
// the bytes with those mirrored.
func (m *mirror) verifyCertManager(ctx context.Context, cm *MirroredVersion) error {
	r := config.NewMemoryReader()
	for k, v := range m.o.Variables {
		r.Set(k, v)
	}
	cfg, err := config.New(ctx, "", config.InjectReader(r))
	if err != nil {
		return err
	}
	repo, err := repository.New(ctx, config.NewProvider(provider.CertManager.Name, cm.URL, ""), cfg)
	if err != nil {
		return fmt.Errorf("cert-manager %s at %s: %w", cm.Version, cm.URL, err)
	}
	raw, err := repo.Components().Raw(ctx, repository.ComponentsOptions{Version: cm.Version})
	if err != nil {
		return fmt.Errorf("cert-manager %s at %s: %w", cm.Version, cm.URL, err)
	}
	if !bytes.Equal(raw, m.certManagerComponents) {
		return fmt.Errorf("cert-manager %s: clusterctl reads other bytes from %s than were mirrored", cm.Version, cm.URL)
	}
	m.logf("cert-manager %s read back through clusterctl from %s", cm.Version, cm.URL)
	return nil
}
