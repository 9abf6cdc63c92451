package rehearse

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"sigs.k8s.io/cluster-api/cmd/clusterctl/client"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/config"
	"sigs.k8s.io/yaml"

	"github.com/capirepo/capirepo/internal/option"
	"github.com/capirepo/capirepo/publish/local"
	"github.com/capirepo/capirepo/release"
)

// cert-manager's CRDs clusterctl checks cert-manager's API with
// (cluster/assets/cert-manager-test-resources.yaml: an Issuer and a
// Certificate).
var certManagerCRDs = []string{"certificates.cert-manager.io", "issuers.cert-manager.io"}

// certManagerTimeout bounds clusterctl's wait for cert-manager's API (its
// config's cert-manager timeout): CRDs only need to be served.
const certManagerTimeout = "1m"

// serve publishes Core, Old and New (and cert-manager, when clusterctl
// installs it) into the rehearsal's repository, a file:// tree, each
// served without webhooks (served).
func (r *rehearsal) serve(ctx context.Context) error {
	r.repo = filepath.Join(r.tmp, "repository")
	r.served = map[*release.Provider]*release.Provider{}
	crds, err := r.c.crds(ctx)
	if err != nil {
		return fmt.Errorf("upgrade rehearsal: %w", err)
	}
	provs := slices.Concat(r.l.core, r.l.old, r.l.new)
	switch {
	case crds[certManagerCRDs[0]] != nil && crds[certManagerCRDs[1]] != nil:
		r.rep.CertManager = "cluster"
	case r.o.CertManager != nil:
		cm, err := r.o.CertManager(ctx)
		if err != nil {
			return fmt.Errorf("upgrade rehearsal: cert-manager: %w", err)
		}
		r.cm, r.rep.CertManager = cm, cm.Version
		provs = append(provs, cm)
	default:
		return fmt.Errorf("upgrade rehearsal: the cluster at %s has no cert-manager CRDs (%s), which clusterctl init needs before any provider: "+
			"install them first (kubectl apply -f cert-manager.crds.yaml, an asset of cert-manager %s's release), or let clusterctl install cert-manager "+
			"from the rehearsal's repository (%s: read from where the clusterctl config says, GitHub by default; its webhooks are taken out and nothing of it runs)",
			r.c.Host, certManagerCRDs[0]+", "+certManagerCRDs[1], config.CertManagerDefaultVersion, option.Flag(ctx, option.WithCertManager))
	}
	t := &local.Target{Root: r.repo, Kind: "rehearsal"}
	for _, p := range provs {
		sp, s, err := served(p)
		if err != nil {
			return fmt.Errorf("upgrade rehearsal: %w", err)
		}
		r.rep.Served = append(r.rep.Served, s)
		r.served[p] = sp
		if _, err := t.Publish(ctx, &release.Release{Version: sp.Version, Providers: []*release.Provider{sp}}); err != nil {
			return fmt.Errorf("upgrade rehearsal: publish %s %s into the rehearsal's repository: %w", sp.Label(), sp.Version, err)
		}
	}
	return nil
}

// url is the file:// URL clusterctl reads a provider's release at.
func (r *rehearsal) url(p *release.Provider) string {
	return local.FileURL(filepath.Join(p.Dir(r.repo), p.ComponentsFile))
}

// configure opens clusterctl's client on a config of the rehearsal's own,
// in memory: its providers are those installed (read from the rehearsal's
// repository, Old's version and New's side by side), cert-manager the
// cluster's (externally provisioned) or the repository's, the overrides
// folder empty, and the variables the real values and the install check's
// stand-ins.
func (r *rehearsal) configure(ctx context.Context, values map[string]string) error {
	mr := config.NewMemoryReader()
	for _, p := range r.l.installed() {
		if _, err := mr.AddProvider(p.ID.Name, p.ID.Type, r.url(p)); err != nil {
			return err
		}
	}
	if err := mr.Init(ctx, ""); err != nil {
		return err
	}
	overrides := filepath.Join(r.tmp, "overrides")
	if err := os.Mkdir(overrides, 0o700); err != nil {
		return err
	}
	mr.Set("overridesFolder", overrides)
	cm := map[string]string{"timeout": certManagerTimeout, "externallyProvisioned": "true"}
	if r.cm != nil {
		cm = map[string]string{"timeout": certManagerTimeout, "url": r.url(r.cm), "version": r.cm.Version}
	}
	data, err := yaml.Marshal(cm)
	if err != nil {
		return err
	}
	mr.Set(config.CertManagerConfigKey, string(data))
	for k, v := range values {
		mr.Set(k, v)
	}
	for k, v := range r.o.Values.Variables {
		mr.Set(k, v)
	}
	cfg, err := config.New(ctx, "", config.InjectReader(mr))
	if err != nil {
		return fmt.Errorf("upgrade rehearsal: clusterctl config: %w", err)
	}
	if r.client, err = client.New(ctx, "", client.InjectConfig(cfg)); err != nil {
		return fmt.Errorf("upgrade rehearsal: clusterctl client: %w", err)
	}
	r.kubeconfig = client.Kubeconfig{Path: r.o.Kubeconfig}
	return nil
}
