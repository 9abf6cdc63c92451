package install

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/capirepo/capirepo/internal/option"
	"github.com/capirepo/capirepo/internal/text"
	"github.com/capirepo/capirepo/values"
	"github.com/capirepo/capirepo/verify"
)

// Report is what the install check sent to the API server and what
// the server answered, file by file.
type Report struct {
	// Server is the API server's URL.
	Server string `json:"server"`
	// DryRunOnly is true when nothing was created.
	DryRunOnly bool `json:"dryRunOnly"`
	// CertManager says where cert-manager's CRDs came from: "cluster" (it
	// had them), the version the check created them from, or "" (not needed
	// or not available).
	CertManager string `json:"certManager,omitempty"`
	// Created lists what was created for real, as Kind/name; Removed what was
	// deleted again, Restored the CRDs --force replaced and then put back,
	// and Left what could not be removed (with why).
	Created  []string `json:"created,omitempty"`
	Removed  []string `json:"removed,omitempty"`
	Restored []string `json:"restored,omitempty"`
	Left     []string `json:"left,omitempty"`
	// Base lists the providers (as "label version") whose CRDs the check
	// created first where the cluster lacked them (Options.Base).
	Base []string `json:"base,omitempty"`
	// Checks names the releases checked, each on its own with the CRDs of
	// the one before removed, when the report joins several (Join).
	Checks []string `json:"checks,omitempty"`
	// Files holds every file checked, in the order it was sent: cert-manager's,
	// then each provider's components and templates in clusterctl's order.
	Files []*File `json:"files"`
}

// File is one file of the release as the API server judged it.
type File struct {
	// Provider is the provider label; File the file name in its version folder.
	Provider string `json:"provider"`
	Version  string `json:"version,omitempty"`
	File     string `json:"file"`
	// Accepted counts the objects the server accepted (created or dry-run).
	Accepted int `json:"accepted"`
	// Refused lists every refusal, in the order the objects were sent.
	Refused []Refusal `json:"refused,omitempty"`
	// RefusedWithStandIns lists what a CEL rule (x-kubernetes-validations)
	// refused in a field a stand-in landed in: the check cannot tell whether
	// the template or the stand-in is at fault, so these do not fail the
	// check; real values for the variables named make them true refusals.
	RefusedWithStandIns []Refusal `json:"refusedWithStandIns,omitempty"`
	// NotChecked lists objects the server could not judge, with why.
	NotChecked []NotChecked `json:"notChecked,omitempty"`
	// Defaulted lists the objects Cluster API's defaulting was applied to
	// before sending, as its webhook would (see coreDefaults).
	Defaulted []string `json:"defaulted,omitempty"`
	// Warnings are the server's other warnings (deprecated versions, ...).
	Warnings []string `json:"warnings,omitempty"`
	// After are the flavors checked before this one because it needs one
	// of them applied first: they ship the ClusterClass its topology
	// Clusters name, which the release ships as no clusterclass file, and
	// its Clusters' variables are judged against their class.
	After []string `json:"after,omitempty"`
	// Variables are the required variables without a value in the file or
	// the options: a real value (Options.Values), or a stand-in
	// (Placeholder), with the value.
	Variables []verify.Variable `json:"variables,omitempty"`

	// places are the fields each stand-in landed in.
	places map[string][]values.Place
}

// Path is the file as provider/version/name.
func (f *File) Path() string {
	if f.Version == "" {
		return f.Provider + "/" + f.File
	}
	return f.Provider + "/" + f.Version + "/" + f.File
}

// Refusal is one thing the API server refused about one object.
type Refusal struct {
	// Object is Kind/name, as clusterctl would create it.
	Object string `json:"object"`
	// Field is the field path the server named; "" when it named none.
	Field string `json:"field,omitempty"`
	// Message is the server's own message.
	Message string `json:"message"`
	// Reason is the HTTP status and its reason, e.g. "422 Invalid"; for an
	// unknown field the server reports as a warning, "strict field validation".
	Reason string `json:"reason,omitempty"`
	// StandIns are the stand-ins in the refused field, as NAME=value: the
	// refusal may be the stand-in's, not the template's.
	StandIns []string `json:"standIns,omitempty"`
}

func (r Refusal) String() string {
	s := r.Object + ": "
	if r.Field != "" {
		s += "field " + r.Field + ": "
	}
	s += r.Message
	if r.Reason != "" {
		s += " (" + r.Reason + ")"
	}
	if len(r.StandIns) > 0 {
		s += " [with stand-ins " + strings.Join(r.StandIns, ", ") + "]"
	}
	return s
}

// NotChecked is an object the server could not judge in this run.
type NotChecked struct {
	Object string `json:"object"`
	Why    string `json:"why"`
	// Group is the object's API group, when the cluster's CRDs do not serve
	// its kind; Needs then names the provider whose CRDs would, where its
	// kind tells (cluster-api, infrastructure-docker), else "".
	Group string `json:"group,omitempty"`
	Needs string `json:"needs,omitempty"`
}

// Join joins the reports of checks run one after another on one cluster
// (each release on its own, named in checks, one per report) into one
// report; nil reports (a check that could not start) are left out.
func Join(checks []string, reps []*Report) *Report {
	out := &Report{}
	for i, r := range reps {
		if r == nil {
			continue
		}
		out.Server, out.DryRunOnly = r.Server, r.DryRunOnly
		if out.CertManager == "" {
			out.CertManager = r.CertManager
		}
		out.Checks = append(out.Checks, checks[i])
		for _, b := range r.Base {
			if !slices.Contains(out.Base, b) {
				out.Base = append(out.Base, b)
			}
		}
		out.Created = append(out.Created, r.Created...)
		out.Removed = append(out.Removed, r.Removed...)
		out.Restored = append(out.Restored, r.Restored...)
		out.Left = append(out.Left, r.Left...)
		out.Files = append(out.Files, r.Files...)
	}
	return out
}

// Missing is what the cluster lacked to check some objects: the CRDs of a
// provider (Needs, "" when no kind told whose), for kinds of one group.
type Missing struct {
	Needs   string   `json:"needs,omitempty"`
	Group   string   `json:"group"`
	Kinds   []string `json:"kinds"`
	Objects int      `json:"objects"`
}

// Whose says whose CRDs are missing: "cluster-api's".
func (m Missing) Whose() string {
	if m.Needs == "" {
		return "another provider's (no kind tells whose)"
	}
	return m.Needs + "'s"
}

// Missing lists, by provider and group, the kinds not checked because the
// cluster has no CRD serving them, in the order first met.
func (r *Report) Missing() []Missing {
	var out []Missing
	for _, f := range r.Files {
		for _, nc := range f.NotChecked {
			if nc.Group == "" {
				continue
			}
			i := slices.IndexFunc(out, func(m Missing) bool { return m.Needs == nc.Needs && m.Group == nc.Group })
			if i < 0 {
				out, i = append(out, Missing{Needs: nc.Needs, Group: nc.Group}), len(out)
			}
			kind, _, _ := strings.Cut(nc.Object, "/")
			if !slices.Contains(out[i].Kinds, kind) {
				out[i].Kinds = append(out[i].Kinds, kind)
			}
			out[i].Objects++
		}
	}
	return out
}

// Refusals counts every refusal.
func (r *Report) Refusals() int { return r.count(func(f *File) int { return len(f.Refused) }) }

// RefusedWithStandInsCount counts the CEL refusals of stand-ins.
func (r *Report) RefusedWithStandInsCount() int {
	return r.count(func(f *File) int { return len(f.RefusedWithStandIns) })
}

// NotCheckedCount counts the objects not judged.
func (r *Report) NotCheckedCount() int {
	return r.count(func(f *File) int { return len(f.NotChecked) })
}

// Accepted counts the objects the server accepted.
func (r *Report) Accepted() int { return r.count(func(f *File) int { return f.Accepted }) }

// count sums n over the files.
func (r *Report) count(n func(*File) int) int {
	total := 0
	for _, f := range r.Files {
		total += n(f)
	}
	return total
}

// refusedError lists every refusal, grouped by file: the error Check
// returns when the server refused anything.
func (r *Report) refusedError() error {
	n := r.Refusals()
	if n == 0 {
		return nil
	}
	var files int
	var b strings.Builder
	for _, f := range r.Files {
		if len(f.Refused) == 0 {
			continue
		}
		files++
		fmt.Fprintf(&b, "\n%s:", f.Path())
		for _, ref := range f.Refused {
			fmt.Fprintf(&b, "\n  %s", ref)
		}
	}
	return fmt.Errorf("install check: the API server at %s refused objects of the release (refusals: %d, files: %d):%s", r.Server, n, files, b.String())
}

// WriteText prints the report for people.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	mode := "CRDs and namespaces created, everything else dry-run"
	if r.DryRunOnly {
		mode = "dry-run only: nothing created"
	}
	fmt.Fprintf(&b, "install check against %s (%s)\n", r.Server, mode)
	if len(r.Checks) > 1 {
		fmt.Fprintf(&b, "  %d releases, each checked on its own, the CRDs of the one before removed: %s\n", len(r.Checks), strings.Join(r.Checks, "; "))
	}
	if len(r.Base) > 0 {
		fmt.Fprintf(&b, "  with the CRDs of %s, created first where the cluster lacked them (their own files are checked on their own)\n", strings.Join(r.Base, ", "))
	}
	switch r.CertManager {
	case "":
	case "cluster":
		b.WriteString("  cert-manager: the cluster's CRDs\n")
	default:
		fmt.Fprintf(&b, "  cert-manager: CRDs of %s\n", r.CertManager)
	}
	for _, f := range r.Files {
		fmt.Fprintf(&b, "  %s: %d accepted", f.Path(), f.Accepted)
		if n := len(f.Refused); n > 0 {
			fmt.Fprintf(&b, ", %d refused", n)
		}
		if n := len(f.RefusedWithStandIns); n > 0 {
			fmt.Fprintf(&b, ", %d refused with stand-ins", n)
		}
		if n := len(f.NotChecked); n > 0 {
			fmt.Fprintf(&b, ", %d not checked", n)
		}
		b.WriteString("\n")
		if len(f.After) > 0 {
			fmt.Fprintf(&b, "    after       %s: they ship the ClusterClass its topology names (as no clusterclass file), which users apply first\n", strings.Join(f.After, " or "))
		}
		for _, v := range f.Variables {
			kind := "stand-in"
			if !v.Placeholder {
				kind = "real value"
			}
			fmt.Fprintf(&b, "    variable %s = %q %s\n", v.Name, v.Value, kind)
		}
		for _, ref := range f.Refused {
			fmt.Fprintf(&b, "    refused     %s\n", ref)
		}
		for _, ref := range f.RefusedWithStandIns {
			fmt.Fprintf(&b, "    refused with stand-ins %s\n", ref)
		}
		for _, nc := range f.NotChecked {
			fmt.Fprintf(&b, "    not checked %s: %s\n", nc.Object, nc.Why)
		}
		for _, d := range f.Defaulted {
			fmt.Fprintf(&b, "    defaulted   %s: Cluster API's webhook defaults (selector, labels) applied, as a management cluster would\n", d)
		}
		for _, warn := range f.Warnings {
			fmt.Fprintf(&b, "    warning     %s\n", warn)
		}
	}
	for _, l := range []struct {
		name  string
		items []string
	}{{"created", r.Created}, {"removed", r.Removed}, {"restored", r.Restored}, {"left behind", r.Left}} {
		if len(l.items) > 0 {
			fmt.Fprintf(&b, "  %s: %s\n", l.name, strings.Join(slices.Clone(l.items), ", "))
		}
	}
	fmt.Fprintf(&b, "  %d accepted, %d refused, %d not checked\n", r.Accepted(), r.Refusals(), r.NotCheckedCount())
	if missing := r.Missing(); len(missing) > 0 {
		b.WriteString("  not checked for want of CRDs the cluster does not serve:\n")
		for _, m := range missing {
			fmt.Fprintf(&b, "    %s: %s, of group %s (%s)\n", m.Whose(), text.Plural(m.Objects, "object", "objects"), m.Group, strings.Join(m.Kinds, ", "))
		}
	}
	if n := r.RefusedWithStandInsCount(); n > 0 {
		fmt.Fprintf(&b, "  %d refused by a CEL rule with stand-ins: not counted as refusals; give the variables named real values "+
			"(%s NAME=VALUE, %s [FLAVOR=]FILE, the environment or the clusterctl config's variables) to check them for real\n", n, option.Var, option.Values)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
