// Package option names the options of capirepo's steps by what they mean,
// so that a package below cmd can tell the user which option to give (in
// an error, a warning, a step's detail) without spelling a flag: cmd, which
// binds the flags, supplies the words.
//
// A message names an option by its Name. Formatted, a Name reads as the
// flag of the same name (--version), which every command that has the
// option binds under that name. A command that binds an option under
// another flag (release's --github-target gives Target, --oci-plain-http
// PlainHTTP) says so in its Words, which cmd puts in the context every
// step takes (WithWords); Flag reads them there.
//
// It is not a flag parser and knows no command: the flags themselves are
// cmd's (cobra), and flags of other tools (clusterctl init --infrastructure,
// kubectl apply --server-side) are spelled where they are named.
package option

import "context"

// Name is an option by what it means; as text, the flag of that name.
type Name string

// String is the flag named after the option: --NAME.
func (n Name) String() string { return "--" + string(n) }

// The options capirepo's packages name in what they say.
const (
	AllowMissingProvenance Name = "allow-missing-provenance"
	AllowRemote            Name = "allow-remote"
	Against                Name = "against"
	All                    Name = "all"
	BaseImage              Name = "base-image"
	Binaries               Name = "binaries"
	CertificateIdentity    Name = "certificate-identity"
	CertificateOIDCIssuer  Name = "certificate-oidc-issuer"
	ClusterctlConfig       Name = "clusterctl-config"
	ConfigMaps             Name = "configmaps"
	ConfigOut              Name = "config-out"
	Core                   Name = "core"
	Draft                  Name = "draft"
	DryRunOnly             Name = "dry-run-only"
	Force                  Name = "force"
	GitLabRelease          Name = "release" // publish gitlab's --release, release's --gitlab-release
	GitLabTokenType        Name = "gitlab-token-type"
	GitLabURL              Name = "gitlab-url"
	Image                  Name = "image"
	ImageLayout            Name = "image-layout"
	ImageRef               Name = "image-ref"
	ImagePush              Name = "image-push"
	Key                    Name = "key"
	NotesFile              Name = "notes-file"
	NotesUpgrade           Name = "notes-upgrade"
	LockTimeout            Name = "lock-timeout"
	OldVersion             Name = "old-version"
	Package                Name = "package"
	Platforms              Name = "platforms"
	PlainHTTP              Name = "plain-http"
	PreviousTag            Name = "previous-tag"
	Project                Name = "project"
	Provenance             Name = "provenance"
	Provider               Name = "provider"
	Publish                Name = "publish"
	Ref                    Name = "ref"
	Replace                Name = "replace"
	Repo                   Name = "repo"
	SigningConfig          Name = "signing-config"
	Signatures             Name = "signatures"
	SkipImageCheck         Name = "skip-image-check"
	SkipUpgradeCheck       Name = "skip-upgrade-check"
	Source                 Name = "source"
	Tag                    Name = "tag"
	Target                 Name = "target"
	Timeout                Name = "timeout"
	To                     Name = "to"
	TlogUpload             Name = "tlog-upload"
	TrustedRoot            Name = "trusted-root"
	UpgradeFrom            Name = "upgrade-from"
	Values                 Name = "values"
	Var                    Name = "var"
	Version                Name = "version"
	WithCertManager        Name = "with-cert-manager"
)

// Words map options to the flags that give them in one command, where a
// flag is not named after its option.
type Words map[Name]string

type wordsKey struct{}

// WithWords returns ctx carrying w, the words of the command that runs.
func WithWords(ctx context.Context, w Words) context.Context {
	return context.WithValue(ctx, wordsKey{}, w)
}

// Flag is how the user gives option n in the command that runs: the word
// ctx carries for it, else n's own flag.
func Flag(ctx context.Context, n Name) string {
	if w, ok := ctx.Value(wordsKey{}).(Words); ok {
		if word, ok := w[n]; ok {
			return word
		}
	}
	return n.String()
}
