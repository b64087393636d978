//! Candidates that hold memory where a sample's memory limit might not see it.

use passk_tests::{finish, machine_to_myself, passk, read_jsonl, write_jsonl};
use serde_json::json;

use crate::hostile::correct_body;

/// Opens 100 connections on its loopback and fills each until the kernel takes no more,
/// reading nothing, or until it holds far more than the limit of `{limit}` MiB; fails
/// saying how much it parked.
const PARKER: &str = r#"import socket
LIMIT = {limit} << 20
server = socket.create_server(("127.0.0.1", 0), backlog=128)
held, parked = [], 0
chunk = b"x" * (1 << 16)
for _ in range(100):
    client = socket.create_connection(server.getsockname(), timeout=10)
    accepted, _ = server.accept()
    client.setblocking(False)
    held.append((client, accepted))
    while parked < LIMIT + (256 << 20):
        try:
            parked += client.send(chunk)
        except BlockingIOError:
            break
raise AssertionError(f"parked {parked} bytes")
"#;

/// Guards the count of socket buffers: where the kernel keeps them apart from the rest of
/// a sample's memory (cgroup v1), they have a limit of their own as large, and count in
/// `memory_peak_bytes`. Before, a sample under `--memory-limit 256` parked 1 GiB in
/// unread loopback connections, taken from the host, and its peak said 3 MiB.
#[test]
fn socket_buffers_count_against_the_samples_memory() {
    let _machine = machine_to_myself();
    const LIMIT_MIB: u64 = 256;
    let dir = tempfile::tempdir().unwrap();
    let samples = dir.path().join("samples.jsonl");
    let parker = PARKER.replace("{limit}", &LIMIT_MIB.to_string());
    let records = [
        json!({"task_id": "basic/0", "completion": format!("{}{parker}", correct_body())}),
        json!({"task_id": "basic/0", "completion": correct_body()}),
    ];
    write_jsonl(&samples, &records);
    let results = dir.path().join("results.jsonl");
    let finished = finish(
        passk(["evaluate"])
            .arg(&samples)
            .args(["--problems", "basic", "--partial", "--k", "1", "--jobs", "1", "--timeout", "60"])
            .args(["--memory-limit", &LIMIT_MIB.to_string(), "--results"])
            .arg(&results),
    );
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    let line = finished.stdout.lines().find(|line| line.starts_with("  cgroups")).unwrap_or_default();
    if !line.contains("a group per sample") {
        // SAFETY: geteuid has no preconditions.
        assert_ne!(unsafe { libc::geteuid() }, 0, "root gets a control group per sample: {line:?}");
        return;
    }
    assert!(line.contains("socket buffers too") || line.contains("socket buffers apart"), "{line}");
    let results = read_jsonl(&results);
    let (parker, honest) = (&results[0], &results[1]);
    assert_eq!(honest["passed"], true, "the run goes on: {honest}");
    let peak = parker["memory_peak_bytes"].as_u64().unwrap();
    // The kernel lets each connection's buffers go a little past the limit before it
    // refuses more.
    let slack = 32 << 20;
    assert!(peak <= (LIMIT_MIB << 20) + slack, "the limit held: {parker}");
    if ["out-of-memory", "timeout"].contains(&parker["status"].as_str().unwrap()) {
        return;
    }
    let detail = parker["detail"].as_str().unwrap();
    let parked: u64 = detail
        .split_once("parked ")
        .and_then(|(_, rest)| rest.split_once(' '))
        .and_then(|(bytes, _)| bytes.parse().ok())
        .unwrap_or_else(|| panic!("{parker}"));
    assert!(parked <= (LIMIT_MIB << 20) + slack, "it parked no more than the limit: {parker}");
    assert!(peak >= parked, "what it parked counts in its peak: {parker}");
}

/// The body of basic/0 that passes, after holding `mib` MiB for a moment; `tag` keeps
/// each sample's program its own, so that none shares another's verdict.
fn honest_holding(mib: u64, tag: &str) -> String {
    format!("    # {tag}\n    held = b'a' * ({mib} << 20)\n    del held\n{}", correct_body())
}

/// Guards against a candidate leaving the judge holding memory that the next samples on
/// its slot were charged for: the judge outlives its samples and counts against each
/// one's memory, and what a wrong answer's values took there stayed with the process
/// after they were freed (the allocator kept its heap), and so did the classes of the
/// long-named namedtuples it sent. An honest sample that fitted its limit before such a
/// candidate ran out of memory after it. A judge that kept more than a fresh one would
/// is replaced after its sample.
#[test]
fn a_candidate_cannot_leave_the_judge_holding_memory_for_the_next_sample() {
    let _machine = machine_to_myself();
    let heap = "    import pydoc_data.topics\n    return [('x' * 1000 + str(i)) for i in range(300000)] + \
                [pydoc_data.topics]\n";
    let namedtuples = "    big = 'f' * 1100000\n    out = []\n    for i in range(20):\n        \
                       kind = type('S0_%d' % i, (tuple,), {'_fields': (big,), '_make': None})\n        \
                       out.append(kind((1,)))\n    return out\n";
    let completions = [
        honest_holding(880, "before"),
        heap.to_owned(),
        honest_holding(880, "after the heap"),
        namedtuples.to_owned(),
        honest_holding(880, "after the namedtuples"),
    ];
    let dir = tempfile::tempdir().unwrap();
    let samples = dir.path().join("samples.jsonl");
    let records: Vec<_> = completions.iter().map(|c| json!({"task_id": "basic/0", "completion": c})).collect();
    write_jsonl(&samples, &records);
    let results = dir.path().join("results.jsonl");
    let finished = finish(
        passk(["evaluate"])
            .arg(&samples)
            .args(["--problems", "basic", "--partial", "--k", "1", "--jobs", "1", "--timeout", "60", "--no-dedup"])
            .args(["--memory-limit", "1024", "--results"])
            .arg(&results),
    );
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    let results = read_jsonl(&results);
    let statuses: Vec<&str> = results.iter().map(|r| r["status"].as_str().unwrap()).collect();
    assert_eq!(statuses, ["passed", "failed", "passed", "failed", "passed"], "{results:#?}");
}
