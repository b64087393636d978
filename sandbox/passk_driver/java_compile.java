// passk's resident Java compiler (resident.py): javac through the compiler API, in one
// JVM kept for a worker slot's builds, so that each build costs a compile rather than a
// JVM's start and javac's warm-up (half a second, twenty times the compile itself).
//
// Once started, it says it is ready with an empty frame, after compiling a class of its
// own. Each request on standard input is the source's file name, its text, and the
// build's javac arguments; the reply on standard output is javac's exit status, what it printed,
// and each class it wrote, by its path under the `-d` directory. Frames are a count of
// items, then each item's length and bytes, all big-endian. Nothing touches the disk but
// javac's reading of the classes' path: the source comes from the request and the
// classes go back in the reply, so no build sees another's files. A fresh file manager
// per build: nothing a build resolved is kept for the next.

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.OutputStream;
import java.io.StringWriter;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.tools.FileObject;
import javax.tools.ForwardingJavaFileManager;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileManager;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.StandardLocation;
import javax.tools.ToolProvider;

class PasskCompiler {
    // javac's status for a compiler that failed in itself (an exception).
    static final int ABNORMAL = 4;
    // The stack each build is compiled on, at most: javac recurses once per level of a
    // nested expression, and how deep a stack of javac's default size (a megabyte,
    // some 1,600 levels) reaches depends on what the JIT compiled, so on the builds
    // before. Sixteen times that takes any program a person would write (tens of
    // thousands of levels), whatever the builds before; one that still overflows it ends
    // this compiler, and its build is run by a javac of its own.
    static final long STACK = 16L << 20;

    static final class Source extends SimpleJavaFileObject {
        final String name;
        final String text;

        Source(String name, String text) {
            super(URI.create("string:///" + name), Kind.SOURCE);
            this.name = name;
            this.text = text;
        }

        // As javac names a file it read from the disk, in its diagnostics.
        @Override
        public String getName() {
            return name;
        }

        @Override
        public CharSequence getCharContent(boolean ignoreEncodingErrors) {
            return text;
        }
    }

    static final class Output extends SimpleJavaFileObject {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();

        Output(String path) {
            super(URI.create("classes:///" + path), Kind.CLASS);
        }

        @Override
        public OutputStream openOutputStream() {
            return bytes;
        }
    }

    public static void main(String[] args) throws Exception {
        DataInputStream in = new DataInputStream(new BufferedInputStream(System.in));
        DataOutputStream out = new DataOutputStream(new BufferedOutputStream(new FileOutputStream(FileDescriptor.out)));
        // Whatever else the compiler prints goes nowhere near the replies.
        System.setOut(System.err);
        JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
        // Ready once javac has compiled a class: its start is not a build's time.
        compile(compiler, List.of(bytes("PasskWarm.java"), bytes("class PasskWarm {}")), new ArrayList<>());
        write(out, List.of());
        while (true) {
            List<byte[]> request;
            try {
                request = read(in);
            } catch (EOFException gone) {
                return;
            }
            List<byte[]> reply = new ArrayList<>();
            int[] status = {ABNORMAL};
            VirtualMachineError[] exhausted = {null};
            Thread build = new Thread(null, () -> {
                try {
                    status[0] = compile(compiler, request, reply);
                } catch (VirtualMachineError error) {
                    exhausted[0] = error;
                }
            }, "build", Math.min(STACK, Runtime.getRuntime().maxMemory() / 2));
            build.start();
            build.join();
            if (exhausted[0] != null) {
                // Out of stack or memory: what this compiler, warm, can hold is not what
                // a javac started for the build can; the driver has that one build it.
                System.exit(ABNORMAL);
            }
            reply.add(0, Integer.toString(status[0]).getBytes(StandardCharsets.UTF_8));
            write(out, reply);
            if (status[0] == ABNORMAL) {
                // What the compiler's failure left is not kept for the next build.
                return;
            }
        }
    }

    static int compile(JavaCompiler compiler, List<byte[]> request, List<byte[]> reply) {
        String name = text(request.get(0));
        Source source = new Source(name, text(request.get(1)));
        List<String> options = new ArrayList<>();
        String directory = ".";
        for (int at = 2; at < request.size(); at++) {
            String argument = text(request.get(at));
            if (argument.equals("-d") && at + 1 < request.size()) {
                directory = text(request.get(++at));
            } else if (!argument.startsWith("-J") && !argument.equals(name)) {
                // -J options are the launcher's, for the JVM javac would have started.
                options.add(argument);
            }
        }
        Map<String, Output> written = new LinkedHashMap<>();
        StringWriter said = new StringWriter();
        int status;
        try (StandardJavaFileManager standard = compiler.getStandardFileManager(null, null, StandardCharsets.UTF_8)) {
            String prefix = directory;
            JavaFileManager files = new ForwardingJavaFileManager<StandardJavaFileManager>(standard) {
                @Override
                public JavaFileObject getJavaFileForOutput(Location location, String className,
                                                           JavaFileObject.Kind kind, FileObject sibling) {
                    if (location != StandardLocation.CLASS_OUTPUT || kind != JavaFileObject.Kind.CLASS) {
                        throw new IllegalStateException("javac asked to write " + className + " outside its classes");
                    }
                    String path = prefix + "/" + className.replace('.', '/') + ".class";
                    Output output = new Output(path);
                    written.put(path, output);
                    return output;
                }
            };
            boolean compiled = compiler.getTask(said, files, null, options, null, List.of(source)).call();
            // javac says so, and fails the build, where it ran out of stack or memory.
            if (!compiled && (said.toString().contains("java.lang.StackOverflowError")
                              || said.toString().contains("java.lang.OutOfMemoryError"))) {
                throw new StackOverflowError("javac ran out of its resources");
            }
            status = compiled ? 0 : 1;
        } catch (VirtualMachineError exhausted) {
            throw exhausted;
        } catch (Throwable failed) {
            said.write("An exception has occurred in the compiler: " + failed + "\n");
            written.clear();
            status = ABNORMAL;
        }
        reply.add(said.toString().getBytes(StandardCharsets.UTF_8));
        if (status == 0) {
            for (Map.Entry<String, Output> entry : written.entrySet()) {
                reply.add(entry.getKey().getBytes(StandardCharsets.UTF_8));
                reply.add(entry.getValue().bytes.toByteArray());
            }
        }
        return status;
    }

    static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    static String text(byte[] bytes) {
        return new String(bytes, StandardCharsets.UTF_8);
    }

    static List<byte[]> read(DataInputStream in) throws Exception {
        int count = in.readInt();
        List<byte[]> items = new ArrayList<>(count);
        for (int at = 0; at < count; at++) {
            byte[] item = new byte[in.readInt()];
            in.readFully(item);
            items.add(item);
        }
        return items;
    }

    static void write(DataOutputStream out, List<byte[]> items) throws Exception {
        out.writeInt(items.size());
        for (byte[] item : items) {
            out.writeInt(item.length);
            out.write(item);
        }
        out.flush();
    }
}
