//! Test support shared by the integration tests: the real binaries in a temp home
//! (`cli`), a private `dbus-daemon`, a mock `org.freedesktop.systemd1.Manager` served on
//! it, and access to the real user manager.
//!
//! Declarations only; each file owns one harness piece.

#![allow(dead_code)] // each test binary uses a different subset

pub mod cli;
pub mod dbus_daemon;
pub mod mock_manager;
pub mod real_manager;
