// The candidate's side of a Go function completion (see go_wire.go): after the
// candidate's code, whose entry point it serves, taken with its declared type (the
// compiler checks that the candidate's function has it).
var passkEntry {signature} = {entry}

func main() { passkServe(passkEntry) }
