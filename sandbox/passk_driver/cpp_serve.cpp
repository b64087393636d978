// The candidate's side of a C++ function completion (see cpp_wire.hpp): appended to the
// candidate's code, whose entry point it serves, taken with its declared type (the name
// may be overloaded: `unique` beside std::unique).
#include "{driver}/cpp_wire.hpp"
{signature}
int main() { return passk_wire::serve(static_cast<decltype(&passk_signature_)>(&{entry})); }
