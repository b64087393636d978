// passk's wire for Go function completions (see go_assembly.py). The candidate's
// program is its code with go_serve.go's main, which answers calls of the entry point;
// the tests' program is the problem's helpers and tests with go_judge.go's stand-in for
// the entry point, which sends each call's arguments to the candidate's process and
// reads back what it returned. Only values cross, as bytes this file writes and reads
// for the types the suites use (numbers, strings, slices, arrays, maps, and interface{}
// holding any of them, with its dynamic type): no pointer, function or method of the
// candidate's reaches the tests, which run in the judge's process. The tests' program
// decides the verdict: it ends with status 0 once its tests passed, and a failed call
// ends it with a verdict line on descriptor 5.
//
// Both programs get this file's imports and declarations after their own code, under
// names no suite's code uses.
import (
	passkBinary "encoding/binary"
	passkFmt "fmt"
	passkIo "io"
	passkMath "math"
	passkOs "os"
	passkReflect "reflect"
	passkSync "sync"
)

const (
	passkFromJudge, passkToJudge                      = 3, 4
	passkToCandidate, passkFromCandidate, passkRecord = 3, 4, 5
	// A frame's size, and what a frame may hold at most: more is not a value of a suite's.
	passkFrameCap = 256 << 20
	// The first byte of an answer: what follows is the values returned, or the text of
	// what the call panicked with, or the name of a type this wire does not carry.
	passkAnswered, passkPanicked, passkUnsendable = 0, 1, 2
	// The tests' program's status when a call failed, after it wrote its verdict.
	passkExitVerdict = 3
	// How deep a value nests at most (an interface{} in a slice in an interface{}...): a
	// cycle of the candidate's is no value.
	passkDepthCap = 256
	// The bytes of the largest array type a frame may name.
	passkArrayCap = 1 << 30
)

// A type this wire does not carry (a type of the candidate's own, a pointer, a struct).
type passkUnsupported struct{ what string }

// Bytes that are no value of the type they should be.
type passkMalformed struct{}

// The predeclared types, the only named types an interface{} may hold here: a type of
// the candidate's own does not exist in the tests' program.
var passkBasic = map[passkReflect.Kind]passkReflect.Type{
	passkReflect.Bool: passkReflect.TypeOf(false), passkReflect.String: passkReflect.TypeOf(""),
	passkReflect.Int: passkReflect.TypeOf(0), passkReflect.Int8: passkReflect.TypeOf(int8(0)),
	passkReflect.Int16: passkReflect.TypeOf(int16(0)), passkReflect.Int32: passkReflect.TypeOf(int32(0)),
	passkReflect.Int64: passkReflect.TypeOf(int64(0)), passkReflect.Uint: passkReflect.TypeOf(uint(0)),
	passkReflect.Uint8: passkReflect.TypeOf(uint8(0)), passkReflect.Uint16: passkReflect.TypeOf(uint16(0)),
	passkReflect.Uint32: passkReflect.TypeOf(uint32(0)), passkReflect.Uint64: passkReflect.TypeOf(uint64(0)),
	passkReflect.Uintptr: passkReflect.TypeOf(uintptr(0)), passkReflect.Float32: passkReflect.TypeOf(float32(0)),
	passkReflect.Float64: passkReflect.TypeOf(float64(0)), passkReflect.Complex64: passkReflect.TypeOf(complex64(0)),
	passkReflect.Complex128: passkReflect.TypeOf(complex128(0)),
}

var passkAny = passkReflect.TypeOf((*interface{})(nil)).Elem()

// The type inside `kind` (a function's, a parameter's) that this wire does not carry,
// or "": numbers, strings, slices, arrays, maps and interface{}, named or not.
func passkUncarried(kind passkReflect.Type, depth int) string {
	if depth > passkDepthCap {
		return kind.String()
	}
	switch kind.Kind() {
	case passkReflect.Func:
		for index := 0; index < kind.NumIn(); index++ {
			if uncarried := passkUncarried(kind.In(index), depth+1); uncarried != "" {
				return uncarried
			}
		}
		for index := 0; index < kind.NumOut(); index++ {
			if uncarried := passkUncarried(kind.Out(index), depth+1); uncarried != "" {
				return uncarried
			}
		}
	case passkReflect.Slice, passkReflect.Array:
		return passkUncarried(kind.Elem(), depth+1)
	case passkReflect.Map:
		if uncarried := passkUncarried(kind.Key(), depth+1); uncarried != "" {
			return uncarried
		}
		return passkUncarried(kind.Elem(), depth+1)
	case passkReflect.Interface:
		if kind.NumMethod() != 0 {
			return kind.String()
		}
	default:
		if _, basic := passkBasic[kind.Kind()]; !basic {
			return kind.String()
		}
	}
	return ""
}

type passkOut struct{ bytes []byte }

func (out *passkOut) byte(value byte) { out.bytes = append(out.bytes, value) }

func (out *passkOut) u32(value uint32) {
	var bytes [4]byte
	passkBinary.LittleEndian.PutUint32(bytes[:], value)
	out.bytes = append(out.bytes, bytes[:]...)
}

func (out *passkOut) u64(value uint64) {
	var bytes [8]byte
	passkBinary.LittleEndian.PutUint64(bytes[:], value)
	out.bytes = append(out.bytes, bytes[:]...)
}

func (out *passkOut) flag(value bool) {
	if value {
		out.byte(1)
	} else {
		out.byte(0)
	}
}

func (out *passkOut) text(value string) {
	out.u64(uint64(len(value)))
	out.bytes = append(out.bytes, value...)
}

// A value of the type both sides know; panics with passkUnsupported.
func (out *passkOut) put(value passkReflect.Value, depth int) {
	if depth > passkDepthCap {
		panic(passkUnsupported{passkFmt.Sprintf("a value nested more than %d deep", passkDepthCap)})
	}
	switch value.Kind() {
	case passkReflect.Bool:
		out.flag(value.Bool())
	case passkReflect.Int, passkReflect.Int8, passkReflect.Int16, passkReflect.Int32, passkReflect.Int64:
		out.u64(uint64(value.Int()))
	case passkReflect.Uint, passkReflect.Uint8, passkReflect.Uint16, passkReflect.Uint32, passkReflect.Uint64,
		passkReflect.Uintptr:
		out.u64(value.Uint())
	case passkReflect.Float32:
		out.u32(passkMath.Float32bits(float32(value.Float())))
	case passkReflect.Float64:
		out.u64(passkMath.Float64bits(value.Float()))
	case passkReflect.Complex64:
		out.u32(passkMath.Float32bits(float32(real(value.Complex()))))
		out.u32(passkMath.Float32bits(float32(imag(value.Complex()))))
	case passkReflect.Complex128:
		out.u64(passkMath.Float64bits(real(value.Complex())))
		out.u64(passkMath.Float64bits(imag(value.Complex())))
	case passkReflect.String:
		out.text(value.String())
	case passkReflect.Slice:
		// A nil slice is not an empty one to reflect.DeepEqual, and so to testify.
		out.flag(!value.IsNil())
		if !value.IsNil() {
			out.u64(uint64(value.Len()))
			out.elements(value, depth)
		}
	case passkReflect.Array:
		out.elements(value, depth)
	case passkReflect.Map:
		out.flag(!value.IsNil())
		if !value.IsNil() {
			out.u64(uint64(value.Len()))
			entries := value.MapRange()
			for entries.Next() {
				out.put(entries.Key(), depth+1)
				out.put(entries.Value(), depth+1)
			}
		}
	case passkReflect.Interface:
		if value.Type().NumMethod() != 0 {
			panic(passkUnsupported{value.Type().String()})
		}
		out.flag(!value.IsNil())
		if !value.IsNil() {
			out.kind(value.Elem().Type(), depth+1)
			out.put(value.Elem(), depth+1)
		}
	default:
		panic(passkUnsupported{value.Type().String()})
	}
}

func (out *passkOut) elements(value passkReflect.Value, depth int) {
	for index := 0; index < value.Len(); index++ {
		out.put(value.Index(index), depth+1)
	}
}

// The dynamic type of an interface{}'s value: its kind, then what it is made of.
func (out *passkOut) kind(kind passkReflect.Type, depth int) {
	if depth > passkDepthCap {
		panic(passkUnsupported{kind.String()})
	}
	if basic, found := passkBasic[kind.Kind()]; found {
		if kind != basic {
			panic(passkUnsupported{kind.String()})
		}
		out.byte(byte(kind.Kind()))
		return
	}
	if kind.Name() != "" {
		panic(passkUnsupported{kind.String()})
	}
	out.byte(byte(kind.Kind()))
	switch kind.Kind() {
	case passkReflect.Slice:
		out.kind(kind.Elem(), depth+1)
	case passkReflect.Array:
		out.u64(uint64(kind.Len()))
		out.kind(kind.Elem(), depth+1)
	case passkReflect.Map:
		out.kind(kind.Key(), depth+1)
		out.kind(kind.Elem(), depth+1)
	case passkReflect.Interface:
		if kind.NumMethod() != 0 {
			panic(passkUnsupported{kind.String()})
		}
	default:
		panic(passkUnsupported{kind.String()})
	}
}

type passkIn struct{ bytes []byte }

func (in *passkIn) take(size uint64) []byte {
	if uint64(len(in.bytes)) < size {
		panic(passkMalformed{})
	}
	taken := in.bytes[:size]
	in.bytes = in.bytes[size:]
	return taken
}

func (in *passkIn) byte() byte { return in.take(1)[0] }

func (in *passkIn) u32() uint32 { return passkBinary.LittleEndian.Uint32(in.take(4)) }

func (in *passkIn) u64() uint64 { return passkBinary.LittleEndian.Uint64(in.take(8)) }

// A byte that is 0 or 1.
func (in *passkIn) flag() bool {
	value := in.byte()
	if value > 1 {
		panic(passkMalformed{})
	}
	return value == 1
}

// A count of what follows, no more than the bytes left.
func (in *passkIn) count() int {
	value := in.u64()
	if value > uint64(len(in.bytes)) {
		panic(passkMalformed{})
	}
	return int(value)
}

func (in *passkIn) text() string { return string(in.take(uint64(in.count()))) }

// A value of type `kind`; panics with passkMalformed, or with a runtime error that the
// caller takes for one (a map key of a type that cannot be one).
func (in *passkIn) get(kind passkReflect.Type, depth int) passkReflect.Value {
	if depth > passkDepthCap {
		panic(passkMalformed{})
	}
	value := passkReflect.New(kind).Elem()
	switch kind.Kind() {
	case passkReflect.Bool:
		value.SetBool(in.flag())
	case passkReflect.Int, passkReflect.Int8, passkReflect.Int16, passkReflect.Int32, passkReflect.Int64:
		number := int64(in.u64())
		if value.OverflowInt(number) {
			panic(passkMalformed{})
		}
		value.SetInt(number)
	case passkReflect.Uint, passkReflect.Uint8, passkReflect.Uint16, passkReflect.Uint32, passkReflect.Uint64,
		passkReflect.Uintptr:
		number := in.u64()
		if value.OverflowUint(number) {
			panic(passkMalformed{})
		}
		value.SetUint(number)
	case passkReflect.Float32:
		value.SetFloat(float64(passkMath.Float32frombits(in.u32())))
	case passkReflect.Float64:
		value.SetFloat(passkMath.Float64frombits(in.u64()))
	case passkReflect.Complex64:
		re := passkMath.Float32frombits(in.u32())
		value.SetComplex(complex(float64(re), float64(passkMath.Float32frombits(in.u32()))))
	case passkReflect.Complex128:
		re := passkMath.Float64frombits(in.u64())
		value.SetComplex(complex(re, passkMath.Float64frombits(in.u64())))
	case passkReflect.String:
		value.SetString(in.text())
	case passkReflect.Slice:
		if in.flag() {
			size := in.count()
			value.Set(passkReflect.MakeSlice(kind, size, size))
			in.elements(value, depth)
		}
	case passkReflect.Array:
		in.elements(value, depth)
	case passkReflect.Map:
		if in.flag() {
			size := in.count()
			value.Set(passkReflect.MakeMapWithSize(kind, size))
			for index := 0; index < size; index++ {
				key := in.get(kind.Key(), depth+1)
				value.SetMapIndex(key, in.get(kind.Elem(), depth+1))
			}
			// A key twice.
			if value.Len() != size {
				panic(passkMalformed{})
			}
		}
	case passkReflect.Interface:
		if kind.NumMethod() != 0 {
			panic(passkUnsupported{kind.String()})
		}
		if in.flag() {
			value.Set(in.get(in.kind(depth+1), depth+1))
		}
	default:
		panic(passkUnsupported{kind.String()})
	}
	return value
}

func (in *passkIn) elements(value passkReflect.Value, depth int) {
	for index := 0; index < value.Len(); index++ {
		value.Index(index).Set(in.get(value.Type().Elem(), depth+1))
	}
}

func (in *passkIn) kind(depth int) passkReflect.Type {
	if depth > passkDepthCap {
		panic(passkMalformed{})
	}
	kind := passkReflect.Kind(in.byte())
	if basic, found := passkBasic[kind]; found {
		return basic
	}
	switch kind {
	case passkReflect.Slice:
		return passkReflect.SliceOf(in.kind(depth + 1))
	case passkReflect.Array:
		size := in.count()
		element := in.kind(depth + 1)
		if element.Size() != 0 && uint64(size) > passkArrayCap/uint64(element.Size()) {
			panic(passkMalformed{})
		}
		return passkReflect.ArrayOf(size, element)
	case passkReflect.Map:
		key := in.kind(depth + 1)
		if !key.Comparable() {
			panic(passkMalformed{})
		}
		return passkReflect.MapOf(key, in.kind(depth+1))
	case passkReflect.Interface:
		return passkAny
	}
	panic(passkMalformed{})
}

func passkReceive(from *passkOs.File) ([]byte, bool) {
	var header [4]byte
	if _, err := passkIo.ReadFull(from, header[:]); err != nil {
		return nil, false
	}
	size := passkBinary.LittleEndian.Uint32(header[:])
	if size > passkFrameCap {
		return nil, false
	}
	payload := make([]byte, size)
	if _, err := passkIo.ReadFull(from, payload); err != nil {
		return nil, false
	}
	return payload, true
}

func passkSend(to *passkOs.File, payload []byte) bool {
	frame := make([]byte, 4, 4+len(payload))
	passkBinary.LittleEndian.PutUint32(frame, uint32(len(payload)))
	_, err := to.Write(append(frame, payload...))
	return err == nil
}

// The candidate's side: answers each call of `entry` with what it returned, or with
// what it panicked with; ends once the judge hangs up.
func passkServe(entry interface{}) {
	function := passkReflect.ValueOf(entry)
	from := passkOs.NewFile(passkFromJudge, "from-judge")
	to := passkOs.NewFile(passkToJudge, "to-judge")
	for {
		frame, received := passkReceive(from)
		if !received || !passkSend(to, passkAnswer(function, frame)) {
			passkOs.Exit(0)
		}
	}
}

func passkAnswer(function passkReflect.Value, frame []byte) []byte {
	kind := function.Type()
	in := passkIn{frame}
	arguments := make([]passkReflect.Value, kind.NumIn())
	for index := range arguments {
		arguments[index] = in.get(kind.In(index), 0)
	}
	results, panicked := passkInvoke(function, arguments)
	if panicked != nil {
		out := passkOut{[]byte{passkPanicked}}
		out.text(*panicked)
		return out.bytes
	}
	return passkResults(results)
}

// Calls the entry point; the text of what it panicked with, if it did. A call that
// ends its goroutine (runtime.Goexit) never returns here, and its process answers
// nothing.
func passkInvoke(function passkReflect.Value, arguments []passkReflect.Value) (results []passkReflect.Value, panicked *string) {
	returned := false
	defer func() {
		if !returned {
			text := passkFmt.Sprint(recover())
			panicked = &text
		}
	}()
	if function.Type().IsVariadic() {
		results = function.CallSlice(arguments)
	} else {
		results = function.Call(arguments)
	}
	returned = true
	return results, nil
}

func passkResults(results []passkReflect.Value) (answer []byte) {
	defer func() {
		if failure := recover(); failure != nil {
			unsupported, is := failure.(passkUnsupported)
			if !is {
				panic(failure)
			}
			out := passkOut{[]byte{passkUnsendable}}
			out.text(unsupported.what)
			answer = out.bytes
		}
	}()
	out := passkOut{[]byte{passkAnswered}}
	for _, result := range results {
		out.put(result, 0)
	}
	return out.bytes
}

// The tests' side: makes the variable `target` points to, which the tests call as the
// entry point, a function of its declared type that passes each call to the
// candidate's process.
func passkStandIn(target interface{}, entry string) {
	variable := passkReflect.ValueOf(target).Elem()
	kind := variable.Type()
	to := passkOs.NewFile(passkToCandidate, "to-candidate")
	from := passkOs.NewFile(passkFromCandidate, "from-candidate")
	var lock passkSync.Mutex
	calls := 0
	variable.Set(passkReflect.MakeFunc(kind, func(arguments []passkReflect.Value) []passkReflect.Value {
		lock.Lock()
		defer lock.Unlock()
		calls++
		which := passkFmt.Sprintf("call %d of %s", calls, entry)
		if uncarried := passkUncarried(kind, 0); uncarried != "" {
			passkVerdict("unjudgeable", "passk cannot pass the values of "+entry+"'s signature between processes: "+
				uncarried)
		}
		frame, answered := []byte(nil), false
		if passkSend(to, passkArguments(entry, arguments)) {
			frame, answered = passkReceive(from)
		}
		if !answered || len(frame) == 0 {
			passkVerdict("failed", "the candidate's process ended before it answered "+which)
		}
		return passkReturned(kind, which, frame)
	}))
}

func passkArguments(entry string, arguments []passkReflect.Value) []byte {
	defer func() {
		if failure := recover(); failure != nil {
			unsupported, is := failure.(passkUnsupported)
			if !is {
				panic(failure)
			}
			passkVerdict("unjudgeable", "the tests pass "+entry+" a value of a type passk cannot send: "+
				unsupported.what)
		}
	}()
	out := passkOut{}
	for _, argument := range arguments {
		out.put(argument, 0)
	}
	return out.bytes
}

// The values the candidate's process answered a call with.
func passkReturned(kind passkReflect.Type, which string, frame []byte) []passkReflect.Value {
	in := passkIn{frame[1:]}
	defer func() {
		if failure := recover(); failure != nil {
			passkVerdict("failed", "the candidate's process answered "+which+" with a malformed value")
		}
	}()
	switch frame[0] {
	case passkPanicked:
		passkVerdict("failed", which+" panicked: "+passkShown(in.text()))
	case passkUnsendable:
		passkVerdict("failed", which+" returned a value of a type passk cannot receive: "+passkShown(in.text()))
	case passkAnswered:
		results := make([]passkReflect.Value, kind.NumOut())
		for index := range results {
			results[index] = in.get(kind.Out(index), 0)
		}
		if len(in.bytes) != 0 {
			panic(passkMalformed{})
		}
		return results
	}
	panic(passkMalformed{})
}

// Text of the candidate's, quoted on one line and cut short.
func passkShown(text string) string {
	if len(text) > 400 {
		text = text[:400] + "..."
	}
	return passkFmt.Sprintf("%q", text)
}

func passkVerdict(status, detail string) {
	passkOs.NewFile(passkRecord, "record").Write([]byte(status + "\t" + detail + "\n"))
	passkOs.Exit(passkExitVerdict)
}
