package pipeline_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/capirepo/capirepo/pipeline"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/sign"
)

func TestDirVersions_EveryVersionOldestFirstBySemver(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"infrastructure-example/v1.10.0", "infrastructure-example/v1.9.0", "core-cluster-api/v1.9.0",
		"infrastructure-example/not-a-version", "bin/v2.0.0"} {
		if err := os.MkdirAll(filepath.Join(root, filepath.FromSlash(d)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	got, err := pipeline.DirVersions(root)
	if diff := cmp.Diff([]string{"v1.9.0", "v1.10.0"}, got); diff != "" || err != nil {
		t.Errorf("versions (-want +got):\n%s%v", diff, err)
	}
	// One version folder: its version.
	if got, err := pipeline.DirVersions(filepath.Join(root, "infrastructure-example", "v1.9.0")); !cmp.Equal(got, []string{"v1.9.0"}) || err != nil {
		t.Errorf("a version folder: %q, %v", got, err)
	}
	if got, err := pipeline.DirVersions(t.TempDir()); len(got) != 0 || err != nil {
		t.Errorf("an empty folder: %q, %v", got, err)
	}
	// A folder clusterctl reads as a version (without the v) is named.
	if err := os.MkdirAll(filepath.Join(root, "infrastructure-example", "9.9.9"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = pipeline.DirVersions(root)
	want := filepath.Join(root, "infrastructure-example", "9.9.9") + ": clusterctl reads this folder as version 9.9.9 of infrastructure-example"
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "rename it to v9.9.9") {
		t.Errorf("a v-less version folder: %v; want %q", err, want)
	}
}

func TestVerify_WhatCannotBeCheckedIsAUsageErrorAndNoReport(t *testing.T) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pem, err := sign.PublicKeyPEM(priv)
	if err != nil {
		t.Fatal(err)
	}
	v, err := sign.NewVerifier(sign.VerifyOptions{Key: pem})
	if err != nil {
		t.Fatal(err)
	}
	for name, o := range map[string]pipeline.VerifyOptions{
		"nothing to read":          {},
		"a folder and configmaps":  {Path: t.TempDir(), ConfigMaps: "cm.yaml"},
		"signatures of configmaps": {ConfigMaps: "cm.yaml", Signatures: v},
	} {
		rep, err := pipeline.Verify(context.Background(), o)
		if !publish.IsUsage(err) || rep != nil {
			t.Errorf("%s: report %v, error %v; want a usage error and no report", name, rep, err)
		}
		var out strings.Builder
		if err := rep.WriteText(&out); err != nil || out.Len() != 0 {
			t.Errorf("%s: a nil report printed %q, %v", name, out.String(), err)
		}
	}
}

func TestLintPath_AgainstOnOneFileIsAUsageError(t *testing.T) {
	file := filepath.Join(t.TempDir(), "metadata.yaml")
	if err := os.WriteFile(file, []byte("apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := pipeline.LintPath(context.Background(), pipeline.LintPathOptions{Path: file, Against: []string{"dist"}})
	if !publish.IsUsage(err) || !strings.Contains(err.Error(), "not one file") {
		t.Errorf("--against on a file: %v", err)
	}
}

func TestIsSourceTree_TellsATreeFromReleaseAssets(t *testing.T) {
	tree, assets := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(tree, "config", "default"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tree, "config", "default", "kustomization.yaml"), []byte("resources: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(assets, "metadata.yaml"), []byte("kind: Metadata\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if !pipeline.IsSourceTree(tree) || pipeline.IsSourceTree(assets) {
		t.Errorf("tree %v, assets %v", pipeline.IsSourceTree(tree), pipeline.IsSourceTree(assets))
	}
}
