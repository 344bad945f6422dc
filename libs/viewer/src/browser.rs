//! A headless Chromium driven over the DevTools protocol, for the viewer's browser test and the
//! render bench (feature `browser`; not needed to write reports).
//!
//! Chromium is started with `--remote-debugging-port=0`; it prints the WebSocket address of the
//! browser on stderr, and one page target is created and attached to (flattened session). Every
//! console message, uncaught exception and log entry of the page is kept, so that a test can
//! fail on any error.

use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tungstenite::stream::MaybeTlsStream;
use tungstenite::{Message, WebSocket};

/// Errors of the browser driver.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BrowserError {
    #[error(
        "no Chromium found (tried $CHROMIUM, chromium, chromium-browser, google-chrome): \
         install it (Debian: apt-get install chromium) or set CHROMIUM to its path"
    )]
    NotFound,
    #[error("starting {path}: {message}")]
    Start { path: String, message: String },
    #[error("DevTools protocol: {0}")]
    Protocol(String),
    #[error("timed out after {0:?} waiting for {1}")]
    Timeout(Duration, String),
}

/// A message the page logged, or an exception it threw.
#[derive(Debug, Clone)]
pub struct ConsoleEntry {
    /// `error`, `warning`, `log`, ..., or `exception`.
    pub level: String,
    pub text: String,
}

/// One headless Chromium with one page.
pub struct Browser {
    child: Child,
    ws: WebSocket<MaybeTlsStream<TcpStream>>,
    session: String,
    next_id: u64,
    events: Vec<Value>,
    _profile_dir: TempDir,
}

struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The Chromium to use: `$CHROMIUM`, else the first of the usual names on `PATH`.
pub fn find_chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    for name in [
        "chromium",
        "chromium-browser",
        "google-chrome",
        "google-chrome-stable",
    ] {
        for dir in std::env::split_paths(&path) {
            let p = dir.join(name);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}

const TIMEOUT: Duration = Duration::from_secs(60);

impl Browser {
    /// Starts a headless Chromium with a `width` × `height` window and attaches to a blank page.
    pub fn start(width: u32, height: u32) -> Result<Browser, BrowserError> {
        let exe = find_chromium().ok_or(BrowserError::NotFound)?;
        let dir = std::env::temp_dir().join(format!(
            "poplar-viewer-chromium-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos())
        ));
        let start_err = |message: String| BrowserError::Start {
            path: exe.display().to_string(),
            message,
        };
        std::fs::create_dir_all(&dir).map_err(|e| start_err(e.to_string()))?;
        let profile_dir = TempDir(dir.clone());
        let mut child = Command::new(&exe)
            .args([
                "--headless",
                // The tests run as root in containers, where Chromium's sandbox cannot start;
                // the page is our own file.
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-extensions",
                "--hide-scrollbars",
                "--remote-debugging-port=0",
                &format!("--window-size={width},{height}"),
                &format!("--user-data-dir={}", dir.display()),
                "about:blank",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| start_err(e.to_string()))?;
        // "DevTools listening on ws://127.0.0.1:PORT/devtools/browser/ID"
        let stderr = child.stderr.take().expect("stderr is piped");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut sent = false;
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if !sent {
                    if let Some(at) = line.find("ws://") {
                        let _ = tx.send(line[at..].trim().to_string());
                        sent = true;
                    }
                }
                // Keep draining, so that Chromium never blocks on a full pipe.
            }
        });
        let url = match rx.recv_timeout(TIMEOUT) {
            Ok(u) => u,
            Err(_) => {
                let _ = child.kill();
                return Err(start_err(
                    "it printed no DevTools address (is it a Chromium?)".into(),
                ));
            }
        };
        let (ws, _) = tungstenite::connect(url.as_str())
            .map_err(|e| BrowserError::Protocol(format!("connecting to {url}: {e}")))?;
        if let MaybeTlsStream::Plain(s) = ws.get_ref() {
            s.set_read_timeout(Some(Duration::from_millis(200)))
                .map_err(|e| BrowserError::Protocol(e.to_string()))?;
        }
        let mut b = Browser {
            child,
            ws,
            session: String::new(),
            next_id: 0,
            events: Vec::new(),
            _profile_dir: profile_dir,
        };
        let target = b.call("Target.createTarget", json!({"url": "about:blank"}))?;
        let target_id = target["targetId"].clone();
        let attached = b.call(
            "Target.attachToTarget",
            json!({"targetId": target_id, "flatten": true}),
        )?;
        b.session = attached["sessionId"]
            .as_str()
            .ok_or_else(|| BrowserError::Protocol("no session id".into()))?
            .to_string();
        for domain in ["Runtime.enable", "Log.enable", "Page.enable"] {
            b.call(domain, json!({}))?;
        }
        b.call(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}),
        )?;
        Ok(b)
    }

    fn read(&mut self) -> Result<Option<Value>, BrowserError> {
        match self.ws.read() {
            Ok(Message::Text(t)) => serde_json::from_str(&t)
                .map(Some)
                .map_err(|e| BrowserError::Protocol(e.to_string())),
            Ok(_) => Ok(None),
            Err(tungstenite::Error::Io(e))
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                Ok(None)
            }
            Err(e) => Err(BrowserError::Protocol(e.to_string())),
        }
    }

    /// Sends a command (to the page once attached) and waits for its result; events that
    /// arrive meanwhile are kept.
    pub fn call(&mut self, method: &str, params: Value) -> Result<Value, BrowserError> {
        self.next_id += 1;
        let id = self.next_id;
        let mut msg = json!({"id": id, "method": method, "params": params});
        if !self.session.is_empty() {
            msg["sessionId"] = json!(self.session);
        }
        self.ws
            .send(Message::Text(msg.to_string().into()))
            .map_err(|e| BrowserError::Protocol(format!("{method}: {e}")))?;
        let deadline = Instant::now() + TIMEOUT;
        while Instant::now() < deadline {
            if let Some(v) = self.read()? {
                if v["id"].as_u64() == Some(id) {
                    if let Some(err) = v.get("error") {
                        return Err(BrowserError::Protocol(format!("{method}: {err}")));
                    }
                    return Ok(v["result"].clone());
                }
                if v.get("method").is_some() {
                    self.events.push(v);
                }
            }
        }
        Err(BrowserError::Timeout(TIMEOUT, method.to_string()))
    }

    /// Opens `path` and waits until `document.documentElement.dataset.rendered` is set.
    /// Returns the wall time from the request to that moment.
    pub fn open_report(&mut self, path: &Path) -> Result<Duration, BrowserError> {
        let abs = std::fs::canonicalize(path)
            .map_err(|e| BrowserError::Protocol(format!("{}: {e}", path.display())))?;
        let t = Instant::now();
        self.call(
            "Page.navigate",
            json!({"url": format!("file://{}", abs.display())}),
        )?;
        let deadline = t + TIMEOUT;
        while Instant::now() < deadline {
            let v = self.eval(
                "(document.documentElement && document.documentElement.dataset.rendered) || ''",
            )?;
            if v.as_str() == Some("1") {
                return Ok(t.elapsed());
            }
            if self.console().iter().any(|c| c.level == "exception") {
                return Err(BrowserError::Protocol(format!(
                    "the page threw before it rendered: {:?}",
                    self.console()
                )));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        Err(BrowserError::Timeout(
            TIMEOUT,
            "the report to render".into(),
        ))
    }

    /// Evaluates a JavaScript expression in the page and returns its value (by value).
    pub fn eval(&mut self, expr: &str) -> Result<Value, BrowserError> {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": expr, "returnByValue": true, "awaitPromise": true}),
        )?;
        if let Some(ex) = r.get("exceptionDetails") {
            return Err(BrowserError::Protocol(format!("evaluating {expr}: {ex}")));
        }
        Ok(r["result"]["value"].clone())
    }

    /// A real mouse click at page coordinates (CSS pixels of the viewport).
    pub fn click(&mut self, x: f64, y: f64) -> Result<(), BrowserError> {
        for kind in ["mousePressed", "mouseReleased"] {
            self.call(
                "Input.dispatchMouseEvent",
                json!({"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1}),
            )?;
        }
        Ok(())
    }

    /// A PNG of the whole page.
    pub fn screenshot(&mut self) -> Result<Vec<u8>, BrowserError> {
        let r = self.call(
            "Page.captureScreenshot",
            json!({"format": "png", "captureBeyondViewport": true}),
        )?;
        let b64 = r["data"]
            .as_str()
            .ok_or_else(|| BrowserError::Protocol("no screenshot data".into()))?;
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD
            .decode(b64)
            .map_err(|e| BrowserError::Protocol(e.to_string()))
    }

    /// Everything the page logged or threw so far.
    pub fn console(&self) -> Vec<ConsoleEntry> {
        let mut out = Vec::new();
        for e in &self.events {
            let p = &e["params"];
            match e["method"].as_str() {
                Some("Runtime.consoleAPICalled") => out.push(ConsoleEntry {
                    level: p["type"].as_str().unwrap_or("").to_string(),
                    text: p["args"]
                        .as_array()
                        .map(|a| {
                            a.iter()
                                .map(|x| {
                                    x.get("value")
                                        .map(|v| v.to_string())
                                        .or_else(|| x["description"].as_str().map(String::from))
                                        .unwrap_or_default()
                                })
                                .collect::<Vec<_>>()
                                .join(" ")
                        })
                        .unwrap_or_default(),
                }),
                Some("Runtime.exceptionThrown") => out.push(ConsoleEntry {
                    level: "exception".into(),
                    text: p["exceptionDetails"].to_string(),
                }),
                Some("Log.entryAdded") => out.push(ConsoleEntry {
                    level: p["entry"]["level"].as_str().unwrap_or("").to_string(),
                    text: format!(
                        "{} ({})",
                        p["entry"]["text"].as_str().unwrap_or(""),
                        p["entry"]["url"].as_str().unwrap_or("")
                    ),
                }),
                _ => {}
            }
        }
        out
    }

    /// Entries at level `error` or uncaught exceptions.
    pub fn errors(&self) -> Vec<ConsoleEntry> {
        self.console()
            .into_iter()
            .filter(|c| c.level == "error" || c.level == "exception" || c.level == "assert")
            .collect()
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.ws.close(None);
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
