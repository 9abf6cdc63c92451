package github_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	fakegh "github.com/capirepo/capirepo/internal/fake/github"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/publish/github"
	"github.com/capirepo/capirepo/publish/publishtest"
)

// TestGitHubSource_AnAssetThatStreamsWithoutEndIsCutOffAtItsListedSize: a
// download that never ends stops after the size GitHub lists for the
// asset, with or without capirepo's HTTP client, naming the asset, and is
// not retried.
func TestGitHubSource_AnAssetThatStreamsWithoutEndIsCutOffAtItsListedSize(t *testing.T) {
	for _, bounded := range []bool{false, true} {
		srv, r := newUpstream(t)
		if bounded {
			var err error
			r, err = github.New(github.Options{Owner: "acme", Repo: "cluster-api-provider-example", APIURL: srv.APIURL(),
				HTTPClient: publish.NewHTTPClient(publish.HTTPOptions{Timeout: 5 * time.Second})})
			if err != nil {
				t.Fatal(err)
			}
		}
		srv.Inject(fakegh.RouteGetAsset, 1, fakegh.Fault{Endless: true})
		start := time.Now()
		_, err := publishtest.ReadBack(context.Background(), r, "infrastructure-example", "v1.0.1")
		var big *publish.TooLargeError
		if err == nil || !errors.As(err, &big) ||
			!strings.Contains(err.Error(), "cluster-template-ha.yaml: the server sends more than the 9 bytes it lists for it: stopped reading") {
			t.Fatalf("bounded client %v: err = %v", bounded, err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("bounded client %v: took %s", bounded, d)
		}
		if n := srv.Calls(fakegh.RouteGetAsset); n != 1 {
			t.Errorf("bounded client %v: %d downloads, want 1 (a reply cut off is not retried)", bounded, n)
		}
	}
}

// TestGitHubSource_AnAssetThatTricklesIsCutOffAfterTheTransferBound: a
// download that keeps moving, a byte at a time, never idle for the
// timeout, stops after TransferTimeFactor times it, naming the asset.
func TestGitHubSource_AnAssetThatTricklesIsCutOffAfterTheTransferBound(t *testing.T) {
	srv := fakegh.New(t)
	srv.AddRepo("acme", "cluster-api-provider-example", false)
	assets := upstreamAssets("v1.0.0")
	assets[3].Data = bytes.Repeat([]byte("#"), 1<<20) // cluster-template.yaml
	srv.AddRelease("acme", "cluster-api-provider-example", fakegh.Release{Tag: "v1.0.0", Assets: assets})
	const timeout = 200 * time.Millisecond
	r, err := github.New(github.Options{Owner: "acme", Repo: "cluster-api-provider-example", APIURL: srv.APIURL(),
		HTTPClient: publish.NewHTTPClient(publish.HTTPOptions{Timeout: timeout})})
	if err != nil {
		t.Fatal(err)
	}
	srv.Inject(fakegh.RouteGetAsset, 2, fakegh.Fault{Endless: true, Trickle: timeout / 4})
	start := time.Now()
	_, err = publishtest.ReadBack(context.Background(), r, "infrastructure-example", "v1.0.0")
	var slow *publish.TransferTimeoutError
	if err == nil || !errors.As(err, &slow) ||
		!strings.Contains(err.Error(), "cluster-template.yaml: the reply was still arriving after 2s (10 times --timeout): stopped reading") {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d < 10*timeout || d > 10*timeout+3*time.Second {
		t.Errorf("took %s, want about %s", d, 10*timeout)
	}
}
