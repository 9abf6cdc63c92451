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

	"github.com/capirepo/capirepo/pipeline"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/sign"
)

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
