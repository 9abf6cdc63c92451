package pipeline_test

import (
	"bytes"
	"context"
	"io"
	"log"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/registry"

	"github.com/capirepo/capirepo/pipeline"
	"github.com/capirepo/capirepo/publish/oci"
)

func TestRun_OCITargetPublishesAndReadsBackByTheOperatorsRules(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	var logs bytes.Buffer
	o := exampleRun(t, &logs)
	o.Targets = locations(t, "oci://"+host+"/capi")
	o.TargetOptions.OCI = oci.Options{PlainHTTP: true}
	sum, err := pipeline.Release(context.Background(), o)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, logs.String())
	}
	want := "build=ok\nlint=ok\nupgrade=skipped\nimages=skipped\nwrite=ok\nverify dist=ok\npublish oci://" + host + "/capi=ok\nverify oci://" + host + "/capi=ok\n"
	if diff := cmp.Diff(want, statuses(sum)); diff != "" {
		t.Errorf("steps (-want +got):\n%s\n%s", diff, logs.String())
	}
	if d := sum.Steps[7].Detail; !strings.Contains(d, "by the operator's rules, then through clusterctl") {
		t.Errorf("verify detail %q", d)
	}
	ref := "http://" + host + "/capi/infrastructure-example:v0.1.0"
	if p := sum.Published[0]; p.Providers[0].URL != ref || !strings.HasPrefix(p.Digests[ref], "sha256:") {
		t.Errorf("published %+v", p)
	}
}
