//! A language's toolchain, found once per run: its executables resolved on the PATH,
//! its version read and checked, and the build and run commands with them in place.
//! Finding it before anything runs is what turns a missing compiler into one line that
//! names the package to install, rather than a failed build in every sample.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde::Serialize;
use thiserror::Error;
use wait_timeout::ChildExt;

use crate::language::{AddressLimited, Artifact, Header, Language, Library, Prebuilt};

/// How long a toolchain may take to print its version (a JVM starts in under a second).
const VERSION_LIMIT: Duration = Duration::from_secs(30);

/// A language's toolchain as this machine has it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Toolchain {
    pub language: String,
    /// The toolchain's executable, resolved.
    pub path: PathBuf,
    pub version: String,
    /// What runs the programs it builds, where that is another executable (see
    /// `ProgramRule::runtime`).
    pub runtime: Option<RuntimeFound>,
    /// The build's command, its executable resolved (empty where nothing is built);
    /// `{source}` stands for the source's file.
    pub compile: Vec<String>,
    /// The run's command, its executable resolved (empty: the artifact itself).
    pub run: Vec<String>,
    pub source: String,
    pub artifact: Artifact,
    /// The commands that serve a function's calls and judge its tests (see
    /// `ProgramRule`), their executables resolved; empty where the language has none.
    pub serve: Vec<String>,
    pub judge: Vec<String>,
    /// How a compiled language's function completions are assembled and their tests
    /// built and run (see `ProgramRule`).
    pub assembly: Option<String>,
    pub serve_compile: Vec<String>,
    pub judge_compile: Vec<String>,
    pub judge_run: Vec<String>,
    /// The commands that compile the serving code and the candidate's apart and link
    /// them (see `ProgramRule`); empty where they are compiled as one source.
    pub object_compile: Vec<String>,
    pub link: Vec<String>,
    /// The resident compiler's command (see `ProgramRule`), its executable resolved.
    pub resident: Vec<String>,
    pub libraries: Vec<Library>,
    pub address_limited: Vec<AddressLimited>,
    /// The directory of libraries passk built for the language's programs (see
    /// `Prebuilt`), which the sandbox shows read-only; its path is in the commands.
    pub prebuilt: Option<PathBuf>,
    /// The precompiled headers there, which the driver puts in place of a source's first
    /// lines where they are the header's.
    pub precompiled: Vec<Header>,
}

/// A language's runtime as this machine has it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RuntimeFound {
    /// Its executable's name, as the language names it.
    pub name: String,
    pub version: String,
}

#[derive(Debug, Error)]
pub enum ToolchainError {
    #[error("{language} needs `{executable}`, which is not on the PATH: install Debian's package {package} (apt-get install {package})")]
    Missing { language: String, executable: String, package: String },
    #[error("{language}: `{path} {args}` did not print a version ({why}); is it Debian's package {package}?")]
    NoVersion { language: String, path: String, args: String, why: String, package: String },
    #[error(
        "{language}: {path} is version {version}, and passk needs {minimum} or later (Debian's package {package})"
    )]
    TooOld { language: String, path: String, version: String, minimum: String, package: String },
    #[error("passk does not judge function completions in {language} yet, only its standard-input programs")]
    NoFunctionJudge { language: String },
    #[error("{language} is passk's host language, whose interpreter runs the driver: it has no program toolchain")]
    Host { language: String },
    #[error("{language}: cannot build the libraries its programs use into {dir} ({why}); are Debian's packages {packages} installed?")]
    Prebuilt { language: String, dir: String, why: String, packages: String },
}

impl Toolchain {
    /// Finds `language`'s toolchain on `path` (the PATH's directories), and builds the
    /// libraries its programs use into passk's cache directory `cache` where they are
    /// not there yet, first telling `building` the language and the directory (a build
    /// takes up to a minute).
    pub fn find(
        language: &'static Language,
        path: &[PathBuf],
        cache: &Path,
        building: &dyn Fn(&str, &Path),
    ) -> Result<Toolchain, ToolchainError> {
        let rule = language.program.as_ref().ok_or_else(|| ToolchainError::Host { language: language.name.clone() })?;
        let resolve = |executable: &str| -> Result<PathBuf, ToolchainError> {
            lookup(executable, path).ok_or_else(|| ToolchainError::Missing {
                language: language.name.clone(),
                executable: executable.to_owned(),
                package: language.package.clone(),
            })
        };
        let toolchain = resolve(&language.toolchain)?;
        let version = read_version(language, &toolchain, &language.version)?;
        if !language.supports(&version) {
            return Err(ToolchainError::TooOld {
                language: language.name.clone(),
                path: toolchain.display().to_string(),
                version,
                minimum: language.minimum_version.clone(),
                package: language.package.clone(),
            });
        }
        let prebuilt = match &rule.prebuilt {
            Some(prebuilt) => {
                Some(build_prebuilt(language, &version, prebuilt, &resolve(&prebuilt.start[0])?, cache, building)?)
            }
            None => None,
        };
        let resolved = |command: &[String]| -> Result<Vec<String>, ToolchainError> {
            let Some((executable, args)) = command.split_first() else { return Ok(Vec::new()) };
            let mut resolved = vec![resolve(executable)?.display().to_string()];
            // `{source}` is left for the driver, which names a Java file by its public class.
            resolved.extend(args.iter().map(|arg| match &prebuilt {
                Some(dir) => arg.replace("{prebuilt}", &dir.display().to_string()),
                None => arg.clone(),
            }));
            Ok(resolved)
        };
        let runtime = match &rule.runtime {
            Some(runtime) => Some(RuntimeFound {
                name: runtime.command.clone(),
                version: read_version(language, &resolve(&runtime.command)?, &runtime.version)?,
            }),
            None => None,
        };
        let resident = resolved(&rule.resident)?
            .into_iter()
            .map(|arg| arg.replace("{toolchain}", &toolchain.display().to_string()))
            .collect();
        Ok(Toolchain {
            language: language.name.clone(),
            path: toolchain,
            version,
            runtime,
            compile: resolved(&rule.compile)?,
            run: resolved(&rule.run)?,
            source: rule.source.clone(),
            artifact: rule.artifact.clone(),
            serve: resolved(&rule.serve)?,
            judge: resolved(&rule.judge)?,
            assembly: rule.assembly.clone(),
            serve_compile: resolved(&rule.serve_compile)?,
            judge_compile: resolved(&rule.judge_compile)?,
            judge_run: resolved(&rule.judge_run)?,
            object_compile: resolved(&rule.object_compile)?,
            link: resolved(&rule.link)?,
            resident,
            libraries: rule.libraries.clone(),
            address_limited: rule.address_limited.clone(),
            precompiled: rule.prebuilt.as_ref().map(|prebuilt| prebuilt.headers.clone()).unwrap_or_default(),
            prebuilt,
        })
    }

    /// Whether function completions are judged in this language: by a judging program,
    /// or by a tests' program its assembly module makes.
    pub fn judges_functions(&self) -> bool {
        !self.judge.is_empty() || self.assembly.is_some()
    }

    /// The directories of the PATH passk itself was started with.
    pub fn search_path() -> Vec<PathBuf> {
        std::env::var_os("PATH").map(|path| std::env::split_paths(&path).collect()).unwrap_or_default()
    }
}

/// The directory of `prebuilt`'s libraries for `language`'s toolchain at `version`, in
/// passk's cache directory `cache`: built there first where it is missing. A build fills
/// a directory of its own, renamed into place once complete, so that a run never finds
/// half a directory, and runs that build at once each keep their own or the first.
fn build_prebuilt(
    language: &Language,
    version: &str,
    prebuilt: &Prebuilt,
    executable: &Path,
    cache: &Path,
    building: &dyn Fn(&str, &Path),
) -> Result<PathBuf, ToolchainError> {
    use sha2::{Digest, Sha256};
    use std::os::unix::fs::PermissionsExt;
    // What is copied from the driver is part of the recipe: a changed wire is built anew.
    let copied: Vec<(&str, &str)> = prebuilt
        .driver_files
        .iter()
        .map(|name| (name.as_str(), Language::python().driver_file(name).unwrap_or_default()))
        .collect();
    let recipe = serde_json::to_vec(&(&prebuilt.start, &prebuilt.builds, &prebuilt.headers, &copied))
        .expect("strings serialize");
    let digest: String = Sha256::digest(&recipe).iter().take(8).map(|byte| format!("{byte:02x}")).collect();
    let parent = cache.join("prebuilt");
    let dir = parent.join(format!("{}-{version}-{digest}", language.name));
    if dir.is_dir() {
        return Ok(dir);
    }
    let failed = |why: String| ToolchainError::Prebuilt {
        language: language.name.clone(),
        dir: dir.display().to_string(),
        why,
        packages: prebuilt.packages.join(", "),
    };
    building(&language.name, &dir);
    std::fs::create_dir_all(&parent).map_err(|error| failed(error.to_string()))?;
    let building = tempfile::Builder::new()
        .prefix(&format!(".{}-", language.name))
        .tempdir_in(&parent)
        .map_err(|error| failed(error.to_string()))?;
    let into = building.path().display().to_string();
    for header in &prebuilt.headers {
        let text: String = header.lines.iter().map(|line| format!("{line}\n")).collect();
        std::fs::write(building.path().join(&header.name), text).map_err(|error| failed(error.to_string()))?;
    }
    for (name, text) in &copied {
        std::fs::write(building.path().join(name), text).map_err(|error| failed(error.to_string()))?;
    }
    for build in &prebuilt.builds {
        let output = Command::new(executable)
            .args(prebuilt.start[1..].iter().chain(build).map(|arg| arg.replace("{prebuilt}", &into)))
            .stdin(Stdio::null())
            .output()
            .map_err(|error| failed(error.to_string()))?;
        if !output.status.success() {
            let said = String::from_utf8_lossy(&output.stderr);
            let first = said.lines().find(|line| line.starts_with("error")).or_else(|| said.lines().next());
            return Err(failed(format!("`{}` failed: {}", build.join(" "), first.unwrap_or("no message"))));
        }
    }
    // The sandbox's users read it, which the temporary directory's mode would not let.
    std::fs::set_permissions(building.path(), std::fs::Permissions::from_mode(0o755))
        .map_err(|error| failed(error.to_string()))?;
    match std::fs::rename(building.path(), &dir) {
        Ok(()) => {
            let _ = building.keep();
            Ok(dir)
        }
        // Another run's build was there first.
        Err(_) if dir.is_dir() => Ok(dir),
        Err(error) => Err(failed(error.to_string())),
    }
}

/// `executable` on `path`, as a canonical path (a name with a slash is taken as it is).
fn lookup(executable: &str, path: &[PathBuf]) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let runnable = |candidate: &Path| {
        candidate.metadata().is_ok_and(|metadata| metadata.is_file() && metadata.permissions().mode() & 0o111 != 0)
    };
    if executable.contains('/') {
        let candidate = Path::new(executable);
        return runnable(candidate).then(|| candidate.canonicalize().ok()).flatten();
    }
    path.iter().map(|dir| dir.join(executable)).find(|candidate| runnable(candidate))?.canonicalize().ok()
}

/// The version `executable` of `language`'s toolchain prints when given `args`, as its
/// first `major.minor[.patch]`.
fn read_version(language: &Language, executable: &Path, args: &[String]) -> Result<String, ToolchainError> {
    let failed = |why: String| ToolchainError::NoVersion {
        language: language.name.clone(),
        path: executable.display().to_string(),
        args: args.join(" "),
        why,
        package: language.package.clone(),
    };
    let mut child = Command::new(executable)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|error| failed(error.to_string()))?;
    // Its output is a line or two: it fits the pipes while the child is waited for.
    match child.wait_timeout(VERSION_LIMIT).map_err(|error| failed(error.to_string()))? {
        Some(_) => {}
        None => {
            let _ = child.kill();
            let _ = child.wait();
            return Err(failed(format!("still running after {} s", VERSION_LIMIT.as_secs())));
        }
    }
    let output = child.wait_with_output().map_err(|error| failed(error.to_string()))?;
    // javac -version printed on standard error before Java 9, java -version still does.
    let text = format!("{}\n{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    first_version(&text).ok_or_else(|| failed(format!("it printed {:?}", text.trim())))
}

/// The first `digits.digits[.digits]` in `text`.
fn first_version(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        // Glued to a `v` (node's v20.1.0) or to `go` (go1.19.8).
        let glued = bytes[..at].ends_with(b"v") || bytes[..at].ends_with(b"go");
        if bytes[at].is_ascii_digit() && (at == 0 || glued || !bytes[at - 1].is_ascii_alphanumeric()) {
            let end = at + text[at..].find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(text.len() - at);
            let found = text[at..end].trim_end_matches('.');
            if found.contains('.') {
                return Some(found.to_owned());
            }
            at = end;
        } else {
            at += 1;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_read_as_each_toolchain_prints_them() {
        assert_eq!(first_version("12.2.0\n").as_deref(), Some("12.2.0"));
        assert_eq!(first_version("javac 17.0.15\n").as_deref(), Some("17.0.15"));
        assert_eq!(first_version("v20.20.2\n").as_deref(), Some("20.20.2"));
        assert_eq!(
            first_version("GNU bash, version 5.2.15(1)-release (x86_64-pc-linux-gnu)").as_deref(),
            Some("5.2.15")
        );
        assert_eq!(first_version("openjdk version \"17.0.15\" 2025-04-15").as_deref(), Some("17.0.15"));
        assert_eq!(first_version("x86_64 build 7").as_deref(), None);
        assert_eq!(first_version("go version go1.19.8 linux/amd64").as_deref(), Some("1.19.8"));
    }

    /// A missing compiler is one line naming the package, before anything runs.
    #[test]
    fn a_toolchain_missing_from_the_path_names_its_package() {
        let cpp = Language::named("cpp").unwrap();
        let error =
            Toolchain::find(cpp, &[PathBuf::from("/nonexistent")], Path::new("/nonexistent"), &|_, _| {}).unwrap_err();
        assert_eq!(
            error.to_string(),
            "cpp needs `g++`, which is not on the PATH: install Debian's package g++ (apt-get install g++)"
        );
    }

    #[test]
    fn the_host_has_no_program_toolchain() {
        assert!(matches!(
            Toolchain::find(Language::python(), &Toolchain::search_path(), Path::new("/nonexistent"), &|_, _| {}),
            Err(ToolchainError::Host { .. })
        ));
    }
}
