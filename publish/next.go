package publish

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/capirepo/capirepo/internal/fsafe"
	"github.com/capirepo/capirepo/internal/option"
	"github.com/capirepo/capirepo/provider"
)

// WriteConfigFile writes a clusterctl config to file, atomically, and only
// when the file does not already hold exactly these bytes, so a watching
// loop does not touch an unchanged file. It returns the file's absolute
// path and whether it wrote it. Every command that writes a clusterctl
// config (--config-out, the dev repository's config.yaml) writes it here.
func WriteConfigFile(file string, cfg ClusterctlConfig) (abs string, written bool, err error) {
	return WriteFileIfChanged(file, []byte(cfg.YAML()))
}

// WriteFileIfChanged is WriteConfigFile for any output file (a mirror's
// config, or the operator's resources it writes instead).
func WriteFileIfChanged(file string, data []byte) (abs string, written bool, err error) {
	abs, err = filepath.Abs(file)
	if err != nil {
		return "", false, err
	}
	if old, err := os.ReadFile(abs); err == nil && bytes.Equal(old, data) {
		return abs, false, nil
	}
	if err := fsafe.WriteFileAtomic(abs, data); err != nil {
		return "", false, err
	}
	return abs, true, nil
}

// NextSteps says what a maintainer does after sum was published to a
// target clusterctl reads by a providers: entry: where the clusterctl
// config is (written to configOut when set, atomically; sum.ConfigFile then
// names it) and the clusterctl init line that tries the version with it;
// for a target whose URLs clusterctl refuses (reach has no ProviderURL: a
// GitHub Enterprise server, a GitLab host not named gitlab.*), why, in
// place of a line that would fail. Release and every publish command build
// these lines here.
func NextSteps(ctx context.Context, sum *Summary, reach Reach, configOut string) ([]string, error) {
	var next []string
	file := "FILE"
	if configOut != "" {
		abs, _, err := WriteConfigFile(configOut, ClusterctlConfig{Providers: sum.Providers})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", option.Flag(ctx, option.ConfigOut), err)
		}
		sum.ConfigFile, file = abs, abs
		next = append(next, fmt.Sprintf("clusterctl config for %s written to %s", sum.URL, abs))
	} else {
		next = append(next, fmt.Sprintf("save the clusterctl config printed for %s as FILE (or pass %s FILE)", sum.URL, option.Flag(ctx, option.ConfigOut)))
	}
	if reach.ProviderURL == nil && reach.Why != "" {
		return append(next, "clusterctl cannot install from it: "+reach.Why), nil
	}
	try := "try it: "
	if sum.Draft { // clusterctl sees no draft
		try = "once the draft is published (capirepo publish github without " + option.Draft.String() + "), try it: "
	}
	return append(next, try+InitCommand(sum.InitVersions(), file)), nil
}

// InitVersions are the providers of the summary at its version, as
// clusterctl init takes them.
func (s *Summary) InitVersions() []InitVersion {
	ivs := make([]InitVersion, 0, len(s.Providers))
	for _, p := range s.Providers {
		ivs = append(ivs, InitVersion{ID: provider.ID{Name: p.Name, Type: provider.Type(p.Type)}, Version: s.Version})
	}
	return ivs
}
