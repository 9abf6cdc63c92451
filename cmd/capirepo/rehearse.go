package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/capirepo/capirepo/pipeline"
)

// rehearseFlags are the upgrade rehearsal's flags: verify's --upgrade-from
// OLD and release's --rehearse turn it on. It shares --kubeconfig,
// --clusterctl-config, --var and --values with the install check's flags.
type rehearseFlags struct {
	name string // the flag that turns the rehearsal on
	// from is verify's --upgrade-from; on is release's --rehearse.
	from string
	on   bool
	// core is --core; withCertManager --with-cert-manager.
	core            string
	withCertManager bool
}

// bind binds the flags: --upgrade-from OLD on verify (from), --rehearse on
// release.
func (f *rehearseFlags) bind(cmd *cobra.Command, from bool) {
	fl := cmd.Flags()
	if from {
		f.name = "upgrade-from"
		fl.StringVar(&f.from, f.name, "", "rehearse the upgrade from OLD (a folder, or a target URL with an optional @VERSION: the release before without) to this release "+
			"with clusterctl's client on the scratch cluster of --kubeconfig")
	} else {
		f.name = "rehearse"
		fl.BoolVar(&f.on, f.name, false, "rehearse the upgrade from the release the upgrade check compared with on the scratch cluster of --kubeconfig before publishing, "+
			"with clusterctl's client; stop if it fails")
	}
	fl.StringVar(&f.core, "core", "", "the core Cluster API release (with the kubeadm providers it holds) the install check creates the CRDs of first and --"+f.name+"'s clusterctl init installs first: a folder, "+
		"or a target URL with @VERSION (github://kubernetes-sigs/cluster-api@v1.14.2); not needed for cluster-api's own releases")
	fl.BoolVar(&f.withCertManager, "with-cert-manager", false, "--"+f.name+" on a cluster without cert-manager's CRDs: let clusterctl install cert-manager "+
		"(its webhooks taken out, nothing running), read from where --clusterctl-config says (GitHub by default)")
}

func (f *rehearseFlags) enabled() bool { return f.on || f.from != "" }

// validate checks the flags go together: --core serves the install check
// too (installOn: its flag is given), --with-cert-manager only the
// rehearsal; the shared ones are checked with the install check's
// (installFlags.validate).
func (f *rehearseFlags) validate(installOn bool) error {
	if !f.enabled() && f.withCertManager {
		return usagef("--with-cert-manager belongs to --%s", f.name)
	}
	if !f.enabled() && !installOn && f.core != "" {
		return usagef("--core belongs to the install check and --%s", f.name)
	}
	if f.core != "" {
		if _, err := pipeline.ParseSides("--core", []string{f.core}); err != nil {
			return err
		}
	}
	return nil
}

// coreSide is --core; nil when not given (validate checked it parses).
func (f *rehearseFlags) coreSide() *pipeline.Side {
	if f == nil || f.core == "" {
		return nil
	}
	core, err := pipeline.ParseSides("--core", []string{f.core})
	if err != nil {
		return nil
	}
	return &core[0]
}

// options are the rehearsal's options; nil when it is off.
func (f *rehearseFlags) options(s streams, inst *installFlags, githubAPI string, timeout time.Duration) (*pipeline.RehearseOptions, error) {
	if !f.enabled() {
		return nil, nil
	}
	o := &pipeline.RehearseOptions{InstallCheckOptions: inst.shared(s, githubAPI, timeout), WithCertManager: f.withCertManager}
	if f.from != "" {
		from, err := pipeline.ParseSides("--upgrade-from", []string{f.from})
		if err != nil {
			return nil, err
		}
		o.From = &from[0]
	}
	return o, nil
}
