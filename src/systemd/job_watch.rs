//! One `JobRemoved` subscription per bus connection, routed by unit name.
//!
//! `start_scope` must see the `JobRemoved` of its start job, which can come
//! before the `StartTransientUnit` reply, so a subscription has to exist
//! before the call. Opening a stream per call costs the bus daemon three
//! calls each time (`GetNameOwner` and `AddMatch` before, `RemoveMatch`
//! after) and churns its match rules. Instead the first `start_scope` on a
//! connection opens one stream (every `JobRemoved` of the manager) and
//! spawns a task that hands each signal to the waiter registered for its
//! unit name. A caller registers ([`JobWatch::register`]) before it calls,
//! so nothing it is owed can be missed.
//!
//! Invariants:
//! - At most one waiter per unit name (scope names are unique per
//!   execution); a signal for a unit nobody waits for is dropped.
//! - A waiter gets every `JobRemoved` of its unit from its registration on,
//!   as (job path, result); it picks its own job by path.
//! - When the stream ends (the connection closed), every waiter's channel
//!   closes and [`JobWatch::is_closed`] turns true; the manager then opens a
//!   new connection for the next call.
//!
//! ## Locking
//! One `std::sync::Mutex` guards the waiters' map; it is held only to insert,
//! look up or remove one entry, never across an await.

use super::proxy::ManagerProxy;
use futures_util::StreamExt;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use zbus::OwnedObjectPath;

/// What a waiter hears: the job's path and its result (`done`, `failed`...).
pub(crate) type JobEnd = (OwnedObjectPath, String);

type Waiters = Mutex<HashMap<String, UnboundedSender<JobEnd>>>;

/// The connection's one `JobRemoved` subscription.
#[derive(Debug, Default)]
pub(crate) struct JobWatch {
    waiters: Waiters,
    closed: AtomicBool,
}

/// A registration for one unit's `JobRemoved` signals; unregisters on drop.
#[derive(Debug)]
pub(crate) struct JobWaiter {
    watch: Arc<JobWatch>,
    unit: String,
    rx: UnboundedReceiver<JobEnd>,
}

impl JobWatch {
    /// Subscribe to every `JobRemoved` of the manager behind `proxy` and
    /// route them from a task on the current tokio runtime.
    pub(crate) async fn start(proxy: &ManagerProxy<'static>) -> zbus::Result<Arc<JobWatch>> {
        let mut stream = proxy.receive_job_removed().await?;
        let watch = Arc::new(JobWatch::default());
        let router = watch.clone();
        tokio::spawn(async move {
            while let Some(signal) = stream.next().await {
                let Ok(args) = signal.args() else { continue };
                router.route(
                    args.unit(),
                    (args.job().clone().into(), args.result().to_string()),
                );
            }
            router.close();
        });
        Ok(watch)
    }

    /// Whether the subscription has ended (its connection closed).
    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    /// Wait for the `JobRemoved` signals of `unit` from now on.
    pub(crate) fn register(self: &Arc<Self>, unit: &str) -> JobWaiter {
        let (tx, rx) = unbounded_channel();
        if let Ok(mut map) = self.waiters.lock()
            && !self.is_closed()
        {
            map.insert(unit.to_string(), tx);
        }
        // Closed: `tx` is dropped here and the waiter hears the end at once.
        JobWaiter {
            watch: self.clone(),
            unit: unit.to_string(),
            rx,
        }
    }

    fn route(&self, unit: &str, end: JobEnd) {
        if let Ok(map) = self.waiters.lock()
            && let Some(tx) = map.get(unit)
        {
            let _ = tx.send(end);
        }
    }

    fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        if let Ok(mut map) = self.waiters.lock() {
            map.clear();
        }
    }
}

impl JobWaiter {
    /// The next `JobRemoved` of the unit; None once the subscription ended.
    pub(crate) async fn next(&mut self) -> Option<JobEnd> {
        self.rx.recv().await
    }
}

impl Drop for JobWaiter {
    fn drop(&mut self) {
        if let Ok(mut map) = self.watch.waiters.lock() {
            map.remove(&self.unit);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(p: &str) -> OwnedObjectPath {
        OwnedObjectPath::try_from(p).unwrap()
    }

    #[tokio::test]
    async fn signals_reach_the_waiter_of_their_unit_only() {
        let watch = Arc::new(JobWatch::default());
        let mut a = watch.register("a.scope");
        let mut b = watch.register("b.scope");
        watch.route("b.scope", (path("/j/2"), "done".into()));
        watch.route("c.scope", (path("/j/3"), "done".into()));
        watch.route("a.scope", (path("/j/1"), "failed".into()));
        assert_eq!(a.next().await, Some((path("/j/1"), "failed".into())));
        assert_eq!(b.next().await, Some((path("/j/2"), "done".into())));
        drop(a);
        assert_eq!(watch.waiters.lock().unwrap().len(), 1, "a unregistered");
    }

    #[tokio::test]
    async fn a_closed_watch_ends_every_waiter() {
        let watch = Arc::new(JobWatch::default());
        let mut before = watch.register("a.scope");
        watch.close();
        assert_eq!(before.next().await, None);
        let mut after = watch.register("b.scope");
        assert!(watch.is_closed());
        assert_eq!(after.next().await, None);
    }
}
