//! The port's promises, natively: one name per call, no link followed, special files
//! never opened, and what is opened checked on the descriptor.
#![allow(clippy::unwrap_used)]

use std::fs;
use std::os::unix::fs::symlink;

use super::*;

fn setup() -> (tempfile::TempDir, Dir) {
    let t = tempfile::tempdir().unwrap();
    let r = t.path().join("repo");
    fs::create_dir_all(r.join("sub")).unwrap();
    fs::write(r.join("sub/a.txt"), "inside\n").unwrap();
    fs::write(r.join(".env"), "SECRET=1\n").unwrap();
    fs::write(t.path().join("outside.txt"), "outside\n").unwrap();
    symlink("sub/a.txt", r.join("alias")).unwrap();
    symlink("sub", r.join("subdir")).unwrap();
    symlink("../outside.txt", r.join("up")).unwrap();
    let d = Dir::open_ambient(&r).unwrap();
    (t, d)
}

#[test]
fn names_must_be_single_components() {
    let (_t, d) = setup();
    for bad in ["", ".", "..", "sub/a.txt", "/etc", "a\0b"] {
        assert_eq!(
            d.stat_at(bad).unwrap_err().kind(),
            io::ErrorKind::InvalidInput,
            "{bad:?}"
        );
        assert!(d.open_file(bad).is_err(), "{bad:?}");
        assert!(d.create_new(bad, b"x").is_err(), "{bad:?}");
    }
    // Positive control: a plain name works.
    let sub = d.open_dir("sub").unwrap();
    assert_eq!(sub.read_file("a.txt", 100).unwrap().0, b"inside\n");
}

#[test]
fn symlinks_are_entries_never_followed() {
    let (_t, d) = setup();
    assert_eq!(d.stat_at("alias").unwrap().unwrap().ty, EntryType::Symlink);
    assert!(d.open_file("alias").is_err());
    assert!(d.open_file("up").is_err());
    assert!(d.open_dir("subdir").is_err());
    assert_eq!(d.read_link("alias").unwrap(), "sub/a.txt");
    // Creating a file where a (dangling or not) link stands fails, and writes nothing
    // through it.
    symlink("../created.txt", _t.path().join("repo/dangling")).unwrap();
    assert!(d.create_new("dangling", b"x").is_err());
    assert!(d.create_new("up", b"x").is_err());
    assert!(!_t.path().join("created.txt").exists());
    assert_eq!(
        fs::read_to_string(_t.path().join("outside.txt")).unwrap(),
        "outside\n"
    );
}

#[test]
fn special_files_are_refused_without_blocking() {
    let (t, d) = setup();
    let made = std::process::Command::new("mkfifo")
        .arg(t.path().join("repo/pipe"))
        .status()
        .unwrap();
    assert!(made.success());
    assert_eq!(d.stat_at("pipe").unwrap().unwrap().ty, EntryType::Other);
    assert!(d.open_file("pipe").is_err());
    assert!(d.open_dir("pipe").is_err());
    // The native open is non-blocking too: reached past the look, it still returns.
    assert!(d
        .0
        .open_file("pipe")
        .is_ok_and(|f| !f.stat().unwrap().is_file()));
}

#[test]
fn writes_stay_in_the_held_directory_when_its_name_is_swapped() {
    let (t, d) = setup();
    let r = t.path().join("repo");
    fs::create_dir(r.join(".git")).unwrap();
    let sub = d.open_dir("sub").unwrap();
    // Swap the names: the held handle still is the directory that was opened.
    fs::rename(r.join("sub"), r.join("tmp")).unwrap();
    fs::rename(r.join(".git"), r.join("sub")).unwrap();
    fs::rename(r.join("tmp"), r.join(".git")).unwrap();
    sub.create_new(".x.ft-tmp-1", b"new").unwrap();
    sub.rename(".x.ft-tmp-1", "x").unwrap();
    assert_eq!(fs::read(r.join(".git/x")).unwrap(), b"new");
    assert!(!r.join("sub/x").exists());
    assert_eq!(sub.id().unwrap(), d.id_at(".git").unwrap());
}

#[test]
fn reads_return_what_was_opened_and_its_size() {
    let (_t, d) = setup();
    let sub = d.open_dir("sub").unwrap();
    let (data, st) = sub.read_file("a.txt", 3).unwrap();
    assert_eq!(data, b"ins");
    assert_eq!(st.size, 7);
    assert_eq!(st.nlink, 1);
    let (f, _) = sub.open_file("a.txt").unwrap();
    assert_eq!(f.read_at(2, 3).unwrap(), b"sid");
    assert_eq!(f.read_at(100, 3).unwrap(), b"");
}
