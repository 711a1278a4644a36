//! [`McpServer`]: where an MCP server is and which of its tools a session takes.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use reel_protocol::Secret;

use super::McpMessage;
use super::traffic::Observer;

/// How long [`McpServer::connect`] may take (start, handshake, `tools/list`) unless
/// [`McpServer::connect_timeout`] says otherwise.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// How to reach the server.
#[derive(Clone)]
pub(crate) enum Transport {
    /// A child process speaking newline-delimited JSON-RPC on its stdin and stdout.
    Stdio {
        command: String,
        args: Vec<String>,
        env: Vec<(String, String)>,
        current_dir: Option<PathBuf>,
    },
    /// MCP's streamable HTTP transport at a URL.
    Http { url: String, bearer: Option<Secret> },
}

/// An MCP server whose tools a session offers the model: a command started as a child
/// process (stdio), or a URL (streamable HTTP). Nothing happens until
/// [`connect`](McpServer::connect) (which `Live::builder().mcp(..)` calls when the session
/// connects, never in a replay).
///
/// ```
/// use std::time::Duration;
/// use reel_tools::mcp::McpServer;
///
/// let time = McpServer::stdio("uvx", ["mcp-server-time", "--local-timezone", "Europe/London"])
///     .allow(["get_current_time"])
///     .prefix("clock_");
/// assert_eq!(time.label(), "uvx mcp-server-time --local-timezone Europe/London");
///
/// let search = McpServer::http("https://mcp.example.com/mcp?key=abc").connect_timeout(Duration::from_secs(5));
/// assert_eq!(search.label(), "https://mcp.example.com/mcp"); // the query may hold a secret
/// ```
#[derive(Clone)]
pub struct McpServer {
    pub(crate) transport: Transport,
    pub(crate) prefix: String,
    pub(crate) allow: Option<Vec<String>>,
    pub(crate) connect_timeout: Duration,
    pub(crate) observer: Option<Observer>,
}

impl McpServer {
    /// A server started as `command args…`, spoken to over its stdin and stdout. Its stderr
    /// goes to this process's stderr. The process lives as long as the tools taken from it
    /// (the session's), and is killed when they are dropped.
    pub fn stdio(
        command: impl Into<String>,
        args: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        McpServer::with(Transport::Stdio {
            command: command.into(),
            args: args.into_iter().map(Into::into).collect(),
            env: Vec::new(),
            current_dir: None,
        })
    }

    /// A server at `url`, over MCP's streamable HTTP transport (`http://` or `https://`;
    /// TLS is rustls with the webpki roots).
    pub fn http(url: impl Into<String>) -> Self {
        McpServer::with(Transport::Http {
            url: url.into(),
            bearer: None,
        })
    }

    fn with(transport: Transport) -> Self {
        McpServer {
            transport,
            prefix: String::new(),
            allow: None,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            observer: None,
        }
    }

    /// Sets an environment variable of a stdio server's process (ignored for HTTP). Values
    /// never appear in a label, a log line or an error: pass credentials here, not in the
    /// arguments.
    #[must_use]
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        if let Transport::Stdio { env, .. } = &mut self.transport {
            env.push((key.into(), value.into()));
        }
        self
    }

    /// The working directory of a stdio server's process (ignored for HTTP).
    #[must_use]
    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        if let Transport::Stdio { current_dir, .. } = &mut self.transport {
            *current_dir = Some(dir.into());
        }
        self
    }

    /// Sends `Authorization: Bearer <token>` to an HTTP server (ignored for stdio).
    #[must_use]
    pub fn bearer_token(mut self, token: impl Into<Secret>) -> Self {
        if let Transport::Http { bearer, .. } = &mut self.transport {
            *bearer = Some(token.into());
        }
        self
    }

    /// Declares the server's tools as `prefix` + their name (`fs_` + `read_file`), to keep
    /// them apart from native tools and other servers' tools. Calls reach the server under
    /// the tool's own name.
    #[must_use]
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// Takes only these of the server's tools (their names on the server, without the
    /// prefix). A name the server does not offer is an [`McpError::NotOffered`](super::McpError::NotOffered)
    /// at connect time. Without an allow-list every tool is taken.
    #[must_use]
    pub fn allow(mut self, names: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.allow = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// How long connecting may take: starting the process or reaching the URL, the MCP
    /// handshake and listing the tools ([`DEFAULT_CONNECT_TIMEOUT`], 30 s, by default).
    #[must_use]
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Calls `observe` with every JSON-RPC 2.0 message of each connection to this server,
    /// in the order they went over the transport — the handshake (`initialize`, its
    /// result, `notifications/initialized`), `tools/list`, each `tools/call` and its
    /// result — and then [`McpMessage::Closed`] when the connection is closed (its tools
    /// dropped). `observe` runs on the connection's task: keep it short. Messages are
    /// shown as JSON, exactly as the SDK serializes them (a stdio server's bytes on the
    /// pipe; an HTTP server's request and response bodies).
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use reel_tools::mcp::{McpMessage, McpServer};
    ///
    /// let seen: Arc<Mutex<Vec<McpMessage>>> = Arc::default();
    /// let log = Arc::clone(&seen);
    /// let server = McpServer::stdio("python3", ["-m", "mcp_server_time"])
    ///     .on_message(move |message| log.lock().unwrap().push(message.clone()));
    /// # drop(server);
    /// ```
    #[must_use]
    pub fn on_message(mut self, observe: impl Fn(&McpMessage) + Send + Sync + 'static) -> Self {
        self.observer = Some(Observer::new(observe));
        self
    }

    /// The prefix given to the server's tools (empty by default).
    pub fn tool_prefix(&self) -> &str {
        &self.prefix
    }

    /// The allow-list, if one was given (the tools' names on the server).
    pub fn allowed(&self) -> Option<&[String]> {
        self.allow.as_deref()
    }

    /// Whether a tool declared as `name` may be one of this server's, judging by the
    /// prefix and the allow-list alone (without connecting). A replay, which never
    /// connects, uses it to tell the server's recorded tools from the rest.
    ///
    /// ```
    /// use reel_tools::mcp::McpServer;
    ///
    /// let server = McpServer::http("http://127.0.0.1:8931/mcp").prefix("web_").allow(["search"]);
    /// assert!(server.may_declare("web_search"));
    /// assert!(!server.may_declare("web_fetch"));
    /// assert!(!server.may_declare("get_time"));
    /// assert!(McpServer::stdio("srv", ["--stdio"]).may_declare("anything"));
    /// ```
    pub fn may_declare(&self, name: &str) -> bool {
        name.strip_prefix(self.prefix.as_str())
            .is_some_and(|remote| {
                self.allow
                    .as_ref()
                    .is_none_or(|allow| allow.iter().any(|a| a == remote))
            })
    }

    /// The server in errors and logs: the command line (`python -m server`), or the URL
    /// without its query, fragment or user info (which may carry credentials).
    pub fn label(&self) -> String {
        match &self.transport {
            Transport::Stdio { command, args, .. } => std::iter::once(command.as_str())
                .chain(args.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" "),
            Transport::Http { url, .. } => redacted_url(url),
        }
    }
}

impl fmt::Debug for McpServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpServer")
            .field("server", &self.label())
            .field("prefix", &self.prefix)
            .field("allow", &self.allow)
            .field("connect_timeout", &self.connect_timeout)
            .field("observed", &self.observer.is_some())
            .finish_non_exhaustive()
    }
}

/// `url` without user info, query and fragment.
fn redacted_url(url: &str) -> String {
    let end = url.find(['?', '#']).unwrap_or(url.len());
    let url = &url[..end];
    match url.split_once("://") {
        Some((scheme, rest)) => {
            let host_start = match rest.find('/') {
                Some(slash) => rest[..slash].rfind('@').map_or(0, |at| at + 1),
                None => rest.rfind('@').map_or(0, |at| at + 1),
            };
            format!("{scheme}://{}", &rest[host_start..])
        }
        None => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_never_show_credentials() {
        assert_eq!(
            McpServer::http("https://user:pw@mcp.example.com/mcp?token=x#f").label(),
            "https://mcp.example.com/mcp"
        );
        assert_eq!(
            McpServer::http("http://127.0.0.1:8080").label(),
            "http://127.0.0.1:8080"
        );
        assert_eq!(
            McpServer::stdio("python3", ["-m", "server"])
                .env("API_KEY", "secret")
                .label(),
            "python3 -m server"
        );
    }
}
