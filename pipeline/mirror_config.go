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
	rp, err := publish.ReadCertManager(ctx, r, v, p.components)
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

// siteConfig is what the air-gapped site installs from (publish.Site): for
// a target clusterctl reads, the clusterctl config; for one only another
// reader reads (an OCI registry), that reader's resources (the operator's
// Provider resources of each provider's newest mirrored version).
func (m *mirror) siteConfig() (string, error) {
	site := publish.Site{Mirror: m.o.To.URL}
	if cm := m.sum.CertManager; cm != nil {
		site.CertManager = &publish.CertManagerURL{URL: cm.URL, Version: cm.Version}
	}
	if len(m.sum.Images) > 0 {
		site.Images, site.ImageOverrides = m.o.Images, map[string]publish.ImageOverride{}
		for _, img := range m.sum.Images {
			site.ImageOverrides[img.Provider] = publish.ImageOverride{Repository: img.Copy[:strings.LastIndex(img.Copy, "/")]}
		}
	}
	op, isOperator := m.o.Target.(publish.Operator)
	for _, p := range m.sum.Providers {
		if len(p.Versions) == 0 {
			continue
		}
		newest := newestVersion(p.Versions)
		sp := publish.SiteProvider{Label: p.Label, Name: p.Name, Type: p.Type, Newest: newest.Version, URL: newest.URL}
		for _, v := range p.Versions {
			sp.Versions = append(sp.Versions, v.Version)
		}
		if m.reach.ProviderURL == nil && isOperator {
			rp, ok := p.read[newest.Version]
			if !ok {
				return "", fmt.Errorf("%s %s: not read, so no Provider resource", p.Label, newest.Version)
			}
			res, err := op.Resources(&release.Release{Version: newest.Version, Providers: []*release.Provider{rp}}, "")
			if err != nil {
				return "", fmt.Errorf("%s %s: %w", p.Label, newest.Version, err)
			}
			sp.Resources = res
		}
		site.Providers = append(site.Providers, sp)
	}
	switch {
	case m.reach.ProviderURL != nil:
		return site.ClusterctlConfig(), nil
	case isOperator:
		return site.OperatorResources(m.reach.Why)
	}
	return "", nil
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
// (verify.ReadBack): through clusterctl's repository client by the mirror's
// provider URLs; a target clusterctl cannot read (an OCI registry) through
// its Source by its reader's rules (the operator's), and what that reader
// gets through clusterctl's client from memory. cert-manager is read back
// as clusterctl reads it.
func (m *mirror) verify(ctx context.Context) error {
	var vs []verify.Published
	for _, p := range m.sum.Providers {
		for _, v := range p.Versions {
			vs = append(vs, verify.Published{Ref: p.ref(v.Version), Files: v.files})
		}
	}
	rep, bySource, err := verify.ReadBack(ctx, m.o.Target, m.o.To.URL, vs, verify.Options{Variables: m.o.Variables, HTTPClient: m.o.TargetOptions.HTTPClient}, m.o.Log)
	if rep != nil {
		m.sum.Verified = len(rep.Providers)
	}
	if err == nil && bySource {
		m.logf("%d provider versions read back from %s %s", len(vs), m.o.To.URL, verify.ReadBackWay(m.reach))
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
