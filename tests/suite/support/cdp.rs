//! A page as a real headless Chromium lays it out at a phone's viewport:
//! [`view_at`] loads a URL in Debian's `chromium` with a mobile viewport
//! emulated, and reports whether the page is wider than the viewport (it
//! scrolls sideways) together with a PNG screenshot of what a phone shows.
//!
//! It drives Chromium with the Chrome DevTools Protocol over
//! `--remote-debugging-pipe`: Chromium reads NUL-terminated JSON messages
//! from its fd 3 and writes NUL-terminated JSON messages to its fd 4. The
//! pipe needs no port (nothing to pick, nothing another test or process on
//! the machine could take or reach), no websocket client (the suite has
//! none), and no scraping of stderr for a `DevTools listening on ws://...`
//! line; and it closes when Chromium exits. `--dump-dom` (as
//! [`super::http::chromium_dom`] uses) cannot set a viewport or evaluate
//! anything, hence the protocol.
//!
//! `Runtime.evaluate` runs in the page's main world as the inspector does, so
//! it works on a page whose Content-Security-Policy forbids every script.

use super::waiting::poll;
use hermes_cron::clock::monotonic;
use nix::fcntl::OFlag;
use serde_json::{Value, json};
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

/// How long a whole session may take, from launch to `Browser.close`
/// (a healthy one takes a second or two).
const SESSION_TIMEOUT: Duration = Duration::from_secs(60);

/// How long Chromium may take to exit after `Browser.close`.
const EXIT_TIMEOUT: Duration = Duration::from_secs(15);

/// What Chromium saw of a page at one viewport.
#[derive(Debug)]
pub(crate) struct Viewed {
    /// document.documentElement.scrollWidth, in CSS px.
    pub scroll_width: f64,
    /// The viewport's width in CSS px: `document.documentElement.clientWidth`
    /// (the layout width a `width=device-width` page gets), not
    /// `window.innerWidth`, which Chromium's mobile emulation widens to the
    /// content's width when the page overflows (it shrinks the page to fit),
    /// so that an overflowing page would look as wide as its viewport.
    pub viewport_width: f64,
    /// The PNG screenshot of the viewport, written to this path.
    pub screenshot: PathBuf,
}

/// Load `url` in headless Chromium with a `width` x `height` mobile viewport
/// (Emulation.setDeviceMetricsOverride, mobile: true, deviceScaleFactor 1), wait for the load,
/// read the widths with Runtime.evaluate, and save a screenshot (Page.captureScreenshot) under `scratch`.
/// The page scrolls sideways when `scroll_width > viewport_width`.
///
/// The profile, Chromium's stderr and the screenshot
/// (`viewport-{width}x{height}.png`) are files under `scratch`: one call at a
/// time per `scratch`. Panics naming what failed, with Chromium's stderr.
#[track_caller]
pub(crate) fn view_at(url: &str, width: u32, height: u32, scratch: &Path) -> Viewed {
    let mut chromium = Chromium::launch(scratch);
    let target = chromium.call(None, "Target.createTarget", json!({"url": "about:blank"}));
    let target_id = chromium.text(&target, "targetId", "Target.createTarget");
    let attached = chromium.call(
        None,
        "Target.attachToTarget",
        json!({"targetId": target_id, "flatten": true}),
    );
    let session = chromium.text(&attached, "sessionId", "Target.attachToTarget");
    let s = Some(session.as_str());
    chromium.call(
        s,
        "Emulation.setDeviceMetricsOverride",
        json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": true}),
    );
    chromium.call(s, "Page.enable", json!({}));

    // The load event of this navigation, not a late one of about:blank's: the
    // first after the main frame commits the navigation's loader.
    chromium.backlog.clear();
    let navigated = chromium.call(s, "Page.navigate", json!({"url": url}));
    if let Some(error) = navigated.get("errorText") {
        chromium.fail(&format!("Page.navigate to {url} failed: {error}"));
    }
    let loader = navigated.get("loaderId").cloned();
    let mut committed = loader.is_none();
    loop {
        let event = chromium.next_event(s, &format!("the load event of {url}"));
        match event["method"].as_str() {
            Some("Page.frameNavigated")
                if event["params"]["frame"].get("parentId").is_none()
                    && event["params"]["frame"].get("loaderId") == loader.as_ref() =>
            {
                committed = true;
            }
            Some("Page.loadEventFired") if committed => break,
            _ => {}
        }
    }

    let evaluated = chromium.call(
        s,
        "Runtime.evaluate",
        json!({
            "expression": "JSON.stringify([document.documentElement.scrollWidth, document.documentElement.clientWidth])",
            "returnByValue": true,
        }),
    );
    if let Some(exception) = evaluated.get("exceptionDetails") {
        chromium.fail(&format!("Runtime.evaluate threw: {exception}"));
    }
    let widths: Vec<f64> = evaluated["result"]["value"]
        .as_str()
        .and_then(|v| serde_json::from_str(v).ok())
        .filter(|w: &Vec<f64>| w.len() == 2)
        .unwrap_or_else(|| chromium.fail(&format!("Runtime.evaluate gave {evaluated}")));

    let shot = chromium.call(s, "Page.captureScreenshot", json!({"format": "png"}));
    let data = chromium.text(&shot, "data", "Page.captureScreenshot");
    let png = base64_decode(&data)
        .filter(|png| png.starts_with(b"\x89PNG\r\n\x1a\n"))
        .unwrap_or_else(|| {
            chromium.fail(&format!(
                "Page.captureScreenshot's data is not a base64 PNG: {:?}...",
                data.chars().take(64).collect::<String>()
            ))
        });
    let screenshot = scratch.join(format!("viewport-{width}x{height}.png"));
    std::fs::write(&screenshot, png)
        .unwrap_or_else(|e| chromium.fail(&format!("writing {}: {e}", screenshot.display())));

    chromium.close();
    Viewed {
        scroll_width: widths[0],
        viewport_width: widths[1],
        screenshot,
    }
}

/// A message from Chromium, or why the reader could not read one.
type Incoming = Result<Value, String>;

/// A running Chromium and our end of its pipes. Dropping it kills Chromium
/// if it still runs (a panic mid-session leaves no browser behind).
struct Chromium {
    child: Child,
    /// Its fd 3.
    to: File,
    /// What the reader thread parsed from its fd 4.
    from: Receiver<Incoming>,
    /// Events received while waiting for a response, oldest first.
    backlog: Vec<Value>,
    next_id: u64,
    /// When the session times out.
    deadline: Instant,
    stderr: PathBuf,
}

impl Chromium {
    /// Start Chromium on `about:blank` with its profile and stderr under
    /// `scratch`, and the reader of its fd 4.
    #[track_caller]
    fn launch(scratch: &Path) -> Self {
        let stderr = scratch.join("chromium-cdp-stderr.txt");
        // Close-on-exec, so that no other child started meanwhile (another
        // test's) holds an end open; the child's fds 3 and 4 are copies.
        let (commands_read, commands_write) =
            nix::unistd::pipe2(OFlag::O_CLOEXEC).expect("a pipe for chromium's fd 3");
        let (replies_read, replies_write) =
            nix::unistd::pipe2(OFlag::O_CLOEXEC).expect("a pipe for chromium's fd 4");
        let (fd3, fd4) = (commands_read.as_raw_fd(), replies_write.as_raw_fd());
        let mut command = super::http::headless_chromium(scratch, "chromium-cdp-profile");
        command
            .args(["--remote-debugging-pipe", "about:blank"])
            .stdout(Stdio::null())
            .stderr(File::create(&stderr).expect("chromium's stderr file"));
        // SAFETY: the hook runs in the forked child before exec and calls
        // only fcntl(2) and dup2(2), which are async-signal-safe.
        unsafe {
            command.pre_exec(move || onto_fds_3_and_4(fd3, fd4));
        }
        let child = command.spawn().expect("start chromium");
        drop(commands_read);
        drop(replies_write);
        let (sender, from) = mpsc::channel();
        let replies = File::from(replies_read);
        std::thread::spawn(move || read_messages(replies, sender));
        Chromium {
            child,
            to: File::from(commands_write),
            from,
            backlog: Vec::new(),
            next_id: 1,
            deadline: monotonic() + SESSION_TIMEOUT,
            stderr,
        }
    }

    /// Panic with `what` and Chromium's stderr so far.
    #[track_caller]
    fn fail(&self, what: &str) -> ! {
        panic!(
            "chromium (DevTools protocol over a pipe): {what}\n--- its stderr ({}):\n{}",
            self.stderr.display(),
            std::fs::read_to_string(&self.stderr).unwrap_or_default()
        );
    }

    /// Send `method` with `params` (to `session`, else to the browser);
    /// its id.
    #[track_caller]
    fn send(&mut self, session: Option<&str>, method: &str, params: Value) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        let mut message = json!({"id": id, "method": method, "params": params});
        if let Some(session) = session {
            message["sessionId"] = json!(session);
        }
        let mut bytes = message.to_string().into_bytes();
        bytes.push(0);
        if let Err(e) = self.to.write_all(&bytes) {
            self.fail(&format!("sending {method}: {e}"));
        }
        id
    }

    /// The next message, or a panic naming `awaited` when the session's
    /// deadline passes or Chromium closes its end.
    #[track_caller]
    fn receive(&mut self, awaited: &str) -> Value {
        let left = self.deadline.saturating_duration_since(monotonic());
        match self.from.recv_timeout(left) {
            Ok(Ok(message)) => message,
            Ok(Err(e)) => self.fail(&format!("waiting for {awaited}: {e}")),
            Err(RecvTimeoutError::Timeout) => self.fail(&format!(
                "timed out after {SESSION_TIMEOUT:?} (the session's) waiting for {awaited}"
            )),
            Err(RecvTimeoutError::Disconnected) => {
                let status = self.child.try_wait().ok().flatten();
                self.fail(&format!(
                    "it closed the pipe while we waited for {awaited} (exit: {status:?})"
                ))
            }
        }
    }

    /// Call `method` and return its result; events meanwhile go to the
    /// backlog.
    #[track_caller]
    fn call(&mut self, session: Option<&str>, method: &str, params: Value) -> Value {
        let id = self.send(session, method, params);
        loop {
            let mut message = self.receive(&format!("the response to {method} (id {id})"));
            if message.get("id").and_then(Value::as_u64) != Some(id) {
                if message.get("method").is_some() {
                    self.backlog.push(message);
                }
                continue;
            }
            if let Some(error) = message.get("error") {
                self.fail(&format!("{method} failed: {error}"));
            }
            return message
                .get_mut("result")
                .map(Value::take)
                .unwrap_or_else(|| self.fail(&format!("{method}: no result in {message}")));
        }
    }

    /// The next event of `session` (the backlog first).
    #[track_caller]
    fn next_event(&mut self, session: Option<&str>, awaited: &str) -> Value {
        loop {
            let message = if self.backlog.is_empty() {
                self.receive(awaited)
            } else {
                self.backlog.remove(0)
            };
            if message.get("method").is_some()
                && message.get("sessionId").and_then(Value::as_str) == session
            {
                return message;
            }
        }
    }

    /// Field `name` of `result` (of `method`) as a string.
    #[track_caller]
    fn text(&self, result: &Value, name: &str, method: &str) -> String {
        match result.get(name).and_then(Value::as_str) {
            Some(text) => text.to_string(),
            None => self.fail(&format!("{method}: no {name} in {result}")),
        }
    }

    /// `Browser.close`, and Chromium's exit (killed if it does not).
    #[track_caller]
    fn close(mut self) {
        let id = self.send(None, "Browser.close", json!({}));
        // The response, or the pipe closing first: both mean it is closing.
        let left = self.deadline.saturating_duration_since(monotonic());
        while let Ok(Ok(message)) = self.from.recv_timeout(left) {
            if message.get("id").and_then(Value::as_u64) == Some(id) {
                break;
            }
        }
        let exited = poll(EXIT_TIMEOUT, || self.child.try_wait().ok().flatten());
        match exited {
            Some(status) if status.success() => {}
            Some(status) => self.fail(&format!("it exited with {status} after Browser.close")),
            None => self.fail(&format!(
                "it did not exit within {EXIT_TIMEOUT:?} of Browser.close (killed)"
            )),
        }
    }
}

impl Drop for Chromium {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// In the forked child: the read end `commands` onto fd 3, the write end
/// `replies` onto fd 4, both inherited across exec. Either may itself be 3
/// or 4, so both are first copied above 9 (close-on-exec copies, gone at
/// exec).
fn onto_fds_3_and_4(commands: RawFd, replies: RawFd) -> std::io::Result<()> {
    fn check(ret: libc::c_int) -> std::io::Result<libc::c_int> {
        if ret < 0 {
            Err(std::io::Error::last_os_error())
        } else {
            Ok(ret)
        }
    }
    // SAFETY: fcntl(2) and dup2(2) on descriptors this process holds.
    unsafe {
        let commands = check(libc::fcntl(commands, libc::F_DUPFD_CLOEXEC, 10))?;
        let replies = check(libc::fcntl(replies, libc::F_DUPFD_CLOEXEC, 10))?;
        check(libc::dup2(commands, 3))?;
        check(libc::dup2(replies, 4))?;
        for fd in [3, 4] {
            let flags = check(libc::fcntl(fd, libc::F_GETFD))?;
            check(libc::fcntl(fd, libc::F_SETFD, flags & !libc::FD_CLOEXEC))?;
        }
    }
    Ok(())
}

/// The reader thread: split what Chromium writes on NUL, parse each message,
/// send it on; ends at EOF (Chromium gone) or when nobody listens.
fn read_messages(mut replies: File, messages: Sender<Incoming>) {
    let mut buffer = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        let n = match replies.read(&mut chunk) {
            Ok(0) => return,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                let _ = messages.send(Err(format!("reading its fd 4: {e}")));
                return;
            }
        };
        let searched = buffer.len();
        buffer.extend_from_slice(&chunk[..n]);
        let mut start = 0;
        let mut at = searched;
        while let Some(end) = buffer[at..].iter().position(|&b| b == 0).map(|i| at + i) {
            let raw = &buffer[start..end];
            let message = serde_json::from_slice(raw).map_err(|e| {
                format!(
                    "a message that is not JSON ({e}): {:?}",
                    String::from_utf8_lossy(&raw[..raw.len().min(200)])
                )
            });
            if messages.send(message).is_err() {
                return;
            }
            start = end + 1;
            at = start;
        }
        buffer.drain(..start);
    }
}

/// Standard base64 (with or without padding); `None` on a byte outside it.
fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    let (mut bits, mut count) = (0u32, 0u32);
    for &c in text.as_bytes() {
        let value = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            b'=' => break,
            b'\r' | b'\n' => continue,
            _ => return None,
        };
        bits = (bits << 6) | u32::from(value);
        count += 6;
        if count >= 8 {
            count -= 8;
            out.push((bits >> count) as u8);
            bits &= (1 << count) - 1;
        }
    }
    Some(out)
}
