//! What a number needs to be traced to its run: hashes of the inputs, times, the machine.

use std::io::Read;
use std::path::Path;

use sha2::{Digest, Sha256};

fn hex(digest: impl AsRef<[u8]>) -> String {
    digest.as_ref().iter().map(|byte| format!("{byte:02x}")).collect()
}

pub fn sha256_bytes(bytes: &[u8]) -> String {
    hex(Sha256::digest(bytes))
}

/// The SHA-256 of a file's bytes, as stored (compressed files are not decompressed).
pub fn sha256_file(path: &Path) -> std::io::Result<String> {
    let mut file = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0; 1 << 16];
    loop {
        let read = file.read(&mut buffer)?;
        if read == 0 {
            return Ok(hex(hasher.finalize()));
        }
        hasher.update(&buffer[..read]);
    }
}

/// Now, in RFC 3339 (UTC, to the second).
pub fn now() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

pub fn cpus() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}
