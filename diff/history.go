package diff

import (
	"fmt"

	"github.com/capirepo/capirepo/contract"
	"github.com/capirepo/capirepo/contract/finding"
	"github.com/capirepo/capirepo/release"
)

// Block is what stops an older release from upgrading straight to a newer
// one: a CRD whose storage version in the older release the newer one no
// longer lists (clusterctl's CRD migration refuses it).
type Block struct {
	// Provider is the provider label, CRD the CRD's name and Version the
	// older release's storage version.
	Provider, CRD, Version string
}

// StorageBlocks lists what stops old from upgrading straight to new, by
// storage version (CAPI703), sorted. Only the components are read, so a
// history of releases can be checked by downloading their components alone.
// Storage versions only move forward, so if a release is blocked, every
// older one is too: a caller can search a history for the boundary.
func StorageBlocks(old, new *release.Release) []Block {
	var out []Block
	pairs, _ := pairProviders(old, new)
	for _, pp := range parseAll(pairs, old.Version, new.Version) {
		o, n := pp[0], pp[1]
		for _, name := range o.crdNames {
			nc, ok := n.crds[name]
			if !ok {
				continue
			}
			if s := storageVersions(o.crds[name]); len(s) == 1 && crdVersion(nc, s[0]) == nil {
				out = append(out, Block{Provider: n.p.Label(), CRD: name, Version: s[0]})
			}
		}
	}
	return out
}

// Straight says, for the releases of a history that cannot upgrade straight
// to new, which can (CAPI703, info): blocked is the newest release that
// cannot (with what blocks it, from StorageBlocks), oldest the oldest that
// can. One finding per blocking CRD, on new's components.
func Straight(new *release.Release, blocked string, blocks []Block, oldest string) []finding.Finding {
	var out []finding.Finding
	for _, b := range blocks {
		p, ok := new.Provider(b.Provider)
		if !ok {
			continue
		}
		v := p.Version
		if v == "" {
			v = new.Version
		}
		out = append(out, finding.Finding{
			Rule: contract.RuleUpgradeStorage, Severity: contract.Info,
			File: p.Label() + "/" + v + "/" + p.ComponentsFile, Object: crdID(b.CRD), Field: "spec.versions[" + b.Version + "]",
			Message: fmt.Sprintf("releases up to %s store %s as %s, which %s no longer lists: clusterctl cannot upgrade them straight to %s; the oldest release that can is %s, so users of older releases upgrade to it first",
				blocked, b.CRD, b.Version, v, v, oldest),
		})
	}
	return sortFindings(out)
}
