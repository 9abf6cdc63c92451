// Package kustomization finds a folder's kustomization file and walks the
// graph of kustomizations its entries reach, with one definition of what an
// entry names: a remote reference kustomize would fetch, an absolute path, a
// local file or folder of the tree, an inline patch, or nothing at all.
//
// It is for the code that reads a provider tree around kustomize: the safety
// checks before a render (nothing remote, nothing absolute), the images:
// entries and the manager image, the sources of labels and objects named in
// findings, the file a failed render choked on, and the kustomization
// folders a flavor uses. Each of those is a Visitor of one Walk.
//
// It is not a renderer (krusty renders), it reads only the path-bearing
// fields listed as Fields (not generators, transformers, configurations,
// openapi or replacements), and it reads through the filesys.FileSystem it
// is given, so the builder's confinement to the tree applies to it too.
package kustomization
