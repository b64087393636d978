//! Files passk writes. Nothing is left at a final path until it is complete: a file is
//! written under a `.partial` name beside it and renamed into place once synced.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

fn partial_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".partial");
    PathBuf::from(name)
}

pub fn write_atomically(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    let partial = partial_path(path);
    let mut file = File::create(&partial)?;
    file.write_all(contents)?;
    file.sync_all()?;
    std::fs::rename(&partial, path)
}

/// A JSON Lines file written one whole, flushed line at a time.
#[derive(Debug)]
pub struct LineWriter {
    path: PathBuf,
    partial: PathBuf,
    file: BufWriter<File>,
}

impl LineWriter {
    pub fn create(path: &Path) -> std::io::Result<LineWriter> {
        let partial = partial_path(path);
        let file = BufWriter::new(File::create(&partial)?);
        Ok(LineWriter { path: path.to_owned(), partial, file })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn write(&mut self, value: &serde_json::Value) -> std::io::Result<()> {
        serde_json::to_writer(&mut self.file, value).map_err(std::io::Error::other)?;
        self.file.write_all(b"\n")?;
        self.file.flush()
    }

    /// Syncs the file and moves it to its final name.
    pub fn finish(mut self) -> std::io::Result<()> {
        self.file.flush()?;
        self.file.get_ref().sync_all()?;
        std::fs::rename(&self.partial, &self.path)
    }
}
