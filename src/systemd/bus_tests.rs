//! Unit tests for `bus.rs`: every rule of `locate_bus` on temporary directories.

use super::*;
use std::os::unix::net::UnixListener;

fn my_uid() -> u32 {
    nix::unistd::getuid().as_raw()
}

/// A runtime dir holding a listening `bus` socket.
fn runtime_dir_with_socket() -> (tempfile::TempDir, UnixListener) {
    let dir = tempfile::tempdir().unwrap();
    let listener = UnixListener::bind(dir.path().join("bus")).unwrap();
    (dir, listener)
}

#[test]
fn nothing_set_is_no_address() {
    let env = BusEnv {
        uid: my_uid(),
        ..BusEnv::default()
    };
    assert_eq!(locate_bus(&env), Err(BusCause::NoAddress));
}

#[test]
fn empty_or_relative_values_count_as_unset() {
    let env = BusEnv {
        session_bus_address: Some("  ".into()),
        runtime_dir: Some("relative/dir".into()),
        uid: my_uid(),
    };
    assert_eq!(locate_bus(&env), Err(BusCause::NoAddress));
}

#[test]
fn runtime_dir_with_our_socket_is_used() {
    let (dir, _l) = runtime_dir_with_socket();
    let found = locate_bus(&BusEnv::with_runtime_dir(dir.path(), my_uid())).unwrap();
    let socket = dir.path().join("bus");
    assert_eq!(found.socket(), Some(socket.as_path()));
    assert_eq!(found.as_str(), format!("unix:path={}", socket.display()));
    assert_eq!(found.source(), AddressSource::RuntimeDir);
}

#[test]
fn empty_runtime_dir_is_socket_missing() {
    let dir = tempfile::tempdir().unwrap();
    let err = locate_bus(&BusEnv::with_runtime_dir(dir.path(), my_uid())).unwrap_err();
    assert_eq!(
        err,
        BusCause::SocketMissing {
            path: dir.path().join("bus")
        }
    );
}

#[test]
fn missing_runtime_dir_is_socket_missing_for_the_socket() {
    let dir = tempfile::tempdir().unwrap();
    let gone = dir.path().join("gone");
    let err = locate_bus(&BusEnv::with_runtime_dir(&gone, my_uid())).unwrap_err();
    assert_eq!(
        err,
        BusCause::SocketMissing {
            path: gone.join("bus")
        }
    );
}

#[test]
fn runtime_dir_of_another_uid_is_wrong_owner() {
    let (dir, _l) = runtime_dir_with_socket();
    let other = my_uid() + 4242;
    let err = locate_bus(&BusEnv::with_runtime_dir(dir.path(), other)).unwrap_err();
    assert_eq!(
        err,
        BusCause::WrongOwner {
            path: dir.path().to_owned(),
            owner: my_uid(),
            uid: other
        }
    );
    assert_eq!(err.code().as_str(), "wrong_owner");
}

#[test]
fn session_address_wins_over_runtime_dir() {
    let (dir, _l) = runtime_dir_with_socket();
    let env = BusEnv {
        session_bus_address: Some(format!(
            "unix:path={},guid=0123",
            dir.path().join("bus").display()
        )),
        runtime_dir: Some("/nonexistent".into()),
        uid: my_uid(),
    };
    let found = locate_bus(&env).unwrap();
    assert_eq!(found.source(), AddressSource::SessionBusAddress);
    assert_eq!(found.socket(), Some(dir.path().join("bus").as_path()));
}

#[test]
fn session_address_with_missing_socket_is_socket_missing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nobus");
    let env = BusEnv::with_address(format!("unix:path={}", path.display()), my_uid());
    assert_eq!(locate_bus(&env), Err(BusCause::SocketMissing { path }));
}

#[test]
fn session_address_socket_of_another_uid_is_wrong_owner() {
    let (dir, _l) = runtime_dir_with_socket();
    let path = dir.path().join("bus");
    let env = BusEnv::with_address(format!("unix:path={}", path.display()), my_uid() + 1);
    assert!(matches!(locate_bus(&env), Err(BusCause::WrongOwner { path: p, .. }) if p == path));
}

#[test]
fn non_path_transports_are_used_as_given() {
    for address in ["unix:abstract=/tmp/dbus-x", "tcp:host=127.0.0.1,port=4"] {
        let found = locate_bus(&BusEnv::with_address(address, my_uid())).unwrap();
        assert_eq!(found.as_str(), address);
        assert_eq!(found.socket(), None);
    }
}

#[test]
fn unix_path_is_unescaped_and_first_address_wins() {
    assert_eq!(
        unix_path_of("unix:path=/run/user/1000/my%20bus,guid=ab;unix:path=/other"),
        Some(PathBuf::from("/run/user/1000/my bus"))
    );
    assert_eq!(unix_path_of("unix:guid=ab,path=/p"), Some("/p".into()));
    assert_eq!(unix_path_of("tcp:host=x"), None);
    assert_eq!(unix_path_of("unix:path=/bad%zz"), Some("/bad%zz".into()));
}

#[test]
fn runtime_dir_address_escapes_odd_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let odd = dir.path().join("odd dir,x=y");
    std::fs::create_dir(&odd).unwrap();
    let _l = UnixListener::bind(odd.join("bus")).unwrap();
    let found = locate_bus(&BusEnv::with_runtime_dir(&odd, my_uid())).unwrap();
    assert!(found.as_str().ends_with("odd%20dir%2cx%3dy/bus"), "{found}");
    assert_eq!(unix_path_of(found.as_str()), Some(odd.join("bus")));
}

#[test]
fn obstacle_is_the_nearest_visible_ancestor() {
    let (path, owner) = owner_of_obstacle(Path::new("/"));
    assert_eq!((path, owner), (PathBuf::from("/"), 0));
}
