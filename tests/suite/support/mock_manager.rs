//! A scriptable mock of `org.freedesktop.systemd1.Manager`, served with zbus on a private
//! bus under the real well-known name and object path.
//!
//! It records every `StartTransientUnit` (name, mode, properties) and the caller of every
//! method, and answers as its [`Behavior`] says, so tests can drive `ZbusUnitManager`
//! through refusals, failed jobs, lost signals and signals that overtake the method reply.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use zbus::message::Header;
use zbus::object_server::SignalEmitter;
use zbus::{Connection, ObjectPath, OwnedObjectPath, OwnedVariant};

/// How the mock answers `StartTransientUnit`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Behavior {
    /// Reply with the job path, then emit `JobRemoved` with result `done`.
    Done,
    /// Refuse with `org.freedesktop.systemd1.UnitExists`.
    RefuseUnitExists,
    /// Reply, then emit `JobRemoved` with result `failed`.
    FailJob,
    /// Reply and never emit `JobRemoved`.
    NeverSignal,
    /// Emit `JobRemoved` (`done`) first, then reply.
    SignalBeforeReply,
    /// Never reply at all.
    NeverReply,
}

/// One `StartTransientUnit` the mock received.
#[derive(Clone, Debug)]
pub(crate) struct StartCall {
    pub name: String,
    pub mode: String,
    pub properties: Vec<(String, OwnedVariant)>,
    pub aux_len: usize,
}

impl StartCall {
    /// The value of property `name`, if it was sent.
    pub(crate) fn property(&self, name: &str) -> Option<&OwnedVariant> {
        self.properties
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v)
    }
}

/// What the mock has seen, shared with the test.
#[derive(Debug, Default)]
pub(crate) struct Recorded {
    pub starts: Vec<StartCall>,
    /// Every method call, in order: (method, unique name of the caller).
    pub calls: Vec<(&'static str, String)>,
    /// Units "running" (started with `Done`/`SignalBeforeReply`), with their pids.
    pub units: HashMap<String, Vec<u32>>,
}

#[derive(Debug, zbus::DBusError)]
#[zbus(prefix = "org.freedesktop.systemd1")]
enum SystemdError {
    #[zbus(error)]
    ZBus(zbus::Error),
    UnitExists(String),
    NoSuchUnit(String),
    NotReferenced(String),
}

/// The served object.
struct Mock {
    behavior: Behavior,
    recorded: Arc<Mutex<Recorded>>,
    next_job: Mutex<u32>,
}

/// A served mock: keep it alive for as long as the test needs the manager.
pub(crate) struct MockManager {
    pub recorded: Arc<Mutex<Recorded>>,
    _conn: Connection,
}

impl MockManager {
    /// Connects to the bus at `address`, serves the mock at `/org/freedesktop/systemd1`
    /// and takes the name `org.freedesktop.systemd1`.
    pub(crate) async fn serve(address: &str, behavior: Behavior) -> MockManager {
        let recorded = Arc::new(Mutex::new(Recorded::default()));
        let mock = Mock {
            behavior,
            recorded: recorded.clone(),
            next_job: Mutex::new(0),
        };
        let conn = zbus::connection::Builder::address(address)
            .serve_at("/org/freedesktop/systemd1", mock)
            .name("org.freedesktop.systemd1")
            .build()
            .await
            .expect("mock manager connects to the private bus");
        MockManager {
            recorded,
            _conn: conn,
        }
    }

    /// A snapshot of the recorded `StartTransientUnit` calls.
    pub(crate) fn starts(&self) -> Vec<StartCall> {
        self.recorded.lock().unwrap().starts.clone()
    }

    /// The callers of every method so far.
    pub(crate) fn senders(&self) -> Vec<String> {
        let rec = self.recorded.lock().unwrap();
        rec.calls.iter().map(|(_, sender)| sender.clone()).collect()
    }

    /// The methods called so far, in order.
    pub(crate) fn methods(&self) -> Vec<&'static str> {
        let rec = self.recorded.lock().unwrap();
        rec.calls.iter().map(|(method, _)| *method).collect()
    }
}

fn job_path(id: u32) -> OwnedObjectPath {
    OwnedObjectPath::try_from(format!("/org/freedesktop/systemd1/job/{id}")).expect("job path")
}

fn sender_of(header: &Header<'_>) -> String {
    header.sender().map(|s| s.to_string()).unwrap_or_default()
}

#[zbus::interface(name = "org.freedesktop.systemd1.Manager")]
impl Mock {
    #[allow(clippy::too_many_arguments)]
    async fn start_transient_unit(
        &self,
        #[zbus(header)] header: Header<'_>,
        #[zbus(signal_emitter)] emitter: SignalEmitter<'_>,
        name: String,
        mode: String,
        properties: Vec<(String, OwnedVariant)>,
        aux: Vec<(String, Vec<(String, OwnedVariant)>)>,
    ) -> Result<OwnedObjectPath, SystemdError> {
        let pids: Vec<u32> = properties
            .iter()
            .find(|(n, _)| n == "PIDs")
            .and_then(|(_, v)| Vec::<u32>::try_from(v.clone()).ok())
            .unwrap_or_default();
        {
            let mut rec = self.recorded.lock().unwrap();
            rec.calls.push(("StartTransientUnit", sender_of(&header)));
            rec.starts.push(StartCall {
                name: name.clone(),
                mode,
                properties,
                aux_len: aux.len(),
            });
            if self.behavior == Behavior::RefuseUnitExists || rec.units.contains_key(&name) {
                return Err(SystemdError::UnitExists(format!(
                    "Unit {name} was already loaded or has a fragment file."
                )));
            }
            if matches!(self.behavior, Behavior::Done | Behavior::SignalBeforeReply) {
                rec.units.insert(name.clone(), pids);
            }
        }
        let id = {
            let mut next = self.next_job.lock().unwrap();
            *next += 1;
            *next
        };
        let job = job_path(id);
        let emit_after = |result: &'static str| {
            let emitter = emitter.to_owned();
            let job = job.clone();
            let name = name.clone();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(20)).await;
                let _ = Mock::job_removed(&emitter, id, job.as_ref(), &name, result).await;
            });
        };
        match self.behavior {
            Behavior::Done => emit_after("done"),
            Behavior::FailJob => emit_after("failed"),
            Behavior::SignalBeforeReply => {
                Mock::job_removed(&emitter, id, job.as_ref(), &name, "done").await?;
            }
            Behavior::NeverSignal | Behavior::RefuseUnitExists => {}
            Behavior::NeverReply => std::future::pending::<()>().await,
        }
        Ok(job)
    }

    async fn get_unit(
        &self,
        #[zbus(header)] header: Header<'_>,
        name: String,
    ) -> Result<OwnedObjectPath, SystemdError> {
        let mut rec = self.recorded.lock().unwrap();
        rec.calls.push(("GetUnit", sender_of(&header)));
        if name == "init.scope" || rec.units.contains_key(&name) {
            Ok(OwnedObjectPath::try_from("/org/freedesktop/systemd1/unit/mock").unwrap())
        } else {
            Err(SystemdError::NoSuchUnit(format!("Unit {name} not loaded.")))
        }
    }

    async fn get_unit_processes(
        &self,
        #[zbus(header)] header: Header<'_>,
        name: String,
    ) -> Result<Vec<(String, u32, String)>, SystemdError> {
        let mut rec = self.recorded.lock().unwrap();
        rec.calls.push(("GetUnitProcesses", sender_of(&header)));
        match rec.units.get(&name) {
            Some(pids) => Ok(pids
                .iter()
                .map(|&pid| (format!("/mock/{name}"), pid, "mock".to_owned()))
                .collect()),
            None => Err(SystemdError::NoSuchUnit(format!("Unit {name} not loaded."))),
        }
    }

    async fn stop_unit(
        &self,
        #[zbus(header)] header: Header<'_>,
        name: String,
        _mode: String,
    ) -> Result<OwnedObjectPath, SystemdError> {
        let mut rec = self.recorded.lock().unwrap();
        rec.calls.push(("StopUnit", sender_of(&header)));
        match rec.units.remove(&name) {
            Some(_) => Ok(job_path(9999)),
            None => Err(SystemdError::NoSuchUnit(format!("Unit {name} not loaded."))),
        }
    }

    async fn unref_unit(
        &self,
        #[zbus(header)] header: Header<'_>,
        name: String,
    ) -> Result<(), SystemdError> {
        let mut rec = self.recorded.lock().unwrap();
        rec.calls.push(("UnrefUnit", sender_of(&header)));
        if rec.units.contains_key(&name) {
            Err(SystemdError::NotReferenced(format!(
                "Unit {name} is not referenced by this client."
            )))
        } else {
            Err(SystemdError::NoSuchUnit(format!("Unit {name} not loaded.")))
        }
    }

    #[zbus(signal)]
    async fn job_removed(
        emitter: &SignalEmitter<'_>,
        id: u32,
        job: ObjectPath<'_>,
        unit: &str,
        result: &str,
    ) -> zbus::Result<()>;
}
