// The tests' side of a C++ function completion (see cpp_wire.hpp): the problem's
// helpers, a stand-in for the entry point with its declared type, and the tests.
{helpers}
#include "{driver}/cpp_wire.hpp"
{signature}
{stand_in}
{tests}
