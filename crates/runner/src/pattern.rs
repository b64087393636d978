//! Shell patterns (`*` any run of characters, `?` any one), as the sandbox's data files
//! write paths and file names.

use std::path::{Component, Path, PathBuf};

/// Whether `name` matches `pattern`.
pub fn matches(pattern: &str, name: &str) -> bool {
    let (pattern, name): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    // Which positions of the pattern the part of the name read so far can have reached.
    let mut reached = vec![false; pattern.len() + 1];
    reached[0] = true;
    let through_stars = |reached: &mut Vec<bool>| {
        for at in 0..pattern.len() {
            if reached[at] && pattern[at] == '*' {
                reached[at + 1] = true;
            }
        }
    };
    through_stars(&mut reached);
    for &c in &name {
        let mut next = vec![false; pattern.len() + 1];
        for at in 0..pattern.len() {
            if !reached[at] {
                continue;
            }
            match pattern[at] {
                '*' => next[at] = true,
                '?' => next[at + 1] = true,
                wanted if wanted == c => next[at + 1] = true,
                _ => {}
            }
        }
        through_stars(&mut next);
        reached = next;
    }
    reached[pattern.len()]
}

/// The existing paths an absolute path `pattern` names, a pattern in any of its parts.
pub fn expand(pattern: &Path) -> Vec<PathBuf> {
    let mut found = vec![PathBuf::from("/")];
    for component in pattern.components() {
        let Component::Normal(part) = component else { continue };
        let part = part.to_string_lossy();
        found = if part.contains(['*', '?']) {
            found
                .iter()
                .filter_map(|dir| std::fs::read_dir(dir).ok())
                .flat_map(|entries| entries.flatten())
                .filter(|entry| matches(&part, &entry.file_name().to_string_lossy()))
                .map(|entry| entry.path())
                .collect()
        } else {
            found.into_iter().map(|dir| dir.join(&*part)).filter(|path| path.exists()).collect()
        };
    }
    found.sort();
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stars_match_any_run_and_question_marks_one_character() {
        assert!(
            matches("a?c*", "abcdef")
                && matches("*", "")
                && matches("*.*", "x.y")
                && matches("*-packages", "site-packages")
        );
        assert!(!matches("a*c", "abd") && !matches("?", "") && !matches("python3*", "python2.7"));
        assert!(matches("*a*a*a*", "banana") && !matches("*a*a*a*a*", "banana"));
    }

    #[test]
    fn a_path_pattern_names_what_exists() {
        let dir = tempfile::tempdir().unwrap();
        for made in ["lib/python3/dist-packages", "lib/python3.11/site-packages", "lib/python3.11/test", "lib/perl5"] {
            std::fs::create_dir_all(dir.path().join(made)).unwrap();
        }
        let pattern = dir.path().join("lib/python3*/*-packages");
        let expected = [dir.path().join("lib/python3.11/site-packages"), dir.path().join("lib/python3/dist-packages")];
        let mut expanded = expand(&pattern);
        expanded.sort();
        let mut expected = expected.to_vec();
        expected.sort();
        assert_eq!(expanded, expected);
        assert_eq!(expand(&dir.path().join("lib/nothing*")), Vec::<PathBuf>::new());
    }
}
