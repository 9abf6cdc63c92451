package contract_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/capirepo/capirepo/contract"
)

// appendCopy appends a copy of kind/name, changed by fn, to file.
func (fs files) appendCopy(t *testing.T, file, kind, name string, fn func(m map[string]any)) {
	t.Helper()
	for _, d := range strings.Split(fs[file], "\n---\n") {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(d), &m); err != nil {
			t.Fatal(err)
		}
		if meta, _ := m["metadata"].(map[string]any); m["kind"] != kind || meta["name"] != name {
			continue
		}
		fn(m)
		b, err := yaml.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		fs[file] = strings.TrimSuffix(fs[file], "\n") + "\n---\n" + string(b)
		return
	}
	t.Fatalf("%s has no %s/%s", file, kind, name)
}

// TestLint_DuplicateCRDJudgesWhatTheClusterHolds: clusterctl applies both
// copies in order, so the second one's two storage versions are what the API
// server gets; the lint reports the duplicate by both documents and judges
// the second copy (it used to keep the first, and found nothing).
func TestLint_DuplicateCRDJudgesWhatTheClusterHolds(t *testing.T) {
	fs := readDir(t, "testdata/release")
	fs.appendCopy(t, comps, "CustomResourceDefinition", "fooidentities."+group, func(m map[string]any) {
		versions := at(t, m, "spec", "versions").([]any)
		v1beta2 := map[string]any{"name": "v1beta2", "served": true, "storage": true}
		if s, ok := versions[0].(map[string]any)["schema"]; ok {
			v1beta2["schema"] = s // the same schema: conversion None is then no finding (CAPI317)
		}
		set(t, m, append(versions, v1beta2), "spec", "versions")
	})
	r := contract.Lint(fs.release(t, label, version), contract.Options{})
	want := []key{
		{"CAPI211", E, comps, crd("fooidentities"), "metadata.name"},
		{"CAPI306", E, comps, crd("fooidentities"), "spec.versions[*].storage"},
	}
	if diff := cmp.Diff(want, keys(r.Findings, prefix)); diff != "" {
		t.Fatalf("findings (-want +got):\n%s", diff)
	}
	docs := len(contract.Documents([]byte(fs[comps]))) + 1
	msg := r.Findings[0].Message
	for _, s := range []string{"documents ", " and " + strconv.Itoa(docs), "copies differ", "the cluster holds document " + strconv.Itoa(docs)} {
		if !strings.Contains(msg, s) {
			t.Errorf("message %q does not say %q", msg, s)
		}
	}
}

// TestLint_DuplicateSameObject: an identical copy is still an error, named
// as such.
func TestLint_DuplicateSameObject(t *testing.T) {
	fs := readDir(t, "testdata/release")
	fs.appendCopy(t, comps, "CustomResourceDefinition", "fooidentities."+group, func(map[string]any) {})
	r := contract.Lint(fs.release(t, label, version), contract.Options{})
	if diff := cmp.Diff([]key{{"CAPI211", E, comps, crd("fooidentities"), "metadata.name"}}, keys(r.Findings, prefix)); diff != "" {
		t.Fatalf("findings (-want +got):\n%s", diff)
	}
	if !strings.Contains(r.Findings[0].Message, "the same object each time") {
		t.Errorf("message %q", r.Findings[0].Message)
	}
}

// TestDocuments_DuplicateMergesAsClusterctlPatches: a later copy is a JSON
// merge patch on the earlier one: its fields win, lists are replaced, map
// keys only the first copy has stay.
func TestDocuments_DuplicateMergesAsClusterctlPatches(t *testing.T) {
	data := []byte(`apiVersion: v1
kind: ConfigMap
metadata: {name: a, namespace: ns, labels: {one: "1"}}
data: {p: "1", q: "1"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: b, namespace: ns}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: a, namespace: ns, labels: {two: "2"}}
data: {q: "2"}
`)
	docs := contract.Documents(data)
	if len(docs) != 2 || docs[0].Name != "a" || docs[1].Name != "b" {
		t.Fatalf("documents: %+v", docs)
	}
	want := map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "a", "namespace": "ns", "labels": map[string]any{"one": "1", "two": "2"}},
		"data":     map[string]any{"p": "1", "q": "2"},
	}
	if diff := cmp.Diff(want, docs[0].Object); diff != "" {
		t.Errorf("merged object (-want +got):\n%s", diff)
	}
	if d := docs[0].Duplicate; d == nil || !d.Differ || !cmp.Equal(d.Documents, []int{1, 3}) {
		t.Errorf("duplicate: %+v", d)
	}
	if docs[1].Duplicate != nil {
		t.Errorf("b is no duplicate: %+v", docs[1].Duplicate)
	}
}
