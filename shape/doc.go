// Package shape has no code: its tests hold the repository to the house style's rules
// that can be measured (STYLE.md, docs/design.md): no non-test file over MaxFileLines
// lines, no function over MaxFuncLines, test fakes included, and imports that point down
// (the store and the channels import no engine; memory and schedule do not import the
// store). A failure lists every offender, so a merge that brings one in says which.
package shape

// The limits: a file longer than MaxFileLines does more than one job, a function longer
// than MaxFuncLines hides steps that want names. _test.go files are exempt from both;
// the fakes in the *test packages are not.
const (
	MaxFileLines = 400
	MaxFuncLines = 100
)
