// Package values is capirepo's one answer to "what value does variable V
// get in file F" of a release: a real value where the user gave one (--var,
// --values files, the environment and the clusterctl config as the caller
// looks them up), else a stand-in that every field V lands in accepts.
// The read-back (package verify), the install check (package install), the
// lint's parse attempts (package contract) and the upgrade rehearsal all
// ask it, and every report says which values were stand-ins.
//
// A Chooser learns a release's files (ForRelease, or LearnComponents and
// LearnTemplate one by one as a reader fetches them): the CRDs of the
// components and the ClusterClasses of flavors and clusterclass files give
// the schemas stand-ins must fit, with the API server's OpenAPI for
// built-in kinds when there is a server (Options.OpenAPI). For then answers
// for one file (a Set: the values, which are stand-ins, the fields each
// landed in); ForClass for a clusterclass file fetched for a flavor, which
// gets the flavor's real values. Stand-ins, in order of preference: the name's guess (Guess:
// counts, versions, images, base64, booleans by their names' suffixes); what
// the field's schema asks for (an enum value, an integer in range, a list
// of minItems items, an object with its required properties, a string of
// the pattern or format); empty for a variable alone on its line that
// stands for a YAML fragment; a class the release ships for a topology
// Cluster's class (a clusterclass-<class>.yaml whose ClusterClass takes
// its name from the same variable names <class>); and for a topology
// Cluster's variables a value of the schema the class gives them.
// Topology answers which flavor a topology flavor needs applied first: a
// class its Clusters name that the release ships as no clusterclass file
// but inside another flavor (cluster-template-clusterclass.yaml), matched
// by the name as written (a name, or the same variable in both).
// ReadFiles reads values files; Attempts are the values the lint tries
// for whether a document can parse; Fixed are the values clusterctl sets
// itself for generate cluster.
//
// It sits low in the import graph (release, internal, kube-openapi,
// apimachinery, clusterctl's yamlprocessor) and needs no cluster client, so
// verify, install and contract all import it; it reads no environment and
// no file but the values files it is given.
package values
