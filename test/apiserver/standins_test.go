package apiserver

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/capirepo/capirepo/builder/buildtest"
	"github.com/capirepo/capirepo/install"
	"github.com/capirepo/capirepo/pipeline"
	"github.com/capirepo/capirepo/release"
	"github.com/capirepo/capirepo/verify"
)

// standInsRelease is the example with fields stand-ins must fit: a list of
// IPv4 addresses with minItems, an integer with a range, CIDR and hostname
// formats, a CEL rule on a list's size (which a fitting stand-in meets) and
// one on the hostname's domain (which no stand-in can know); and a
// topology Cluster with a variable the ClusterClass's schema rejects.
func standInsRelease(t *testing.T) *release.Release {
	t.Helper()
	rel := buildtest.Clone(exampleRelease(t))
	const label = "infrastructure-example"
	const ind = "                      "
	edit(t, rel, label, "infrastructure-components.yaml",
		ind+"rootVolumeSizeGiB:\n",
		ind+"dnsServers:\n"+ind+"  type: array\n"+ind+"  minItems: 1\n"+ind+"  items: {type: string, format: ipv4}\n"+
			ind+"podCIDR: {type: string, format: cidr}\n"+
			ind+"diskCount: {type: integer, minimum: 2, maximum: 4}\n"+
			ind+"addresses:\n"+ind+"  type: array\n"+ind+"  items: {type: string}\n"+
			ind+"  x-kubernetes-validations: [{rule: self.size() > 0, message: addresses must not be empty}]\n"+
			ind+"hostname:\n"+ind+"  type: string\n"+ind+"  format: hostname\n"+
			ind+"  x-kubernetes-validations: [{rule: \"self.endsWith('.example.com')\", message: the hostname is in example.com}]\n"+
			ind+"rootVolumeSizeGiB:\n")
	edit(t, rel, label, "cluster-template.yaml", "      flavor: ${EXAMPLE_MACHINE_FLAVOR}\n",
		"      flavor: ${EXAMPLE_MACHINE_FLAVOR}\n      dnsServers: ${EXAMPLE_DNS_SERVERS}\n      podCIDR: ${EXAMPLE_POD_CIDR}\n"+
			"      diskCount: ${EXAMPLE_DISK_COUNT}\n      addresses: ${EXAMPLE_ADDRESSES}\n      hostname: ${EXAMPLE_HOSTNAME}\n")
	edit(t, rel, label, "clusterclass-example-quick-start.yaml", "  - name: machineFlavor\n    required: true\n",
		"  - name: dnsServers\n    required: true\n    schema: {openAPIV3Schema: {type: array, minItems: 1, items: {type: string, format: ipv4}}}\n"+
			"  - name: workers\n    required: false\n    schema: {openAPIV3Schema: {type: integer, minimum: 1, maximum: 10}}\n"+
			"  - name: machineFlavor\n    required: true\n")
	edit(t, rel, label, "cluster-template-topology.yaml", "      value: ${EXAMPLE_MACHINE_FLAVOR}\n",
		"      value: ${EXAMPLE_MACHINE_FLAVOR}\n    - name: dnsServers\n      value: ${EXAMPLE_TOPOLOGY_DNS}\n    - name: workers\n      value: 20\n")
	return rel
}

func TestInstall_StandInsAndRealValues(t *testing.T) {
	cfg := managementCluster(t, true)
	ctx := context.Background()
	rel := standInsRelease(t)
	const tmpl = "infrastructure-example/v0.1.0/cluster-template.yaml"
	const topo = "infrastructure-example/v0.1.0/cluster-template-topology.yaml"
	const machine = "ExampleMachineTemplate/capirepo-verify-control-plane"

	// The ClusterClass's schema caps workers at 10; the flavor says 20.
	trueRefusal := func(t *testing.T, rep *install.Report) {
		t.Helper()
		f := file(t, rep, topo)
		if len(f.Refused) != 1 || f.Refused[0].Field != "spec.topology.variables[3].value" || !strings.Contains(f.Refused[0].Message, "less than or equal to 10") {
			t.Errorf("topology refusals %v, want the workers variable over the class's maximum\n%s", f.Refused, report(rep))
		}
		for _, g := range rep.Files {
			if g.Path() != topo && g.Path() != tmpl && len(g.Refused) > 0 {
				t.Errorf("%s refused: %v", g.Path(), g.Refused)
			}
		}
	}

	t.Run("stand-ins", func(t *testing.T) {
		rep, err := install.Check(ctx, rel, install.Options{Config: cfg})
		if err == nil || rep == nil || !strings.Contains(err.Error(), "workers") || strings.Contains(err.Error(), "hostname") {
			t.Fatalf("want only the true refusal in the error, got %v\n%s", err, report(rep))
		}
		trueRefusal(t, rep)
		f := file(t, rep, tmpl)
		if len(f.Refused) != 0 {
			t.Errorf("false refusals with stand-ins: %v\n%s", f.Refused, report(rep))
		}
		if len(f.RefusedWithStandIns) != 1 || f.RefusedWithStandIns[0].Object != machine ||
			!strings.HasSuffix(f.RefusedWithStandIns[0].Field, "hostname") || !slices.ContainsFunc(f.RefusedWithStandIns[0].StandIns, func(s string) bool { return strings.HasPrefix(s, "EXAMPLE_HOSTNAME=") }) {
			t.Errorf("refused with stand-ins %v, want the hostname's CEL rule, naming EXAMPLE_HOSTNAME\n%s", f.RefusedWithStandIns, report(rep))
		}
		for _, name := range []string{"EXAMPLE_DNS_SERVERS", "EXAMPLE_POD_CIDR", "EXAMPLE_DISK_COUNT", "EXAMPLE_ADDRESSES", "EXAMPLE_HOSTNAME"} {
			if !slices.ContainsFunc(f.Variables, func(v verify.Variable) bool { return v.Name == name && v.Placeholder }) {
				t.Errorf("%s has no stand-in: %v", name, f.Variables)
			}
		}
		if g := file(t, rep, topo); !slices.ContainsFunc(g.Variables, func(v verify.Variable) bool { return v.Name == "EXAMPLE_TOPOLOGY_DNS" && v.Value == "[192.0.2.1]" }) {
			t.Errorf("the topology variable's stand-in does not fit the class's schema: %v", g.Variables)
		}
		t.Logf("\n%s", report(rep))
	})

	// Real values from the environment, the clusterctl config's variables
	// and --var, as clusterctl takes them: a CEL refusal is then true.
	kubeconfig := writeKubeconfig(t, cfg)
	clusterctl := filepath.Join(t.TempDir(), "clusterctl.yaml")
	if err := os.WriteFile(clusterctl, []byte("EXAMPLE_POD_CIDR: 10.1.0.0/16\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("EXAMPLE_HOSTNAME", "cp.example.com")
	for _, c := range []struct {
		name     string
		vars     map[string]string
		hostname string
		refused  bool
	}{
		{name: "real values", vars: map[string]string{"EXAMPLE_DNS_SERVERS": "[192.0.2.53]"}, hostname: "cp.example.com"},
		{name: "a real value the CEL rule refuses", vars: map[string]string{"EXAMPLE_HOSTNAME": "cp.example.org"}, hostname: "", refused: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep, err := pipeline.InstallCheck(ctx, rel, pipeline.InstallCheckOptions{Kubeconfig: kubeconfig, Clusterctl: clusterctlConfig(t, clusterctl), Variables: c.vars})
			if rep == nil {
				t.Fatal(err)
			}
			trueRefusal(t, rep)
			f := file(t, rep, tmpl)
			if len(f.RefusedWithStandIns) != 0 {
				t.Errorf("refused with stand-ins though the field has a real value: %v", f.RefusedWithStandIns)
			}
			real := map[string]string{}
			for _, v := range f.Variables {
				if !v.Placeholder {
					real[v.Name] = v.Value
				}
			}
			if real["EXAMPLE_POD_CIDR"] != "10.1.0.0/16" || real["EXAMPLE_HOSTNAME"] != c.hostname {
				t.Errorf("real values from the config and the environment: %v", real)
			}
			hostRefused := slices.ContainsFunc(f.Refused, func(r install.Refusal) bool {
				return r.Object == machine && strings.HasSuffix(r.Field, "hostname") && len(r.StandIns) == 0
			})
			if hostRefused != c.refused || len(f.Refused) != map[bool]int{true: 1}[c.refused] {
				t.Errorf("refusals %v, want the hostname refused: %v\n%s", f.Refused, c.refused, report(rep))
			}
		})
	}
}

// TestInstall_BlockingErrorIsOneRefusal: a value of the wrong type in a
// field of a custom resource with validation rules is refused, and the
// server then adds a cause of no field saying it skipped those rules; the
// report counts one refusal and says the rules were skipped with it.
func TestInstall_BlockingErrorIsOneRefusal(t *testing.T) {
	cfg := managementCluster(t, true)
	rel := standInsRelease(t)
	const tmpl = "infrastructure-example/v0.1.0/cluster-template.yaml"
	const machine = "ExampleMachineTemplate/capirepo-verify-control-plane"
	rep, err := pipeline.InstallCheck(context.Background(), rel, pipeline.InstallCheckOptions{Kubeconfig: writeKubeconfig(t, cfg),
		Variables: map[string]string{"EXAMPLE_DISK_COUNT": "two"}})
	if rep == nil {
		t.Fatal(err)
	}
	var refused []install.Refusal
	for _, r := range file(t, rep, tmpl).Refused {
		if r.Object == machine {
			refused = append(refused, r)
		}
	}
	if len(refused) != 1 || !strings.HasSuffix(refused[0].Field, "diskCount") ||
		!strings.Contains(refused[0].Message, "the server then skipped the object's validation rules") {
		t.Errorf("refusals of %s: %v, want one, of diskCount, saying the validation rules were skipped\n%s", machine, refused, report(rep))
	}
}
