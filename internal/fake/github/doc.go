// Package github is a stateful, in-process fake of the parts of the GitHub
// REST API that publishing and reading release assets use: releases (by tag,
// list with pagination, create, edit, delete), release assets (list, upload
// on the uploads host, download, rename, delete), generate-notes, the tag
// lookup GET git/ref/tags/TAG, and the public
// github.com/OWNER/NAME/releases/download/TAG/FILE route. Publishing a
// draft creates its tag from target_commitish if the tag does not exist.
//
// It answers like GitHub does (status codes, JSON bodies, Link headers,
// 422 already_exists for a duplicate asset name, drafts hidden from the
// by-tag lookup, the digest field, immutable releases (assets locked, title
// and notes editable, no way back to draft, the tag of a deleted one burned
// for ever), rate-limit headers),
// checks the bearer token, counts requests per route, and can inject
// failures on the nth call of a route: an HTTP error, a rate limit, or a
// dropped connection before or after the request took effect. A request it
// does not know fails the test, so a client cannot silently rely on an
// endpoint the fake does not model.
//
// Tests drive it with a real go-github client (APIURL, UploadURL), or route
// api.github.com, uploads.github.com and github.com to it through
// Transport, which is how clusterctl's own GitHub code reads it back.
// It is for tests only.
package github
