package contract

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/release"
)

// Unwaivable says whether f is an error no waiver clears: one of a rule
// whose errors clusterctl refuses the whole release for (Rule.Waivable).
//
// A file rule's error (CAPI001, CAPI002) in a cluster template or
// ClusterClass file is waivable as a template rule's is: clusterctl refuses
// only that flavor's generate cluster, and the release installs.
func Unwaivable(f Finding) bool {
	r, ok := LookupRule(f.Rule)
	if !ok || f.Severity != Error || r.Waivable() {
		return false
	}
	name := path.Base(f.File)
	return r.Area != AreaFiles || !release.IsFlavor(name) && !release.IsClusterClass(name)
}

// Waiver waives a rule, on every finding or on those of matching objects
// and files (capirepo.yaml lint.disable).
type Waiver = provider.Waiver

// matches says whether w waives f. Object and File are globs in which *
// matches any text (slashes too); Object matches Kind/namespace/name or
// Kind/name, File the path or the file name.
func matches(w Waiver, f Finding) bool {
	if w.Rule != f.Rule {
		return false
	}
	if w.Object != "" {
		short := f.Object
		if k, rest, ok := strings.Cut(f.Object, "/"); ok {
			if _, name, ok := strings.Cut(rest, "/"); ok {
				short = k + "/" + name
			}
		}
		if !glob(w.Object, f.Object) && !glob(w.Object, short) {
			return false
		}
	}
	if w.File != "" && !glob(w.File, f.File) && !glob(w.File, path.Base(f.File)) {
		return false
	}
	return true
}

// glob matches s against a pattern in which * stands for any text.
func glob(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == s
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return strings.HasSuffix(s, parts[len(parts)-1])
}

// Validate checks that every disabled rule exists and has a reason.
func (o Options) Validate() error {
	for i, w := range o.Waivers {
		if _, ok := LookupRule(w.Rule); !ok {
			return fmt.Errorf("lint: waiver %d: no rule %q (rules are CAPI001 ... %s; see docs/lint-rules.md)", i+1, w.Rule, catalogue[len(catalogue)-1].ID)
		}
		if strings.TrimSpace(w.Reason) == "" {
			return fmt.Errorf("lint: waiver %d (%s) needs a reason", i+1, w.Rule)
		}
	}
	for id, reason := range o.Disabled {
		if _, ok := LookupRule(id); !ok {
			return fmt.Errorf("lint: no rule %q to disable (rules are CAPI001 ... %s; see docs/lint-rules.md)", id, catalogue[len(catalogue)-1].ID)
		}
		if strings.TrimSpace(reason) == "" {
			return fmt.Errorf("lint: disabling %s needs a reason", id)
		}
	}
	if o.Provider != "" {
		if _, err := provider.ParseLabel(o.Provider); err != nil {
			return fmt.Errorf("lint: %w", err)
		}
	}
	if o.Version != "" {
		if _, err := provider.ParseVersion(o.Version); err != nil {
			return fmt.Errorf("lint: %w", err)
		}
	}
	return nil
}

// Disabled turns the whole-rule waivers of capirepo.yaml's lint section into
// Options.Disabled; Waivers gives all of them, the narrow ones too.
func Disabled(l provider.Lint) map[string]string {
	out := make(map[string]string, len(l.Disable))
	for _, w := range l.Disable {
		if w.Object == "" && w.File == "" {
			out[w.Rule] = w.Reason
		}
	}
	return out
}

// Waivers returns capirepo.yaml's lint.disable as Options.Waivers.
func Waivers(l provider.Lint) []Waiver { return slices.Clone(l.Disable) }
