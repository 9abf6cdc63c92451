package verify

import (
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/capirepo/capirepo/publish"
)

// transportMu lets one read over HTTP at a time hold http.DefaultTransport.
var transportMu sync.Mutex

// throughCapirepoTransport runs read with capirepo's transport under
// clusterctl's repository clients. They make every request (GitHub through
// go-github and oauth2, its release asset downloads through
// http.DefaultClient, GitLab, the Go module proxy) on http.DefaultTransport,
// resolved at request time, with no bound on a wait, and GitLab's token
// added again on a redirect to another host. For the duration of read,
// http.DefaultTransport is instead: credentials only to the origins of the
// provider URLs (publish.GuardCredentials), each wait bounded as publishing
// bounds it (publish.Bounded with hc's waits), over the transport that was
// there before (a proxy, or a test's fake). Reads take turns, and the one
// before is put back. Nothing is swapped for targets read from disk.
//
// A process-wide variable swapped for a while is the least surprising of
// the ways in: clusterctl takes no client or transport (only tests inject
// one), oauth2's context client covers only requests with a token, and the
// requests go on resolving the default at request time either way.
func throughCapirepoTransport(targets []Repo, hc *http.Client, read func()) {
	trusted := trustedOrigins(targets)
	if len(trusted) == 0 {
		read()
		return
	}
	transportMu.Lock()
	defer transportMu.Unlock()
	before := http.DefaultTransport
	http.DefaultTransport = publish.GuardCredentials(&http.Client{Transport: publish.Bounded(before, hc)}, trusted...).Transport
	defer func() { http.DefaultTransport = before }()
	read()
}

// trustedOrigins are the origins a verify of targets sends credentials
// to: each HTTP provider URL's, and GitHub's API host for github.com URLs,
// which clusterctl reads through the API.
func trustedOrigins(targets []Repo) []string {
	var out []string
	for _, t := range targets {
		u, err := url.Parse(t.URL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") {
			continue
		}
		out = append(out, u.Scheme+"://"+u.Host)
		if strings.EqualFold(u.Hostname(), "github.com") {
			out = append(out, "https://api.github.com")
		}
	}
	return out
}
