//! The real Hermes Agent (`hermes-agent==0.19.0` from PyPI) in a venv that
//! `tests/run-all.sh` creates once and caches outside the repository; its
//! path comes in `HERMES_CRON_TEST_HERMES_VENV`. [`HermesHome`] is a test
//! home used as a Hermes home too: Hermes's own CLI and Python modules run
//! against it with `HERMES_HOME` pointing there, and with nothing that would
//! reach the network (lazy installs and the `tirith` download off).

use super::fake_model::{FakeModel, MODEL};
use super::home::TestHome;
use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

/// Where `tests/run-all.sh` says the venv is.
pub(crate) const VENV_ENV: &str = "HERMES_CRON_TEST_HERMES_VENV";

/// The venv with the real package.
pub(crate) fn venv() -> PathBuf {
    let dir = std::env::var_os(VENV_ENV)
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            panic!(
                "{VENV_ENV} is not set: these tests drive the real hermes-agent package; run \
             tests/run-all.sh (which creates the venv once), or create one with \
             `python3 -m venv DIR && DIR/bin/pip install hermes-agent==0.19.0` and export \
             {VENV_ENV}=DIR"
            )
        });
    assert!(
        dir.join("bin/hermes").is_file(),
        "{VENV_ENV}={} has no bin/hermes",
        dir.display()
    );
    dir
}

/// A test home that is also a Hermes home.
pub(crate) struct HermesHome {
    pub home: TestHome,
    venv: PathBuf,
}

/// What a Hermes command printed.
#[derive(Debug)]
pub(crate) struct HermesOut {
    pub code: i32,
    pub stdout: String,
    /// Read in failure messages (`{out:#?}`).
    #[allow(dead_code)]
    pub stderr: String,
}

impl HermesHome {
    /// A fresh degraded home; its `config.yaml` turns off what would reach
    /// the network.
    pub(crate) fn new() -> HermesHome {
        HermesHome::on(TestHome::new(), venv())
    }

    /// The same, its hermes-cron commands on the real user manager's bus.
    pub(crate) fn scoped() -> HermesHome {
        HermesHome::on(TestHome::scoped(), venv())
    }

    /// A scoped home whose Hermes is the one installed in `venv` (a venv
    /// the test made) instead of the cached one.
    pub(crate) fn scoped_in(venv: PathBuf) -> HermesHome {
        HermesHome::on(TestHome::scoped(), venv)
    }

    fn on(home: TestHome, venv: PathBuf) -> HermesHome {
        std::fs::create_dir_all(home.path()).unwrap();
        let h = HermesHome { home, venv };
        let set = |k: &str, v: &str| assert_eq!(h.hermes(&["config", "set", k, v]).code, 0);
        set("security.allow_lazy_installs", "false");
        set("security.tirith_enabled", "false");
        h
    }

    fn command(&self, program: PathBuf) -> Command {
        let mut cmd = Command::new(program);
        cmd.env_clear()
            .env("HERMES_HOME", self.home.path())
            .env("HOME", self.home.scratch())
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("TZ", "UTC")
            .env("HERMES_DISABLE_LAZY_INSTALLS", "1")
            .env("TIRITH_ENABLED", "false")
            .stdin(Stdio::null());
        cmd
    }

    fn finish(what: &str, out: std::io::Result<Output>) -> HermesOut {
        let out = out.unwrap_or_else(|e| panic!("cannot run {what}: {e}"));
        HermesOut {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// `hermes ARGS` (Hermes's own CLI; it exits 0 even on many failures).
    pub(crate) fn hermes(&self, args: &[&str]) -> HermesOut {
        let out = self
            .command(self.venv.join("bin/hermes"))
            .args(args)
            .output();
        Self::finish(&format!("hermes {args:?}"), out)
    }

    /// Run `code` with the venv's Python, `HERMES_HOME` set.
    pub(crate) fn python(&self, code: &str) -> HermesOut {
        let out = self
            .command(self.venv.join("bin/python"))
            .args(["-c", code])
            .output();
        Self::finish("python", out)
    }

    /// The venv's interpreter.
    pub(crate) fn python_path(&self) -> PathBuf {
        self.venv.join("bin/python")
    }

    /// Agent jobs ask `model` (a server on 127.0.0.1).
    pub(crate) fn use_model(&self, model: &FakeModel) {
        for (k, v) in [
            ("model.default", MODEL.to_string()),
            ("model.provider", "custom".to_string()),
            ("model.base_url", model.base_url()),
        ] {
            let out = self.hermes(&["config", "set", k, &v]);
            assert_eq!(out.code, 0, "{out:#?}");
        }
    }

    /// `hermes cron create ARGS`; the new job's id.
    pub(crate) fn cron_create(&self, args: &[&str]) -> String {
        let mut all = vec!["cron", "create"];
        all.extend_from_slice(args);
        let out = self.hermes(&all);
        out.stdout
            .lines()
            .find_map(|l| l.trim().strip_prefix("Created job:"))
            .map(|id| id.trim().to_string())
            .unwrap_or_else(|| panic!("hermes cron create did not create a job: {out:#?}"))
    }

    /// A script in `scripts/` for `--no-agent` jobs.
    pub(crate) fn script(&self, name: &str, body: &str) {
        let dir = self.home.path().join("scripts");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(name), body).unwrap();
    }

    /// A `--no-agent` job running `scripts/<name>.sh` (holding `body`), delivered to
    /// `deliver`, on `schedule`; its Hermes id.
    pub(crate) fn script_job(
        &self,
        name: &str,
        body: &str,
        deliver: &str,
        schedule: &str,
    ) -> String {
        let script = format!("{name}.sh");
        self.script(&script, body);
        self.cron_create(&[
            "--name",
            name,
            "--script",
            &script,
            "--no-agent",
            "--deliver",
            deliver,
            schedule,
        ])
    }

    /// One Hermes job as `cron.jobs.get_job` gives it (null when gone).
    pub(crate) fn job(&self, id: &str) -> Value {
        self.python_json(&format!(
            "from cron.jobs import get_job\nout = get_job({id:?})"
        ))
    }

    /// Hermes's `executions.db` rows of a job, newest first.
    pub(crate) fn executions(&self, id: &str) -> Vec<Value> {
        let v = self.python_json(&format!(
            "from cron.executions import list_executions\nout = list_executions(job_id={id:?}, limit=500)"
        ));
        v.as_array().cloned().unwrap_or_default()
    }

    /// The output documents Hermes saved for a job (`cron/output/<id>/*.md`).
    pub(crate) fn outputs(&self, id: &str) -> Vec<String> {
        let dir = self.home.path().join("cron/output").join(id);
        let mut docs: Vec<_> = std::fs::read_dir(&dir)
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        docs.retain(|p: &PathBuf| p.extension().is_some_and(|e| e == "md"));
        docs.sort();
        docs.iter()
            .map(|p| std::fs::read_to_string(p).unwrap_or_default())
            .collect()
    }

    /// Run `code` (which sets `out`) and read `out` back as JSON.
    pub(crate) fn python_json(&self, code: &str) -> Value {
        let out = self.python(&format!(
            "import json\nout = None\n{code}\nprint(json.dumps(out, default=str))"
        ));
        assert_eq!(out.code, 0, "{out:#?}");
        serde_json::from_str(out.stdout.trim()).unwrap_or_else(|e| panic!("{e}: {out:#?}"))
    }

    /// `hermes-cron hermes install` with the venv's interpreter.
    pub(crate) fn install_provider(&self) {
        let py = self.python_path();
        self.home
            .run(&["hermes", "install", "--python", py.to_str().unwrap()])
            .ok();
    }

    /// `config.yaml` as Hermes reads it (PyYAML, `read_raw_config`), as JSON:
    /// every value with the type PyYAML gave it (dates as `date:...`).
    pub(crate) fn raw_config(&self) -> Value {
        let out = self.python(
            "import json, datetime\n\
             from hermes_cli.config import read_raw_config\n\
             def enc(o):\n\
             \x20   if isinstance(o, (datetime.date, datetime.datetime)): return 'date:' + o.isoformat()\n\
             \x20   raise TypeError(repr(o))\n\
             print(json.dumps(read_raw_config(), default=enc, sort_keys=True))",
        );
        assert_eq!(out.code, 0, "{out:#?}");
        serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}: {out:#?}"))
    }
}
