//! The interpreter side (`sandbox/passk_driver`), compiled into the binary so that a lone
//! `passk` executable is complete. Below level `full` the driver runs from a copy in the
//! pool's working directory; at `full` the set-up helper writes it into the new root.

use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use super::seccomp;

/// The package's name, and so its directory's.
pub const PACKAGE: &str = "passk_driver";

/// Each module of the package, by name.
pub const MODULES: [(&str, &str); 20] = [
    ("__init__.py", include_str!("../../../../sandbox/passk_driver/__init__.py")),
    ("worker.py", include_str!("../../../../sandbox/passk_driver/worker.py")),
    ("sample.py", include_str!("../../../../sandbox/passk_driver/sample.py")),
    ("candidate.py", include_str!("../../../../sandbox/passk_driver/candidate.py")),
    ("judge.py", include_str!("../../../../sandbox/passk_driver/judge.py")),
    ("judge_process.py", include_str!("../../../../sandbox/passk_driver/judge_process.py")),
    ("harness_link.py", include_str!("../../../../sandbox/passk_driver/harness_link.py")),
    ("sources.py", include_str!("../../../../sandbox/passk_driver/sources.py")),
    ("kept.py", include_str!("../../../../sandbox/passk_driver/kept.py")),
    ("calls.py", include_str!("../../../../sandbox/passk_driver/calls.py")),
    ("evalplus.py", include_str!("../../../../sandbox/passk_driver/evalplus.py")),
    ("expected.py", include_str!("../../../../sandbox/passk_driver/expected.py")),
    ("stdio.py", include_str!("../../../../sandbox/passk_driver/stdio.py")),
    ("wire.py", include_str!("../../../../sandbox/passk_driver/wire.py")),
    ("handles.py", include_str!("../../../../sandbox/passk_driver/handles.py")),
    ("seccomp.py", include_str!("../../../../sandbox/passk_driver/seccomp.py")),
    ("confine.py", include_str!("../../../../sandbox/passk_driver/confine.py")),
    ("cleanup.py", include_str!("../../../../sandbox/passk_driver/cleanup.py")),
    ("forking.py", include_str!("../../../../sandbox/passk_driver/forking.py")),
    ("cgroup.py", include_str!("../../../../sandbox/passk_driver/cgroup.py")),
];

/// A digest of the package's modules, names and sources: they decide how a canonical
/// solution's outputs are encoded and compared, so what one driver recorded is for the
/// same driver to read.
pub fn digest() -> String {
    use sha2::Digest;
    let mut hasher = sha2::Sha256::new();
    for (name, text) in MODULES {
        for part in [name, text] {
            hasher.update((part.len() as u64).to_le_bytes());
            hasher.update(part.as_bytes());
        }
    }
    format!("{:x}", hasher.finalize())
}

/// What `python -I -c` runs: the package's directory comes first in the arguments,
/// since `-I` puts no script directory on the path.
pub const BOOT: &str =
    "import sys; sys.path.insert(0, sys.argv[1]); from passk_driver import worker; worker.main(sys.argv[2:])";

/// Each file of the package, by name: its modules and this machine's system-call
/// filters, one of which the driver installs in every candidate.
pub fn files() -> Vec<(&'static str, Vec<u8>)> {
    let mut files: Vec<(&str, Vec<u8>)> =
        MODULES.iter().map(|(name, text)| (*name, text.as_bytes().to_vec())).collect();
    files.extend(seccomp::native_programs().into_iter().flatten());
    files
}

/// Writes the package below `dir`, readable by every user (a slot's user must import it).
pub fn write(dir: &Path) -> io::Result<()> {
    let package = dir.join(PACKAGE);
    std::fs::create_dir_all(&package)?;
    for directory in [dir, package.as_path()] {
        std::fs::set_permissions(directory, std::fs::Permissions::from_mode(0o755))?;
    }
    for (name, contents) in files() {
        let path = package.join(name);
        std::fs::write(&path, contents)?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Guards against a module of the package left out of the binary.
    #[test]
    fn every_module_of_the_package_is_compiled_in() {
        let directory = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../sandbox").join(PACKAGE);
        let mut on_disk: Vec<String> = std::fs::read_dir(directory)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().into_string().unwrap())
            .filter(|name| name.ends_with(".py"))
            .collect();
        on_disk.sort();
        let mut compiled: Vec<String> = MODULES.iter().map(|(name, _)| (*name).to_owned()).collect();
        compiled.sort();
        assert_eq!(compiled, on_disk);
    }
}
