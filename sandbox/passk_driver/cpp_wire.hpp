// passk's wire for C++ function completions (see programs.py). The candidate's program
// is its code with `serve` as its main; the tests' program is the problem's helpers and
// tests, with a stand-in for the entry point that sends each call's arguments to the
// candidate's process and reads back the value it returned. Only values cross, as bytes
// this header writes and reads for the standard types the suites use: no pointer,
// function or object of the candidate's reaches the tests, which run in the judge's
// process. The tests' program decides the verdict: it ends with status 0 once its own
// main returned, and a failed call ends it with a verdict line on descriptor 5.
//
// Appended after the code it serves, so that it sees the types that code included
// (boost::any); everything here is qualified, to stand beside any `using namespace`.
#ifndef PASSK_WIRE_HPP
#define PASSK_WIRE_HPP

// The codecs of containers, optionals, tuples and std::any are declared only where the
// code before included their header (libstdc++'s guard macros say so): a type the code
// did not include is not in its signature, and parsing every such header would cost
// each build a third of a second.
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cxxabi.h>
#include <deque>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <unistd.h>
#include <utility>
// What a type-erased value may hold.
#if defined(_GLIBCXX_ANY) || defined(BOOST_ANY_INCLUDED)
#include <map>
#include <vector>
#endif

namespace passk_wire {

constexpr int FROM_JUDGE = 3, TO_JUDGE = 4;
constexpr int TO_CANDIDATE = 3, FROM_CANDIDATE = 4, RECORD = 5;
// A frame's size, and what a frame may hold at most: more is not a value of a suite's.
constexpr std::uint32_t FRAME_CAP = 256u << 20;
constexpr unsigned char ANSWERED = 0, THREW = 1;
// The tests' program's status when a call failed, after it wrote its verdict.
constexpr int EXIT_VERDICT = 3;

struct Malformed : std::runtime_error {
    Malformed() : std::runtime_error("a malformed value") {}
};

// A type this wire does not carry (a type of the problem's own).
struct Unsupported : std::runtime_error {
    explicit Unsupported(const std::type_info& type) : std::runtime_error(name_of(type)) {}
    static std::string name_of(const std::type_info& type) {
        int status = 0;
        char* demangled = abi::__cxa_demangle(type.name(), nullptr, nullptr, &status);
        std::string name = status == 0 && demangled ? demangled : type.name();
        std::free(demangled);
        return name;
    }
};

struct Out {
    std::string bytes;
    void raw(const void* at, std::size_t size) { bytes.append(static_cast<const char*>(at), size); }
    void size(std::size_t size) {
        std::uint64_t value = size;
        raw(&value, sizeof value);
    }
};

struct In {
    const char* at;
    const char* end;
    void raw(void* into, std::size_t size) {
        if (static_cast<std::size_t>(end - at) < size) throw Malformed();
        std::memcpy(into, at, size);
        at += size;
    }
    // A count of elements, each of which takes a byte at least.
    std::size_t size() {
        std::uint64_t value;
        raw(&value, sizeof value);
        if (value > static_cast<std::uint64_t>(end - at)) throw Malformed();
        return static_cast<std::size_t>(value);
    }
};

template <class T, class = void>
struct Codec {
    static constexpr bool supported = false;
    static void put(Out&, const T&) { throw Unsupported(typeid(T)); }
    static T get(In&) { throw Unsupported(typeid(T)); }
};

template <class T>
using Of = Codec<std::remove_cv_t<std::remove_reference_t<T>>>;

template <class T>
struct Codec<T, std::enable_if_t<std::is_arithmetic_v<T> && !std::is_same_v<T, bool>>> {
    static constexpr bool supported = true;
    static void put(Out& out, const T& value) { out.raw(&value, sizeof value); }
    static T get(In& in) {
        T value;
        in.raw(&value, sizeof value);
        return value;
    }
};

// A byte that is 0 or 1: any other would be a bool that compares neither true nor false.
template <>
struct Codec<bool> {
    static constexpr bool supported = true;
    static void put(Out& out, const bool& value) { out.bytes.push_back(value ? 1 : 0); }
    static bool get(In& in) {
        unsigned char byte;
        in.raw(&byte, 1);
        if (byte > 1) throw Malformed();
        return byte == 1;
    }
};

template <>
struct Codec<std::string> {
    static constexpr bool supported = true;
    static void put(Out& out, const std::string& value) {
        out.size(value.size());
        out.raw(value.data(), value.size());
    }
    static std::string get(In& in) {
        std::size_t size = in.size();
        std::string value(in.at, size);
        in.at += size;
        return value;
    }
};

// A string literal held in a std::any: read back into storage that lives as long as
// the program.
template <>
struct Codec<const char*> {
    static constexpr bool supported = true;
    static void put(Out& out, const char* const& value) { Codec<std::string>::put(out, value); }
    static const char* get(In& in) {
        static std::deque<std::string> kept;
        kept.push_back(Codec<std::string>::get(in));
        return kept.back().c_str();
    }
};

#ifdef _GLIBCXX_OPTIONAL
template <>
struct Codec<std::nullopt_t> {
    static constexpr bool supported = true;
    static void put(Out&, const std::nullopt_t&) {}
    static std::nullopt_t get(In&) { return std::nullopt; }
};

template <class T>
struct Codec<std::optional<T>> {
    static constexpr bool supported = Of<T>::supported;
    static void put(Out& out, const std::optional<T>& value) {
        Codec<bool>::put(out, value.has_value());
        if (value) Of<T>::put(out, *value);
    }
    static std::optional<T> get(In& in) {
        if (!Codec<bool>::get(in)) return std::nullopt;
        return Of<T>::get(in);
    }
};
#endif

template <class A, class B>
struct Codec<std::pair<A, B>> {
    static constexpr bool supported = Of<A>::supported && Of<B>::supported;
    static void put(Out& out, const std::pair<A, B>& value) {
        Of<A>::put(out, value.first);
        Of<B>::put(out, value.second);
    }
    static std::pair<A, B> get(In& in) {
        A first = Of<A>::get(in);
        return {std::move(first), Of<B>::get(in)};
    }
};

template <class... T>
struct Codec<std::tuple<T...>> {
    static constexpr bool supported = (Of<T>::supported && ...);
    static void put(Out& out, const std::tuple<T...>& value) {
        std::apply([&](const auto&... item) { (Of<decltype(item)>::put(out, item), ...); }, value);
    }
    static std::tuple<T...> get(In& in) {
        // A braced list is evaluated in order.
        return std::tuple<T...>{Of<T>::get(in)...};
    }
};

// Containers, as a count and their elements in order; `Element` is what is stored.
template <class Container, class Element>
struct Elements {
    static constexpr bool supported = Of<Element>::supported;
    static void put(Out& out, const Container& value) {
        out.size(value.size());
        for (const auto& item : value) Of<Element>::put(out, item);
    }
    static Container get(In& in) {
        std::size_t size = in.size();
        Container value;
        for (std::size_t index = 0; index < size; ++index) value.insert(value.end(), Of<Element>::get(in));
        return value;
    }
};

#ifdef _GLIBCXX_VECTOR
template <class T, class A>
struct Codec<std::vector<T, A>> : Elements<std::vector<T, A>, T> {};
#endif
#ifdef _GLIBCXX_LIST
template <class T, class A>
struct Codec<std::list<T, A>> : Elements<std::list<T, A>, T> {};
#endif
template <class T, class A>
struct Codec<std::deque<T, A>> : Elements<std::deque<T, A>, T> {};
#ifdef _GLIBCXX_SET
template <class T, class C, class A>
struct Codec<std::set<T, C, A>> : Elements<std::set<T, C, A>, T> {};
template <class T, class C, class A>
struct Codec<std::multiset<T, C, A>> : Elements<std::multiset<T, C, A>, T> {};
#endif
#ifdef _GLIBCXX_UNORDERED_SET
template <class T, class H, class E, class A>
struct Codec<std::unordered_set<T, H, E, A>> : Elements<std::unordered_set<T, H, E, A>, T> {};
#endif
#ifdef _GLIBCXX_MAP
template <class K, class V, class C, class A>
struct Codec<std::map<K, V, C, A>> : Elements<std::map<K, V, C, A>, std::pair<K, V>> {};
#endif
#ifdef _GLIBCXX_UNORDERED_MAP
template <class K, class V, class H, class E, class A>
struct Codec<std::unordered_map<K, V, H, E, A>> : Elements<std::unordered_map<K, V, H, E, A>, std::pair<K, V>> {};
#endif

// A type-erased value (std::any, boost::any): one of the types the suites put in one,
// named by its index here, 0 for an empty one.
#if defined(_GLIBCXX_ANY) || defined(BOOST_ANY_INCLUDED)
#ifdef _GLIBCXX_ANY
template <class T>
const T* held(const std::any& value) {
    return std::any_cast<T>(&value);
}
inline bool empty(const std::any& value) { return !value.has_value(); }
#endif
#ifdef BOOST_ANY_INCLUDED
template <class T>
const T* held(const boost::any& value) {
    return boost::any_cast<T>(&value);
}
inline bool empty(const boost::any& value) { return value.empty(); }
#endif

template <class Any, class... Held>
struct Anything {
    static constexpr bool supported = true;
    static void put(Out& out, const Any& value) {
        unsigned char index = 1;
        bool done = empty(value);
        if (done) out.bytes.push_back(0);
        ((done = done || put_if<Held>(out, value, index++)), ...);
        if (!done) throw Unsupported(value.type());
    }
    template <class T>
    static bool put_if(Out& out, const Any& value, unsigned char index) {
        const T* found = held<T>(value);
        if (!found) return false;
        out.bytes.push_back(static_cast<char>(index));
        Codec<T>::put(out, *found);
        return true;
    }
    static Any get(In& in) {
        unsigned char wanted;
        in.raw(&wanted, 1);
        Any value;
        unsigned char index = 1;
        bool done = wanted == 0;
        ((done = done || get_if<Held>(in, value, wanted, index++)), ...);
        if (!done) throw Malformed();
        return value;
    }
    template <class T>
    static bool get_if(In& in, Any& value, unsigned char wanted, unsigned char index) {
        if (wanted != index) return false;
        value = Codec<T>::get(in);
        return true;
    }
};

template <class Any>
using AnyOf = Anything<Any, int, long, long long, unsigned, unsigned long, float, double, bool, char, std::string,
                       const char*, std::vector<int>, std::vector<long>, std::vector<long long>, std::vector<float>,
                       std::vector<double>, std::vector<std::string>, std::map<long, long>, std::map<int, int>,
                       std::map<std::string, long>>;
#endif

#ifdef _GLIBCXX_ANY
template <>
struct Codec<std::any> : AnyOf<std::any> {};
#endif
#ifdef BOOST_ANY_INCLUDED
template <>
struct Codec<boost::any> : AnyOf<boost::any> {};
#endif

inline bool read_exactly(int fd, void* into, std::size_t size) {
    char* at = static_cast<char*>(into);
    while (size > 0) {
        ssize_t got = ::read(fd, at, size);
        if (got <= 0) return false;
        at += got;
        size -= static_cast<std::size_t>(got);
    }
    return true;
}

inline bool write_all(int fd, const std::string& bytes) {
    const char* at = bytes.data();
    std::size_t left = bytes.size();
    while (left > 0) {
        ssize_t wrote = ::write(fd, at, left);
        if (wrote <= 0) return false;
        at += wrote;
        left -= static_cast<std::size_t>(wrote);
    }
    return true;
}

inline bool send(int fd, const std::string& payload) {
    std::uint32_t size = static_cast<std::uint32_t>(payload.size());
    std::string frame(reinterpret_cast<const char*>(&size), sizeof size);
    return write_all(fd, frame + payload);
}

inline bool receive(int fd, std::string& payload) {
    std::uint32_t size;
    if (!read_exactly(fd, &size, sizeof size) || size > FRAME_CAP) return false;
    payload.resize(size);
    return read_exactly(fd, payload.data(), size);
}

// The candidate's side: answers each call with the value the entry point returned, or
// with what it threw; ends once the judge hangs up.
template <class R, class... A>
int serve(R (*entry)(A...)) {
    std::string frame;
    while (receive(FROM_JUDGE, frame)) {
        In in{frame.data(), frame.data() + frame.size()};
        Out out;
        out.bytes.push_back(static_cast<char>(ANSWERED));
        try {
            std::tuple<std::decay_t<A>...> arguments{Of<A>::get(in)...};
            if constexpr (std::is_void_v<R>) {
                std::apply([&](auto&... argument) { entry(argument...); }, arguments);
            } else {
                Of<R>::put(out, std::apply([&](auto&... argument) -> R { return entry(argument...); }, arguments));
            }
        } catch (const std::exception& thrown) {
            out.bytes.assign(1, static_cast<char>(THREW));
            Codec<std::string>::put(out, thrown.what());
        } catch (...) {
            out.bytes.assign(1, static_cast<char>(THREW));
            Codec<std::string>::put(out, "an exception that is not a std::exception");
        }
        if (!send(TO_JUDGE, out.bytes)) return 0;
    }
    return 0;
}

// The tests' side.
[[noreturn]] inline void verdict(const char* status, const std::string& detail) {
    std::string line = std::string(status) + "\t" + detail + "\n";
    write_all(RECORD, line);
    std::fflush(nullptr);
    ::_exit(EXIT_VERDICT);
}

inline const bool ignores_broken_pipes = (std::signal(SIGPIPE, SIG_IGN), true);

// A call of the entry point, whose declared type `declared` has (it is never called).
template <class R, class... A>
R call(R (*declared)(A...), const char* entry, const std::decay_t<A>&... arguments) {
    static_cast<void>(declared);
    static unsigned calls = 0;
    unsigned number = ++calls;
    std::string which = "call " + std::to_string(number) + " of " + entry;
    if constexpr (!((Of<A>::supported && ...) && (std::is_void_v<R> || Of<R>::supported))) {
        verdict("unjudgeable", "passk cannot pass the values of " + std::string(entry) +
                                   "'s signature between processes: " + Unsupported::name_of(typeid(R(A...))));
    }
    Out out;
    try {
        (Of<A>::put(out, arguments), ...);
    } catch (const Unsupported& unsupported) {
        verdict("unjudgeable", "the tests pass " + std::string(entry) + " a value of a type passk cannot send: " +
                                   unsupported.what());
    }
    std::string answer;
    if (!send(TO_CANDIDATE, out.bytes) || !receive(FROM_CANDIDATE, answer) || answer.empty()) {
        verdict("failed", "the candidate's process ended before it answered " + which);
    }
    In in{answer.data() + 1, answer.data() + answer.size()};
    if (static_cast<unsigned char>(answer[0]) == THREW) {
        std::string what;
        try {
            what = Codec<std::string>::get(in);
        } catch (const Malformed&) {
        }
        verdict("failed", which + " threw: " + what.substr(0, 400));
    }
    try {
        if constexpr (std::is_void_v<R>) {
            return;
        } else {
            R value = Of<R>::get(in);
            if (in.at != in.end) throw Malformed();
            return value;
        }
    } catch (const Malformed&) {
        verdict("failed", "the candidate's process answered " + which + " with a malformed value");
    } catch (const Unsupported& unsupported) {
        verdict("failed", which + " returned a value of a type passk cannot receive: " + unsupported.what());
    }
}

}  // namespace passk_wire

#endif
