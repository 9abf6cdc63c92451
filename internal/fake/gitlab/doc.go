// Package gitlab is a stateful, in-process fake of the parts of the GitLab
// REST API (v4) that capirepo publishes to and clusterctl reads from: the
// generic package registry (upload and download of single files) and the
// packages API (list project packages, list package files, delete a package
// file).
//
// It keeps what a real server keeps — projects, packages, package files with
// their bytes, duplicates included — so tests assert the final server state,
// not just the calls. It answers with GitLab's status codes, JSON bodies and
// pagination headers (X-Page, X-Next-Page, X-Total-Pages, Link), checks the
// three token headers GitLab accepts (PRIVATE-TOKEN, JOB-TOKEN and
// Authorization: Bearer), counts requests per route and can fail the nth call
// of a route with a status, headers or a dropped connection. Any request it
// does not know fails the test.
//
// It is for tests only; it is not a GitLab emulator: no groups, users,
// permissions beyond read/write tokens, or package statuses other than
// "default".
package gitlab
