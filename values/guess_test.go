package values

import "testing"

func TestGuess(t *testing.T) {
	tests := []struct{ name, want string }{
		{"EXAMPLE_MACHINE_FLAVOR", Placeholder},
		{"EXAMPLE_B64ENCODED_CREDENTIALS", "Y2FwaXJlcG8tcGxhY2Vob2xkZXI="},
		{"AWS_CONTROL_PLANE_MACHINE_COUNT", "1"},
		{"NODE_POOL_REPLICAS", "1"},
		{"API_SERVER_PORT", "1"},
		{"ETCD_VERSION", KubernetesVersion},
		{"EXP_MACHINE_POOL_ENABLED", "false"},
		{"SSH_KEY", Placeholder},
		{"EXAMPLE_IMAGE", "registry.invalid/capirepo/placeholder:v0.0.0"},
		{"EXAMPLE_REGISTRY", "registry.invalid/capirepo"},
		{"EXAMPLE_TAG", "v0.0.0"},
	}
	for _, tt := range tests {
		if got := Guess(tt.name); got != tt.want {
			t.Errorf("Guess(%s) = %q, want %q", tt.name, got, tt.want)
		}
	}
}
