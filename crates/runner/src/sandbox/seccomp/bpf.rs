//! The policy as a classic BPF program, the form `seccomp(2)` takes.
//!
//! Calls are found by a binary search over ranges of call numbers that share an action,
//! not by a list of comparisons: a candidate's filter is installed for every sample,
//! and the kernel then runs it once per call number to learn which calls it may let
//! through without running it again. A search costs that pass a handful of steps per
//! number where a list of some three hundred comparisons would cost hundreds.

use std::collections::BTreeMap;

use super::{Action, Arch, Argument, Condition, Policy, Test, Value};

/// What the program holds where a test compares with the calling process's pid, and
/// its negation where it compares with the process's group: the driver writes each
/// candidate's own in. No call number or flag the policy tests has this value.
pub const OWN_PID: u32 = 0x7FFF_FFF0;

const LD_W_ABS: u16 = 0x20;
const JA: u16 = 0x05;
const JEQ_K: u16 = 0x15;
const JGE_K: u16 = 0x35;
const JSET_K: u16 = 0x45;
const RET_K: u16 = 0x06;

const RET_ALLOW: u32 = 0x7FFF_0000;
const RET_ERRNO: u32 = 0x0005_0000;
const EPERM: u16 = 1;

// Offsets in struct seccomp_data.
const NR: u32 = 0;
const ARCH: u32 = 4;

fn argument_low_word(index: u8) -> u32 {
    let offset = 16 + 8 * u32::from(index);
    if cfg!(target_endian = "big") {
        offset + 4
    } else {
        offset
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Insn {
    code: u16,
    jt: u8,
    jf: u8,
    k: u32,
}

impl Insn {
    fn stmt(code: u16, k: u32) -> Insn {
        Insn { code, jt: 0, jf: 0, k }
    }

    fn jump(code: u16, k: u32, jt: u8, jf: u8) -> Insn {
        Insn { code, jt, jf, k }
    }
}

fn ret(action: &Action) -> Insn {
    Insn::stmt(
        RET_K,
        match action {
            Action::Allow => RET_ALLOW,
            Action::Fail(errno) => RET_ERRNO | u32::from(*errno),
            _ => RET_ERRNO | u32::from(EPERM),
        },
    )
}

fn constant(value: Value) -> u32 {
    match value {
        Value::Number(number) => number,
        Value::OwnPid => OWN_PID,
        Value::OwnGroup => OWN_PID.wrapping_neg(),
    }
}

/// The instructions that end a call with the given action; the accumulator holds the
/// call number when they start.
fn leaf(action: &Action) -> Vec<Insn> {
    let (conditions, passed, failed) = match action {
        Action::AllowIf(conditions) => (conditions, Action::Allow, Action::Deny),
        Action::DenyIf(conditions) => (conditions, Action::Deny, Action::Allow),
        plain => return vec![ret(plain)],
    };
    // Written from the end, so that every jump goes to an instruction already placed: a
    // test that fails moves on to the next condition (after the last, to the failing
    // return), one that passes to the condition's next test (after its last, to the
    // passing return).
    let mut backwards = vec![ret(&passed), ret(&failed)];
    let jump = |backwards: &Vec<Insn>, to: usize| {
        u8::try_from(backwards.len() - 1 - to).expect("a rule's conditions are a few instructions long")
    };
    for Condition(tests) in conditions.iter().rev() {
        let next = backwards.len() - 1;
        let mut then = 0;
        for Argument { index, test } in tests.iter().rev() {
            match test {
                Test::OneOf(values) => {
                    for (at, value) in values.iter().enumerate().rev() {
                        let otherwise = if at + 1 == values.len() { jump(&backwards, next) } else { 0 };
                        backwards.push(Insn::jump(JEQ_K, constant(*value), jump(&backwards, then), otherwise));
                    }
                }
                Test::AnyBit(mask) => {
                    backwards.push(Insn::jump(JSET_K, *mask, jump(&backwards, then), jump(&backwards, next)));
                }
            }
            backwards.push(Insn::stmt(LD_W_ABS, argument_low_word(*index)));
            then = backwards.len() - 1;
        }
    }
    backwards.reverse();
    backwards
}

/// A binary search over `ranges` (each the first call number it covers and its action,
/// the last covering every number above): the accumulator holds the call number.
fn search(ranges: &[(u32, &Action)]) -> Vec<Insn> {
    if let [(_, action)] = ranges {
        return leaf(action);
    }
    let middle = ranges.len() / 2;
    let below = search(&ranges[..middle]);
    let above = search(&ranges[middle..]);
    // At or above the middle range's start: on to the jump over the lower half.
    let mut code = vec![
        Insn::jump(JGE_K, ranges[middle].0, 0, 1),
        Insn::stmt(JA, u32::try_from(below.len()).expect("the program is small")),
    ];
    code.extend(below);
    code.extend(above);
    code
}

/// The program for `policy` on `arch`, as the bytes of a `struct sock_filter` array.
/// Calls `arch` does not have are left out; another ABI of the same machine (i386 or
/// x32 calls on x86_64) gets EPERM for everything, since its numbers are not the ones
/// the policy was resolved to.
pub fn compile(policy: &Policy, arch: Arch) -> Vec<u8> {
    let by_number: BTreeMap<u32, &Action> =
        policy.calls.iter().filter_map(|(name, action)| Some((arch.number(name)?, action))).collect();
    // Ranges of numbers with one action, each from its first number to the next's.
    // Conditional actions test only arguments, so neighbours with the same one merge too.
    let mut ranges: Vec<(u32, &Action)> = Vec::new();
    let mut extend = |start: u32, action| {
        if !matches!(ranges.last(), Some((_, last)) if *last == action) {
            ranges.push((start, action));
        }
    };
    let mut uncovered = 0;
    for (&number, &action) in &by_number {
        if number > uncovered {
            extend(uncovered, &Action::Deny);
        }
        extend(number, action);
        uncovered = number + 1;
    }
    extend(uncovered, &Action::Deny);
    let mut program = vec![
        Insn::stmt(LD_W_ABS, ARCH),
        Insn::jump(JEQ_K, arch.audit, 1, 0),
        ret(&Action::Deny),
        Insn::stmt(LD_W_ABS, NR),
    ];
    program.extend(search(&ranges));
    assert!(program.len() <= 4096, "the kernel takes programs of at most 4096 instructions");
    program
        .iter()
        .flat_map(|insn| {
            let mut bytes = Vec::with_capacity(8);
            bytes.extend(insn.code.to_ne_bytes());
            bytes.push(insn.jt);
            bytes.push(insn.jf);
            bytes.extend(insn.k.to_ne_bytes());
            bytes
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::seccomp::PolicyError;

    /// Runs a program as the kernel would, for one call.
    fn run(program: &[u8], arch: u32, number: u32, arguments: [u64; 6]) -> u32 {
        let insns: Vec<Insn> = program
            .chunks(8)
            .map(|bytes| Insn {
                code: u16::from_ne_bytes([bytes[0], bytes[1]]),
                jt: bytes[2],
                jf: bytes[3],
                k: u32::from_ne_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]),
            })
            .collect();
        let mut data = Vec::new();
        data.extend(number.to_ne_bytes());
        data.extend(arch.to_ne_bytes());
        data.extend(0u64.to_ne_bytes());
        for argument in arguments {
            data.extend(argument.to_ne_bytes());
        }
        let (mut pc, mut accumulator, mut steps) = (0usize, 0u32, 0);
        loop {
            steps += 1;
            assert!(steps < 100, "a call takes no more than a few dozen steps");
            let insn = insns[pc];
            pc += 1;
            match insn.code {
                LD_W_ABS => {
                    let at = insn.k as usize;
                    accumulator = u32::from_ne_bytes(data[at..at + 4].try_into().unwrap());
                }
                JA => pc += insn.k as usize,
                JEQ_K | JGE_K | JSET_K => {
                    let taken = match insn.code {
                        JEQ_K => accumulator == insn.k,
                        JGE_K => accumulator >= insn.k,
                        _ => accumulator & insn.k != 0,
                    };
                    pc += usize::from(if taken { insn.jt } else { insn.jf });
                }
                RET_K => return insn.k,
                other => panic!("unexpected instruction {other:#x}"),
            }
        }
    }

    const DENIED: u32 = RET_ERRNO | 1;
    const PID: u64 = OWN_PID as u64;

    fn call(program: &[u8], arch: Arch, name: &str, arguments: [u64; 6]) -> u32 {
        let number = arch.number(name).unwrap_or_else(|| panic!("{name} is a call here"));
        run(program, arch.audit, number, arguments)
    }

    /// What the policy says of a call made with `arguments`, worked out from the rule
    /// itself rather than the program.
    fn expected(action: &Action, arguments: [u64; 6]) -> u32 {
        let holds = |conditions: &[Condition]| {
            conditions.iter().any(|Condition(tests)| {
                tests.iter().all(|Argument { index, test }| {
                    let word = arguments[usize::from(*index)] as u32;
                    match test {
                        Test::OneOf(values) => values.iter().any(|value| constant(*value) == word),
                        Test::AnyBit(mask) => word & mask != 0,
                    }
                })
            })
        };
        match action {
            Action::Allow => RET_ALLOW,
            Action::Deny => DENIED,
            Action::Fail(errno) => RET_ERRNO | u32::from(*errno),
            Action::AllowIf(conditions) => {
                if holds(conditions) {
                    RET_ALLOW
                } else {
                    DENIED
                }
            }
            Action::DenyIf(conditions) => {
                if holds(conditions) {
                    DENIED
                } else {
                    RET_ALLOW
                }
            }
        }
    }

    /// Arguments that tell apart every outcome a rule can have: for each argument it
    /// tests, every value it compares with and its neighbours, each bit of a mask alone
    /// and every bit but the mask's, with high words set too, in every combination; the
    /// arguments it does not test are left at 1.
    fn probes(action: &Action) -> Vec<[u64; 6]> {
        let (Action::AllowIf(conditions) | Action::DenyIf(conditions)) = action else {
            return vec![[1; 6]];
        };
        let mut words: BTreeMap<u8, Vec<u32>> = BTreeMap::new();
        for Argument { index, test } in conditions.iter().flat_map(|Condition(tests)| tests) {
            let words = words.entry(*index).or_insert_with(|| vec![0, 1, u32::MAX]);
            match test {
                Test::OneOf(values) => {
                    for value in values.iter().map(|value| constant(*value)) {
                        words.extend([value.wrapping_sub(1), value, value.wrapping_add(1)]);
                    }
                }
                Test::AnyBit(mask) => {
                    words.extend((0..32).map(|bit| 1 << bit).filter(|bit| mask & bit != 0));
                    words.push(!mask);
                }
            }
        }
        let mut probes = vec![[1; 6]];
        for (index, words) in words {
            probes = probes
                .iter()
                .flat_map(|probe| {
                    words.iter().flat_map(move |word| {
                        [u64::from(*word), u64::from(*word) | 0xFFFF_FFFF_0000_0000].map(|argument| {
                            let mut probe = *probe;
                            probe[usize::from(index)] = argument;
                            probe
                        })
                    })
                })
                .collect();
        }
        probes
    }

    #[test]
    fn the_policy_file_is_valid() {
        let policy = Policy::compiled_in();
        for name in ["read", "kill", "clone", "mmap", "socket"] {
            assert!(policy.calls.contains_key(name), "{name}");
        }
        for name in ["ptrace", "unshare", "keyctl", "bpf", "perf_event_open", "userfaultfd", "io_uring_setup"] {
            assert!(policy.denied.iter().any(|denied| denied == name), "{name}");
        }
    }

    #[test]
    fn every_call_does_what_the_policy_says_on_each_machine() {
        let policy = Policy::compiled_in();
        for arch in [Arch::X86_64, Arch::AARCH64] {
            let program = compile(&policy, arch);
            for (name, action) in &policy.calls {
                if arch.number(name).is_none() {
                    continue;
                }
                for arguments in probes(action) {
                    let outcome = call(&program, arch, name, arguments);
                    assert_eq!(outcome, expected(action, arguments), "{name}{arguments:x?}");
                }
            }
            for name in &policy.denied {
                if arch.number(name).is_some() {
                    assert_eq!(call(&program, arch, name, [0; 6]), DENIED, "{name}");
                }
            }
            // Every number no call of the policy has, up to beyond the highest.
            let known: Vec<u32> = policy.calls.keys().filter_map(|name| arch.number(name)).collect();
            for number in (0..600).filter(|number| !known.contains(number)) {
                assert_eq!(run(&program, arch.audit, number, [0; 6]), DENIED, "call {number}");
            }
        }
    }

    #[test]
    fn signals_reach_only_the_process_itself_and_its_group() {
        let program = compile(&Policy::compiled_in(), Arch::X86_64);
        let kill = |pid: u64| call(&program, Arch::X86_64, "kill", [pid, 9, 0, 0, 0, 0]);
        assert_eq!(kill(PID), RET_ALLOW);
        assert_eq!(kill(0), RET_ALLOW);
        assert_eq!(kill(PID.wrapping_neg()), RET_ALLOW);
        // What C's int -self is in a 64-bit register: only the low word counts.
        assert_eq!(kill(u64::from(OWN_PID.wrapping_neg())), RET_ALLOW);
        assert_eq!(kill(1), DENIED);
        assert_eq!(kill(u64::MAX), DENIED, "kill(-1)");
        assert_eq!(kill(PID + 1), DENIED);
        let tgkill = |pid: u64| call(&program, Arch::X86_64, "tgkill", [pid, 5, 9, 0, 0, 0]);
        assert_eq!(tgkill(PID), RET_ALLOW);
        assert_eq!(tgkill(2), DENIED);
    }

    /// Guards the variant for a candidate alone in its own pid namespace, where a
    /// multiprocessing.Pool used as a context manager failed with PermissionError now
    /// and then: its terminate() kills the pool's workers by pid. There signals go to
    /// any pid; everywhere else, and for every other call, the policy is unchanged.
    #[test]
    fn alone_in_its_pid_namespace_a_candidate_may_signal_any_pid_and_nothing_else_changes() {
        let policy = Policy::compiled_in();
        let alone_policy = policy.alone_in_pid_namespace();
        for arch in [Arch::X86_64, Arch::AARCH64] {
            let shared = compile(&policy, arch);
            let alone = compile(&alone_policy, arch);
            for pid in [1, 2, PID + 1, u64::MAX, u64::from(7u32.wrapping_neg())] {
                for name in ["kill", "rt_sigqueueinfo", "tkill", "tgkill", "rt_tgsigqueueinfo"] {
                    let arguments = [pid, 9, 9, 0, 0, 0];
                    assert_eq!(call(&alone, arch, name, arguments), RET_ALLOW, "{name}({pid:#x}) alone");
                    if pid != PID && pid != 0 {
                        assert_eq!(call(&shared, arch, name, arguments), DENIED, "{name}({pid:#x})");
                    }
                }
            }
            for name in ["pidfd_send_signal", "ptrace", "process_vm_readv", "unshare", "setns"] {
                assert_eq!(call(&alone, arch, name, [1, 9, 0, 0, 0, 0]), DENIED, "{name} alone");
            }
            let prlimit = |program: &[u8]| call(program, arch, "prlimit64", [2, 0, 0, 0x7FFF_0000, 0, 0]);
            assert_eq!(prlimit(&alone), DENIED, "another process's limits, alone");
            for (name, action) in &policy.calls {
                if !policy.alone.contains(name) {
                    assert_eq!(alone_policy.calls[name], *action, "{name}");
                }
            }
        }
    }

    /// Guards the bans on choosing who gets a descriptor's signals: through fcntl, ioctl
    /// or signal-driven I/O, and through another process's CPU limit.
    #[test]
    fn no_call_chooses_another_process_for_a_signal() {
        for arch in [Arch::X86_64, Arch::AARCH64] {
            let program = compile(&Policy::compiled_in(), arch);
            let fcntl = |command: u64, argument: u64| call(&program, arch, "fcntl", [3, command, argument, 0, 0, 0]);
            assert_eq!(fcntl(3, 0), RET_ALLOW, "F_GETFL");
            for command in [8, 10, 15] {
                assert_eq!(fcntl(command, 0), DENIED, "F_SETOWN, F_SETSIG, F_SETOWN_EX");
            }
            const O_ASYNC: u64 = 0x2000;
            const O_NONBLOCK: u64 = 0x800;
            assert_eq!(fcntl(4, O_NONBLOCK), RET_ALLOW, "F_SETFL O_NONBLOCK");
            assert_eq!(fcntl(4, O_ASYNC), DENIED, "F_SETFL O_ASYNC");
            assert_eq!(fcntl(4, O_ASYNC | O_NONBLOCK | 0xFFFF_FFFF_0000_0000), DENIED, "F_SETFL O_ASYNC with more");
            // The flag's bit in another command's argument (a pointer, a descriptor).
            assert_eq!(fcntl(0, O_ASYNC), RET_ALLOW, "F_DUPFD");
            assert_eq!(fcntl(6, 0x7FFF_2000), RET_ALLOW, "F_SETLK");
            assert_eq!(fcntl(1026, 0x2), RET_ALLOW, "F_NOTIFY signals its caller");
            let ioctl = |request: u64| call(&program, arch, "ioctl", [3, request, 0x7FFF_0000, 0, 0, 0]);
            for request in [0x8901, 0x8902, 0x5452] {
                assert_eq!(ioctl(request), DENIED, "FIOSETOWN, SIOCSPGRP, FIOASYNC: {request:#x}");
            }
            // The kernel takes the request as an unsigned int: its high word is ignored.
            assert_eq!(ioctl(0xFFFF_FFFF_0000_8901), DENIED);
            for request in [0x5401, 0x541B, 0x8903, 0x5421] {
                assert_eq!(ioctl(request), RET_ALLOW, "TCGETS, FIONREAD, FIOGETOWN, FIONBIO: {request:#x}");
            }
            let prlimit = |pid: u64| call(&program, arch, "prlimit64", [pid, 0, 0, 0x7FFF_0000, 0, 0]);
            assert_eq!(prlimit(0), RET_ALLOW, "its own limits");
            assert_eq!(prlimit(PID), RET_ALLOW, "its own limits, by pid");
            assert_eq!(prlimit(1), DENIED, "a pid namespace's init");
            assert_eq!(prlimit(PID + 1), DENIED);
        }
    }

    #[test]
    fn argument_tests_hold() {
        let program = compile(&Policy::compiled_in(), Arch::X86_64);
        let clone = |flags: u64| call(&program, Arch::X86_64, "clone", [flags, 0, 0, 0, 0, 0]);
        // What glibc asks for a thread, and for fork.
        assert_eq!(clone(0x3D0F00), RET_ALLOW);
        assert_eq!(clone(0x1200011), RET_ALLOW);
        for namespace in [0x20000, 0x2000000, 0x4000000, 0x8000000, 0x10000000, 0x20000000, 0x40000000] {
            assert_eq!(clone(0x1200011 | namespace), DENIED, "{namespace:#x}");
        }
        assert_eq!(call(&program, Arch::X86_64, "clone3", [0; 6]), RET_ERRNO | 38, "ENOSYS");
        let socket = |domain: u64| call(&program, Arch::X86_64, "socket", [domain, 1, 0, 0, 0, 0]);
        assert_eq!(socket(2), RET_ALLOW, "AF_INET");
        assert_eq!(socket(40), DENIED, "AF_VSOCK");
    }

    #[test]
    fn a_rule_denies_if_any_of_its_conditions_holds_and_a_condition_holds_if_all_its_tests_pass() {
        let policy = Policy::parse(
            "[allow]\nx = [\"read\"]\n[[when]]\ncalls = [\"fcntl\"]\n\
             deny_if = [{ argument = 1, is = [8] }, { argument = 1, is = [4], and = { argument = 2, has_any_bit = 0x2000 } }]\n\
             [[when]]\ncalls = [\"ioctl\"]\ndeny_if = { argument = 1, is = [0x8901] }\n",
        )
        .unwrap();
        let program = compile(&policy, Arch::X86_64);
        let fcntl =
            |command: u64, argument: u64| call(&program, Arch::X86_64, "fcntl", [3, command, argument, 0, 0, 0]);
        assert_eq!(fcntl(8, 0), DENIED);
        assert_eq!(fcntl(4, 0x2800), DENIED);
        assert_eq!(fcntl(4, 0x800), RET_ALLOW);
        assert_eq!(fcntl(3, 0x2000), RET_ALLOW);
        let ioctl = |request: u64| call(&program, Arch::X86_64, "ioctl", [3, request, 0, 0, 0, 0]);
        assert_eq!(ioctl(0x8901), DENIED);
        assert_eq!(ioctl(0x8902), RET_ALLOW);
        assert_eq!(call(&program, Arch::X86_64, "read", [0; 6]), RET_ALLOW);
    }

    #[test]
    fn other_abis_of_the_machine_get_nothing() {
        let program = compile(&Policy::compiled_in(), Arch::X86_64);
        const AUDIT_ARCH_I386: u32 = 0x4000_0003;
        assert_eq!(run(&program, AUDIT_ARCH_I386, 3, [0; 6]), DENIED);
        let x32_read = 0x4000_0000;
        assert_eq!(run(&program, Arch::X86_64.audit, x32_read, [0; 6]), DENIED);
    }

    #[test]
    fn a_policy_that_names_a_call_twice_or_a_call_that_does_not_exist_is_refused() {
        let base = "[allow]\nfiles = [\"read\"]\n[deny]\nx = [\"ptrace\"]\n";
        assert!(Policy::parse(base).is_ok());
        let rule = "[[when]]\ncalls = [\"clone3\"]\nfail_with = 38\n";
        assert!(Policy::parse(&format!("{rule}{base}")).is_ok());
        let twice = base.replace("[deny]\nx = [\"ptrace\"]", "[deny]\nx = [\"read\"]");
        assert!(matches!(Policy::parse(&format!("{rule}{twice}")), Err(PolicyError::Twice(name)) if name == "read"));
        let unknown = base.replace("\"read\"", "\"reed\"");
        assert!(
            matches!(Policy::parse(&format!("{rule}{unknown}")), Err(PolicyError::Unknown(name)) if name == "reed")
        );
        let both = "[[when]]\ncalls = [\"kill\"]\nfail_with = 1\nallow_if = { argument = 0, is = [0] }\n";
        assert!(matches!(Policy::parse(&format!("{both}{base}")), Err(PolicyError::Rule(_))));
        let alone =
            "[[when]]\ncalls = [\"kill\"]\nallow_if = { argument = 0, is = [0] }\nalone_in_pid_namespace = \"deny\"\n";
        assert!(matches!(Policy::parse(&format!("{alone}{base}")), Err(PolicyError::Alone(_))));
    }
}
