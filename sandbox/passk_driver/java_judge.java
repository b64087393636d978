// The tests' side of a Java function completion (see java_wire.java): the problem's
// helpers, a stand-in for the entry point with its declaration, and the tests.
{helpers}{stand_in}{close}{tests}
