package apiserver

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/config"

	"github.com/capirepo/capirepo/internal/testtree"
	"github.com/capirepo/capirepo/pipeline"
	"github.com/capirepo/capirepo/publish/targets"
	"github.com/capirepo/capirepo/release"
)

// writeKubeconfig writes a kubeconfig file for the server.
func writeKubeconfig(t testing.TB, cfg *rest.Config) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["test"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData, TLSServerName: cfg.ServerName, InsecureSkipTLSVerify: cfg.Insecure}
	kc.AuthInfos["test"] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken, ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData}
	kc.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "test"}
	kc.CurrentContext = "test"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// clusterctlConfig opens a clusterctl config file as capirepo's commands
// open the user's.
func clusterctlConfig(t *testing.T, file string) pipeline.Clusterctl {
	t.Helper()
	c, err := config.New(context.Background(), file)
	if err != nil {
		t.Fatal(err)
	}
	return pipeline.Clusterctl{File: file, Config: c}
}

// certManagerConfig writes cert-manager's release as a local repository
// tree and a clusterctl config whose cert-manager: points into it, as a
// site with a mirror has.
func certManagerConfig(t *testing.T) string {
	t.Helper()
	cm := certManager(t)
	dir := t.TempDir()
	testtree.WriteInto(t, dir, map[string]string{"repo/cert-manager/" + cm.Version + "/" + cm.ComponentsFile: string(cm.Components().Data)})
	cfg := filepath.Join(dir, "clusterctl.yaml")
	url := "file://" + filepath.ToSlash(filepath.Join(dir, "repo", "cert-manager", cm.Version, cm.ComponentsFile))
	if err := os.WriteFile(cfg, []byte("cert-manager:\n  url: \""+url+"\"\n  version: \""+cm.Version+"\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestRelease_InstallCheckStep runs release with --install-check through a
// kubeconfig: cert-manager's CRDs come from where the clusterctl config
// says (a local mirror here), the step passes for the example, and a
// release the server refuses stops the run before anything is published.
func TestRelease_InstallCheckStep(t *testing.T) {
	cfg := managementCluster(t, false) // cert-manager's CRDs come from the mirror
	ctx := context.Background()
	check := &pipeline.InstallCheckOptions{Kubeconfig: writeKubeconfig(t, cfg), Clusterctl: clusterctlConfig(t, certManagerConfig(t))}

	t.Run("passes", func(t *testing.T) {
		var log bytes.Buffer
		sum, err := pipeline.Release(ctx, pipeline.ReleaseOptions{
			Build:  pipeline.BuildOptions{Dir: filepath.Join(root, "examples", "infrastructure-example"), Version: "v0.1.0", Out: t.TempDir()},
			DryRun: true, SkipImageCheck: true, InstallCheck: check, Log: &log,
		})
		if err != nil {
			t.Fatalf("%v\n%s", err, log.String())
		}
		i := slices.IndexFunc(sum.Steps, func(s pipeline.StepResult) bool { return s.Step == "install check" })
		if i < 0 || sum.Steps[i].Status != pipeline.StatusOK || sum.Steps[i-1].Step != "verify dist" { // the dist is read back first, in well under a second
			t.Fatalf("steps %+v", sum.Steps)
		}
		for _, want := range []string{"cert-manager: CRDs of " + certManager(t).Version, "creates 6 CustomResourceDefinitions", "0 refused, 0 not checked"} {
			if !strings.Contains(log.String(), want) {
				t.Errorf("the log does not say %q:\n%s", want, log.String())
			}
		}
	})

	t.Run("refused stops the release", func(t *testing.T) {
		tree := testtree.CopyTree(t, filepath.Join(root, "examples", "infrastructure-example"))
		// A key algorithm cert-manager's CRD does not allow: no lint rule
		// knows cert-manager's schema, the API server does.
		cert := filepath.Join(tree, "config", "certmanager", "certificate.yaml")
		data, err := os.ReadFile(cert)
		const old = "  secretName: webhook-server-cert"
		if err != nil || !bytes.Contains(data, []byte(old)) {
			t.Fatalf("%s: %v", cert, err)
		}
		if err := os.WriteFile(cert, bytes.Replace(data, []byte(old), []byte(old+"\n  privateKey:\n    algorithm: DSA"), 1), 0o644); err != nil {
			t.Fatal(err)
		}
		repo := t.TempDir()
		loc, err := targets.Parse("file://" + repo)
		if err != nil {
			t.Fatal(err)
		}
		var log bytes.Buffer
		sum, err := pipeline.Release(ctx, pipeline.ReleaseOptions{
			Build:   pipeline.BuildOptions{Dir: tree, Version: "v0.1.0", Out: t.TempDir()},
			Targets: []targets.Location{loc}, SkipImageCheck: true, InstallCheck: check, Log: &log,
		})
		if err == nil || !strings.Contains(err.Error(), `Unsupported value: "DSA"`) {
			t.Fatalf("want the server's refusal, got %v\n%s", err, log.String())
		}
		status := map[string]string{}
		for _, s := range sum.Steps {
			status[s.Step] = s.Status
		}
		if status["install check"] != pipeline.StatusFailed || status["publish file://"+repo] != pipeline.StatusNotRun {
			t.Errorf("steps %+v", sum.Steps)
		}
		if entries, _ := os.ReadDir(repo); len(entries) > 0 {
			t.Errorf("published %v after the install check failed", entries)
		}
	})
}

// TestRelease_RehearsalStep runs release --rehearse against a file://
// target that holds the example's v0.1.0: the upgrade step finds v0.1.0,
// and the rehearsal upgrades from it to the v0.1.1 built, with core
// Cluster API from a folder, after the dist is written and read back and
// before anything would be published; the summary carries its report.
func TestRelease_RehearsalStep(t *testing.T) {
	cfg, kubeconfig := scratchCluster(t)
	before := crdNames(t, cfg)
	repo := t.TempDir()
	if err := release.Write(repo, example(t, "v0.1.0")); err != nil {
		t.Fatal(err)
	}
	coreDir := t.TempDir()
	if err := release.Write(coreDir, coreRelease(t)); err != nil {
		t.Fatal(err)
	}
	loc, err := targets.Parse("file://" + repo)
	if err != nil {
		t.Fatal(err)
	}
	core, err := pipeline.ParseSide(coreDir, "")
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	sum, err := pipeline.Release(context.Background(), pipeline.ReleaseOptions{
		Build:   pipeline.BuildOptions{Dir: filepath.Join(root, "examples", "infrastructure-example"), Version: "v0.1.1", Out: t.TempDir()},
		Targets: []targets.Location{loc}, DryRun: true, SkipImageCheck: true, Log: &log,
		Rehearse: &pipeline.RehearseOptions{InstallCheckOptions: pipeline.InstallCheckOptions{Kubeconfig: kubeconfig, Core: &core}},
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	i := slices.IndexFunc(sum.Steps, func(s pipeline.StepResult) bool { return s.Step == "upgrade rehearsal" })
	if i < 0 || sum.Steps[i].Status != pipeline.StatusOK || sum.Steps[i-1].Step != "verify dist" || !strings.HasPrefix(sum.Steps[i].Detail, "v0.1.0 -> v0.1.1 on ") {
		t.Fatalf("steps %+v\n%s", sum.Steps, log.String())
	}
	t.Logf("%s", sum.Steps[i].Detail)
	if sum.Rehearsal == nil || sum.Rehearsal.Failure != nil || sum.Rehearsal.New != "v0.1.1" {
		t.Errorf("the summary carries no rehearsal that passed: %+v", sum.Rehearsal)
	}
	var md bytes.Buffer
	if err := sum.WriteMarkdown(&md); err != nil || !strings.Contains(md.String(), "### Upgrade rehearsal v0.1.0 → v0.1.1: upgraded\n") {
		t.Errorf("Markdown (%v):\n%s", err, md.String())
	}
	assertCRDsGone(t, cfg, before)
}
