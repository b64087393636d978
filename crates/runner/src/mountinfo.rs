//! `/proc/self/mountinfo`, read by two parts of the runner: the control groups (where
//! each hierarchy is mounted) and the sandbox's set-up (the mounts below a bind).

use std::path::PathBuf;

/// One mount: where it stands, the path of its file system it shows, its type, and its
/// file system's options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Mount<'a> {
    pub(crate) point: PathBuf,
    pub(crate) root: &'a str,
    pub(crate) kind: &'a str,
    pub(crate) options: Vec<&'a str>,
}

/// Every mount in a mountinfo text, in order.
pub(crate) fn mounts(mountinfo: &str) -> Vec<Mount<'_>> {
    mountinfo
        .lines()
        .filter_map(|line| {
            // "id parent major:minor root point options [optional...] - type source super"
            let (before, after) = line.split_once(" - ")?;
            let fields: Vec<&str> = before.split(' ').collect();
            let mut after = after.split(' ');
            let kind = after.next()?;
            let options = after.nth(1).unwrap_or_default().split(',').collect();
            Some(Mount { point: PathBuf::from(unescape(fields.get(4)?)), root: fields.get(3)?, kind, options })
        })
        .collect()
}

/// mountinfo escapes spaces, tabs, newlines and backslashes as octal.
fn unescape(field: &str) -> String {
    let mut out = String::with_capacity(field.len());
    let mut rest = field;
    while let Some(at) = rest.find('\\') {
        out.push_str(&rest[..at]);
        let code = rest.get(at + 1..at + 4).and_then(|digits| u8::from_str_radix(digits, 8).ok());
        match code {
            Some(byte) => {
                out.push(char::from(byte));
                rest = &rest[at + 4..];
            }
            None => {
                out.push('\\');
                rest = &rest[at + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_mount_is_read_with_its_point_unescaped() {
        let text = "\
22 1 0:21 / /proc rw,nosuid - proc proc rw
86 69 254:0 /containers/abc/hosts /etc/hosts rw - ext4 /dev/vda rw,discard
1 0 0:1 / /mnt/with\\040space rw - cgroup2 none rw,nsdelegate
";
        let found = mounts(text);
        assert_eq!(found.len(), 3);
        assert_eq!(found[1].point, PathBuf::from("/etc/hosts"));
        assert_eq!(found[1].root, "/containers/abc/hosts");
        assert_eq!(found[1].kind, "ext4");
        assert_eq!(found[2].point, PathBuf::from("/mnt/with space"));
        assert_eq!(found[2].options, ["rw", "nsdelegate"]);
    }
}
