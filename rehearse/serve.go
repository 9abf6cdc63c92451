package rehearse

import (
	"bytes"
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/capirepo/capirepo/release"
)

// Served says what the rehearsal's repository serves differently from a
// provider's release, in its components file: nothing in a scratch cluster
// serves webhooks or runs controllers, so the API server must never be
// asked to call one.
type Served struct {
	// Provider is the provider label, Version its version, File the
	// components file.
	Provider string `json:"provider"`
	Version  string `json:"version"`
	File     string `json:"file"`
	// Removed are the webhook configurations and APIServices taken out, as
	// Kind/name: the API server would call them on every request they match.
	Removed []string `json:"removed,omitempty"`
	// NoConversion are the CustomResourceDefinitions whose conversion
	// webhook is set to None: their objects are stored and served without
	// conversion.
	NoConversion []string `json:"noConversion,omitempty"`
	// ScaledDown are the workloads served so that they run no Pod
	// (Deployments, StatefulSets and ReplicaSets at 0 replicas, Jobs and
	// CronJobs suspended, DaemonSets and Pods on no node: see stop), so that
	// on a cluster that runs Pods (kind) no controller acts on the
	// rehearsal's objects with their stand-in values.
	ScaledDown []string `json:"scaledDown,omitempty"`
}

// Changed says whether anything of the file is served differently.
func (s Served) Changed() bool {
	return len(s.Removed)+len(s.NoConversion)+len(s.ScaledDown) > 0
}

// served returns a copy of p whose components file holds no webhook
// configuration, APIService or conversion webhook and whose workloads run
// no Pod (stop), and says what it changed. The file is edited as YAML
// nodes, so what clusterctl substitutes in it (${VAR} in any position,
// comments, quoting) is served as the release has it.
func served(p *release.Provider) (*release.Provider, Served, error) {
	s := Served{Provider: p.Label(), Version: p.Version, File: p.ComponentsFile}
	comps, ok := p.File(p.ComponentsFile)
	if !ok {
		return nil, s, fmt.Errorf("%s %s has no components file %s", p.Label(), p.Version, p.ComponentsFile)
	}
	nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(comps.Data), PreserveSeqIndent: true, DisableUnwrapping: true}).Read()
	if err != nil {
		return nil, s, fmt.Errorf("%s %s: %s: read the components as YAML (before clusterctl substitutes its variables) to take the webhooks out: %w",
			p.Label(), p.Version, p.ComponentsFile, err)
	}
	var kept []*yaml.RNode
	for _, n := range nodes {
		name := n.GetKind() + "/" + n.GetName()
		switch {
		case isWebhookConfiguration(n):
			s.Removed = append(s.Removed, name)
			continue
		case n.GetKind() == "CustomResourceDefinition" && apiGroup(n) == "apiextensions.k8s.io":
			strategy, err := n.Pipe(yaml.Lookup("spec", "conversion", "strategy"))
			if err != nil {
				return nil, s, fmt.Errorf("%s: %s: %s: %w", p.Label(), p.ComponentsFile, name, err)
			}
			if strategy != nil && yaml.GetValue(strategy) != "None" {
				if err := n.PipeE(yaml.Lookup("spec"), yaml.SetField("conversion", yaml.NewMapRNode(&map[string]string{"strategy": "None"}))); err != nil {
					return nil, s, fmt.Errorf("%s: %s: %s: %w", p.Label(), p.ComponentsFile, name, err)
				}
				s.NoConversion = append(s.NoConversion, name)
			}
		case release.PodSpecPath(n.GetKind()) != nil:
			stopped, err := stop(n)
			if err != nil {
				return nil, s, fmt.Errorf("%s: %s: %s: %w", p.Label(), p.ComponentsFile, name, err)
			}
			if stopped {
				s.ScaledDown = append(s.ScaledDown, name)
			}
		}
		kept = append(kept, n)
	}
	out := &release.Provider{ID: p.ID, Version: p.Version, ComponentsFile: p.ComponentsFile, NoChecksums: p.NoChecksums}
	for _, f := range p.Files {
		if f.Name != p.ComponentsFile {
			out.Files = append(out.Files, f)
		}
	}
	data := comps.Data
	if s.Changed() {
		var b bytes.Buffer
		if err := (kio.ByteWriter{Writer: &b}).Write(kept); err != nil {
			return nil, s, fmt.Errorf("%s: %s: %w", p.Label(), p.ComponentsFile, err)
		}
		data = b.Bytes()
	}
	if err := out.Add(p.ComponentsFile, data); err != nil {
		return nil, s, err
	}
	return out, s, nil
}

// NoNode is the node selector the rehearsal's repository gives a DaemonSet's
// or a Pod's pod spec: no node has the label, so nothing of it runs.
const NoNode = "rehearsal.capirepo/no-node"

// stop edits a workload so that it runs no Pod: Deployments, StatefulSets
// and ReplicaSets at 0 replicas, Jobs and CronJobs suspended, DaemonSets and
// Pods on no node (a node selector no node matches). The kinds are those
// release.PodSpecPath names; stop says whether it changed anything (a
// kind of another API group is left as it is).
func stop(n *yaml.RNode) (bool, error) {
	kind, group := n.GetKind(), apiGroup(n)
	var f yaml.Filter
	switch {
	case group == "apps" && (kind == "Deployment" || kind == "StatefulSet" || kind == "ReplicaSet"):
		f = yaml.SetField("replicas", yaml.NewRNode(&yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagInt, Value: "0"}))
	case group == "batch" && (kind == "Job" || kind == "CronJob"):
		f = yaml.SetField("suspend", yaml.NewRNode(&yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagBool, Value: "true"}))
	case group == "apps" && kind == "DaemonSet" || group == "" && kind == "Pod":
		path := append(release.PodSpecPath(kind)[1:], "nodeSelector")
		return true, n.PipeE(yaml.LookupCreate(yaml.MappingNode, "spec"), yaml.LookupCreate(yaml.MappingNode, path...), yaml.SetField(NoNode, yaml.NewScalarRNode("true")))
	default:
		return false, nil
	}
	return true, n.PipeE(yaml.LookupCreate(yaml.MappingNode, "spec"), f)
}

// isWebhookConfiguration says whether the API server would call out for
// an object: an admission webhook configuration, or an APIService that
// names a Service (an aggregated API).
func isWebhookConfiguration(n *yaml.RNode) bool {
	switch apiGroup(n) {
	case "admissionregistration.k8s.io":
		return n.GetKind() == "ValidatingWebhookConfiguration" || n.GetKind() == "MutatingWebhookConfiguration"
	case "apiregistration.k8s.io":
		return n.GetKind() == "APIService"
	}
	return false
}

// apiGroup is the group of a node's apiVersion.
func apiGroup(n *yaml.RNode) string {
	group, _, ok := bytes.Cut([]byte(n.GetApiVersion()), []byte("/"))
	if !ok {
		return ""
	}
	return string(group)
}
