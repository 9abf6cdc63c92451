package pipeline

import (
	"context"
	"fmt"
	"io"

	"github.com/capirepo/capirepo/internal/fsafe"
	"github.com/capirepo/capirepo/publish/configmap"
)

// ConfigMapOptions say which release PublishConfigMap renders and where.
type ConfigMapOptions struct {
	// Dist is the built release folder, DistName how the user named it (""
	// for DIST), and Version the version in it ("" when it holds one).
	Dist, DistName, Version string
	// Namespace holds every ConfigMap and Provider resource; "" means each
	// provider's own.
	Namespace string
	// Out is the file written (atomically); "" leaves the YAML to the
	// report, which prints it.
	Out string
}

// ConfigMapReport is what PublishConfigMap rendered; it prints itself.
type ConfigMapReport struct {
	Out        string           `json:"out,omitempty"`
	ConfigMaps []ConfigMapEntry `json:"configMaps"`

	data  []byte
	large bool // a ConfigMap client-side apply refuses
}

// ConfigMapEntry is one ConfigMap rendered.
type ConfigMapEntry struct {
	Provider   string `json:"provider"`
	Version    string `json:"version"`
	Namespace  string `json:"namespace"`
	Name       string `json:"name"`
	Compressed bool   `json:"compressed"`
	Bytes      int    `json:"bytes"`
	rawSize    int
}

// PublishConfigMap renders the built release as the ConfigMaps and
// Provider resources cluster-api-operator installs from (configmap.Render),
// and writes them to Out when set.
func PublishConfigMap(ctx context.Context, o ConfigMapOptions) (*ConfigMapReport, error) {
	rel, err := loadDist(ctx, o.Dist, o.DistName, o.Version)
	if err != nil {
		return nil, err
	}
	data, items, err := configmap.Render(rel, configmap.Options{Namespace: o.Namespace})
	if err != nil {
		return nil, err
	}
	r := &ConfigMapReport{Out: o.Out, data: data}
	for _, it := range items {
		r.ConfigMaps = append(r.ConfigMaps, ConfigMapEntry{Provider: it.ID.Label(), Version: it.Version, Namespace: it.Namespace,
			Name: it.Name, Compressed: it.Compressed, Bytes: it.Size, rawSize: it.RawSize})
		r.large = r.large || it.Size > configmap.ClientSideApplyLimit
	}
	if o.Out != "" {
		if err := fsafe.WriteFileAtomic(o.Out, data); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// WriteText says each ConfigMap's size and how to apply them on errOut,
// the YAML on out unless Out holds it.
func (r *ConfigMapReport) WriteText(out, errOut io.Writer) error {
	r.say(errOut)
	if r.Out == "" {
		if _, err := out.Write(r.data); err != nil {
			return err
		}
	}
	r.hint(errOut)
	return nil
}

// WriteJSON says what WriteText says on errOut, and prints the report as
// one JSON document on out (the YAML is in Out).
func (r *ConfigMapReport) WriteJSON(out, errOut io.Writer) error {
	r.say(errOut)
	r.hint(errOut)
	return writeJSON(out, r)
}

func (r *ConfigMapReport) say(w io.Writer) {
	for _, c := range r.ConfigMaps {
		state := ""
		if c.Compressed {
			state = fmt.Sprintf(", components gzipped (%d bytes of metadata + components)", c.rawSize)
		}
		fmt.Fprintf(w, "ConfigMap %s/%s: %d bytes%s\n", c.Namespace, c.Name, c.Bytes, state)
	}
}

func (r *ConfigMapReport) hint(w io.Writer) {
	target := r.Out
	if target == "" {
		target = "-"
	}
	hint := fmt.Sprintf("apply with: kubectl apply --server-side -f %s", target)
	if r.large {
		hint += "  (client-side apply fails on ConfigMaps over 256 KiB)"
	}
	fmt.Fprintln(w, hint)
}
