//! Compiles the drivers in: every directory of `sandbox/` is a driver, and each of its
//! files becomes an entry of `DRIVERS`, so that a lone `passk` executable is complete and
//! a language's driver is added by adding its files.

use std::fmt::Write;
use std::path::Path;

fn main() {
    let sandbox = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../sandbox");
    println!("cargo:rerun-if-changed={}", sandbox.display());
    let mut drivers: Vec<_> = std::fs::read_dir(&sandbox)
        .expect("sandbox/ is readable")
        .map(|entry| entry.expect("sandbox/ lists").path())
        .filter(|path| path.is_dir())
        .collect();
    drivers.sort();
    let mut code = String::from("pub const DRIVERS: &[(&str, &[(&str, &str)])] = &[\n");
    for driver in drivers {
        let mut files: Vec<_> = std::fs::read_dir(&driver)
            .expect("a driver's directory is readable")
            .map(|entry| entry.expect("a driver's directory lists").path())
            // Not what a toolchain leaves beside its sources: hidden files, Python's caches.
            .filter(|path| {
                let name = name_of(path);
                path.is_file() && !name.starts_with('.') && !name.ends_with(".pyc")
            })
            .collect();
        files.sort();
        let name = name_of(&driver);
        writeln!(code, "    ({name:?}, &[").expect("a String takes writes");
        for file in files {
            let file_name = name_of(&file);
            let path = file.canonicalize().expect("a driver's file resolves");
            writeln!(code, "        ({file_name:?}, include_str!({:?})),", path.display().to_string())
                .expect("a String takes writes");
        }
        code.push_str("    ]),\n");
    }
    code.push_str("];\n");
    let out = Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("drivers.rs");
    std::fs::write(out, code).expect("OUT_DIR is writable");
}

fn name_of(path: &Path) -> String {
    path.file_name().and_then(|name| name.to_str()).expect("sandbox/'s names are UTF-8").to_owned()
}
