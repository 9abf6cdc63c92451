package main

import (
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/spf13/cobra"

	"github.com/capirepo/capirepo/internal/redact"
	"github.com/capirepo/capirepo/pipeline"
	"github.com/capirepo/capirepo/publish/oci"
	"github.com/capirepo/capirepo/values"
	"github.com/capirepo/capirepo/verify"
)

func newVerifyCmd(s streams, g *globalOptions) *cobra.Command {
	var version, k8s, configMaps string
	var of ociFlags
	var vf verifyFlags
	var images bool
	var platforms []string
	var inst installFlags
	var rf rehearseFlags
	inst.rehearse = &rf
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
is printed on stdout. --images, --install and --upgrade-from check
--version, else the newest release as clusterctl orders versions (a
pre-release only when there is no release).

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
			if err := checkVersionFlag(version); err != nil {
				return err
			}
			if err := rf.validate(inst.on); err != nil {
				return err
			}
			if err := inst.validate(); err != nil {
				return err
			}
			if inst.on && (len(args) != 1 || configMaps != "" || strings.HasPrefix(args[0], "oci://")) {
				return usagef("--install applies a DIR (a dist folder or a local repository tree)")
			}
			if rf.enabled() && (len(args) != 1 || configMaps != "" || strings.HasPrefix(args[0], "oci://")) {
				return usagef("--upgrade-from rehearses the upgrade to a DIR (a dist folder or a local repository tree)")
			}
			ro, err := rf.options(s, &inst, "", of.timeout)
			if err != nil {
				return err
			}
			sv, err := vf.verifier(cmd.Context(), s, of.timeout)
			if err != nil {
				return err
			}
			path := ""
			if len(args) == 1 {
				path = args[0]
			}
			if configMaps == "" && path != "" && !strings.HasPrefix(path, "oci://") {
				if path, err = pipeline.FolderPath(path); err != nil {
					return err
				}
				if err := checkDirFlag("verify", path); err != nil {
					return err
				}
			}
			kc, secrets := oci.KeychainFromEnv(s.getenv)
			o := pipeline.VerifyOptions{Path: path, ConfigMaps: configMaps, Version: version, KubernetesVersion: k8s, Variables: inst.variables(s.getenv), ValuesFiles: inst.values,
				Images: images, Platforms: platforms, Signatures: sv, Install: inst.options(s, "", of.timeout), Rehearse: ro,
				OCI:      oci.Options{PlainHTTP: of.plainHTTP, Keychain: kc, Secrets: secrets, Progress: s.errOut, Transport: of.transport(s)},
				Keychain: redact.Keychain(authn.DefaultKeychain, s.secrets), Transport: of.transport(s), Secrets: s.secrets, Log: s.errOut}
			if g.output != "json" {
				o.ImagesLog = s.errOut
			}
			rep, err := pipeline.Verify(cmd.Context(), o)
			return printVerify(s, g, rep, err)
		},
	}
	cmd.Flags().StringVar(&version, "version", "", "version to verify (default: every version in DIR)")
	cmd.Flags().BoolVar(&images, "images", false, "also check that every image the components run is in its registry, for every --platforms")
	cmd.Flags().StringSliceVar(&platforms, "platforms", verify.DefaultPlatforms, "platforms every image must have, for --images")
	cmd.Flags().StringVar(&k8s, "kubernetes-version", "", "KUBERNETES_VERSION for cluster templates (default "+values.KubernetesVersion+")")
	cmd.Flags().StringVar(&configMaps, "configmaps", "", "a file of operator ConfigMaps and Provider resources (publish configmap --out)")
	rf.bind(cmd, true)
	inst.readBack = true
	inst.bind(cmd, "install", "also apply the release to a Kubernetes API server (--kubeconfig) as clusterctl init and kubectl apply would, and report every object it refuses")
	of.bind(cmd, false, "")
	vf.bind(cmd, "signatures", "also check the Sigstore signatures of the files (and with --images, of the images; of an oci:// artifact): for --key or --certificate-identity")
	bindTimeout(cmd, &of.timeout)
	return cmd
}

// tokenVariables passes the tokens clusterctl reads to its config, only when set.
func tokenVariables(getenv env) map[string]string {
	vars := map[string]string{}
	if t := getenv("GITHUB_TOKEN"); t != "" {
		vars["github-token"] = t
	}
	if t := getenv("GITLAB_ACCESS_TOKEN"); t != "" {
		vars["gitlab-access-token"] = t
	}
	return vars
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
