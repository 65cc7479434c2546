//! Replays every file of `fuzz/regressions/<target>/` (inputs that once
//! broke a property) and `fuzz/seeds/<target>/` through the same property
//! checks the cargo-fuzz targets run (`xmd::fuzzing`), on stable Rust.

use std::path::{Path, PathBuf};

use xmd::fuzzing::TARGETS;

fn files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    out.sort();
    out
}

/// Runs every file under `fuzz/<kind>/<target>/`; returns how many ran.
fn replay(kind: &str) -> usize {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz")
        .join(kind);
    let mut ran = 0;
    let mut failed = Vec::new();
    for target in &TARGETS {
        for file in files(&root.join(target.name)) {
            let data = std::fs::read(&file).unwrap();
            let check = target.check;
            if std::panic::catch_unwind(|| check(&data)).is_err() {
                failed.push(file.display().to_string());
            }
            ran += 1;
        }
    }
    assert!(failed.is_empty(), "property violated by {failed:#?}");
    ran
}

#[test]
fn every_target_has_seeds_and_all_pass() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds");
    for target in &TARGETS {
        assert!(
            !files(&root.join(target.name)).is_empty(),
            "no seeds for {}",
            target.name
        );
    }
    assert!(replay("seeds") >= TARGETS.len());
}

#[test]
fn regressions_still_pass() {
    replay("regressions");
}

#[test]
fn empty_and_tiny_inputs_pass() {
    for target in &TARGETS {
        for data in [&b""[..], b"\0", b"\xff", b"\xff\xff\xff\xff\xff\xff"] {
            (target.check)(data);
        }
    }
}
