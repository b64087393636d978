// The tests' side of a Go function completion (see go_wire.go): the problem's helpers,
// a stand-in for the entry point with its declared type, the tests, and a main that
// runs them as `go test` would, its report on standard error.
import passkTesting "testing"

{helpers}
var {entry} {signature}

func init() { passkStandIn(&{entry}, "{entry}") }

{tests}

func main() {
	passkOs.Stdout = passkOs.Stderr
	every := func(pattern, name string) (bool, error) { return true, nil }
	passkTesting.Main(every, []passkTesting.InternalTest{{tests_list}}, nil, nil)
}
