// Command testsummary reads the plain text output of `go test ./...` (not
// -json) and prints a short summary of it, so that the last lines of a red
// CI log say why it is red.
//
// Usage:
//
//	go test -race ./... 2>&1 | tee test.log
//	testsummary test.log      # or: testsummary - < test.log
//
// On a red run the summary lists, in this order: every failing test with
// its own failure lines (a few per test, each line cut short), every panic
// with the start of its stack, every data race with its first access's
// frames, every test timeout with the tests it names as running, every
// package that did not build (compiler, setup and vet errors), and any
// other failed package. It ends with one line per failure, "failed:
// <package> <test>", and the counts: "N packages passed, N failed; N tests
// failed". On a green run it ends with the five slowest packages and the
// counts.
//
// .ci/run builds it before running the README's test command, keeps that
// command's whole output in a file and prints this summary of it at the
// end. The exit status is 0 whatever the tests did; it is not 0 only when
// the summary itself could not be made (an unreadable file, a bad
// argument).
package main
