package values

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReadFiles_PerFlavorAndVar(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	all := write("all.yaml", "REGION: eu-west-1\nNODES: 3\nBIG: 1000000\nSERVERS: [192.0.2.1, 192.0.2.2]\n")
	ipv6 := write("ipv6.yaml", "REGION: us-east-1\nPOD_CIDR: fd00::/64\n")
	def := write("default.yaml", "POD_CIDR: 10.0.0.0/16\n")
	r, err := ReadFiles(map[string]string{"NODES": "5"}, []string{all, "ipv6=" + ipv6, "default=" + def})
	vars, flavors := r.Variables, r.Flavors
	if err != nil {
		t.Fatal(err)
	}
	wantVars := map[string]string{"REGION": "eu-west-1", "NODES": "5", "BIG": "1000000", "SERVERS": `["192.0.2.1","192.0.2.2"]`}
	if diff := cmp.Diff(wantVars, vars); diff != "" {
		t.Errorf("every flavor's values (-want +got):\n%s", diff)
	}
	wantFlavors := map[string]map[string]string{
		"ipv6": {"REGION": "us-east-1", "POD_CIDR": "fd00::/64", "NODES": "5"},
		"":     {"POD_CIDR": "10.0.0.0/16", "NODES": "5"},
	}
	if diff := cmp.Diff(wantFlavors, flavors); diff != "" {
		t.Errorf("flavors' values (-want +got):\n%s", diff)
	}

	for _, c := range []struct{ arg, want string }{
		{write("bad.yaml", "- a\n- b\n"), "a YAML map of variable names to values"},
		{write("empty.yaml", "REGION:\n"), "variable REGION has no value"},
		{"=" + all, "the flavor before = is empty"},
		{filepath.Join(dir, "missing.yaml"), "missing.yaml"},
	} {
		if _, err := ReadFiles(nil, []string{c.arg}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.arg, err, c.want)
		}
	}
}
