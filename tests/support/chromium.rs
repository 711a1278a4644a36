//! Headless Chromium for tests, driven over the DevTools protocol (a WebSocket of JSON
//! commands): Debian's `chromium` package, installed by the test itself when missing (CI
//! reaches Debian's mirrors; skipped with a message where it cannot be installed), started on a loopback debugging port with a profile of its
//! own.

#![allow(dead_code)] // each test file uses its own subset

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// Where Debian's package puts the browser.
const CANDIDATES: [&str; 2] = ["/usr/bin/chromium", "/usr/bin/chromium-browser"];

fn installed() -> Option<PathBuf> {
    CANDIDATES
        .iter()
        .map(PathBuf::from)
        .find(|candidate| candidate.exists())
}

/// The Chromium binary, installed once with apt-get when it is not there; `Err` says why it
/// cannot be had here.
fn chromium() -> &'static Result<PathBuf, String> {
    static BINARY: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    BINARY.get_or_init(|| {
        crate::system_packages::ensure(&["chromium"], || installed().is_some())?;
        installed().ok_or_else(|| "chromium installed, but not found".to_owned())
    })
}

/// Whether headless Chromium can run here; where it cannot (not installed and not
/// installable: no root, no apt-get), says so for `test` and returns false, and the test
/// returns early (skipped).
pub fn available(test: &str) -> bool {
    match chromium() {
        Ok(_) => true,
        Err(why) => {
            crate::system_packages::skip(test, why);
            false
        }
    }
}

/// The Chromium binary (the test has checked [`available`]).
pub fn chromium_binary() -> &'static Path {
    match chromium() {
        Ok(path) => path,
        Err(why) => panic!("chromium: {why}"),
    }
}

/// A headless Chromium and one page of it.
pub struct Browser {
    child: Child,
    ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
    session: String,
    next_id: u64,
}

impl Browser {
    /// Starts Chromium with a fresh profile in `profile` and opens a blank page.
    pub async fn start(profile: &Path) -> Browser {
        let mut child = Command::new(chromium_binary())
            .args([
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--no-first-run",
                "--mute-audio",
                "--autoplay-policy=no-user-gesture-required",
                "--remote-debugging-address=127.0.0.1",
                "--remote-debugging-port=0",
                "--window-size=1280,900",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg("about:blank")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("chromium starts");
        let stderr = BufReader::new(child.stderr.take().expect("piped"));
        let url = tokio::task::spawn_blocking(move || {
            for line in stderr.lines() {
                let line = line.expect("chromium's stderr");
                if let Some(url) = line.strip_prefix("DevTools listening on ") {
                    return url.trim().to_owned();
                }
            }
            panic!("chromium exited before listening");
        })
        .await
        .unwrap();
        let (ws, _) = tokio_tungstenite::connect_async(&url).await.unwrap();
        let mut browser = Browser {
            child,
            ws,
            session: String::new(),
            next_id: 0,
        };
        let target = browser
            .call_browser("Target.createTarget", json!({"url": "about:blank"}))
            .await;
        let target_id = target["targetId"].as_str().unwrap().to_owned();
        let attached = browser
            .call_browser(
                "Target.attachToTarget",
                json!({"targetId": target_id, "flatten": true}),
            )
            .await;
        browser.session = attached["sessionId"].as_str().unwrap().to_owned();
        browser.call("Page.enable", json!({})).await;
        browser.call("Runtime.enable", json!({})).await;
        browser
    }

    async fn send(&mut self, method: &str, params: Value, session: Option<String>) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut message = json!({"id": id, "method": method, "params": params});
        if let Some(session) = session {
            message["sessionId"] = json!(session);
        }
        self.ws
            .send(Message::Text(message.to_string().into()))
            .await
            .unwrap();
        loop {
            let Some(Ok(Message::Text(text))) = self.ws.next().await else {
                panic!("the DevTools connection ended during {method}");
            };
            let answer: Value = serde_json::from_str(&text).unwrap();
            if answer["id"] == json!(id) {
                assert!(
                    answer.get("error").is_none(),
                    "{method} failed: {}",
                    answer["error"]
                );
                return answer["result"].clone();
            }
        }
    }

    async fn call_browser(&mut self, method: &str, params: Value) -> Value {
        self.send(method, params, None).await
    }

    /// A DevTools command on the page.
    pub async fn call(&mut self, method: &str, params: Value) -> Value {
        let session = self.session.clone();
        self.send(method, params, Some(session)).await
    }

    /// Opens `url` in the page.
    pub async fn goto(&mut self, url: &str) {
        self.call("Page.navigate", json!({"url": url})).await;
    }

    /// Evaluates `expression` in the page (promises awaited) and returns its value.
    pub async fn eval(&mut self, expression: &str) -> Value {
        let result = self
            .call(
                "Runtime.evaluate",
                json!({"expression": expression, "awaitPromise": true, "returnByValue": true}),
            )
            .await;
        assert!(
            result.get("exceptionDetails").is_none(),
            "{expression} threw: {}",
            result["exceptionDetails"]
        );
        result["result"]["value"].clone()
    }

    /// Waits (up to 20 s of real time) until `expression` is truthy; returns its value.
    pub async fn wait_for(&mut self, expression: &str) -> Value {
        for _ in 0..400 {
            let value = self
                .eval(&format!(
                    "(() => {{ try {{ return {expression}; }} catch (e) {{ return null; }} }})()"
                ))
                .await;
            let truthy = !matches!(&value, Value::Null | Value::Bool(false))
                && value != json!(0)
                && value != json!("");
            if truthy {
                return value;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("never true: {expression}");
    }

    /// A left click at page coordinates `(x, y)`.
    pub async fn click(&mut self, x: f64, y: f64) {
        for kind in ["mouseMoved", "mousePressed", "mouseReleased"] {
            self.call(
                "Input.dispatchMouseEvent",
                json!({"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1}),
            )
            .await;
        }
    }

    /// Saves a screenshot of the page as PNG at `path`.
    pub async fn screenshot(&mut self, path: &Path) {
        let shot = self
            .call("Page.captureScreenshot", json!({"format": "png"}))
            .await;
        let data = shot["data"].as_str().unwrap();
        let bytes = reel_protocol::Base64Data::decode(data).unwrap();
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, &bytes.0).unwrap();
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
