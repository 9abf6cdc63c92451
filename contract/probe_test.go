package contract_test

import (
	"context"
	"os"
	"testing"

	"github.com/capirepo/capirepo/builder"
	"github.com/capirepo/capirepo/contract"
)

func TestProbe(t *testing.T) {
	for _, o := range []builder.Options{
		{Dir: "../examples/infrastructure-example", Version: "v0.1.0"},
		{Dir: "/root/go/pkg/mod/sigs.k8s.io/cluster-api@v1.14.2", Version: "v1.14.2"},
	} {
		res, err := builder.Build(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range res.Release.Providers { t.Log(p.Label(), p.Version, p.ComponentsFile); for _, f := range p.Files { t.Log(" ", f.Name, len(f.Data)) } }
		rep := contract.Lint(res.Release, contract.Options{})
		rep.WriteText(os.Stdout)
	}
}
