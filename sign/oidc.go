package sign

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// Audience is the audience Fulcio wants in an OIDC token.
const Audience = "sigstore"

// GitHubActionsToken is a token source for a GitHub Actions job with
// permissions: id-token: write, which puts the request URL and bearer
// token in ACTIONS_ID_TOKEN_REQUEST_URL and ACTIONS_ID_TOKEN_REQUEST_TOKEN:
// each call asks GitHub for a token for Fulcio's audience. The client
// bounds the wait; no token is ever part of an error.
func GitHubActionsToken(client *http.Client, requestURL, requestToken string) TokenSource {
	return func(ctx context.Context) (string, error) {
		u, err := url.Parse(requestURL)
		if err != nil || u.Host == "" {
			return "", errors.New("ACTIONS_ID_TOKEN_REQUEST_URL is not a URL")
		}
		q := u.Query()
		q.Set("audience", Audience)
		u.RawQuery = q.Encode()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
		if err != nil {
			return "", err
		}
		req.Header.Set("Authorization", "Bearer "+requestToken)
		req.Header.Set("Accept", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return "", fmt.Errorf("ask GitHub Actions for an OIDC token: %w", redactToken(err))
		}
		defer func() { _ = resp.Body.Close() }()
		body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		if err != nil {
			return "", fmt.Errorf("ask GitHub Actions for an OIDC token: %w", err)
		}
		if resp.StatusCode != http.StatusOK {
			return "", fmt.Errorf("GitHub Actions answered %s to the OIDC token request: does the job have permissions: id-token: write?", resp.Status)
		}
		var v struct {
			Value string `json:"value"`
		}
		if err := json.Unmarshal(body, &v); err != nil || strings.Count(v.Value, ".") != 2 {
			return "", errors.New("GitHub Actions' answer to the OIDC token request holds no token")
		}
		return v.Value, nil
	}
}

// StaticToken is a token source for a token given once (GitLab CI's
// id_tokens: SIGSTORE_ID_TOKEN, or any CI's).
func StaticToken(token string) TokenSource {
	return func(context.Context) (string, error) {
		if strings.Count(token, ".") != 2 {
			return "", errors.New("SIGSTORE_ID_TOKEN is not a JWT (header.payload.signature)")
		}
		return token, nil
	}
}
