// passk's wire for Rust function completions (see programs.py), a crate both programs
// link (built once per toolchain: languages.toml's `prebuilt`). The candidate's program is its code with a `main` that serves calls of its
// entry points (rust_serve.rs); the tests' program is the problem's helpers and tests,
// with a stand-in for each entry point that sends its arguments to the candidate's
// process and reads back the value it returned (rust_judge.rs). Only values cross, as
// bytes the `Put` and `Take` traits below write and read for the standard types the
// suites use: no reference, closure or object of the candidate's reaches the tests,
// which run in the judge's process. The tests' program decides the verdict: it ends
// with status 0 once its tests returned, and a failed call or a panic of the tests ends
// it with a verdict line on descriptor 5.
//
// Both programs derive each value's type from the same declaration, so only a dynamic
// type (`dyn Any`) carries a tag. A frame is its size (u32) and its bytes; a call's
// frame is the entry point's index (u32) and the arguments, an answer's a byte
// (ANSWERED, THREW or UNSENDABLE) and the value, the panic's message or what the
// value is. Numbers are little-endian.

use std::any::Any;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::fs::File;
use std::hash::Hash;
use std::io::{Read, Write};
use std::mem::ManuallyDrop;
use std::os::unix::io::FromRawFd;
use std::sync::{Mutex, Once};

const FROM_JUDGE: i32 = 3;
const TO_JUDGE: i32 = 4;
const TO_CANDIDATE: i32 = 3;
const FROM_CANDIDATE: i32 = 4;
const RECORD: i32 = 5;
// What a frame may hold at most: more is not a value of a suite's.
const FRAME_CAP: u32 = 256 << 20;
const ANSWERED: u8 = 0;
const THREW: u8 = 1;
// An answer whose value this wire cannot carry, by what it is.
const UNSENDABLE: u8 = 2;
// The tests' program's status once it wrote its verdict.
const EXIT_VERDICT: i32 = 3;
// Of a message that goes into a verdict line.
const DETAIL_CAP: usize = 400;

/// Bytes that are not a value of the type expected.
pub struct Malformed;

/// A value of a type this wire does not carry (what a `dyn Any` holds), by what it is.
pub struct Unsupported(pub &'static str);

/// What is left to read of a frame.
pub struct In<'a> {
    bytes: &'a [u8],
}

impl<'a> In<'a> {
    fn raw(&mut self, size: usize) -> Result<&'a [u8], Malformed> {
        if self.bytes.len() < size {
            return Err(Malformed);
        }
        let (taken, rest) = self.bytes.split_at(size);
        self.bytes = rest;
        Ok(taken)
    }

    fn byte(&mut self) -> Result<u8, Malformed> {
        Ok(self.raw(1)?[0])
    }

    /// A count of elements, each of which takes a byte at least.
    fn count(&mut self) -> Result<usize, Malformed> {
        let count = <u64 as Take>::take(self)?;
        if count > self.bytes.len() as u64 {
            return Err(Malformed);
        }
        Ok(count as usize)
    }
}

fn put_count(out: &mut Vec<u8>, count: usize) {
    out.extend_from_slice(&(count as u64).to_le_bytes());
}

/// A value the wire writes.
pub trait Put {
    fn put(&self, out: &mut Vec<u8>) -> Result<(), Unsupported>;
}

/// A value the wire reads back.
pub trait Take: Sized {
    fn take(input: &mut In) -> Result<Self, Malformed>;
}

macro_rules! numbers {
    ($($type:ty),*) => {$(
        impl Put for $type {
            fn put(&self, out: &mut Vec<u8>) -> Result<(), Unsupported> {
                out.extend_from_slice(&self.to_le_bytes());
                Ok(())
            }
        }
        impl Take for $type {
            fn take(input: &mut In) -> Result<Self, Malformed> {
                let bytes = input.raw(std::mem::size_of::<$type>())?;
                Ok(<$type>::from_le_bytes(bytes.try_into().map_err(|_| Malformed)?))
            }
        }
    )*};
}
numbers!(i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize, f32, f64);

// A byte that is 0 or 1.
impl Put for bool {
    fn put(&self, out: &mut Vec<u8>) -> Result<(), Unsupported> {
        out.push(*self as u8);
        Ok(())
    }
}
impl Take for bool {
    fn take(input: &mut In) -> Result<Self, Malformed> {
        match input.byte()? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(Malformed),
        }
    }
}

impl Put for char {
    fn put(&self, out: &mut Vec<u8>) -> Result<(), Unsupported> {
        (*self as u32).put(out)
    }
}
impl Take for char {
    fn take(input: &mut In) -> Result<Self, Malformed> {
        char::from_u32(<u32 as Take>::take(input)?).ok_or(Malformed)
    }
}

impl Put for () {
    fn put(&self, _: &mut Vec<u8>) -> Result<(), Unsupported> {
        Ok(())
    }
}
impl Take for () {
    fn take(_: &mut In) -> Result<Self, Malformed> {
        Ok(())
    }
}

// UTF-8, as Rust's strings are.
impl Put for str {
    fn put(&self, out: &mut Vec<u8>) -> Result<(), Unsupported> {
        put_count(out, self.len());
        out.extend_from_slice(self.as_bytes());
        Ok(())
    }
}
impl Put for String {
    fn put(&self, out: &mut Vec<u8>) -> Result<(), Unsupported> {
        self.as_str().put(out)
    }
}
impl Take for String {
    fn take(input: &mut In) -> Result<Self, Malformed> {
        let size = input.count()?;
        String::from_utf8(input.raw(size)?.to_vec()).map_err(|_| Malformed)
    }
}

// Borrowed values cross as what they borrow. A process reads one back into storage it
// never frees: a call's arguments in the candidate's, a returned `&str` in the tests',
// each process a short one.
impl<T: Put + ?Sized> Put for &T {
    fn put(&self, out: &mut Vec<u8>) -> Result<(), Unsupported> {
        (**self).put(out)
    }
}
impl<T: Put + ?Sized> Put for &mut T {
    fn put(&self, out: &mut Vec<u8>) -> Result<(), Unsupported> {
        (**self).put(out)
    }
}
impl<T: Put + ?Sized> Put for Box<T> {
    fn put(&self, out: &mut Vec<u8>) -> Result<(), Unsupported> {
        (**self).put(out)
    }
}
impl<'a, T: Take> Take for &'a T {
    fn take(input: &mut In) -> Result<Self, Malformed> {
        Ok(Box::leak(Box::new(T::take(input)?)))
    }
}
impl<'a, T: Take> Take for &'a mut T {
    fn take(input: &mut In) -> Result<Self, Malformed> {
        Ok(Box::leak(Box::new(T::take(input)?)))
    }
}
impl<'a> Take for &'a str {
    fn take(input: &mut In) -> Result<Self, Malformed> {
        Ok(Box::leak(<String as Take>::take(input)?.into_boxed_str()))
    }
}
impl<'a, T: Take> Take for &'a [T] {
    fn take(input: &mut In) -> Result<Self, Malformed> {
        Ok(Box::leak(<Vec<T> as Take>::take(input)?.into_boxed_slice()))
    }
}
impl<T: Take> Take for Box<T> {
    fn take(input: &mut In) -> Result<Self, Malformed> {
        Ok(Box::new(T::take(input)?))
    }
}

impl<T: Put> Put for Option<T> {
    fn put(&self, out: &mut Vec<u8>) -> Result<(), Unsupported> {
        self.is_some().put(out)?;
        match self {
            Some(value) => value.put(out),
            None => Ok(()),
        }
    }
}
impl<T: Take> Take for Option<T> {
    fn take(input: &mut In) -> Result<Self, Malformed> {
        Ok(if <bool as Take>::take(input)? { Some(T::take(input)?) } else { None })
    }
}

macro_rules! tuples {
    ($(($($name:ident),+)),*) => {$(
        #[allow(non_snake_case)]
        impl<$($name: Put),+> Put for ($($name,)+) {
            fn put(&self, out: &mut Vec<u8>) -> Result<(), Unsupported> {
                let ($($name,)+) = self;
                $($name.put(out)?;)+
                Ok(())
            }
        }
        impl<$($name: Take),+> Take for ($($name,)+) {
            fn take(input: &mut In) -> Result<Self, Malformed> {
                Ok(($($name::take(input)?,)+))
            }
        }
    )*};
}
tuples!((A), (A, B), (A, B, C), (A, B, C, D), (A, B, C, D, E), (A, B, C, D, E, F));

// Collections, as a count and their elements in order (a map's as key-value pairs).
fn put_all<T: Put>(out: &mut Vec<u8>, count: usize, items: impl Iterator<Item = T>) -> Result<(), Unsupported> {
    put_count(out, count);
    items.map(|item| item.put(out)).collect()
}

fn take_all<T: Take, C: FromIterator<T>>(input: &mut In) -> Result<C, Malformed> {
    let count = input.count()?;
    (0..count).map(|_| T::take(input)).collect()
}

macro_rules! collections {
    ($($type:ident where $($bound:path),*;)*) => {$(
        impl<T: Put> Put for $type<T> {
            fn put(&self, out: &mut Vec<u8>) -> Result<(), Unsupported> {
                put_all(out, self.len(), self.iter())
            }
        }
        impl<T: Take $(+ $bound)*> Take for $type<T> {
            fn take(input: &mut In) -> Result<Self, Malformed> {
                take_all(input)
            }
        }
    )*};
}
collections! {
    Vec where;
    VecDeque where;
    HashSet where Eq, Hash;
    BTreeSet where Ord;
}

impl<T: Put> Put for [T] {
    fn put(&self, out: &mut Vec<u8>) -> Result<(), Unsupported> {
        put_all(out, self.len(), self.iter())
    }
}

impl<K: Put, V: Put> Put for HashMap<K, V> {
    fn put(&self, out: &mut Vec<u8>) -> Result<(), Unsupported> {
        put_all(out, self.len(), self.iter())
    }
}
impl<K: Take + Eq + Hash, V: Take> Take for HashMap<K, V> {
    fn take(input: &mut In) -> Result<Self, Malformed> {
        take_all::<(K, V), _>(input)
    }
}
impl<K: Put, V: Put> Put for BTreeMap<K, V> {
    fn put(&self, out: &mut Vec<u8>) -> Result<(), Unsupported> {
        put_all(out, self.len(), self.iter())
    }
}
impl<K: Take + Ord, V: Take> Take for BTreeMap<K, V> {
    fn take(input: &mut In) -> Result<Self, Malformed> {
        take_all::<(K, V), _>(input)
    }
}

// A type-erased value (`Box<dyn Any>`, `&dyn Any`): one of the types the suites put in
// one, tagged with its index in this list.
macro_rules! anything {
    ($($type:ty),*) => {
        impl Put for dyn Any {
            fn put(&self, out: &mut Vec<u8>) -> Result<(), Unsupported> {
                let mut tag = 0u8;
                $(
                    if let Some(value) = self.downcast_ref::<$type>() {
                        out.push(tag);
                        return value.put(out);
                    }
                    tag += 1;
                )*
                let _ = tag;
                Err(Unsupported("a value in a dyn Any of a type outside passk's list"))
            }
        }
        impl Take for Box<dyn Any> {
            fn take(input: &mut In) -> Result<Self, Malformed> {
                let wanted = input.byte()?;
                let mut tag = 0u8;
                $(
                    if wanted == tag {
                        return Ok(Box::new(<$type as Take>::take(input)?));
                    }
                    tag += 1;
                )*
                let _ = tag;
                Err(Malformed)
            }
        }
    };
}
anything!(i32, i64, isize, u32, u64, usize, f32, f64, bool, char, (), String, &'static str, Vec<Box<dyn Any>>,
          Vec<i32>, Vec<i64>, Vec<isize>, Vec<f32>, Vec<f64>, Vec<String>, Vec<&'static str>,
          HashMap<String, i32>, HashMap<String, String>, HashMap<i32, i32>, Option<i32>);

impl<'a> Take for &'a dyn Any {
    fn take(input: &mut In) -> Result<Self, Malformed> {
        Ok(Box::leak(<Box<dyn Any> as Take>::take(input)?))
    }
}

/// The descriptor `fd`, inherited, as a file that is never closed.
fn inherited(fd: i32) -> ManuallyDrop<File> {
    // SAFETY: the driver hands each program these descriptors (see programs.py), and
    // nothing else here opens or closes them.
    ManuallyDrop::new(unsafe { File::from_raw_fd(fd) })
}

fn send(fd: i32, payload: &[u8]) -> bool {
    let mut frame = (payload.len() as u32).to_le_bytes().to_vec();
    frame.extend_from_slice(payload);
    inherited(fd).write_all(&frame).is_ok()
}

/// The next frame's payload; None once the other side has hung up, Malformed for a size
/// no frame has.
fn receive(fd: i32) -> Option<Result<Vec<u8>, Malformed>> {
    let mut file = inherited(fd);
    let mut size = [0u8; 4];
    file.read_exact(&mut size).ok()?;
    let size = u32::from_le_bytes(size);
    if size > FRAME_CAP {
        return Some(Err(Malformed));
    }
    let mut payload = vec![0u8; size as usize];
    file.read_exact(&mut payload).ok()?;
    Some(Ok(payload))
}

fn truncated(text: &str) -> String {
    let line = text.replace('\n', " ");
    match line.char_indices().nth(DETAIL_CAP) {
        Some((at, _)) => format!("{}...", &line[..at]),
        None => line,
    }
}

fn panic_message(payload: &(dyn Any + Send)) -> String {
    match (payload.downcast_ref::<&str>(), payload.downcast_ref::<String>()) {
        (Some(text), _) => text.to_string(),
        (_, Some(text)) => text.clone(),
        _ => "a panic with a value that is not a message".to_string(),
    }
}

// The candidate's side.

/// What one call of an entry point answers: the value it returned, or its panic's
/// message.
pub fn answer<R: Put>(call: impl FnOnce() -> R) -> Vec<u8> {
    let mut out = vec![ANSWERED];
    let (kind, failure) = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(call)) {
        Ok(value) => match value.put(&mut out) {
            Ok(()) => return out,
            Err(Unsupported(what)) => (UNSENDABLE, what.to_string()),
        },
        Err(payload) => (THREW, panic_message(payload.as_ref())),
    };
    let mut out = vec![kind];
    let _ = failure.put(&mut out);
    out
}

/// Answers each call the judge sends, `dispatch`ing it by its entry point's index with
/// its arguments; returns once the judge hangs up.
pub fn serve(dispatch: impl Fn(u32, &mut In) -> Result<Vec<u8>, Malformed>) {
    while let Some(Ok(frame)) = receive(FROM_JUDGE) {
        let mut input = In { bytes: &frame };
        let out =
            <u32 as Take>::take(&mut input).and_then(|entry| dispatch(entry, &mut input)).unwrap_or_else(|Malformed| {
                let mut out = vec![THREW];
                let _ = "the judge's call was malformed".put(&mut out);
                out
            });
        if !send(TO_JUDGE, &out) {
            return;
        }
    }
}

// The tests' side.

/// Ends the tests' program with its verdict.
pub fn verdict(status: &str, detail: &str) -> ! {
    let _ = inherited(RECORD).write_all(format!("{status}\t{}\n", truncated(detail)).as_bytes());
    std::process::exit(EXIT_VERDICT)
}

/// How many calls were made, under the lock that keeps one call on the wire at a time
/// (the test harness runs tests on threads of their own).
static CALLS: Mutex<u32> = Mutex::new(0);
static JUDGING_PANICS: Once = Once::new();

/// A call of entry point number `index`, `name`, whose arguments `put` writes.
pub fn call<R: Take>(index: u32, name: &str, put: impl FnOnce(&mut Vec<u8>) -> Result<(), Unsupported>) -> R {
    // A panic of the tests (a failed assertion) fails the sample, by the panic's message.
    JUDGING_PANICS
        .call_once(|| std::panic::set_hook(Box::new(|info| verdict("failed", &panic_message(info.payload())))));
    let mut calls = CALLS.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    *calls += 1;
    let which = format!("call {} of {name}", *calls);
    let mut out = index.to_le_bytes().to_vec();
    if let Err(Unsupported(what)) = put(&mut out) {
        verdict("unjudgeable", &format!("the tests pass {name} {what}, which passk cannot send"));
    }
    let malformed =
        || -> ! { verdict("failed", &format!("the candidate's process answered {which} with a malformed value")) };
    let answer = match send(TO_CANDIDATE, &out).then(|| receive(FROM_CANDIDATE)).flatten() {
        Some(Ok(answer)) if !answer.is_empty() => answer,
        Some(_) => malformed(),
        None => verdict("failed", &format!("the candidate's process ended before it answered {which}")),
    };
    let mut input = In { bytes: &answer[1..] };
    if answer[0] == THREW || answer[0] == UNSENDABLE {
        let what = <String as Take>::take(&mut input).unwrap_or_default();
        match answer[0] {
            THREW => verdict("failed", &format!("{which} panicked: {what}")),
            _ => verdict("failed", &format!("{which} returned {what}, which passk cannot receive")),
        }
    }
    match R::take(&mut input) {
        Ok(value) if answer[0] == ANSWERED && input.bytes.is_empty() => value,
        _ => malformed(),
    }
}
