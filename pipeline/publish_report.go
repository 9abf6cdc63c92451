package pipeline

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/capirepo/capirepo/provider"
	"github.com/capirepo/capirepo/publish"
	"github.com/capirepo/capirepo/publish/operator"
)

// WriteText prints what publishing to one target did, as every publish
// command prints it: what was done on errOut; the result on out
// (WriteResult); then, for a target clusterctl reads by a providers: entry,
// what to do next on errOut.
func (p *Published) WriteText(out, errOut io.Writer) error {
	sum := *p.Summary
	if p.Overrides {
		sum.Providers = nil // no URLs to give clusterctl: see writeOverrides
	}
	if err := sum.WriteText(errOut); err != nil {
		return err
	}
	if err := p.WriteResult(out, errOut); err != nil || p.Overrides || p.Operator || p.Reader != "" {
		return err
	}
	WriteNext(errOut, p.Summary.Next)
	return nil
}

// WriteJSON prints the target's summary as one JSON document on out.
func (p *Published) WriteJSON(out, _ io.Writer) error { return writeJSON(out, p.Summary) }

// WriteResult prints what a maintainer takes from a published target, on
// out: clusterctl's providers: entry ready to paste, after the header
// (unless --config-out wrote it); the operator's Provider resources of a
// target it installs from; or, for clusterctl's overrides folder, the
// clusterctl init line that uses it, with what it does on errOut.
func (p *Published) WriteResult(out, errOut io.Writer) error {
	switch {
	case p.Overrides:
		return p.writeOverrides(out, errOut)
	case p.Operator:
		return p.writeResources(out, errOut)
	case p.Reader != "":
		return nil
	}
	return writeConfig(out, p.Summary, p.header)
}

// writeConfig prints the clusterctl config of a publish after the header
// line, unless --config-out wrote it to a file: the one rule of every
// command with --config-out.
func writeConfig(w io.Writer, sum *publish.Summary, header string) error {
	if sum.ConfigFile != "" {
		return nil
	}
	_, err := io.WriteString(w, header+publish.ClusterctlConfig{Providers: sum.Providers}.YAML())
	return err
}

// writeResources prints the operator's Provider resources on out, or says
// on errOut why there are none.
func (p *Published) writeResources(out, errOut io.Writer) error {
	if p.NotInstallable != "" {
		_, err := fmt.Fprintf(errOut, "%s; no Provider resources printed\n", p.NotInstallable)
		return err
	}
	y, err := operator.Manifest(p.Resources)
	if err != nil {
		return err
	}
	if _, err := out.Write(y); err != nil {
		return err
	}
	_, err = io.WriteString(errOut, "Provider resources on stdout: apply them where cluster-api-operator runs; a private registry needs OCI_USERNAME/OCI_PASSWORD (or OCI_ACCESS_TOKEN) in the provider's configSecret\n")
	return err
}

// writeOverrides explains what the overrides folder does, since a
// providers: entry pointing into it would be wrong: clusterctl still finds
// the provider by its usual URL (built in or in clusterctl.yaml) and lists
// its versions there; for a version it has overrides of, it reads these
// files instead. The clusterctl init line that uses them goes to out.
func (p *Published) writeOverrides(out, errOut io.Writer) error {
	sum := p.Summary
	var inits []publish.InitVersion
	for _, pr := range sum.Providers {
		inits = append(inits, publish.InitVersion{ID: provider.ID{Name: pr.Name, Type: provider.Type(pr.Type)}, Version: sum.Version})
	}
	fmt.Fprintf(errOut, `clusterctl now reads these files instead of the provider repository's for %[1]s,
whatever URL the provider has: it still finds each provider by its usual URL
(built into clusterctl, or in the providers: list of clusterctl.yaml) and
lists the versions there, so ask for %[1]s explicitly. Remove
%[2]s/<label>/%[1]s to go back to the repository's files.
`, sum.Version, p.folder)
	line := publish.InitCommand(inits, p.clusterctlConfig)
	if p.clusterctlConfig == "" {
		line = strings.TrimSuffix(line, " --config ''") // clusterctl's own config
	}
	_, err := fmt.Fprintln(out, line)
	return err
}

// WriteResults prints what a release gives a maintainer besides its report
// (WriteText): the providers: entry of each target clusterctl reads by one,
// a YAML document each, unless --config-out wrote it, and, once every step
// passed, the operator's Provider resources, on out; then the next steps
// on errOut.
func (s *ReleaseSummary) WriteResults(out, errOut io.Writer) error {
	docs := 0
	for i, p := range s.Published {
		if t := s.Targets[i]; t.Reader != "" || t.Overrides || p.ConfigFile != "" {
			continue
		}
		if docs++; docs > 1 {
			fmt.Fprintln(out, "---")
		}
		if err := writeConfig(out, p, fmt.Sprintf("# %s %s\n", p.Kind, p.URL)); err != nil {
			return err
		}
	}
	if s.Error == "" {
		for _, t := range s.Targets {
			if t.Operator {
				if err := t.writeResources(out, errOut); err != nil {
					return err
				}
			}
		}
	}
	WriteNext(errOut, s.Next)
	return nil
}

// WriteNext prints what a maintainer does next, once a run passed.
func WriteNext(w io.Writer, next []string) {
	if len(next) > 0 {
		fmt.Fprintln(w, "next:")
	}
	for _, n := range next {
		fmt.Fprintf(w, "  %s\n", n)
	}
}

// writeJSON prints v as one indented JSON document.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
