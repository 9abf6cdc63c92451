package builder

import "os"

// osTempDir is where kustomize clones remote bases (only with --allow-remote).
func osTempDir() string { return os.TempDir() }
