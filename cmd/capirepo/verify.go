package main

import (
	"errors"
	"strings"

	"github.com/spf13/cobra"

	"github.com/capirepo/capirepo/internal/cli"
	"github.com/capirepo/capirepo/pipeline"
	"github.com/capirepo/capirepo/publish/oci"
	"github.com/capirepo/capirepo/values"
	"github.com/capirepo/capirepo/verify"
)

// verifyOptions are verify's flags, bound to what Verify checks.
type verifyOptions struct {
	pipeline.VerifyOptions
	oci        ociOptions
	targets    targetOptions
	signatures signatureOptions
	install    installOptions
}

func newVerifyCmd(s streams, g *globalOptions) *cobra.Command {
	o := &verifyOptions{}
	cmd := &cobra.Command{
		Use:   "verify DIR | oci://REGISTRY/PATH/NAME:VERSION | --configmaps FILE",
		Short: "Read a built or published provider repository back through clusterctl's client",
		Long: `Reads DIR or file://DIR (a dist folder, a clusterctl local repository
tree, a mirror folder, one <label>/<version> folder, or a flat folder of
release assets such as a GitHub release download or the kustomize + cp
pipeline's out/) the way clusterctl init and clusterctl generate
cluster do: versions, metadata.yaml, components with and without a target
namespace, every cluster-template flavor with its ClusterClasses, and every
clusterclass file. Fails where clusterctl would fail, with its message.
Required variables get stand-ins, or the real values of --var NAME=VALUE
and --values [FLAVOR=]FILE (not the environment's), to check a flavor with
the values you will use.

oci://REGISTRY/PATH/NAME:VERSION (the reference cluster-api-operator takes,
with --plain-http for a plain-HTTP registry) and --configmaps FILE (the
output of publish configmap) are first read by cluster-api-operator's rules:
the files it would pick, or its error; then those files go through
clusterctl's client the same way.

Every version in DIR is verified, unless --version names one: every folder
clusterctl reads as a version, and one it reads that capirepo cannot (a name
without the leading v, a link) is an error (the others are still verified).
A folder without checksums.txt is checked as it is, and said so. The report
is printed on stdout. --images and --upgrade-from check --version, else
the newest release as clusterctl orders versions (a pre-release only when
there is no release); --install checks --version, else every release in
DIR, each on its own.

--images also asks the registry for every image the components run, for
every --platforms, and names the missing ones by object and container
(credentials: docker config).

--signatures checks what capirepo sign (or release --sign) signed, for
--key or --certificate-identity with --certificate-oidc-issuer (cosign's
names): each version folder's checksums.txt.sigstore.json signs its
checksums.txt, every file matches its sha256 there, and the provenance is
signed and names the same files; with --images, every image the components
run carries a signature that checks out; for oci://, the artifact does.
Each file that fails is named; the command fails.

--install also applies the version to the Kubernetes API server of
--kubeconfig as clusterctl init and kubectl apply would: cert-manager's
CRDs (the cluster's, or those of the cert-manager clusterctl installs), then
each provider's components in clusterctl's order, then every flavor and
ClusterClass with stand-ins for the required variables. It CREATES the CRDs
and a few capirepo-install-* namespaces for real and removes them at the
end; everything else, webhook configurations included, is only dry-run. Use
a scratch cluster (kind create cluster); a cluster that already has the
release's CRDs is refused unless --force; --dry-run-only creates nothing and
lists what it could not check. Every refusal is listed, by file, object and
field, with the server's message.

--upgrade-from OLD rehearses clusterctl upgrade from OLD (a folder, or a
target URL with an optional @VERSION: the release before this one without)
to this release on the scratch cluster of --kubeconfig, through clusterctl's
client library: clusterctl init installs core Cluster API (--core) and OLD
from a temporary repository served without webhooks, the objects of OLD's
flavors are created for real, clusterctl upgrade plan must offer this
release and clusterctl upgrade apply install it, and every object must read
back with its uid and take an unchanged server-side apply. It INSTALLS and
upgrades for real and removes everything at the end; a cluster that already
holds any of it is refused. See docs/upgrade.md.`,
		Example: `  # Everything build wrote into dist
  capirepo verify dist

  # One version of a local repository tree, with a given Kubernetes version
  capirepo verify /srv/capi-repo --version v1.4.0 --kubernetes-version v1.33.0

  # The flavors with the values you will use (a values file for one flavor too)
  capirepo verify dist --var EXAMPLE_REGION=eu-west-1 --values values.yaml --values topology=topology.yaml

  # Also apply it to a kind cluster, as clusterctl init and kubectl apply would
  kind create cluster --name capirepo-check --kubeconfig kind.kubeconfig
  capirepo verify dist --install --kubeconfig kind.kubeconfig

  # Rehearse clusterctl upgrade from the release published before this one
  capirepo verify dist --upgrade-from github://my-org/cluster-api-provider-example \
    --core github://kubernetes-sigs/cluster-api@v1.14.2 --kubeconfig kind.kubeconfig

  # An artifact pushed with publish oci, as cluster-api-operator reads it
  capirepo verify oci://registry.example.com/capi/infrastructure-example:v1.4.0

  # The signatures of a dist folder or repository tree signed in GitHub Actions
  capirepo verify dist --signatures \
    --certificate-identity https://github.com/my-org/cluster-api-provider-example/.github/workflows/release.yaml@refs/tags/v1.4.0 \
    --certificate-oidc-issuer https://token.actions.githubusercontent.com`,
		Args: cobra.RangeArgs(0, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.Path = args[0]
			}
			if err := checkVersionFlag("--version", o.Version); err != nil {
				return err
			}
			var err error
			if o.Install, o.Rehearse, err = o.install.Options(cmd.Context(), s, &o.targets); err != nil {
				return err
			}
			notDir := o.Path == "" || o.ConfigMaps != "" || strings.HasPrefix(o.Path, "oci://")
			switch {
			case o.Install != nil && notDir:
				return cli.Usagef("--install applies a DIR (a dist folder or a local repository tree)")
			case o.Rehearse != nil && notDir:
				return cli.Usagef("--upgrade-from rehearses the upgrade to a DIR (a dist folder or a local repository tree)")
			}
			if o.Signatures, err = o.signatures.verifier(cmd.Context(), s, o.targets.timeout); err != nil {
				return err
			}
			transport := o.targets.httpClient(s).Transport
			kc, secrets := oci.KeychainFromEnv(s.getenv)
			o.OCI = oci.Options{PlainHTTP: o.oci.plainHTTP, Keychain: kc, Secrets: secrets, Progress: s.errOut, Transport: transport}
			o.Variables, _ = o.install.variables(s.getenv) // checked with the install check's flags
			o.ValuesFiles, o.Keychain, o.Transport, o.Secrets, o.Log = o.install.values, s.keychain(), transport, s.secrets, s.errOut
			if g.output != "json" {
				o.ImagesLog = s.errOut
			}
			if (o.Path == "") == (o.ConfigMaps == "") {
				return cli.UsageError{Err: cli.WithHelpHint(cmd, errors.New("verify takes one DIR or oci:// reference, or --configmaps FILE"))}
			}
			rep, err := pipeline.Verify(cmd.Context(), o.VerifyOptions)
			return printVerify(s, g, rep, err)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Version, "version", "", "version to verify (default: every version in DIR)")
	f.BoolVar(&o.Images, "images", false, "also check that every image the components run is in its registry, for every --platforms")
	f.StringSliceVar(&o.Platforms, "platforms", verify.DefaultPlatforms, "platforms every image must have, for --images")
	f.StringVar(&o.KubernetesVersion, "kubernetes-version", "", "KUBERNETES_VERSION for cluster templates (default "+values.KubernetesVersion+")")
	f.StringVar(&o.ConfigMaps, "configmaps", "", "a file of operator ConfigMaps and Provider resources (publish configmap --out)")
	o.install.readBack, o.install.rehearse = true, &rehearseOptions{}
	o.install.rehearse.AddFlags(cmd, true)
	o.install.AddFlags(cmd, "install", "also apply the release to a Kubernetes API server (--kubeconfig) as clusterctl init and kubectl apply would, and report every object it refuses")
	o.oci.AddFlags(cmd, "", "", false)
	o.signatures.AddFlags(cmd, "signatures", "also check the Sigstore signatures of the files (and with --images, of the images; of an oci:// artifact): for --key or --certificate-identity")
	o.targets.AddFlags(cmd, targetUsage{})
	return cmd
}

// printVerify prints a verify report on stdout (with the error in JSON
// when it failed) and returns the error.
func printVerify(s streams, g *globalOptions, rep *pipeline.VerifyReport, err error) error {
	werr := printReport(s, g, rep, s.out)
	if err != nil {
		return err
	}
	return werr
}
