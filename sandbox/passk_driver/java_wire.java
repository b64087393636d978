// passk's wire for Java function completions (see programs.py). The candidate's program
// is its code with a class whose main serves calls of the entry point; the tests' program
// is the problem's helpers and tests, with a stand-in for the entry point that sends each
// call's arguments to the candidate's process and reads back the value it returned. Only
// values cross, as bytes this class writes and reads: null, the boxed primitives,
// strings, lists, sets, maps, Optional and org.javatuples' tuples, each tagged with what
// it is, so that the side that reads it rebuilds an object of the same class (as far as
// a test can tell: an Arrays.asList stays of a fixed size, a List.of immutable) whatever
// the declaration says of it. No object, class or code of the candidate's reaches the
// tests, which run in the judge's process. The tests' program decides the verdict: it
// ends with status 0 once its own main returned, and a failed call ends it with a verdict
// line on descriptor 5.
//
// Pasted after the code of both programs, whose imports it shares: every name here is
// qualified. The descriptors are reached through FileDescriptor's private constructor
// (both programs run with java.io opened to them): opening /proc/self/fd/N instead
// would wait for ever on a pipe whose other end is gone.
final class PasskWire {
    private static final int FROM_JUDGE = 3, TO_JUDGE = 4;
    private static final int TO_CANDIDATE = 3, FROM_CANDIDATE = 4, RECORD = 5;
    // A frame's size, and a value's nesting, at most: more is not a value of a suite's.
    private static final int FRAME_CAP = 256 << 20, DEPTH_CAP = 64;
    private static final byte ANSWERED = 0, THREW = 1, UNCARRIED = 2;
    // The tests' program's status when a call failed, after it wrote its verdict.
    private static final int EXIT_VERDICT = 3;
    // The candidate's serving program names its copy of the entry point's declaration so.
    private static final java.lang.String SIGNATURE = "passkSignature_";

    private static final byte NULL = 0, BOOLEAN = 1, BYTE = 2, SHORT = 3, CHARACTER = 4, INTEGER = 5, LONG = 6,
            FLOAT = 7, DOUBLE = 8, STRING = 9, LIST = 10, SET = 11, MAP = 12, OPTIONAL = 13, TUPLE = 14;
    // What a collection is, and so what its reader may do with it: a HashSet or HashMap
    // (an ArrayList for a list), a linked or sorted one, Arrays.asList's, List.of's or an
    // unmodifiable view.
    private static final byte PLAIN = 0, LINKED = 1, SORTED = 2, FIXED_SIZE = 3, IMMUTABLE = 4, UNMODIFIABLE = 5;
    // org.javatuples' tuples, by their index here (a tuple's tag is followed by it).
    private static final java.lang.String[] TUPLES = {"Unit", "Pair", "Triplet", "Quartet", "Quintet", "Sextet",
            "Septet", "Octet", "Ennead", "Decade", "KeyValue", "LabelValue"};
    // The classes a declaration may name, whose values this wire carries (besides the
    // primitives and the tuples).
    private static final java.util.Set<java.lang.String> DECLARABLE = java.util.Set.of("java.lang.Object",
            "java.lang.String", "java.lang.CharSequence", "java.lang.Number", "java.lang.Boolean", "java.lang.Byte",
            "java.lang.Short", "java.lang.Character", "java.lang.Integer", "java.lang.Long", "java.lang.Float",
            "java.lang.Double", "java.lang.Iterable", "java.util.Collection", "java.util.List", "java.util.ArrayList",
            "java.util.LinkedList", "java.util.Set", "java.util.HashSet", "java.util.LinkedHashSet",
            "java.util.SortedSet", "java.util.NavigableSet", "java.util.TreeSet", "java.util.Map", "java.util.HashMap",
            "java.util.LinkedHashMap", "java.util.SortedMap", "java.util.NavigableMap", "java.util.TreeMap",
            "java.util.Optional");

    private PasskWire() {}

    static final class Malformed extends java.lang.RuntimeException {
        Malformed() {
            super("a malformed value");
        }
    }

    // A value of a class this wire does not carry (one of the program's own).
    static final class Unsupported extends java.lang.RuntimeException {
        Unsupported(java.lang.String what) {
            super(what);
        }
    }

    private static void put(java.io.DataOutputStream out, java.lang.Object value, int depth)
            throws java.io.IOException {
        if (depth > DEPTH_CAP) {
            throw new Unsupported("a value nested more than " + DEPTH_CAP + " deep");
        }
        if (value == null) {
            out.writeByte(NULL);
        } else if (value instanceof java.lang.Boolean) {
            out.writeByte(BOOLEAN);
            out.writeBoolean((java.lang.Boolean) value);
        } else if (value instanceof java.lang.Byte) {
            out.writeByte(BYTE);
            out.writeByte((java.lang.Byte) value);
        } else if (value instanceof java.lang.Short) {
            out.writeByte(SHORT);
            out.writeShort((java.lang.Short) value);
        } else if (value instanceof java.lang.Character) {
            out.writeByte(CHARACTER);
            out.writeChar((java.lang.Character) value);
        } else if (value instanceof java.lang.Integer) {
            out.writeByte(INTEGER);
            out.writeInt((java.lang.Integer) value);
        } else if (value instanceof java.lang.Long) {
            out.writeByte(LONG);
            out.writeLong((java.lang.Long) value);
        } else if (value instanceof java.lang.Float) {
            out.writeByte(FLOAT);
            out.writeInt(java.lang.Float.floatToRawIntBits((java.lang.Float) value));
        } else if (value instanceof java.lang.Double) {
            out.writeByte(DOUBLE);
            out.writeLong(java.lang.Double.doubleToRawLongBits((java.lang.Double) value));
        } else if (value instanceof java.lang.String) {
            java.lang.String text = (java.lang.String) value;
            out.writeByte(STRING);
            out.writeInt(text.length());
            out.writeChars(text);
        } else if (value instanceof java.util.List) {
            out.writeByte(LIST);
            putAll(out, kind(value), ((java.util.List<?>) value).toArray(), 1, depth);
        } else if (value instanceof java.util.Set) {
            out.writeByte(SET);
            putAll(out, kind(value), ((java.util.Set<?>) value).toArray(), 1, depth);
        } else if (value instanceof java.util.Map) {
            java.lang.Object[] entries = ((java.util.Map<?, ?>) value).entrySet().toArray();
            java.lang.Object[] items = new java.lang.Object[2 * entries.length];
            for (int index = 0; index < entries.length; ++index) {
                items[2 * index] = ((java.util.Map.Entry<?, ?>) entries[index]).getKey();
                items[2 * index + 1] = ((java.util.Map.Entry<?, ?>) entries[index]).getValue();
            }
            out.writeByte(MAP);
            putAll(out, kind(value), items, 2, depth);
        } else if (value instanceof java.util.Optional) {
            java.util.Optional<?> optional = (java.util.Optional<?>) value;
            out.writeByte(OPTIONAL);
            out.writeBoolean(optional.isPresent());
            if (optional.isPresent()) {
                put(out, optional.get(), depth + 1);
            }
        } else if (tuple(value.getClass()) >= 0) {
            java.lang.Object[] items;
            try {
                items = (java.lang.Object[]) value.getClass().getMethod("toArray").invoke(value);
            } catch (java.lang.ReflectiveOperationException unreadable) {
                throw new Unsupported(value.getClass().getName());
            }
            out.writeByte(TUPLE);
            out.writeByte(tuple(value.getClass()));
            for (java.lang.Object item : items) {
                put(out, item, depth + 1);
            }
        } else {
            throw new Unsupported(value.getClass().getName());
        }
    }

    // A collection's kind, count and items (`width` values each: a map's are its keys and
    // values).
    private static void putAll(java.io.DataOutputStream out, byte kind, java.lang.Object[] items, int width,
            int depth) throws java.io.IOException {
        out.writeByte(kind);
        out.writeInt(items.length / width);
        for (java.lang.Object item : items) {
            put(out, item, depth + 1);
        }
    }

    private static byte kind(java.lang.Object collection) {
        java.lang.String name = collection.getClass().getName();
        if (name.startsWith("java.util.ImmutableCollections$")) {
            return IMMUTABLE;
        }
        if (name.equals("java.util.Arrays$ArrayList")) {
            return FIXED_SIZE;
        }
        if (name.startsWith("java.util.Collections$Unmodifiable") || name.startsWith("java.util.Collections$Empty")
                || name.startsWith("java.util.Collections$Singleton")
                || name.equals("java.util.Collections$CopiesList")) {
            return UNMODIFIABLE;
        }
        if (collection instanceof java.util.LinkedList || collection instanceof java.util.LinkedHashSet
                || collection instanceof java.util.LinkedHashMap) {
            return LINKED;
        }
        if (collection instanceof java.util.SortedSet || collection instanceof java.util.SortedMap) {
            // Its comparator is code, which does not cross.
            boolean natural = collection instanceof java.util.SortedSet
                    ? ((java.util.SortedSet<?>) collection).comparator() == null
                    : ((java.util.SortedMap<?, ?>) collection).comparator() == null;
            if (!natural) {
                throw new Unsupported(collection.getClass().getName() + " with a comparator");
            }
            return SORTED;
        }
        return PLAIN;
    }

    private static byte tuple(java.lang.Class<?> type) {
        for (byte index = 0; index < TUPLES.length; ++index) {
            if (type.getName().equals("org.javatuples." + TUPLES[index])) {
                return index;
            }
        }
        return -1;
    }

    // A value as `put` wrote it; Malformed (or any RuntimeException) where it is not one.
    private static java.lang.Object get(java.nio.ByteBuffer in, int depth) {
        if (depth > DEPTH_CAP) {
            throw new Malformed();
        }
        switch (in.get()) {
            case NULL:
                return null;
            case BOOLEAN:
                return truth(in);
            case BYTE:
                return in.get();
            case SHORT:
                return in.getShort();
            case CHARACTER:
                return in.getChar();
            case INTEGER:
                return in.getInt();
            case LONG:
                return in.getLong();
            case FLOAT:
                return java.lang.Float.intBitsToFloat(in.getInt());
            case DOUBLE:
                return java.lang.Double.longBitsToDouble(in.getLong());
            case STRING: {
                char[] chars = new char[count(in, 2)];
                in.asCharBuffer().get(chars);
                in.position(in.position() + 2 * chars.length);
                // Interned, as the string literals a candidate returns are: the tests
                // compare some with `==`.
                return new java.lang.String(chars).intern();
            }
            // The kind, then the items: arguments are evaluated from left to right.
            case LIST:
                return list(in.get(), getAll(in, 1, depth));
            case SET:
                return set(in.get(), getAll(in, 1, depth));
            case MAP:
                return map(in.get(), getAll(in, 2, depth));
            case OPTIONAL:
                return truth(in) ? java.util.Optional.of(get(in, depth + 1)) : java.util.Optional.empty();
            case TUPLE: {
                byte index = in.get();
                if (index < 0 || index >= TUPLES.length) {
                    throw new Malformed();
                }
                // Unit to Decade hold one to ten items; KeyValue and LabelValue two.
                java.lang.Object[] items = new java.lang.Object[index < 10 ? index + 1 : 2];
                for (int at = 0; at < items.length; ++at) {
                    items[at] = get(in, depth + 1);
                }
                try {
                    return java.lang.Class.forName("org.javatuples." + TUPLES[index])
                            .getMethod("fromArray", java.lang.Object[].class).invoke(null, (java.lang.Object) items);
                } catch (java.lang.ReflectiveOperationException unbuilt) {
                    throw new Malformed();
                }
            }
            default:
                throw new Malformed();
        }
    }

    // A byte that is 0 or 1, as writeBoolean writes it.
    private static boolean truth(java.nio.ByteBuffer in) {
        byte truth = in.get();
        if (truth != 0 && truth != 1) {
            throw new Malformed();
        }
        return truth == 1;
    }

    // A collection's items (`width` values each: a map's are its keys and values).
    private static java.lang.Object[] getAll(java.nio.ByteBuffer in, int width, int depth) {
        java.lang.Object[] items = new java.lang.Object[width * count(in, width)];
        for (int index = 0; index < items.length; ++index) {
            items[index] = get(in, depth + 1);
        }
        return items;
    }

    // A count of things that take `unit` bytes each at least.
    private static int count(java.nio.ByteBuffer in, int unit) {
        int count = in.getInt();
        if (count < 0 || count > in.remaining() / unit) {
            throw new Malformed();
        }
        return count;
    }

    private static java.lang.Object list(byte kind, java.lang.Object[] items) {
        java.util.List<java.lang.Object> list = java.util.Arrays.asList(items);
        switch (kind) {
            case PLAIN:
                return new java.util.ArrayList<>(list);
            case LINKED:
                return new java.util.LinkedList<>(list);
            case FIXED_SIZE:
                return list;
            case IMMUTABLE:
                // List.of's hold no null; Stream.toList's may.
                return list.contains(null) ? java.util.Collections.unmodifiableList(list) : java.util.List.of(items);
            case UNMODIFIABLE:
                return java.util.Collections.unmodifiableList(new java.util.ArrayList<>(list));
            default:
                throw new Malformed();
        }
    }

    private static java.lang.Object set(byte kind, java.lang.Object[] items) {
        java.util.List<java.lang.Object> list = java.util.Arrays.asList(items);
        switch (kind) {
            case PLAIN:
                return new java.util.HashSet<>(list);
            case LINKED:
                return new java.util.LinkedHashSet<>(list);
            case SORTED:
                return new java.util.TreeSet<>(list);
            case IMMUTABLE:
                return java.util.Set.of(items);
            case UNMODIFIABLE:
                return java.util.Collections.unmodifiableSet(new java.util.LinkedHashSet<>(list));
            default:
                throw new Malformed();
        }
    }

    private static java.lang.Object map(byte kind, java.lang.Object[] items) {
        java.util.Map<java.lang.Object, java.lang.Object> map;
        switch (kind) {
            case PLAIN:
                map = new java.util.HashMap<>();
                break;
            case SORTED:
                map = new java.util.TreeMap<>();
                break;
            case LINKED:
            case IMMUTABLE:
            case UNMODIFIABLE:
                map = new java.util.LinkedHashMap<>();
                break;
            default:
                throw new Malformed();
        }
        for (int index = 0; index < items.length; index += 2) {
            map.put(items[index], items[index + 1]);
        }
        if (kind == IMMUTABLE) {
            return java.util.Map.copyOf(map);
        }
        return kind == UNMODIFIABLE ? java.util.Collections.unmodifiableMap(map) : map;
    }

    // The descriptor `fd`, which a FileDescriptor is made for by its private constructor.
    private static java.io.FileDescriptor descriptor(int fd) {
        try {
            java.lang.reflect.Constructor<java.io.FileDescriptor> make =
                    java.io.FileDescriptor.class.getDeclaredConstructor(int.class);
            make.setAccessible(true);
            return make.newInstance(fd);
        } catch (java.lang.ReflectiveOperationException | java.lang.RuntimeException unreached) {
            throw new java.lang.IllegalStateException("descriptor " + fd
                    + " cannot be reached: the program must run with java.io opened to it", unreached);
        }
    }

    // A frame: the payload's size (four bytes, the most significant first), then the payload.
    private static void send(java.io.OutputStream out, byte[] payload) throws java.io.IOException {
        out.write(java.nio.ByteBuffer.allocate(4 + payload.length).putInt(payload.length).put(payload).array());
        out.flush();
    }

    // The next frame's payload; null where the stream ends first, Malformed where the
    // frame says it holds more than a frame may.
    private static byte[] receive(java.io.InputStream in) throws java.io.IOException {
        byte[] head = readExactly(in, 4);
        if (head == null) {
            return null;
        }
        int size = java.nio.ByteBuffer.wrap(head).getInt();
        if (size < 0 || size > FRAME_CAP) {
            throw new Malformed();
        }
        return readExactly(in, size);
    }

    // `size` bytes from `in`, null if it ends first; held as they come (what a frame
    // says it holds is not allocated at once). FileInputStream's own readNBytes seeks,
    // which a pipe cannot.
    private static byte[] readExactly(java.io.InputStream in, int size) throws java.io.IOException {
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream(java.lang.Math.min(size, 1 << 16));
        byte[] chunk = new byte[1 << 16];
        while (bytes.size() < size) {
            int got = in.read(chunk, 0, java.lang.Math.min(chunk.length, size - bytes.size()));
            if (got < 0) {
                return null;
            }
            bytes.write(chunk, 0, got);
        }
        return bytes.toByteArray();
    }

    // The candidate's side: answers each call of `entry`, the method of `owner` declared
    // as `declaring`'s passkSignature_ is (called on an instance of `owner` made once, as
    // the tests make one), with the value it returned or what it threw; ends once the
    // judge hangs up. `assertions`: whether the suite's harness runs the code with them.
    static void serve(java.lang.Class<?> owner, java.lang.Class<?> declaring, boolean assertions,
            java.lang.String entry) throws java.lang.Exception {
        // Before the candidate's classes are initialized, which is when they ask.
        java.lang.ClassLoader.getSystemClassLoader().setDefaultAssertionStatus(assertions);
        java.lang.Class<?>[] parameters = null;
        for (java.lang.reflect.Method signature : declaring.getDeclaredMethods()) {
            if (signature.getName().equals(SIGNATURE)) {
                parameters = signature.getParameterTypes();
            }
        }
        java.lang.reflect.Method method = owner.getDeclaredMethod(entry, parameters);
        method.setAccessible(true);
        java.lang.Object target = null;
        if (!java.lang.reflect.Modifier.isStatic(method.getModifiers())) {
            java.lang.reflect.Constructor<?> make = owner.getDeclaredConstructor();
            make.setAccessible(true);
            target = make.newInstance();
        }
        java.io.InputStream in = new java.io.FileInputStream(descriptor(FROM_JUDGE));
        java.io.OutputStream out = new java.io.FileOutputStream(descriptor(TO_JUDGE));
        byte[] frame;
        while ((frame = receive(in)) != null) {
            java.io.ByteArrayOutputStream answer = new java.io.ByteArrayOutputStream();
            java.io.DataOutputStream data = new java.io.DataOutputStream(answer);
            try {
                java.nio.ByteBuffer call = java.nio.ByteBuffer.wrap(frame);
                java.lang.Object[] arguments = new java.lang.Object[parameters.length];
                for (int index = 0; index < arguments.length; ++index) {
                    arguments[index] = get(call, 0);
                }
                java.lang.Object value = method.invoke(target, arguments);
                data.writeByte(ANSWERED);
                put(data, value, 0);
            } catch (java.lang.reflect.InvocationTargetException thrown) {
                answer.reset();
                data.writeByte(THREW);
                put(data, java.lang.String.valueOf(thrown.getCause()), 0);
            } catch (Unsupported unsupported) {
                answer.reset();
                data.writeByte(UNCARRIED);
                put(data, unsupported.getMessage(), 0);
            } catch (java.lang.Throwable failed) {
                answer.reset();
                data.writeByte(THREW);
                put(data, java.lang.String.valueOf(failed), 0);
            }
            try {
                send(out, answer.toByteArray());
            } catch (java.io.IOException hungUp) {
                return;
            }
        }
    }

    // The tests' side.
    private static java.io.OutputStream toCandidate;
    private static java.io.InputStream fromCandidate;
    private static int calls;

    // Ends the tests' program with a verdict. Returned for its callers to throw, which it
    // never reaches.
    private static java.lang.Error verdict(java.lang.String status, java.lang.String detail) {
        java.lang.String line = status + "\t" + detail.replace('\n', ' ').replace('\r', ' ') + "\n";
        try (java.io.FileOutputStream record = new java.io.FileOutputStream(descriptor(RECORD))) {
            record.write(line.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        } catch (java.io.IOException unrecorded) {
            // The tests' status then fails them without a verdict line.
        }
        java.lang.System.out.flush();
        java.lang.System.err.flush();
        java.lang.Runtime.getRuntime().halt(EXIT_VERDICT);
        return new java.lang.AssertionError("halted");
    }

    // A call of the entry point, whose stand-in `declared` is: the method of the
    // entry point's declaration that the tests call, which passes its arguments here.
    @java.lang.SuppressWarnings("unchecked")
    static <T> T call(java.lang.reflect.Method declared, java.lang.Object[] arguments) {
        java.lang.String entry = declared.getName();
        java.lang.String which = "call " + ++calls + " of " + entry;
        java.lang.String uncarried = uncarried(declared);
        if (uncarried != null) {
            throw verdict("unjudgeable",
                    "passk cannot pass the values of " + entry + "'s signature between processes: " + uncarried);
        }
        java.io.ByteArrayOutputStream frame = new java.io.ByteArrayOutputStream();
        try {
            java.io.DataOutputStream data = new java.io.DataOutputStream(frame);
            for (java.lang.Object argument : arguments) {
                put(data, argument, 0);
            }
        } catch (Unsupported unsupported) {
            throw verdict("unjudgeable",
                    "the tests pass " + entry + " a value of a type passk cannot send: " + unsupported.getMessage());
        } catch (java.io.IOException unwritten) {
            throw new java.io.UncheckedIOException(unwritten);
        }
        java.lang.String malformed = "the candidate's process answered " + which + " with a malformed value";
        byte[] answer;
        try {
            if (toCandidate == null) {
                toCandidate = new java.io.FileOutputStream(descriptor(TO_CANDIDATE));
                fromCandidate = new java.io.FileInputStream(descriptor(FROM_CANDIDATE));
            }
            send(toCandidate, frame.toByteArray());
            answer = receive(fromCandidate);
        } catch (java.io.IOException gone) {
            answer = null;
        } catch (Malformed | java.lang.OutOfMemoryError oversized) {
            throw verdict("failed", malformed);
        }
        if (answer == null || answer.length == 0) {
            throw verdict("failed", "the candidate's process ended before it answered " + which);
        }
        byte status = answer[0];
        java.nio.ByteBuffer in = java.nio.ByteBuffer.wrap(answer, 1, answer.length - 1);
        java.lang.Object value;
        try {
            value = get(in, 0);
            // What it threw, or the class it could not send, is a string.
            boolean said = status == ANSWERED
                    || (status == THREW || status == UNCARRIED) && value instanceof java.lang.String;
            if (!said || in.hasRemaining()) {
                throw new Malformed();
            }
        } catch (java.lang.RuntimeException | java.lang.OutOfMemoryError unread) {
            throw verdict("failed", malformed);
        }
        if (status == THREW) {
            throw verdict("failed", which + " threw: " + capped((java.lang.String) value));
        }
        if (status == UNCARRIED) {
            throw verdict("failed",
                    which + " returned a value of a type passk cannot receive: " + capped((java.lang.String) value));
        }
        if (!conforms(value, declared.getReturnType())) {
            throw verdict("failed", which + " returned " + (value == null ? "null" : "a " + value.getClass().getName())
                    + ", which is no " + declared.getGenericReturnType().getTypeName());
        }
        return (T) value;
    }

    private static java.lang.String capped(java.lang.String text) {
        return text.length() > 400 ? text.substring(0, 400) : text;
    }

    // What the declaration names that this wire does not carry; null if nothing.
    private static java.lang.String uncarried(java.lang.reflect.Method declared) {
        java.util.List<java.lang.reflect.Type> types =
                new java.util.ArrayList<>(java.util.Arrays.asList(declared.getGenericParameterTypes()));
        types.add(declared.getGenericReturnType());
        for (java.lang.reflect.Type type : types) {
            java.lang.String uncarried = uncarried(type);
            if (uncarried != null) {
                return uncarried;
            }
        }
        return null;
    }

    private static java.lang.String uncarried(java.lang.reflect.Type type) {
        java.util.List<java.lang.reflect.Type> parts = new java.util.ArrayList<>();
        if (type instanceof java.lang.Class) {
            java.lang.Class<?> plain = (java.lang.Class<?>) type;
            boolean carried = plain.isPrimitive() || DECLARABLE.contains(plain.getName()) || tuple(plain) >= 0;
            return carried ? null : type.getTypeName();
        } else if (type instanceof java.lang.reflect.ParameterizedType) {
            java.lang.reflect.ParameterizedType parameterized = (java.lang.reflect.ParameterizedType) type;
            parts.add(parameterized.getRawType());
            parts.addAll(java.util.Arrays.asList(parameterized.getActualTypeArguments()));
        } else if (type instanceof java.lang.reflect.WildcardType) {
            parts.addAll(java.util.Arrays.asList(((java.lang.reflect.WildcardType) type).getUpperBounds()));
            parts.addAll(java.util.Arrays.asList(((java.lang.reflect.WildcardType) type).getLowerBounds()));
        } else if (type instanceof java.lang.reflect.TypeVariable) {
            parts.addAll(java.util.Arrays.asList(((java.lang.reflect.TypeVariable<?>) type).getBounds()));
        } else {
            return type.getTypeName();
        }
        for (java.lang.reflect.Type part : parts) {
            java.lang.String uncarried = uncarried(part);
            if (uncarried != null) {
                return uncarried;
            }
        }
        return null;
    }

    // Whether `value` is one the declared type `erasure` admits. Only the outermost class
    // is the compiler's to check: what a list holds, say, is not (in the suites' own
    // harnesses a list declared of Integers may hold Longs), and the tests see it as the
    // candidate made it.
    private static boolean conforms(java.lang.Object value, java.lang.Class<?> erasure) {
        if (erasure == void.class) {
            return value == null;
        }
        if (erasure.isPrimitive()) {
            java.lang.Class<?> boxed = java.lang.invoke.MethodType.methodType(erasure).wrap().returnType();
            return value != null && value.getClass() == boxed;
        }
        return value == null || erasure.isInstance(value);
    }

    // Reports where in the tests the exception that ends them was thrown, after Java's own
    // report: `tests` are their lines, which begin `after` lines after the caller's.
    static void judging(int after, java.lang.String[] tests) {
        java.lang.StackTraceElement caller = new java.lang.Throwable().getStackTrace()[1];
        int first = caller.getLineNumber() + after;
        java.lang.Thread.setDefaultUncaughtExceptionHandler((thread, thrown) -> {
            thrown.printStackTrace();
            java.lang.String where = "";
            for (java.lang.StackTraceElement frame : thrown.getStackTrace()) {
                int line = frame.getLineNumber() - first;
                boolean ours = java.util.Objects.equals(frame.getFileName(), caller.getFileName());
                if (ours && line >= 0 && line < tests.length) {
                    where = " at line " + (line + 1) + " of the tests: " + tests[line].trim();
                    break;
                }
            }
            java.lang.System.err.println(thrown + where);
        });
    }
}
