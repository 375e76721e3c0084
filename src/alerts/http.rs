//! The one thread that makes HTTP requests: webhooks (POST of the event)
//! and pings (GET). Blocking requests with a timeout on a thread of its own,
//! started on the first request, so the event loop never waits on a peer;
//! results go back to the loop over a channel that wakes it.

use std::sync::mpsc;
use std::time::Duration;
use tokio::sync::mpsc::UnboundedSender;

/// How long one request may take, connecting included.
pub(crate) const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// One request to make.
#[derive(Clone, Debug)]
pub(crate) struct Request {
    pub delivery: String,
    pub attempt: u32,
    pub url: String,
    /// The body to POST (JSON); None: a GET.
    pub body: Option<String>,
}

/// How it went.
#[derive(Clone, Debug)]
pub(crate) struct Outcome {
    pub delivery: String,
    pub attempt: u32,
    pub ok: bool,
    pub result: String,
}

/// An agent with our timeout, whose non-2xx answers are results, not errors.
pub(crate) fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_global(Some(REQUEST_TIMEOUT))
        .http_status_as_error(false)
        .user_agent(concat!("hermes-cron/", env!("CARGO_PKG_VERSION")))
        .build()
        .into()
}

/// Make one request: 2xx is success; the result names the status or error.
pub(crate) fn perform(agent: &ureq::Agent, url: &str, body: Option<&str>) -> (bool, String) {
    let answer = match body {
        Some(json) => agent
            .post(url)
            .header("content-type", "application/json")
            .send(json),
        None => agent.get(url).call(),
    };
    match answer {
        Ok(response) => {
            let status = response.status();
            (status.is_success(), format!("HTTP {}", status.as_u16()))
        }
        Err(e) => (false, e.to_string()),
    }
}

/// The request thread, started on first use.
#[derive(Default)]
pub(crate) struct HttpThread {
    requests: Option<mpsc::Sender<Request>>,
}

impl HttpThread {
    /// Queue `req`; its outcome arrives on `results`. Err: the thread could
    /// not be started (the delivery stays owed).
    pub(crate) fn send(
        &mut self,
        req: Request,
        results: &UnboundedSender<Outcome>,
    ) -> std::io::Result<()> {
        if self.requests.is_none() {
            let (tx, rx) = mpsc::channel::<Request>();
            let results = results.clone();
            std::thread::Builder::new()
                .name("alerts-http".into())
                .spawn(move || {
                    let agent = agent();
                    while let Ok(req) = rx.recv() {
                        let (ok, result) = perform(&agent, &req.url, req.body.as_deref());
                        let done = Outcome {
                            delivery: req.delivery,
                            attempt: req.attempt,
                            ok,
                            result,
                        };
                        if results.send(done).is_err() {
                            return;
                        }
                    }
                })?;
            self.requests = Some(tx);
        }
        if let Some(tx) = &self.requests
            && tx.send(req).is_err()
        {
            self.requests = None;
            return Err(std::io::Error::other("the alerts-http thread has ended"));
        }
        Ok(())
    }
}
