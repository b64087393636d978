{close}
// The candidate's side of a Java function completion (see java_wire.java): after the
// candidate's code, a main that serves its entry point, the method of its class with
// the parameter types of the declaration copied here as passkSignature_ (the name may be
// overloaded).
public class Main {
    public static void main(java.lang.String[] arguments) throws java.lang.Exception {
        PasskWire.serve({owner}.class, Main.class, {assertions}, "{entry}");
    }

{signature}
}
