//! The drivers' side (`sandbox/<driver>`, see `language`), compiled into the binary so
//! that a lone `passk` executable is complete. Below level `full` the driver runs from a
//! copy in the pool's working directory; at `full` the set-up helper writes it into the
//! new root.

use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use super::seccomp;
use crate::language::Language;

/// A digest of the language's driver, its files' names and sources: they decide how a
/// canonical solution's outputs are encoded and compared, so what one driver recorded
/// is for the same driver to read.
pub fn digest(language: &Language) -> String {
    use sha2::Digest;
    let mut hasher = sha2::Sha256::new();
    for (name, text) in language.driver_files() {
        for part in [name, text] {
            hasher.update((part.len() as u64).to_le_bytes());
            hasher.update(part.as_bytes());
        }
    }
    format!("{:x}", hasher.finalize())
}

/// A digest of what judges beside passk's version: the host's driver (which holds every
/// language's serving and judging programs) and the language table's commands. A build
/// from another commit of the same version may judge otherwise, and a resumed run must
/// not mix its verdicts with this one's.
pub fn judging_digest() -> String {
    use sha2::Digest;
    let mut hasher = sha2::Sha256::new();
    hasher.update(digest(Language::python()).as_bytes());
    hasher.update(crate::language::TABLE.as_bytes());
    format!("{:x}", hasher.finalize())
}

/// Each file of the language's driver, by name: its own files and this machine's
/// system-call filters, one of which the driver installs in every candidate.
pub fn files(language: &Language) -> Vec<(&'static str, Vec<u8>)> {
    let mut files: Vec<(&str, Vec<u8>)> =
        language.driver_files().iter().map(|(name, text)| (*name, text.as_bytes().to_vec())).collect();
    files.extend(seccomp::native_programs().into_iter().flatten());
    files
}

/// Writes the language's driver below `dir`, in a directory of the driver's name,
/// readable by every user (a slot's user must read it).
pub fn write(dir: &Path, language: &Language) -> io::Result<()> {
    let package = dir.join(&language.host().driver);
    std::fs::create_dir_all(&package)?;
    for directory in [dir, package.as_path()] {
        std::fs::set_permissions(directory, std::fs::Permissions::from_mode(0o755))?;
    }
    for (name, contents) in files(language) {
        let path = package.join(name);
        std::fs::write(&path, contents)?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644))?;
    }
    Ok(())
}
