package contract

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// Document is one object of a release file, decoded as clusterctl decodes
// it, for the checks outside this package that compare releases (package
// diff): they read files as the lint reads them.
type Document struct {
	APIVersion, Kind, Name, Namespace string
	// Object is the document as clusterctl holds it (unstructured).
	Object map[string]any
	// CRD is the decoded CustomResourceDefinition, for a CRD that decodes.
	CRD *apiextensionsv1.CustomResourceDefinition
	// Duplicate says the file holds the object more than once; the
	// Document is then what the cluster ends up with (see Documents).
	Duplicate *Duplicate
}

// Duplicate is an object a file holds more than once.
type Duplicate struct {
	// Documents are the 1-based numbers of the documents holding a copy.
	Documents []int
	// Differ says the copies are not all the same.
	Differ bool
	// Message says which documents hold it and what the cluster holds.
	Message string
}

// ID returns Kind/name, or Kind/namespace/name: the lint's object IDs, so
// findings about a document are waived and located as the lint's are.
func (d Document) ID() string {
	if d.Namespace != "" {
		return d.Kind + "/" + d.Namespace + "/" + d.Name
	}
	return d.Kind + "/" + d.Name
}

// Documents splits a file into its objects as the lint does, with their
// CRDs decoded. Documents that do not parse or decode are left out: the lint
// reports them (CAPI001, CAPI315). An object the file holds more than once is
// one Document, at its first copy's place, holding what clusterctl leaves in
// the cluster after applying every copy in order (the lint's CAPI211).
func Documents(data []byte) []Document {
	objs, dups := mergeDuplicates(parseObjects(data, true, func(int, string, string) {}))
	dupOf := map[int]*Duplicate{}
	for _, d := range dups {
		nums := make([]int, len(d.copies))
		for i, c := range d.copies {
			nums[i] = c.doc + 1
		}
		dupOf[d.copies[0].doc] = &Duplicate{Documents: nums, Differ: d.differ, Message: d.message()}
	}
	out := make([]Document, len(objs))
	for i, o := range objs {
		out[i] = Document{APIVersion: o.apiVersion, Kind: o.kind, Name: o.name, Namespace: o.namespace, Object: o.m, CRD: o.crd, Duplicate: dupOf[o.doc]}
	}
	return out
}

// ContractLabels returns a CRD's cluster.x-k8s.io/<contract> labels:
// contract -> the API versions of the label's value.
func ContractLabels(crd *apiextensionsv1.CustomResourceDefinition) map[string][]string {
	return (&crdObject{crd: crd}).contractLabels()
}

// ResolvedContract returns the contract label core Cluster API reads on a CRD
// and the API version it resolves from it (see RuleContractServed): "", ""
// when the CRD has no label of a contract core accepts.
func ResolvedContract(crd *apiextensionsv1.CustomResourceDefinition) (contract, version string) {
	c := &crdObject{crd: crd}
	return c.resolved(c.contractLabels())
}
