//! Where this process's control groups are: read from `/proc/self/cgroup` and
//! `/proc/self/mountinfo`, which say which hierarchy holds which controller, where each
//! is mounted, and where in it this process lives.

use std::path::{Path, PathBuf};

use crate::mountinfo;

/// A mounted hierarchy and this process's group in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hierarchy {
    /// The controllers bound to it (cgroup v1); empty for the unified (v2) hierarchy.
    pub(crate) controllers: Vec<String>,
    /// This process's own group, as a directory of the mounted file system.
    pub(crate) own: PathBuf,
}

/// This process's groups in every mounted hierarchy.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Hierarchies {
    pub(crate) unified: Option<Hierarchy>,
    pub(crate) legacy: Vec<Hierarchy>,
}

impl Hierarchies {
    /// The v1 hierarchy holding `controller`.
    pub(crate) fn legacy_with(&self, controller: &str) -> Option<&Hierarchy> {
        self.legacy.iter().find(|hierarchy| hierarchy.controllers.iter().any(|c| c == controller))
    }
}

/// This process's groups, from the contents of `/proc/self/cgroup` and
/// `/proc/self/mountinfo`. A hierarchy mounted in several places is taken at the first
/// mount that shows this process's group.
pub(crate) fn hierarchies(proc_cgroup: &str, mountinfo: &str) -> Hierarchies {
    let mounts = mountinfo::mounts(mountinfo);
    let mut found = Hierarchies::default();
    for line in proc_cgroup.lines() {
        let mut fields = line.splitn(3, ':');
        let (Some(id), Some(controllers), Some(path)) = (fields.next(), fields.next(), fields.next()) else {
            continue;
        };
        let unified = id == "0" && controllers.is_empty();
        let controllers: Vec<String> = controllers
            .split(',')
            .filter(|c| !c.is_empty())
            .map(|c| c.trim_start_matches("name=").to_owned())
            .collect();
        let own = mounts.iter().find_map(|mount| {
            let matches = if unified {
                mount.kind == "cgroup2"
            } else {
                mount.kind == "cgroup" && controllers.iter().all(|c| mount.options.contains(&c.as_str()))
            };
            if !matches {
                return None;
            }
            // A mount may show only part of the hierarchy (a container's own group).
            let inside = Path::new(path).strip_prefix(mount.root).ok()?;
            Some(mount.point.join(inside))
        });
        let Some(own) = own else { continue };
        if unified {
            found.unified = Some(Hierarchy { controllers: Vec::new(), own });
        } else {
            found.legacy.push(Hierarchy { controllers, own });
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    // As on a host that mounts v1 controllers beside a v2 mount, with the process in a
    // memory group of its own.
    const HYBRID_CGROUP: &str = "9:name=systemd:/\n8:pids:/\n4:memory:/jobs/42\n2:cpu,cpuacct:/\n0::/\n";
    const HYBRID_MOUNTINFO: &str = "\
30 25 0:26 / /sys/fs/cgroup ro,nosuid shared:9 - tmpfs tmpfs ro,mode=755
31 30 0:27 / /sys/fs/cgroup/unified rw,nosuid shared:10 - cgroup2 cgroup2 rw
34 30 0:30 / /sys/fs/cgroup/pids rw,nosuid shared:13 - cgroup cgroup rw,pids
35 30 0:31 / /sys/fs/cgroup/memory rw,nosuid shared:14 - cgroup cgroup rw,memory
36 30 0:32 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid shared:15 - cgroup cgroup rw,cpu,cpuacct
37 30 0:33 / /sys/fs/cgroup/systemd rw,nosuid shared:16 - cgroup cgroup rw,xattr,name=systemd
";

    #[test]
    fn a_hybrid_host_shows_each_v1_controller_where_it_is_mounted() {
        let found = hierarchies(HYBRID_CGROUP, HYBRID_MOUNTINFO);
        assert_eq!(found.unified.as_ref().map(|h| h.own.clone()), Some(PathBuf::from("/sys/fs/cgroup/unified/")));
        assert_eq!(
            found.legacy_with("memory").map(|h| h.own.clone()),
            Some(PathBuf::from("/sys/fs/cgroup/memory/jobs/42"))
        );
        assert_eq!(found.legacy_with("pids").map(|h| h.own.clone()), Some(PathBuf::from("/sys/fs/cgroup/pids/")));
        let cpu = found.legacy_with("cpuacct").expect("cpuacct is mounted");
        assert_eq!(cpu.controllers, ["cpu", "cpuacct"]);
        assert_eq!(cpu.own, PathBuf::from("/sys/fs/cgroup/cpu,cpuacct/"));
        assert!(found.legacy_with("freezer").is_none());
    }

    #[test]
    fn a_container_sees_only_its_own_part_of_the_unified_hierarchy() {
        let found = hierarchies(
            "0::/docker/abc/init\n",
            "700 600 0:40 /docker/abc /sys/fs/cgroup ro,nosuid - cgroup2 cgroup rw,nsdelegate\n",
        );
        assert_eq!(found.unified.map(|h| h.own), Some(PathBuf::from("/sys/fs/cgroup/init")));
        assert!(found.legacy.is_empty());
    }

    #[test]
    fn a_mount_point_with_a_space_is_unescaped() {
        let found = hierarchies("0::/a\n", "1 0 0:1 / /mnt/with\\040space rw - cgroup2 none rw\n");
        assert_eq!(found.unified.map(|h| h.own), Some(PathBuf::from("/mnt/with space/a")));
    }

    #[test]
    fn groups_without_a_visible_mount_are_left_out() {
        let found = hierarchies("4:memory:/x\n0::/\n", "1 0 0:1 / / rw - ext4 /dev/sda rw\n");
        assert_eq!(found, Hierarchies::default());
    }
}
