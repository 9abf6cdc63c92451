package contract

import (
	"fmt"

	"github.com/capirepo/capirepo/contract/finding"
	"slices"
	"strings"
)

// Severity says how much a finding matters: error only where clusterctl,
// the API server or a core Cluster API controller fails for users of the
// release (each error rule's Why says which and how); warning for contract
// SHOULDs and latent defects; info for a MAY.
type Severity = finding.Severity

// Severities, most severe first.
const (
	Error   = finding.Error
	Warning = finding.Warning
	Info    = finding.Info
)

// Rule is one check in the catalogue.
type Rule struct {
	ID string
	// Severity is the default; some findings are lowered, e.g. a CRD rule
	// that matters only for the kinds core Cluster API reads is a warning on
	// other CRDs.
	Severity Severity
	Area     string
	// Title is the one-line description.
	Title string
	Why   string
	Fix   string
	// Refused says clusterctl cannot read the release, or install from it,
	// when the rule finds an error (its files, metadata.yaml, the
	// components' namespace, objects clusterctl converts, CRDs clusterctl or
	// the API server refuse, a template's class): the dev loop stops on
	// these and only warns about other errors, such as a CRD schema still
	// being written or the :dev image a developer loads into kind.
	Refused bool
}

// Waivable says whether a waiver may clear the rule's errors: not when
// clusterctl refuses the release for them (Refused: no release series for
// the version, a file it cannot read, a Namespace it cannot default ...),
// since the failure would only move to every user's clusterctl init. A
// refused template stays waivable: the release installs and only clusterctl
// generate cluster of that flavor fails, which a maintainer may ship
// knowingly, with a reason (CAPA's flavors that ship their ClusterClass
// inline).
func (r Rule) Waivable() bool {
	return !r.Refused || r.Area == AreaTemplates || r.Area == AreaClusterClass
}

// Areas group rules in the catalogue; the ID's first digit says which.
const (
	AreaFiles        = "files"
	AreaRepository   = "repository"
	AreaComponents   = "components"
	AreaCRDs         = "CRDs"
	AreaRBAC         = "RBAC"
	AreaTemplates    = "templates"
	AreaClusterClass = "clusterclass"
	// AreaUpgrade holds the rules that compare a release with an older one
	// (capirepo diff, lint --against, the release's upgrade step): what
	// breaks clusterctl upgrade from the older release.
	AreaUpgrade = "upgrade"
)

// Rule IDs. They are stable: a waiver in capirepo.yaml names one.
const (
	RuleYAML               = "CAPI001"
	RuleVariableSyntax     = "CAPI002"
	RuleEmptyDefault       = "CAPI003"
	RuleMetadataMissing    = "CAPI101"
	RuleMetadataInvalid    = "CAPI102"
	RuleContractUnknown    = "CAPI103"
	RuleSeriesDuplicate    = "CAPI104"
	RuleVersionCovered     = "CAPI105"
	RuleComponentsName     = "CAPI106"
	RuleContractOld        = "CAPI107"
	RuleNamespaceCount     = "CAPI201"
	RuleTargetNamespace    = "CAPI202"
	RuleProviderLabel      = "CAPI203"
	RuleManager            = "CAPI204"
	RuleImageFloating      = "CAPI205"
	RuleImageVersion       = "CAPI206"
	RuleImageQualified     = "CAPI207"
	RuleInjectCA           = "CAPI208"
	RuleCRDScope           = "CAPI301"
	RuleCRDStatus          = "CAPI302"
	RuleContractLabel      = "CAPI303"
	RuleContractServed     = "CAPI304"
	RuleCRDName            = "CAPI305"
	RuleStorageVersion     = "CAPI306"
	RuleListKind           = "CAPI307"
	RuleEndpoint           = "CAPI308"
	RuleReady              = "CAPI309"
	RuleProviderID         = "CAPI310"
	RuleMachinePool        = "CAPI311"
	RuleTemplateCRD        = "CAPI312"
	RuleCategory           = "CAPI313"
	RuleLabelMetadata      = "CAPI314"
	RuleCRDDecode          = "CAPI315"
	RuleMoveLabel          = "CAPI316"
	RuleConversion         = "CAPI317"
	RuleAggregatedRole     = "CAPI401"
	RuleTemplateNS         = "CAPI501"
	RuleTemplateOneNS      = "CAPI502"
	RuleTemplateCluster    = "CAPI503"
	RuleTemplateClass      = "CAPI504"
	RuleClassVariable      = "CAPI505"
	RuleTopologyClass      = "CAPI506"
	RuleOwnKind            = "CAPI507"
	RuleCCVariables        = "CAPI601"
	RuleCCNamespace        = "CAPI602"
	RuleCCRefNamespace     = "CAPI603"
	RuleCCFileName         = "CAPI604"
	RuleCCVariableRequired = "CAPI605"
	RuleComponentsObject   = "CAPI209"
	RuleImageStaging       = "CAPI210"
	RuleDuplicateObject    = "CAPI211"

	RuleUpgradeSeries        = "CAPI701"
	RuleUpgradeContract      = "CAPI702"
	RuleUpgradeStorage       = "CAPI703"
	RuleUpgradeServed        = "CAPI704"
	RuleUpgradeIdentity      = "CAPI705"
	RuleUpgradeCRDRemoved    = "CAPI706"
	RuleUpgradeSchema        = "CAPI707"
	RuleUpgradeTightened     = "CAPI708"
	RuleUpgradeConversion    = "CAPI709"
	RuleUpgradeContractLabel = "CAPI710"
	RuleUpgradeProvider      = "CAPI711"
	RuleUpgradeVariable      = "CAPI712"
	RuleUpgradeClusterClass  = "CAPI713"
	RuleUpgradeSkip          = "CAPI714"
	// The upgrade of the release's users who generate clusters from its
	// flavors (clusterctl generate cluster --flavor).
	RuleUpgradeFlavor         = "CAPI715"
	RuleUpgradeFlavorVariable = "CAPI716"
	RuleUpgradeFlavorDefault  = "CAPI717"
)

var catalogue = []Rule{
	{RuleYAML, Error, AreaFiles, "Every YAML file parses, and every document is an object with apiVersion, kind and metadata.name",
		"clusterctl splits each file into documents and converts each to an object; one bad document fails init, generate cluster and upgrade. clusterctl substitutes variables before it parses, so a document that holds variables is checked as substituted with the values capirepo reads the release with (package values: the stand-ins, empty for a variable alone on its line that stands for a YAML fragment). It is an error when no value the variables could take makes it parse (the stand-ins, every variable as a quoted string, every variable empty), as an unclosed '[' below a line holding ${CLUSTER_NAME}, or a template line '- name: controlPlaneType:' with nothing after it, seen in a real provider tree; an error too when a variable's own default breaks it once the user leaves the variable unset, as clusterctl then substitutes the default (a real flavor writes " + `value: "${CONTROL_PLANE_ENDPOINT_HOST:=""}"` + ", whose default of two quote characters then breaks the quoted value); a warning when it parses only with values of another shape than the stand-ins (quoted, or empty where no variable stands alone on its line). In a cluster template or ClusterClass file the error is waivable with a reason: clusterctl refuses only that flavor.",
		"Fix the YAML where the message points; quote values that start with '{', '*' or '@'.", true},
	{RuleEmptyDefault, Warning, AreaFiles, "No variable has an empty default (${VAR:=})",
		"clusterctl (yamlprocessor.SimpleProcessor.Process) treats a variable whose default is empty as missing: generate provider, init and generate cluster fail with 'value for variables [VAR] is not set' unless the user sets it, which the empty default suggests they need not.",
		"Give a real default (${VAR:=value}). For an empty value there is no empty default: ${VAR:=\"\"} gives the two characters \"\" (an empty string where it is a YAML value of its own, but then a value the user sets may turn into a number; inside a string, e.g. a flag, the program must read \"\" as empty). Or write ${VAR} and document it as required.", true},
	{RuleVariableSyntax, Error, AreaFiles, "Variables parse with the envsubst library clusterctl uses",
		"clusterctl finds and substitutes ${VAR} with drone/envsubst; a malformed expression such as ${VAR-default} is a parse error that fails every command reading the file.",
		"Write ${NAME}, ${NAME:=default}, ${NAME=default} or ${NAME:-default}, with names of letters, digits and '_'; write $${X} for a literal ${X}.", true},

	{RuleMetadataMissing, Error, AreaRepository, "metadata.yaml is part of the release",
		"clusterctl reads metadata.yaml next to the components file to map the version to a contract; without it init, upgrade and 'latest' resolution fail.",
		"Ship a metadata.yaml (apiVersion clusterctl.cluster.x-k8s.io/v1alpha3, kind Metadata) with the release.", true},
	{RuleMetadataInvalid, Error, AreaRepository, "metadata.yaml is a Metadata object clusterctl accepts",
		"clusterctl accepts only apiVersion clusterctl.cluster.x-k8s.io/v1alpha3 and kind Metadata, and needs releaseSeries entries with major, minor and contract; a negative major or minor is no version (clusterctl reads it as a huge number no release has). A missing kind is an error too: clusterctl v1.11.0 refuses it ('invalid provider metadata: unexpected kind \"\"'), and v1.11.0 is a clusterctl users of the v1beta1 and v1beta2 contracts may run, although v1.11.1 accepts it again. Decided by a real incident: CAPA v2.9.0 and CAPZ v1.21.0 shipped metadata.yaml without kind, and their users could not init or plan an upgrade with clusterctl v1.11.0 (cluster-api #12712, fixed in v1.11.1 by #12714). capirepo build writes both fields when the tree's metadata.yaml leaves them out.",
		"Set apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3, kind: Metadata, and one releaseSeries entry per major.minor with its contract.", true},
	{RuleContractUnknown, Error, AreaRepository, "The release series of this version names a contract clusterctl accepts (v1beta2, v1beta1)",
		"clusterctl v1.14 installs and upgrades only providers whose series contract is v1beta2 or the still-compatible v1beta1.",
		"Set the contract of the series covering this release to v1beta2 (or v1beta1).", true},
	{RuleSeriesDuplicate, Error, AreaRepository, "No major.minor appears twice in releaseSeries",
		"clusterctl takes the first matching series; a second entry for the same major.minor is either dead or contradicts the first.",
		"Keep one entry per major.minor.", true},
	{RuleVersionCovered, Error, AreaRepository, "A release series covers the release version",
		"clusterctl init and generate provider fail with 'does not match any release series' when no series has the version's major.minor; upgrade needs every published version covered.",
		"Add a releaseSeries entry for the version's major.minor, with the contract the tree implements (the message suggests the one it uses: its newest series', else the one its CRDs' cluster.x-k8s.io/<contract> labels name); keep the older entries, metadata.yaml is cumulative.", true},
	{RuleComponentsName, Warning, AreaRepository, "The components file has the conventional name for the provider type",
		"The clusterctl contract strongly recommends <type>-components.yaml (core-, bootstrap-, control-plane-, infrastructure-, ...); users and clusterctl's built-in provider list expect it.",
		"Name the file as the provider type suggests, or set componentsFile in capirepo.yaml knowingly.", false},
	{RuleContractOld, Warning, AreaRepository, "Every release series names a known contract version",
		"Older series may keep their historical contract (v1alpha2 ... v1beta1), but a string that is no Cluster API contract version is a typo clusterctl will reject when it reaches that series.",
		"Use a Cluster API contract version (v1beta2, v1beta1, or the historical v1alpha2, v1alpha3, v1alpha4).", false},

	{RuleNamespaceCount, Error, AreaComponents, "The components file holds exactly one Namespace",
		"clusterctl uses the one Namespace as the default target namespace; with two it fails ('no more than one resource with Kind Namespace'), with none 'target namespace can't be defaulted' unless the user passes --target-namespace.",
		"Keep a single Namespace object, e.g. from config/default's namespace.yaml.", true},
	{RuleTargetNamespace, Error, AreaComponents, "Every namespaced object sits in the components Namespace",
		"The contract says all objects MUST belong to the target namespace; clusterctl moves them there, so an object meant for another namespace silently ends up elsewhere (and kubectl apply users see something different). An object with no namespace is moved without notice (warning).",
		"Set metadata.namespace to the Namespace of the file, e.g. with kustomize's namespace: field.", true},
	{RuleProviderLabel, Warning, AreaComponents, "Every object carries cluster.x-k8s.io/provider=<provider label>",
		"The contract asks for the label so kubectl-applied and clusterctl-installed components look alike; clusterctl overwrites a wrong value, hiding the mistake.",
		"Add the label with kustomize labels: (includeSelectors as config/default does) on the provider label.", false},
	{RuleManager, Error, AreaComponents, "A Deployment has a container named manager",
		"The contract says the controller container MUST be called manager; clusterctl init --wait-providers and the cluster-api operator look for it.",
		"Name the controller container manager in the manager Deployment.", false},
	{RuleImageFloating, Error, AreaComponents, "No image in a release uses a floating tag (latest, main, master, dev, or none)",
		"A release must install the same bits tomorrow as today; a floating tag changes under users and breaks reproducible installs and air-gapped mirrors.",
		"Set the image tag to the release version (capirepo does when image: is configured), or pin a digest.", false},
	{RuleImageVersion, Error, AreaComponents, "The manager image tag matches the release version",
		"A manager image tagged with another release's version (v0.15.0 in release v0.15.1) installs that release's code, which the CRDs and RBAC in this file were not built for, and the fix the release announces never runs: an error, waivable with a reason for a deliberate reuse. Decided by a real incident: cluster-api-control-plane-provider-kamaji published v0.15.1, v0.15.2 and v0.15.3 with the manager image still at :v0.15.0 (clastix/cluster-api-control-plane-provider-kamaji #233), so clusterctl installed v0.15.0's code for each. A tag that is no version, or that adds a suffix to the release's own (v1.2.3-ubi), is a warning; digests, and the tag a provider's image.tag template gives the build, are the release's. When several Deployments have a container named manager (a bundled operator), the provider's own is the one tagged with the release version, and the others are not checked.",
		"Tag the manager image with the release version, e.g. with image.newTag or capirepo's image: setting.", false},
	{RuleImageQualified, Error, AreaComponents, "Every Deployment and DaemonSet image is a fully qualified reference",
		"clusterctl parses each image with reference.ParseNamed to apply image overrides; 'nginx:1' or 'docker.io/nginx' fail with 'couldn't parse image name'. An image that holds a variable parses only after substitution, so init --list-images fails (warning). clusterctl parses no other workload's image (StatefulSet, ReplicaSet, Job, CronJob, Pod): there an image the kubelet cannot pull is a warning, and a container without an image, which the API server refuses, an error.",
		"Write registry/path/name:tag, e.g. registry.k8s.io/cluster-api/manager:v1.0.0 or docker.io/library/nginx:1.27.", false},
	{RuleInjectCA, Error, AreaComponents, "cert-manager CA injection points at a Certificate in the file",
		"clusterctl rewrites cert-manager.io/inject-ca-from as <namespace>/<name> and cert-manager injects the CA from that Certificate; a malformed or dangling reference leaves webhooks without a CA, so every API call they serve fails. On a CRD the CA serves only the conversion webhook, which the API server calls only when the CRD serves two or more versions with strategy Webhook: elsewhere a bad reference breaks nothing today (warning). Decided by real trees whose kubebuilder cainjection patch leaves the kustomize variable $(CERTIFICATE_NAMESPACE)/$(CERTIFICATE_NAME) on CRDs with one served version, which clusterctl, the API server and core accept.",
		"Set the annotation to <namespace>/<certificate-name> of a cert-manager.io Certificate shipped in the components.", false},
	{RuleComponentsObject, Error, AreaComponents, "Objects clusterctl transforms use the API versions it can convert",
		"clusterctl converts CRDs (apiextensions.k8s.io/v1), webhook configurations (admissionregistration.k8s.io/v1), Deployments and DaemonSets (apps/v1) and bindings (rbac.authorization.k8s.io/v1) to typed objects; other versions fail with 'failed to patch' or are rejected by current API servers.",
		"Render these kinds in the listed API versions.", true},
	{RuleImageStaging, Warning, AreaComponents, "No image in a release comes from a Kubernetes staging registry (gcr.io/k8s-staging-*)",
		"Staging registries hold what CI builds from every merge and tag, before promotion; their images are not meant for users and are garbage-collected, so a release that names one may install a build nobody promoted, or one that is gone. A tree's kustomization often names the staging image (the Makefile's release target rewrites it), which a release built without a config keeps.",
		"Set the release image: providers[].image.newName in capirepo.yaml (e.g. registry.k8s.io/<project>/<image>), or --image.", false},
	{RuleDuplicateObject, Error, AreaComponents, "No object appears twice in a components file",
		"clusterctl init applies every document in order: it creates the first copy of an object and sends each later copy as a merge patch, so the cluster holds the last copy's fields (with map keys only an earlier copy has). Checks that read the first copy, and readers of the file, judge an object the cluster never sees. The other checks judge the merged object.",
		"Keep one copy of the object: the one you mean the cluster to hold. Two kustomize bases that both include it are the usual cause.", false},

	{RuleCRDScope, Error, AreaCRDs, "Contract kinds (InfraCluster, InfraMachine, InfraMachinePool, bootstrap configs, control planes and their templates) are namespaced",
		"Core Cluster API resolves references in the Cluster's namespace, and clusterctl move treats cluster-scoped kinds as global.",
		"Set spec.scope: Namespaced (kubebuilder: +kubebuilder:resource:scope=Namespaced).", false},
	{RuleCRDStatus, Error, AreaCRDs, "Contract kinds that are not templates have the status subresource",
		"Providers report readiness through status, written with the status subresource; without it status updates go through the main resource and controllers built with controller-runtime's Status().Patch fail.",
		"Add subresources: {status: {}} to every served version (+kubebuilder:subresource:status).", false},
	{RuleContractLabel, Error, AreaCRDs, "Provider CRDs carry a cluster.x-k8s.io/<contract> label",
		"Core Cluster API reads the label of the newest contract it accepts (cluster.x-k8s.io/v1beta2, else cluster.x-k8s.io/v1beta1) to pick the API version of referenced objects, and fails with 'contract version label(s) are either missing or empty' on a contract kind that has neither (labels of older contracts do not count). On other CRDs a missing label is harmless but inconsistent (warning).",
		"Label the CRDs, e.g. kustomize labels: cluster.x-k8s.io/v1beta2: v1beta2 in config/crd.", false},
	{RuleContractServed, Error, AreaCRDs, "The API version core Cluster API resolves from a contract kind's labels is served by the CRD",
		"Core Cluster API (internal/contract.GetLatestContractAndAPIVersionFromContract) takes the label of the newest contract it accepts (cluster.x-k8s.io/v1beta2, else cluster.x-k8s.io/v1beta1), picks the highest version in its '_'-separated value and converts every reference to it; if the CRD does not serve that version, every reference to the kind fails. Older contract labels and the other versions of the value are never read by a core that can run the release, so they are not checked; nor are kinds that are no contract kind.",
		"Make the highest version in the label value a served version of the CRD.", false},
	{RuleCRDName, Error, AreaCRDs, "The CRD name is <plural of lower-case kind>.<group> (CalculateCRDName)",
		"clusterctl init validates every CRD name against contract.CalculateCRDName and core Cluster API looks CRDs up by it; a mismatch fails init unless the CRD carries clusterctl.cluster.x-k8s.io/skip-crd-name-preflight-check.",
		"Name the CRD as CalculateCRDName does (flect.Pluralize(lower(kind)) + '.' + group), or, for a CRD core Cluster API never references, add the skip annotation.", true},
	{RuleStorageVersion, Error, AreaCRDs, "Exactly one CRD version is the storage version",
		"The API server rejects a CRD with zero or several storage versions.",
		"Mark one version storage: true (+kubebuilder:storageversion).", true},
	{RuleListKind, Error, AreaCRDs, "A contract kind's list kind is <Kind>List",
		"The contract says the list resource MUST be named <Kind>List; controllers list with that kind.",
		"Set spec.names.listKind: <Kind>List.", false},
	{RuleEndpoint, Error, AreaCRDs, "InfraCluster has spec.controlPlaneEndpoint with host (string) and port (integer)",
		"Core Cluster API copies the endpoint from spec.controlPlaneEndpoint. The v1beta1 contract requires it; from v1beta2 the control plane may supply it instead, so a missing field is a warning there.",
		"Add controlPlaneEndpoint {host: string, port: int32} to the InfraCluster spec.", false},
	{RuleReady, Error, AreaCRDs, "Infra kinds expose readiness as the contract version requires",
		"Core Cluster API waits for status.initialization.provisioned (v1beta2 contract) or status.ready (v1beta1) on InfraCluster and InfraMachine; MachinePools in v1.14 still read status.ready, and the v1beta2 contract asks for initialization.provisioned too (warning).",
		"Add status.initialization.provisioned (boolean) for the v1beta2 contract, status.ready (boolean) for v1beta1, and both on InfraMachinePool.", false},
	{RuleProviderID, Error, AreaCRDs, "InfraMachine has spec.providerID (string)",
		"The Machine controller reads spec.providerID to match the Machine to its Node.",
		"Add providerID (string) to the InfraMachine spec.", false},
	{RuleMachinePool, Error, AreaCRDs, "InfraMachinePool has spec.providerIDList (array) and status.replicas (integer)",
		"The MachinePool controller reads both to track instances and replicas.",
		"Add providerIDList ([]string) to the spec and replicas (int32) to the status.", false},
	{RuleTemplateCRD, Warning, AreaCRDs, "Each contract kind has a <Kind>Template CRD in the same group",
		"ClusterClass and MachineDeployments clone <Kind>Template objects; InfraMachineTemplate is mandatory for MachineDeployments and the others are needed for ClusterClass.",
		"Add the <Kind>Template type with spec.template.spec, namespaced, with its own List kind.", false},
	{RuleCategory, Info, AreaCRDs, "Contract kinds list the cluster-api category",
		"kubectl get cluster-api shows every Cluster API object when the CRDs join the category.",
		"Add categories: [cluster-api] (+kubebuilder:resource:categories=cluster-api).", false},
	{RuleLabelMetadata, Warning, AreaCRDs, "Contract kinds carry a label for the contract of the release series",
		"metadata.yaml says which contract this release implements; a contract kind labelled only for another contract tells core Cluster API something different.",
		"Add the cluster.x-k8s.io/<contract> label for the series' contract, or fix metadata.yaml.", false},
	{RuleCRDDecode, Error, AreaCRDs, "A CRD decodes as the API server decodes it: no unquoted number or boolean where apiextensions.k8s.io/v1 has a string",
		"clusterctl converts the YAML to JSON without the CRD type, so an unquoted 123, 1.5 or true stays a number or boolean (description: 123, a label value 1, categories: [7]); clusterctl init converts each CRD to the typed object and the API server decodes it strictly by type, and both refuse a number or boolean where the field is a string, or a string where it is a boolean or integer. kubectl apply fails the same way. Unknown fields are not reported: the API server drops them.",
		"Quote the value where the field is a string (description: \"123\"); write booleans and numbers unquoted where the field takes them.", true},

	{RuleMoveLabel, Warning, AreaCRDs, "A cluster-scoped kind an InfraCluster references carries clusterctl's move label",
		"clusterctl move (the clusterctl contract's Move section) takes the namespaced objects linked to a Cluster by owner references; a cluster-scoped kind, such as an identity an InfraCluster's spec.identityRef names, and what hangs off it move only when its CRD carries clusterctl.cluster.x-k8s.io/move-hierarchy (or clusterctl.cluster.x-k8s.io/move). Without it the identity stays behind and the moved cluster's controllers cannot find it. A warning: the contract leaves room for a documented manual step. capirepo diff reports a release that drops the label from a CRD that had it.",
		"Label the CRD, e.g. a kustomize patch adding clusterctl.cluster.x-k8s.io/move-hierarchy: \"\" (as CAPA's config/crd/patches/label_in_*identities.yaml), or document the manual step.", false},
	{RuleConversion, Error, AreaCRDs, "A CRD that serves versions with different schemas converts them with a webhook",
		"With spec.conversion.strategy None (the default) the API server converts between versions by rewriting apiVersion only: an object stored in one version is served in every other served version with the stored version's fields, validated and pruned against the other version's schema on write, so a client that reads and updates it through the other version loses or corrupts data, and updates are refused when the stored fields do not fit. The release is broken on its own, whatever it upgrades from. Decided by a real incident: cluster-api v1.6 to v1.10 served IPAddressClaim v1alpha1 and v1beta1 (which added spec.clusterName) with strategy None, the conversion webhook it had written never enabled in the CRD (cluster-api #12198 enabled it for v1.11); capirepo lint of the v1.10.10 tree reports it. Schemas are compared without descriptions. capirepo diff reports what an upgrade adds to this (CAPI709): objects stored in a version the new release no longer serves.",
		"Set spec.conversion.strategy: Webhook and serve a conversion webhook, keep the schemas of the served versions the same, or stop serving the other version (served: false).", false},
	{RuleAggregatedRole, Error, AreaRBAC, "Contract kinds outside *.cluster.x-k8s.io are granted to core Cluster API by an aggregated ClusterRole",
		"Core Cluster API's manager role covers only the *.cluster.x-k8s.io groups; for another group it cannot read, label or own the objects unless a ClusterRole labelled cluster.x-k8s.io/aggregate-to-manager: \"true\" grants it.",
		"Ship a ClusterRole with that label granting get, list, watch, create, update, patch and delete on the resources.", false},

	{RuleTemplateNS, Error, AreaTemplates, "A cluster template holds no Namespace object",
		"The contract says templates MUST assume the target namespace exists; clusterctl renames every Namespace object to the target namespace, so a second Namespace, or one of a literal name, is not what the template says it creates (error). A template whose only Namespace is the target namespace itself (name: ${NAMESPACE}) works with clusterctl generate cluster | kubectl apply -f -, as real provider templates show; but kubectl delete -f of the generated file deletes the namespace and every cluster in it (warning).",
		"Remove the Namespace; users pass --target-namespace.", true},
	{RuleTemplateOneNS, Warning, AreaTemplates, "All objects of a cluster template are in one namespace",
		"The contract asks that all objects of a template be in the same namespace. clusterctl moves every object into the target namespace, so nothing fails with clusterctl; but applied with kubectl, objects in different namespaces cannot refer to each other (a latent defect). One namespace for all, even a literal one, is what the contract asks.",
		"Leave metadata.namespace unset, or set it to ${NAMESPACE}, on every object.", false},
	{RuleTemplateCluster, Warning, AreaTemplates, "A cluster template holds a Cluster, or is a ClusterClass flavor",
		"A template should hold all objects needed to create a workload cluster, starting with the Cluster; an empty one ('---' alone) makes clusterctl generate cluster print nothing. A flavor that ships only a ClusterClass (cluster-template-*-clusterclass.yaml) is fine: clusterctl generates it like any template.",
		"Add the cluster.x-k8s.io Cluster object.", false},
	{RuleTemplateClass, Error, AreaTemplates, "A topology Cluster's class has a clusterclass-<class>.yaml in the release",
		"clusterctl generate cluster (addClusterClassIfMissing) fetches clusterclass-<class>.yaml from the same provider release for every topology Cluster whose class is not yet in the management cluster, and fails with 'failed to get the cluster class template' when the file is missing, even if the template ships the ClusterClass inline (error). Where another flavor ships the class and can be generated on its own (cluster-template-clusterclass.yaml, as cluster-api-provider-nutanix ships it and documents applying it first), the topology flavor works once that flavor was applied, since clusterctl fetches nothing for a class the cluster has: a warning naming both flavors; capirepo verify reads the flavor as against a cluster where the class flavor was applied.",
		"Ship clusterclass-<class>.yaml, or point the topology at a class that is shipped; for a class shipped as a flavor, document applying that flavor first.", true},
	{RuleClassVariable, Error, AreaTemplates, "A topology Cluster whose class name holds a variable does not rely on an inline ClusterClass",
		"clusterctl resolves the ClusterClass file from the class name after substitution. Where the template ships the class inline and the release has no clusterclass-<name>.yaml, clusterctl generate cluster fails on every management cluster that does not have the class yet (error), unless another flavor ships a ClusterClass named by the same variable. Without an inline class the template works only where the class was applied before, e.g. from a -clusterclass flavor (warning, naming that flavor where the release has one, as cluster-api-provider-gcp's clusterclass and topology flavors).",
		"Ship clusterclass-<name>.yaml, or write the class name literally; offer other classes as other flavors.", false},
	{RuleTopologyClass, Error, AreaTemplates, "A topology Cluster names its ClusterClass",
		"The class name is required: spec.topology.classRef.name in cluster.x-k8s.io/v1beta2, spec.topology.class in v1beta1. The API server refuses a topology Cluster without it, and clusterctl generate cluster has no clusterclass-<class>.yaml to fetch for it.",
		"Set the class name in the field of the Cluster's API version (a v1beta2 Cluster has no spec.topology.class).", true},
	{RuleOwnKind, Warning, AreaTemplates, "Kinds of the provider's own API groups in templates have a CRD in the components",
		"A template or ClusterClass file that creates or refers to a kind of a group the provider's CRDs define, for which the components ship no CRD, fails: kubectl apply and clusterctl with 'no matches for kind', core Cluster API when it resolves the reference. It is a warning because another installation (a bundled operator, another provider of the same group) may define the kind.",
		"Add the kind's CustomResourceDefinition to the components, or fix the kind's name.", false},

	{RuleCCVariables, Warning, AreaClusterClass, "ClusterClass files hold no variables",
		"The contract says ClusterClass definitions SHOULD NOT have environment variables; ClusterClass variables and patches replace them.",
		"Move the value into a ClusterClass variable with a default, and patch it in.", false},
	{RuleCCNamespace, Warning, AreaClusterClass, "Objects in ClusterClass files set no metadata.namespace",
		"clusterctl applies the class in the Cluster's namespace; the contract recommends no object specify one.",
		"Remove metadata.namespace.", false},
	{RuleCCRefNamespace, Warning, AreaClusterClass, "ClusterClass template references set no namespace",
		"The contract says references SHOULD NOT specify a namespace; a namespaced reference breaks when the class is installed elsewhere.",
		"Remove namespace from the templateRef/ref.", false},
	{RuleCCFileName, Warning, AreaClusterClass, "A ClusterClass file is named clusterclass-<its ClusterClass name>.yaml",
		"clusterctl fetches clusterclass-<class>.yaml for a Cluster whose topology names <class>; a file named otherwise is never found, and the wrong class is installed under the name.",
		"Rename the file or the ClusterClass so they agree.", false},
	{RuleCCVariableRequired, Error, AreaClusterClass, "Every ClusterClass variable sets required",
		"The ClusterClass CRD of core Cluster API lists required among the fields every spec.variables entry must have, in v1beta1 and v1beta2 alike, and gives it no default: the API server refuses a ClusterClass whose variable leaves it out ('spec.variables[0].required: Required value'), so kubectl apply of the clusterclass file, or of the template that holds the class, fails. Cluster API v1.10 and older accepted a v1beta1 ClusterClass without it only because their mutating webhook decoded it into the v1beta1 Go type, whose required is a plain boolean, and wrote it back with required: false; v1.11 and later ship no mutating webhook for ClusterClass (v1beta2's required is optional in Go and omitted when unset). Every release's contract allows a core that refuses it: a v1beta2 release needs v1.11 or later, and core v1.11 and later also run providers of the v1beta1 contract (contract.GetCompatibleVersions), so an error for both. Seen in a real provider tree: its ClusterClass built and passed verify (clusterctl's client does not validate against the CRD), and only the install check against Cluster API v1.11 or later refused it.",
		"Set required: true or required: false on every variable of spec.variables.", false},
	// Upgrade: a release against the one before it (package diff).
	{RuleUpgradeSeries, Error, AreaUpgrade, "The new metadata.yaml has a release series for the new version and for every series the old one lists up to the old version",
		"clusterctl upgrade plans from the metadata.yaml of the newest published release, pre-releases included (upgrader_info.go getUpgradeInfo): when the installed version, or any published version above it, has no release series there, it fails with 'invalid provider metadata: version ... does not match any release series', and no management cluster running the dropped series can upgrade until a fixed release is published.",
		"Keep every release series in metadata.yaml (it is cumulative) and add the new one.", false},
	{RuleUpgradeContract, Error, AreaUpgrade, "The new release series names a contract clusterctl upgrades to from the old one; a contract change is named",
		"clusterctl v1.14 upgrades management clusters to the v1beta2 contract and accepts providers of the contracts compatible with it (contract.GetCompatibleVersions: v1beta2 also accepts v1beta1); a series naming another contract cannot be upgraded to (error). When the new contract differs from the old one, all providers of a management cluster must move to it together: clusterctl drops a plan that leaves one behind (upgrader.go Plan), so users need the other providers' releases of that contract too (warning). A series the old metadata.yaml already listed whose contract changed makes clusterctl misjudge what installed providers implement (warning).",
		"Name v1beta2 (or v1beta1) for the new series; keep the contracts of older series as they were; announce a contract change in the release notes.", false},
	{RuleUpgradeStorage, Error, AreaUpgrade, "The storage version of each CRD in the old release is still in the new spec.versions",
		"clusterctl's CRD migration (crd_migration.go) refuses the upgrade when the new CRD lacks the current storage version ('unable to upgrade CRD ... does not contain the storage version ... thus not allowing CR migration'), and the API server refuses to drop a version listed in status.storedVersions. The new CRD must also have exactly one storage version (CAPI306). When the history is known (several old releases, or the old one read from a target), the newest releases that cannot upgrade straight to the new one, and the oldest that can, are named (info).",
		"Keep the version in spec.versions (served: false is enough) until no supported release stores it; tell users of older releases which release to upgrade through first.", false},
	{RuleUpgradeServed, Error, AreaUpgrade, "A version the old release serves is not dropped from spec.versions in one step",
		"Cluster API's deprecation process (cluster-api #8038, #11894) stops serving a version (served: false) in one release and removes it in a later one: clients, GitOps manifests and other providers that still use the version fail at once when it disappears, while served: false gives them a release to notice. Setting a version that is not the storage version served: false is not a finding.",
		"Set served: false on the version in this release, and remove it in a later one.", false},
	{RuleUpgradeIdentity, Error, AreaUpgrade, "A CRD's group, scope, names.kind and names.plural do not change",
		"The API server refuses to change spec.group and names.plural, and scope and names.kind once the CRD is established (apiextensions-apiserver validation): clusterctl upgrade fails on the update. A new group or plural is a new CRD name, so the objects of the old one stay behind with no controller.",
		"Keep the identity; bring a new kind in as a new CRD with a migration.", false},
	{RuleUpgradeCRDRemoved, Error, AreaUpgrade, "The new release keeps every CRD the old release serves",
		"clusterctl upgrade deletes the old provider components but keeps its CRDs (upgrader.go: IncludeCRDs false): objects of a CRD the new release no longer ships stay in the cluster with no controller and no conversion webhook, and Clusters and Machines that reference them fail. A CRD with no served version in the old release is not in use and may go.",
		"Keep the CRD, or set its versions served: false in a release before the one that removes it.", false},
	{RuleUpgradeSchema, Error, AreaUpgrade, "In every version served by both releases, no field is removed or retyped, loses enum values, or becomes required without a default",
		"Objects stored under the old schema must stay valid under the new one: the API server prunes fields the schema no longer has (the data is lost on the next write), and refuses every update of an object whose stored value no longer has the field's type or is no longer in its enum, or that lacks a newly required field with no default (validation ratcheting spares only unchanged values that still fit). A required field with a default is safe: the API server fills it in. Compared with sigs.k8s.io/crdify's schema walk and checks.",
		"Keep the field (say it is deprecated in its description), widen rather than change a type, keep enum values, and give a newly required field a default; or make the change in a new API version with conversion.", false},
	{RuleUpgradeTightened, Warning, AreaUpgrade, "New or tightened validation of existing fields: limits, a new enum, patterns, formats, CEL rules, changed defaults",
		"With validation ratcheting (on by default since Kubernetes 1.30) stored values that break a new limit keep passing updates while they are unchanged, so nothing fails at upgrade; but manifests and controllers that write such values are refused from now on, and a changed default changes new objects (and old ones as they are read).",
		"Check that no value in use breaks the new rule, and say so in the release notes.", false},
	{RuleUpgradeConversion, Error, AreaUpgrade, "Objects stored in a version the new release no longer serves are converted by a webhook when the schemas differ",
		"With spec.conversion.strategy None the API server only rewrites apiVersion: an object the old release stored in a version the new CRD still lists but no longer serves (or stores) is served in the new versions with the old version's fields, and pruned to the new schema on write, so data is lost or invalid after the upgrade. Only what the upgrade adds is reported here: versions the new release serves with different schemas under strategy None are the release's own finding (CAPI317), reported by its lint, not twice. A pair the old release already had this way is a warning: the upgrade does not make it worse. Schemas are compared as CAPI317 compares them.",
		"Set spec.conversion.strategy: Webhook and serve a conversion webhook, or keep the schemas of the versions the same.", false},
	{RuleUpgradeContractLabel, Error, AreaUpgrade, "CRDs keep a cluster.x-k8s.io/<contract> label that resolves to a served version, consistent with the new metadata.yaml",
		"Core Cluster API resolves the API version of every provider object it references from the CRD's contract labels (GetLatestContractAndAPIVersionFromContract: the label of the newest contract it accepts, the highest version in its value). Only what the upgrade breaks is an error: a label that in the old release led core to a version the old CRD served, and that the new release drops ('contract version label(s) are either missing or empty') or points at a version the new CRD does not serve, fails every reference after the upgrade. A label that led nowhere in the old release already, and a CRD new in the new release, change nothing on upgrade: they are the release's own findings (CAPI303, CAPI304, at their own severity in lint and lint --against), not upgrade errors. Decided by real upgrades that work: kustomize commonLabels in config/crd stamp cluster.x-k8s.io/v1beta1 on every CRD, identities and IPAM pools too, whose value may name a version such a CRD never served, in both releases; core never resolves those kinds. When the release moves to another contract and a labelled CRD has no label for it, core v1.14 still reads the compatible older label (GetCompatibleVersions: v1beta2 accepts v1beta1), a contract metadata.yaml no longer names (warning).",
		"Keep the labels (kustomize labels: in config/crd), add the label of the new contract, and point its value at a served version.", false},
	{RuleUpgradeProvider, Warning, AreaUpgrade, "The provider label, the components file name, the Namespace and the manager Deployment's name stay the same",
		"clusterctl finds an installed provider by its label and inventory, deletes the old components by the provider label and installs the new ones: with a changed label or namespace the old objects (and a second manager) are left behind, and a renamed components file breaks the provider URLs and overrides that name it. A renamed manager Deployment changes what monitoring and kubectl commands users wrote refer to.",
		"Keep them, or say in the release notes what moves and how.", false},
	{RuleUpgradeVariable, Warning, AreaUpgrade, "The new components need no variable without a default that the old ones did not",
		"clusterctl upgrade substitutes the components' variables from the environment and the clusterctl config; a variable without a default that the old release did not need fails the upgrade with 'value for variables [...] is not set' until users set it.",
		"Give the variable a default (${VAR:=value}), or tell users in the release notes to set it before they upgrade.", false},
	{RuleUpgradeClusterClass, Warning, AreaUpgrade, "A ClusterClass keeps its variables and the kinds of its template references",
		"Clusters set the variables of their ClusterClass: when the new class drops one, their topology no longer validates. Core Cluster API's ClusterClass webhook refuses an update that changes the kind or API group of a template reference (ClusterClassesAreCompatible), so the new class cannot be applied over the old one.",
		"Keep the variables (deprecate them in their description) and the kinds of the references, or ship the change under a new ClusterClass name.", false},
	{RuleUpgradeSkip, Error, AreaUpgrade, "Core Cluster API and the kubeadm providers move at most three minor versions in one upgrade",
		"From v1.10 on clusterctl refuses to upgrade the core, kubeadm bootstrap and kubeadm control-plane providers by more than three minor versions ('upgrade for ... provider can't skip more than 3 versions', upgrader.go doUpgrade).",
		"Upgrade through an intermediate release; the message names the series.", false},
	{RuleUpgradeFlavor, Warning, AreaUpgrade, "Every flavor of the old release is still in the new one",
		"Users generate workload clusters with clusterctl generate cluster --flavor NAME, in scripts and CI, against the newest release: a flavor the new release drops or renames (its cluster-template-NAME.yaml gone) makes that command fail for them, and the default flavor's (cluster-template.yaml) users run it without --flavor. Nothing fails for the management cluster, so a warning; the message names the flavors the new release adds, in case one is the rename.",
		"Keep the flavor (or its old name beside the new one) for a release, or say in the release notes which flavor replaces it.", false},
	{RuleUpgradeFlavorVariable, Warning, AreaUpgrade, "A flavor needs no variable without a default that its old version did not",
		"clusterctl generate cluster processes the flavor's template, and the clusterclass files its topology Clusters name, with the variables of the environment and the clusterctl config: a variable without a default that the old flavor did not use, or gave a default, fails it ('value for variables [...] is not set') until users set it, and the clusters they generate need a value for it. One finding per flavor and variable.",
		"Give the variable a default (${VAR:=value}), or tell users in the release notes to set it.", false},
	{RuleUpgradeFlavorDefault, Warning, AreaUpgrade, "A flavor's variables keep their defaults",
		"Users who do not set a variable get its default: when the new flavor changes it, the clusters they generate with the same command and settings differ from those of the old release (a machine type, a Kubernetes version, a network range), which nothing reports. One finding per flavor and variable.",
		"Say the new default in the release notes, or keep the old one.", false},
}

func init() {
	slices.SortFunc(catalogue, func(a, b Rule) int { return strings.Compare(a.ID, b.ID) })
}

// Rules returns the catalogue, sorted by ID.
func Rules() []Rule { return slices.Clone(catalogue) }

// LookupRule returns the rule with the given ID.
func LookupRule(id string) (Rule, bool) {
	i := slices.IndexFunc(catalogue, func(r Rule) bool { return r.ID == id })
	if i < 0 {
		return Rule{}, false
	}
	return catalogue[i], true
}

func mustRule(id string) Rule {
	r, ok := LookupRule(id)
	if !ok {
		panic(fmt.Sprintf("contract: rule %s is not in the catalogue", id))
	}
	return r
}
