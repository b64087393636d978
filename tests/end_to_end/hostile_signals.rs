//! Candidates that try to have a signal delivered to a process outside their sample, at
//! every level the suite reaches: `full`, and the degraded levels of a host that refuses
//! namespaces (`tests/support/refuse-namespaces`), `uid` when passk runs as root and
//! `minimal` as an unprivileged user. Below `full` the driver, the judge and, at
//! `minimal`, passk itself run as the candidate's user, so the kernel's permission checks
//! let a signal through to them, and only the system-call filter stands in the way.
//!
//! Each hostile sample tries every way of one kind against every process outside the
//! sample it can name (its parent, the driver's parent, the judge, a host process the
//! test started, pid 1 inside a pid namespace), and against itself where the call alone
//! shows that the filter let it through. It fails with `every attempt refused`, or with
//! the attempts the kernel allowed. After them, an honest sample runs in the same driver
//! and passes.

use std::process::Command;

use passk_tests::{as_unprivileged_user, finish, passk, passk_binary, read_jsonl, repo_root, write_jsonl, NOBODY};
use serde_json::{json, Value};

use crate::hostile::correct_body;

/// What every hostile sample starts with: the processes it aims at (`others`), and
/// `attempt`, which records a call the kernel allowed.
const TARGETS: &str = r#"import ctypes, fcntl, os, resource, signal, socket, struct, termios, time
VICTIM = {victim}
def parent_of(pid):
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return int(f.read().rsplit(b")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0
own = os.getpid()
driver = os.getppid()
# Outside a pid namespace of its own the candidate's parent is the driver, whose parent is
# passk (level uid: passk's helper) and whose other child is the judge. At level full the
# candidate is the init of a namespace of its own: its parent cannot be named, and only
# the host process, which it cannot see, is left to aim at.
others = {VICTIM}
if driver != 0:
    others.add(driver)
    others.add(parent_of(driver))
    others.update(int(p) for p in os.listdir("/proc") if p.isdigit() and parent_of(int(p)) == driver)
others = sorted(pid for pid in others if pid > 0 and pid != own)
assert others, "nothing to aim at"
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def checked(result):
    if result == -1:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    return result
allowed, tried = [], []
def attempt(name, call):
    tried.append(name)
    try:
        call()
    except OSError:
        return False
    allowed.append(name)
    return True
"#;

/// Ends every hostile sample: fails it either way, saying which.
const VERDICT: &str = r#"assert not allowed, f"allowed: {allowed}"
raise AssertionError(f"every attempt refused: {len(tried)} on {len(others)} processes")
"#;

/// Descriptor owners set with ioctl on a socket (FIOSETOWN, SIOCSPGRP), to a process and
/// to its group: once the socket has O_ASYNC, its I/O sends SIGIO to the owner.
const OWNER_BY_IOCTL: &str = r#"FIOSETOWN, SIOCSPGRP, FIOASYNC = 0x8901, 0x8902, 0x5452
for target in others + [own]:
    for request, name in ((FIOSETOWN, "FIOSETOWN"), (SIOCSPGRP, "SIOCSPGRP")):
        for who in (target, -target):
            mine, theirs = socket.socketpair()
            if attempt(f"{name} {who}", lambda: fcntl.ioctl(mine, request, struct.pack("i", who))):
                attempt("FIOASYNC", lambda: fcntl.ioctl(mine, FIOASYNC, struct.pack("i", 1)))
                attempt("O_ASYNC", lambda: fcntl.fcntl(mine, fcntl.F_SETFL, os.O_ASYNC))
                theirs.send(b"x")
                time.sleep(0.05)
            mine.close()
            theirs.close()
"#;

/// Signal-driven I/O (`O_ASYNC` through F_SETFL, or FIOASYNC): on a terminal the kernel
/// makes its foreground group the owner, a group outside the sample where the terminal is
/// passk's. Other flags stay settable.
const SIGNAL_DRIVEN_IO: &str = r#"FIOASYNC = 0x5452
mine, theirs = socket.socketpair()
fcntl.fcntl(mine, fcntl.F_SETFL, fcntl.fcntl(mine, fcntl.F_GETFL) | os.O_NONBLOCK)
assert fcntl.fcntl(mine, fcntl.F_GETFL) & os.O_NONBLOCK, "O_NONBLOCK is settable"
attempt("F_SETFL O_ASYNC", lambda: fcntl.fcntl(mine, fcntl.F_SETFL, os.O_ASYNC | os.O_NONBLOCK))
attempt("FIOASYNC", lambda: fcntl.ioctl(mine, FIOASYNC, struct.pack("i", 1)))
"#;

/// Descriptor owners set with fcntl (F_SETOWN, F_SETOWN_EX for a thread, a process or a
/// group) and the signal they get (F_SETSIG).
const OWNER_BY_FCNTL: &str = r#"F_SETSIG, F_SETOWN_EX = 10, 15
for target in others + [own]:
    attempts = [(f"F_SETOWN {who}", fcntl.F_SETOWN, who) for who in (target, -target)]
    attempts += [(f"F_SETOWN_EX {kind} {target}", F_SETOWN_EX, struct.pack("ii", kind, target)) for kind in (0, 1, 2)]
    for name, command, argument in attempts:
        mine, theirs = socket.socketpair()
        if attempt(name, lambda: fcntl.fcntl(mine, command, argument)):
            attempt("F_SETSIG", lambda: fcntl.fcntl(mine, F_SETSIG, signal.SIGKILL))
            attempt("O_ASYNC", lambda: fcntl.fcntl(mine, fcntl.F_SETFL, os.O_ASYNC))
            theirs.send(b"x")
            time.sleep(0.05)
        mine.close()
        theirs.close()
"#;

/// Signals sent outright: to a process, to its group, to every process of the user, to a
/// thread, with a payload, and through a pidfd.
const SIGNALS_SENT: &str = r#"NUMBERS = {numbers}
class Siginfo(ctypes.Structure):
    _fields_ = [("signo", ctypes.c_int), ("errno", ctypes.c_int), ("code", ctypes.c_int), ("rest", ctypes.c_int * 29)]
info = Siginfo(signal.SIGKILL, 0, -1)
for target in others:
    attempt(f"kill {target}", lambda: os.kill(target, signal.SIGKILL))
    attempt(f"kill -{target}", lambda: os.kill(-target, signal.SIGKILL))
    attempt(f"tkill {target}", lambda: checked(libc.syscall(NUMBERS["tkill"], target, signal.SIGKILL)))
    attempt(f"tgkill {target}", lambda: checked(libc.syscall(NUMBERS["tgkill"], target, target, signal.SIGKILL)))
    attempt(f"rt_sigqueueinfo {target}",
            lambda: checked(libc.syscall(NUMBERS["rt_sigqueueinfo"], target, signal.SIGKILL, ctypes.byref(info))))
    attempt(f"rt_tgsigqueueinfo {target}", lambda: checked(
        libc.syscall(NUMBERS["rt_tgsigqueueinfo"], target, target, signal.SIGKILL, ctypes.byref(info))))
    try:
        pidfd = os.pidfd_open(target)
    except OSError:
        continue
    attempt(f"pidfd_send_signal {target}", lambda: signal.pidfd_send_signal(pidfd, signal.SIGKILL))
    os.close(pidfd)
# kill(-1) only with the filter proven in force: unfiltered and outside a pid namespace,
# it would reach every process of this user.
try:
    os.kill(driver or 1, 0)
except PermissionError:
    attempt("kill -1", lambda: os.kill(-1, signal.SIGKILL))
"#;

/// Another process's limits: past its CPU limit the kernel sends it SIGXCPU and then
/// SIGKILL, even to the init of a pid namespace.
const LIMITS_OF_OTHERS: &str = r#"for target in others:
    attempt(f"prlimit {target}", lambda: resource.prlimit(target, resource.RLIMIT_CPU, (1, 1)))
# Its own, by 0 or by its pid, as the C library and honest code ask.
assert resource.prlimit(0, resource.RLIMIT_CPU) == resource.getrlimit(resource.RLIMIT_CPU)
resource.prlimit(own, resource.RLIMIT_NOFILE, resource.getrlimit(resource.RLIMIT_NOFILE))
"#;

/// What the kernel itself confines to the caller: a terminal's foreground group can be
/// only a group of the caller's session, a timer's thread only one of its own. Signals
/// that dnotify sends go to the process that asked for them.
const CONFINED_BY_THE_KERNEL: &str = r#"try:
    master, terminal = os.openpty()
    fcntl.ioctl(terminal, termios.TIOCSCTTY, 0)
except OSError:
    terminal = None
if terminal is not None:
    for target in others:
        attempt(f"TIOCSPGRP {target}", lambda: fcntl.ioctl(terminal, termios.TIOCSPGRP, struct.pack("i", target)))
class Sigevent(ctypes.Structure):
    _fields_ = [("value", ctypes.c_void_p), ("signo", ctypes.c_int), ("notify", ctypes.c_int), ("tid", ctypes.c_int),
                ("pad", ctypes.c_int * 11)]
SIGEV_THREAD_ID = 4
timer = ctypes.c_void_p()
for target in others:
    event = Sigevent(None, signal.SIGKILL, SIGEV_THREAD_ID, target)
    attempt(f"timer_create {target}", lambda: checked(libc.timer_create(time.CLOCK_MONOTONIC, ctypes.byref(event),
                                                                         ctypes.byref(timer))))
notified = []
signal.signal(signal.SIGIO, lambda *_: notified.append(True))
directory = os.open(".", os.O_RDONLY)
fcntl.fcntl(directory, fcntl.F_NOTIFY, fcntl.DN_CREATE)
open("created", "w").close()
deadline = time.monotonic() + 5
while not notified and time.monotonic() < deadline:
    time.sleep(0.01)
assert notified, "dnotify signals the process that asked"
"#;

/// This machine's numbers for the calls `SIGNALS_SENT` makes through `syscall`.
fn signal_call_numbers() -> &'static str {
    if cfg!(target_arch = "aarch64") {
        r#"{"tkill": 130, "tgkill": 131, "rt_sigqueueinfo": 138, "rt_tgsigqueueinfo": 240}"#
    } else {
        r#"{"tkill": 200, "tgkill": 234, "rt_sigqueueinfo": 129, "rt_tgsigqueueinfo": 297}"#
    }
}

/// The hostile samples, each named by what it tries.
fn hostile(victim: u32) -> Vec<(&'static str, String)> {
    let attacks = [
        ("descriptor owners set by ioctl", OWNER_BY_IOCTL.to_owned()),
        ("signal-driven I/O", SIGNAL_DRIVEN_IO.to_owned()),
        ("descriptor owners set by fcntl", OWNER_BY_FCNTL.to_owned()),
        ("signals sent", SIGNALS_SENT.replace("{numbers}", signal_call_numbers())),
        ("another process's limits", LIMITS_OF_OTHERS.to_owned()),
        ("what the kernel confines", CONFINED_BY_THE_KERNEL.to_owned()),
    ];
    let targets = TARGETS.replace("{victim}", &victim.to_string());
    attacks.into_iter().map(|(name, attack)| (name, format!("{}{targets}{attack}{VERDICT}", correct_body()))).collect()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Level {
    Full,
    Uid,
    Minimal,
}

/// Runs every hostile sample and then an honest one, all in one driver, at `level` (as an
/// unprivileged user if `unprivileged`), with a host process as a further target. passk
/// must finish with every result written, each hostile sample fail with every attempt
/// refused (never as `infrastructure`), the honest sample pass, and the host process live.
fn assert_contained(level: Level, verdicts: &str, unprivileged: bool) {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    if level == Level::Uid && !root {
        return;
    }
    // A victim of the user candidates run as at level minimal, whom they may signal as
    // far as the kernel's permissions go.
    let mut victim = Command::new("sleep");
    victim.arg("3600");
    if root {
        std::os::unix::process::CommandExt::uid(&mut victim, NOBODY);
    }
    let mut victim = victim.spawn().unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    let hostile = hostile(victim.id());
    let mut records: Vec<Value> =
        hostile.iter().map(|(_, completion)| json!({"task_id": "basic/0", "completion": completion})).collect();
    records.push(json!({"task_id": "basic/0", "completion": correct_body()}));
    let samples = dir.path().join("samples.jsonl");
    write_jsonl(&samples, &records);
    let results = dir.path().join("results.jsonl");
    let mut command = if level == Level::Full {
        passk(Vec::<&str>::new())
    } else {
        let mut command = Command::new(repo_root().join("tests/support/refuse-namespaces"));
        command.arg(passk_binary()).stdin(std::process::Stdio::null());
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        command
    };
    command
        .arg("evaluate")
        .arg(&samples)
        .args(["--problems", "basic", "--partial", "--k", "1", "--jobs", "1", "--timeout", "20"])
        .args(["--verdicts", verdicts, "--results"])
        .arg(&results);
    if unprivileged {
        as_unprivileged_user(&mut command);
    } else if level == Level::Uid {
        // An interpreter the slot's users can run.
        command.args(["--python", "/usr/bin/python3"]);
    }
    let finished = finish(&mut command);
    let victim_alive = victim.try_wait().unwrap().is_none();
    victim.kill().unwrap();
    victim.wait().unwrap();
    let level_name = format!("{level:?}").to_lowercase();
    let name = if unprivileged { format!("{level_name} as an unprivileged user") } else { level_name.clone() };
    assert_eq!(finished.code, Some(0), "{name}, {verdicts}: passk finished its run: {}", finished.stderr);
    assert!(finished.stdout.contains(&format!("sandbox       {level_name}\n")), "{}", finished.stdout);
    let results = read_jsonl(&results);
    assert_eq!(results.len(), records.len(), "every result is written");
    // Below level full, the parent, its parent and the host process at least; at level
    // full, the host process, which it cannot see.
    let targets = if level == Level::Full { 1 } else { 3 };
    for ((attack, _), result) in hostile.iter().zip(&results) {
        assert_ne!(result["status"], "infrastructure", "{name}, {verdicts}, {attack}: {result}");
        assert_eq!(result["passed"], false, "{name}, {verdicts}, {attack}: {result}");
        let detail = result["detail"].as_str().unwrap();
        let aimed = detail.split_once("every attempt refused: ").and_then(|(_, rest)| {
            let (tried, processes) = rest.split_once(" on ")?;
            Some((tried.parse::<usize>().ok()?, processes.split_once(' ')?.0.parse::<usize>().ok()?))
        });
        let (tried, processes) = aimed.unwrap_or_else(|| panic!("{name}, {verdicts}, {attack}: {detail}"));
        assert!(tried > 0 && processes >= targets, "{name}, {verdicts}, {attack}: {detail}");
    }
    let honest = results.last().unwrap();
    assert_eq!(honest["passed"], true, "{name}, {verdicts}: the driver still runs samples: {honest}");
    assert!(victim_alive, "{name}, {verdicts}: the host process survived");
}

/// Guards the filter's bans on choosing who gets a descriptor's signals (FIOSETOWN,
/// SIOCSPGRP, O_ASYNC, FIOASYNC: before them the first sample set the driver as a
/// socket's owner and had the kernel kill it with SIGIO) and on another process's limits,
/// with the bans on F_SETOWN and on signals sent to others, where only the filter stands
/// between a candidate and processes of its own user: here, the driver runs as the
/// candidate's user.
#[test]
fn no_signal_reaches_beyond_the_sample_at_level_uid() {
    for verdicts in ["judge", "in-process"] {
        assert_contained(Level::Uid, verdicts, false);
    }
}

/// As at level uid, where passk itself runs as the candidate's user too: before the
/// bans, SIGIO from a socket the candidate owned for it killed passk (exit 157), with no
/// results written.
#[test]
fn no_signal_reaches_beyond_the_sample_at_level_minimal() {
    for verdicts in ["judge", "in-process"] {
        assert_contained(Level::Minimal, verdicts, true);
    }
}

/// At level full, the pid namespaces hide every process outside the sample but the
/// namespace's init (the judge, or the driver in-process), which the kernel shields from
/// most signals but not from its CPU limit's SIGKILL. Where passk is not root, that init
/// runs as the candidate's user: before the ban on another process's limits, a candidate
/// in-process set the driver's CPU limit to 1 s, and every later sample of that worker
/// failed to set up (`error`), the driver's hard limit now below the one it gives them.
#[test]
fn no_signal_reaches_beyond_the_sample_at_level_full() {
    for verdicts in ["judge", "in-process"] {
        for unprivileged in [false, true] {
            assert_contained(Level::Full, verdicts, unprivileged);
        }
    }
}

/// A candidate, and a child of it, that signal every pid and group the kernel lets them
/// name, `-1`, and every process they can open a pidfd for, with SIGKILL, and then answer
/// right. Where each candidate is alone in a pid namespace of its own (level full) the
/// filter lets signals through to any pid, so these land, but only on the sample's own
/// processes.
const SIGNALS_EVERYWHERE: &str = r#"    import ctypes, os, signal
    libc = ctypes.CDLL(None, use_errno=True)
    NUMBERS = {numbers}
    own = os.getpid()
    with open("/proc/sys/kernel/pid_max") as f:
        top = min(int(f.read()), 1 << 16)
    # The harness's tests and passk are named from outside; the pids near them too.
    named = set(range(2, top)) | set(range(max(2, {near} - 5000), {near} + 5000))
    def everything():
        for pid in sorted(named - {os.getpid()}):
            for target in (pid, -pid):
                try:
                    os.kill(target, signal.SIGKILL)
                except OSError:
                    pass
            libc.syscall(NUMBERS["tgkill"], pid, pid, signal.SIGKILL)
            libc.syscall(NUMBERS["tkill"], pid, signal.SIGKILL)
            try:
                pidfd = os.pidfd_open(pid)
            except OSError:
                continue
            try:
                signal.pidfd_send_signal(pidfd, signal.SIGKILL)
            except OSError:
                pass
            os.close(pidfd)
        try:
            os.kill(-1, signal.SIGKILL)
        except OSError:
            pass
    child = os.fork()
    if child == 0:
        everything()
        os._exit(0)
    os.waitpid(child, 0)
    everything()
"#;

/// Guards what the rule for a candidate alone in its pid namespace allows: signals to any
/// pid there (multiprocessing kills its workers by pid). From inside, a sample signals
/// every pid and group up to 65,536 and those near the tests' own, `-1`, and through
/// pidfds, from the candidate and from a child: the judge still answers (the sample
/// passes), the driver runs the next sample, passk finishes, and a host process lives.
#[test]
fn a_candidate_alone_in_its_pid_namespace_signals_only_its_own_sample() {
    let mut victim = Command::new("sleep").arg("3600").spawn().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let attack = SIGNALS_EVERYWHERE
        .replace("{numbers}", signal_call_numbers())
        .replace("{near}", &std::process::id().to_string());
    let records = [
        json!({"task_id": "basic/0", "completion": format!("{attack}{}", correct_body())}),
        json!({"task_id": "basic/0", "completion": correct_body()}),
    ];
    let samples = dir.path().join("samples.jsonl");
    write_jsonl(&samples, &records);
    for verdicts in ["judge", "in-process"] {
        let results = dir.path().join(format!("{verdicts}.jsonl"));
        let finished = finish(
            passk(["evaluate"])
                .arg(&samples)
                .args(["--problems", "basic", "--partial", "--k", "1", "--jobs", "1", "--timeout", "60"])
                .args(["--no-dedup", "--verdicts", verdicts, "--results"])
                .arg(&results),
        );
        assert_eq!(finished.code, Some(0), "{verdicts}: passk finished its run: {}", finished.stderr);
        assert!(finished.stdout.contains("sandbox       full\n"), "{}", finished.stdout);
        let results = read_jsonl(&results);
        assert_eq!(results.len(), 2, "{verdicts}");
        for result in &results {
            assert_eq!(result["status"], "passed", "{verdicts}: {result}");
        }
    }
    assert!(victim.try_wait().unwrap().is_none(), "the host process survived");
    victim.kill().unwrap();
    victim.wait().unwrap();
}
