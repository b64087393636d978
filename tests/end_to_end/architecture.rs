//! The invariants `ARCHITECTURE.md` states, checked on the source itself: crates depend
//! on each other one way only, no crate has a cycle among its modules, and only the CLI
//! prints. Each check names what breaks it, so that a change that would blur the
//! architecture fails here rather than in review.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every crate of the workspace, by package name, with the passk crates it may use.
/// A crate listed later may use those before it, never the other way.
const LAYERS: [(&str, &str, &[&str]); 8] = [
    ("passk-runner", "runner", &[]),
    ("passk-scorer", "scorer", &[]),
    ("passk-formats", "formats", &["passk-runner"]),
    ("passk-report", "report", &["passk-formats", "passk-scorer"]),
    ("passk-eval", "eval", &["passk-formats", "passk-report", "passk-runner"]),
    ("passk-serve", "serve", &["passk-eval", "passk-formats", "passk-runner", "passk-scorer"]),
    ("passk-generate", "generate", &["passk-formats", "passk-runner"]),
    (
        "passk-cli",
        "cli",
        &[
            "passk-eval",
            "passk-formats",
            "passk-generate",
            "passk-report",
            "passk-runner",
            "passk-scorer",
            "passk-serve",
        ],
    ),
];

fn crate_dir(folder: &str) -> PathBuf {
    passk_tests::repo_root().join("crates").join(folder)
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|extension| extension == "rs") {
            files.push(path);
        }
    }
    files.sort();
    files
}

/// The passk crates a crate's manifest depends on (dev-dependencies aside).
fn passk_dependencies(folder: &str) -> BTreeSet<String> {
    let manifest = std::fs::read_to_string(crate_dir(folder).join("Cargo.toml")).unwrap();
    let mut in_dependencies = false;
    let mut found = BTreeSet::new();
    for line in manifest.lines() {
        if line.starts_with('[') {
            in_dependencies = line.trim() == "[dependencies]";
        } else if in_dependencies && line.starts_with("passk-") {
            found.insert(line.split(['.', ' ', '=']).next().unwrap().to_owned());
        }
    }
    found
}

#[test]
fn crates_depend_on_each_other_one_way() {
    let workspace = std::fs::read_to_string(passk_tests::repo_root().join("Cargo.toml")).unwrap();
    for (name, folder, allowed) in LAYERS {
        assert!(workspace.contains(&format!("\"crates/{folder}\"")), "{name} is not a workspace member");
        let allowed: BTreeSet<String> = allowed.iter().map(|name| (*name).to_owned()).collect();
        let used = passk_dependencies(folder);
        let beyond: Vec<&String> = used.difference(&allowed).collect();
        assert!(beyond.is_empty(), "{name} depends on {beyond:?}, which ARCHITECTURE.md puts above it");
    }
    let members = workspace.lines().find(|line| line.starts_with("members")).unwrap();
    assert_eq!(
        members.matches("\"crates/").count(),
        LAYERS.len(),
        "a crate is missing from LAYERS, which says where it sits: {members}"
    );
}

/// The top-level module a file belongs to (`evaluate` for `src/evaluate/run.rs`), or
/// None for the crate root.
fn top_module(src: &Path, file: &Path) -> Option<String> {
    let relative = file.strip_prefix(src).unwrap();
    let first = relative.components().next()?.as_os_str().to_str()?.trim_end_matches(".rs").to_owned();
    (!matches!(first.as_str(), "lib" | "main")).then_some(first)
}

/// The module graph of a crate: which top-level module names which through `crate::`.
fn module_graph(folder: &str) -> BTreeMap<String, BTreeSet<String>> {
    let src = crate_dir(folder).join("src");
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in rust_files(&src) {
        let Some(module) = top_module(&src, &file) else { continue };
        let text = std::fs::read_to_string(&file).unwrap();
        let edges = graph.entry(module.clone()).or_default();
        for (at, _) in text.match_indices("crate::") {
            let named: String =
                text[at + "crate::".len()..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            // `$crate::` in a macro names the crate's root, as `crate::` does.
            if !named.is_empty() && named != module && named.chars().next().is_some_and(|c| c.is_ascii_lowercase()) {
                edges.insert(named);
            }
        }
    }
    graph
}

/// A cycle in `graph`, if it has one, as the modules along it.
fn a_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(start) = path.iter().position(|on| on == node) {
            let mut cycle = path[start..].to_vec();
            cycle.push(node.to_owned());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_owned());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    graph.keys().find_map(|node| visit(node, graph, &mut Vec::new(), &mut done))
}

#[test]
fn no_crate_has_a_cycle_among_its_modules() {
    for (name, folder, _) in LAYERS {
        let graph = module_graph(folder);
        assert!(graph.len() > 1 || folder == "scorer", "{name}: no modules found, so nothing was checked");
        if let Some(cycle) = a_cycle(&graph) {
            panic!("{name}: its modules import each other in a cycle: {}", cycle.join(" -> "));
        }
    }
}

/// The checker itself: a cycle planted in a graph is found.
#[test]
fn the_cycle_check_finds_a_planted_cycle() {
    let graph: BTreeMap<String, BTreeSet<String>> =
        [("a", vec!["b"]), ("b", vec!["c"]), ("c", vec!["a"]), ("d", vec![])]
            .into_iter()
            .map(|(node, edges)| (node.to_owned(), edges.into_iter().map(str::to_owned).collect()))
            .collect();
    assert_eq!(a_cycle(&graph), Some(vec!["a".into(), "b".into(), "c".into(), "a".into()]));
}

/// The libraries never print: what a run says goes out as events, and only the CLI
/// decides where. The one exception is the runner's sandbox helper, a process of its
/// own (`passk __sandbox-exec`) whose only way to say why it could not start the
/// interpreter is its standard error, which the runner reads.
#[test]
fn only_the_cli_prints() {
    let printing = ["println!", "eprintln!", "print!(", "eprint!(", "stdout()", "stderr()", "dbg!("];
    for (name, folder, _) in LAYERS.iter().filter(|(name, ..)| *name != "passk-cli") {
        let src = crate_dir(folder).join("src");
        for file in rust_files(&src) {
            let text = std::fs::read_to_string(&file).unwrap();
            for (number, line) in text.lines().enumerate() {
                let code = line.split("//").next().unwrap();
                let Some(found) = printing.iter().find(|call| code.contains(*call)) else { continue };
                let helper = file.ends_with("sandbox/mod.rs") && code.contains("eprintln!(\"passk sandbox: {}\"");
                assert!(helper, "{name} prints ({found}) at {}:{}: {line}", file.display(), number + 1);
            }
        }
    }
}
