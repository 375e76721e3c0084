//! The shared ledger over TLS (issue 23, section 1), against real
//! PostgreSQL servers of the test's own on loopback addresses, with a
//! throwaway CA made here with `openssl`: `verify-full` connects and says
//! so; a wrong CA, a wrong host name and a server without TLS are refused
//! with the fix; `verify-ca` checks the chain only; `prefer` and `require`
//! encrypt without proving the server, which `doctor` reports; a server
//! that wants client certificates gets one (`sslcert`, `sslkey`), in both
//! forms of the connection string, for every connection (the CLI, the
//! worker, the gateway's).

use crate::support::ledger::fresh_schema;
use crate::support::pg_server::PgServer;
use crate::support::{PATIENCE, TestHome};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A throwaway PKI in `dir`: a CA, another CA, a server certificate for
/// `pg.test` and the addresses given, and a client certificate for the
/// user `postgres`.
struct Pki {
    dir: PathBuf,
}

fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run openssl");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

impl Pki {
    fn new(dir: &Path, addrs: &[&str]) -> Pki {
        std::fs::create_dir_all(dir).unwrap();
        for ca in ["ca", "other-ca"] {
            openssl(
                dir,
                &[
                    "req",
                    "-x509",
                    "-newkey",
                    "rsa:2048",
                    "-nodes",
                    "-keyout",
                    &format!("{ca}.key"),
                    "-out",
                    &format!("{ca}.crt"),
                    "-days",
                    "2",
                    "-subj",
                    &format!("/CN={ca}"),
                ],
            );
        }
        let san = std::iter::once("DNS:pg.test".to_string())
            .chain(addrs.iter().map(|a| format!("IP:{a}")))
            .collect::<Vec<_>>()
            .join(",");
        std::fs::write(
            dir.join("server.ext"),
            format!("subjectAltName={san}\nextendedKeyUsage=serverAuth\n"),
        )
        .unwrap();
        std::fs::write(dir.join("client.ext"), "extendedKeyUsage=clientAuth\n").unwrap();
        for (who, cn) in [("server", "pg.test"), ("client", "postgres")] {
            openssl(
                dir,
                &[
                    "req",
                    "-newkey",
                    "rsa:2048",
                    "-nodes",
                    "-keyout",
                    &format!("{who}.key"),
                    "-out",
                    &format!("{who}.csr"),
                    "-subj",
                    &format!("/CN={cn}"),
                ],
            );
            openssl(
                dir,
                &[
                    "x509",
                    "-req",
                    "-in",
                    &format!("{who}.csr"),
                    "-CA",
                    "ca.crt",
                    "-CAkey",
                    "ca.key",
                    "-CAcreateserial",
                    "-out",
                    &format!("{who}.crt"),
                    "-days",
                    "2",
                    "-extfile",
                    &format!("{who}.ext"),
                ],
            );
        }
        Pki {
            dir: dir.to_path_buf(),
        }
    }

    fn file(&self, name: &str) -> String {
        self.dir.join(name).display().to_string()
    }

    /// The settings of a server with this certificate (and, with
    /// `client_ca`, one that wants client certificates signed by the CA).
    fn server_env(&self, client_ca: bool) -> Vec<(&'static str, String)> {
        let mut env = vec![
            ("PG_SSL_CERT", self.file("server.crt")),
            ("PG_SSL_KEY", self.file("server.key")),
        ];
        if client_ca {
            env.push(("PG_SSL_CA", self.file("ca.crt")));
        }
        env
    }
}

/// `hermes-cron status --json` and `doctor --json` of a home on `url`.
fn status_and_doctor(url: &str) -> (Value, Value) {
    let home = TestHome::new().on_database(url);
    let status = home.run(&["status", "--json"]).json();
    let doctor: Value =
        serde_json::from_str(&home.cmd(&["doctor", "--json"]).run().stdout).expect("doctor --json");
    (status, doctor)
}

/// `doctor`'s finding `code`; panics when it has none.
fn finding(doctor: &Value, code: &str) -> Value {
    doctor["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == code)
        .unwrap_or_else(|| panic!("no {code}: {doctor:#}"))
        .clone()
}

fn codes(doctor: &Value) -> Vec<String> {
    doctor["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// A command on `url` fails, saying `needle`; its stderr.
fn refused(url: &str, needle: &str) -> String {
    let home = TestHome::new().with_env("HERMES_CRON_DATABASE", url);
    let out = home.cmd(&["list"]).run();
    assert_ne!(out.code(), 0, "{out}");
    assert!(out.stderr.contains(needle), "wanted {needle:?}:\n{out}");
    out.stderr
}

const TLS_ADDR: &str = "127.0.0.2";
const PLAIN_ADDR: &str = "127.0.0.3";
const CLIENT_CERT_ADDR: &str = "127.0.0.4";

#[test]
fn the_shared_ledger_over_tls_is_verified_as_libpq_users_set_it() {
    let scratch = tempfile::tempdir().unwrap();
    let pki = Pki::new(scratch.path(), &[TLS_ADDR, CLIENT_CERT_ADDR]);
    let _tls = PgServer::start(Some(TLS_ADDR), &pki.server_env(false), false);
    let at = |host: &str, extra: &str| {
        format!(
            "host={host} hostaddr={TLS_ADDR} port=5432 user=postgres dbname=postgres connect_timeout=5 {extra}"
        )
    };
    let root = pki.file("ca.crt");

    // verify-full: encrypted, the certificate and the name checked; every
    // connection of a run (the CLI's, the worker's) goes through it.
    let full = fresh_schema(&at(
        "pg.test",
        &format!("sslmode=verify-full sslrootcert={root}"),
    ));
    let (status, doctor) = status_and_doctor(&full);
    let tls = &status["cluster"]["tls"];
    assert_eq!(tls["encrypted"], true, "{status:#}");
    assert_eq!(tls["checked"], "chain_and_name", "{status:#}");
    assert_eq!(tls["sslmode"], "verify-full", "{status:#}");
    assert!(
        !codes(&doctor).contains(&"ledger_not_verified".to_string()),
        "{doctor:#}"
    );
    let home = TestHome::new().on_database(&full);
    home.add("over-tls", "every 1h", &[], &["echo", "through TLS"]);
    let out = home.run(&["run", "over-tls", "--wait"]).ok();
    assert!(out.stderr.contains("succeeded (exit 0)"), "{out}");
    let logs = home.run(&["logs", "over-tls"]).ok();
    assert!(logs.stdout.contains("through TLS"), "{logs}");
    let text = home.run(&["status"]).stdout;
    assert!(
        text.contains(
            "encrypted (TLS), the server's certificate and name verified (sslmode=verify-full)"
        ),
        "{text}"
    );

    // The URL form, to the address the certificate names.
    let url = format!(
        "postgresql://postgres@{TLS_ADDR}:5432/postgres?sslmode=verify-full&sslrootcert={}",
        root.replace('/', "%2F")
    );
    let (status, _) = status_and_doctor(&fresh_schema(&url));
    assert_eq!(status["cluster"]["tls"]["encrypted"], true, "{status:#}");

    // A wrong CA, a wrong name: refused, with the fix.
    let other = pki.file("other-ca.crt");
    refused(
        &at(
            "pg.test",
            &format!("sslmode=verify-full sslrootcert={other}"),
        ),
        "not signed by a CA in sslrootcert",
    );
    let stderr = refused(
        &at(
            "other.test",
            &format!("sslmode=verify-full sslrootcert={root}"),
        ),
        "does not name the host connected to",
    );
    assert!(stderr.contains("verify-ca"), "{stderr}");
    // verify-ca checks the chain only: the wrong name passes, the wrong CA not.
    let ca_only = fresh_schema(&at(
        "other.test",
        &format!("sslmode=verify-ca sslrootcert={root}"),
    ));
    let (status, _) = status_and_doctor(&ca_only);
    assert_eq!(status["cluster"]["tls"]["checked"], "chain", "{status:#}");
    refused(
        &at("pg.test", &format!("sslmode=verify-ca sslrootcert={other}")),
        "not signed by a CA in sslrootcert",
    );
    // verify-* without a root certificate says where to put one.
    refused(&at("pg.test", "sslmode=verify-full"), "sslrootcert=");

    // prefer (libpq's default) and require: encrypted, the server unproven.
    for mode in ["", "sslmode=require"] {
        let (status, doctor) = status_and_doctor(&fresh_schema(&at("pg.test", mode)));
        assert_eq!(status["cluster"]["tls"]["encrypted"], true, "{status:#}");
        assert_eq!(status["cluster"]["tls"]["checked"], "nothing", "{status:#}");
        let found = finding(&doctor, "ledger_not_verified");
        assert!(
            found["fix"].as_str().unwrap().contains("verify-full"),
            "{found:#}"
        );
    }
}

#[test]
fn a_server_without_tls_is_refused_where_tls_is_required_and_reported_in_clear() {
    let _plain = PgServer::start(Some(PLAIN_ADDR), &[], false);
    let at = |extra: &str| {
        format!(
            "host={PLAIN_ADDR} port=5432 user=postgres dbname=postgres connect_timeout=5 {extra}"
        )
    };
    refused(&at("sslmode=require"), "does not offer TLS");
    let (status, doctor) = status_and_doctor(&fresh_schema(&at("sslmode=prefer")));
    assert_eq!(status["cluster"]["tls"]["encrypted"], false, "{status:#}");
    let found = finding(&doctor, "ledger_not_verified");
    assert!(
        found["problem"].as_str().unwrap().contains("in clear text"),
        "{found:#}"
    );
    // The suite's own server is on a Unix socket: nothing crosses a network,
    // nothing is reported.
    let (status, doctor) = status_and_doctor(&fresh_schema(&crate::support::ledger::pg_server()));
    assert_eq!(status["cluster"]["tls"]["local"], true, "{status:#}");
    assert!(
        !codes(&doctor).contains(&"ledger_not_verified".to_string()),
        "{doctor:#}"
    );
}

#[test]
fn a_server_that_wants_a_client_certificate_gets_one() {
    let scratch = tempfile::tempdir().unwrap();
    let pki = Pki::new(scratch.path(), &[CLIENT_CERT_ADDR]);
    let _server = PgServer::start(Some(CLIENT_CERT_ADDR), &pki.server_env(true), false);
    let base = format!(
        "host=pg.test hostaddr={CLIENT_CERT_ADDR} port=5432 user=postgres dbname=postgres connect_timeout=5 sslmode=verify-full sslrootcert={}",
        pki.file("ca.crt")
    );
    refused(&base, "certificate");
    let with_cert = format!(
        "{base} sslcert={} sslkey={}",
        pki.file("client.crt"),
        pki.file("client.key")
    );
    // fresh_schema connects as the suite does: with the certificate too.
    let url = fresh_schema(&with_cert);
    let home = TestHome::new().on_database(&url);
    home.add("with-cert", "every 1h", &[], &["echo", "mutual TLS"]);
    let mut gw = home.gateway(&[]);
    gw.wait_ready();
    let out = home.run(&["run", "with-cert", "--wait"]).ok();
    assert!(out.stderr.contains("succeeded (exit 0)"), "{out}");
    let logs = home.run(&["logs", "with-cert"]).ok();
    assert!(logs.stdout.contains("mutual TLS"), "{logs}");
    // The gateway's own connections (its loop, its lease, LISTEN) got in too.
    gw.wait_log("listening for changes", PATIENCE);
    gw.stop();
}

const PASSWORD_ADDR: &str = "127.0.0.5";

/// `PGPASSWORD` gives the password to every connection, as libpq does:
/// the gateway's `LISTEN` too (it used to connect without one, so wake-ups
/// from other hosts never came and every start waited 10 s for it).
#[test]
fn pgpassword_reaches_every_connection_listen_included() {
    let _server = PgServer::start(
        Some(PASSWORD_ADDR),
        &[("PG_PASSWORD", "pw-0123".to_string())],
        false,
    );
    let admin = format!(
        "host={PASSWORD_ADDR} port=5432 user=postgres dbname=postgres connect_timeout=5 password=pw-0123"
    );
    let url = fresh_schema(&admin).replace(" password=pw-0123", "");
    let without = TestHome::new().on_database(&url);
    let out = without.cmd(&["list"]).run();
    assert_ne!(out.code(), 0, "the server wants a password: {out}");
    let home = TestHome::new()
        .on_database(&url)
        .with_env("PGPASSWORD", "pw-0123");
    home.add("with-password", "every 1h", &[], &["true"]);
    let mut gw = home.gateway(&[]);
    gw.wait_ready();
    gw.wait_log("listening for changes from other hosts (LISTEN)", PATIENCE);
    gw.stop();
    assert!(!gw.log().contains("not listening"), "{}", gw.log());
    assert!(!gw.log().contains("pw-0123"), "{}", gw.log());
}
