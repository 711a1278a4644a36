//! Starting a live session: at an endpoint given in code, Google AI with a key, Vertex AI
//! with a token, or wherever the environment says.

use reel_actors::LiveHandle;
use reel_protocol::{ApiEndpoint, Secret};

use crate::builder::LiveBuilder;
use crate::error::ConnectError;
use crate::recording::Recorders;

impl LiveBuilder {
    /// Checks the chain, connects to its MCP servers (if any) and takes their tools,
    /// creates the recording files, opens the model-call cassette (if the chain has one),
    /// starts the session at `endpoint` and waits until it is live (the
    /// server accepted the setup). The greeting, if any, is the first frame after the setup
    /// is accepted.
    ///
    /// Any endpoint works: the real API, or a local server such as the tape server
    /// (`ApiEndpoint::google_ai("").without_credential().with_base_url("ws://127.0.0.1:9000")`).
    ///
    /// ```no_run
    /// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
    /// use reel_fluent::Live;
    /// use reel_protocol::ApiEndpoint;
    ///
    /// let endpoint = ApiEndpoint::google_ai("").without_credential().with_base_url("ws://127.0.0.1:9000");
    /// let handle = Live::builder().text_only().greeting("Hello!").connect(endpoint).await?;
    /// handle.disconnect().await;
    /// # Ok(())
    /// # }
    /// ```
    pub async fn connect(self, endpoint: ApiEndpoint) -> Result<LiveHandle, ConnectError> {
        // The chain is checked before any MCP server is started.
        self.plan()?;
        #[cfg(feature = "mcp")]
        let discovered = self.mcp.discover().await?;
        #[cfg(not(feature = "mcp"))]
        let discovered = Vec::new();
        let mut plan = self.plan_with(&discovered, false)?;
        let studio = self.recording.connect_studio().await?;
        let recorders: Recorders = self.recording.open()?.with_studio(studio.clone());
        self.orchestration.bind_live(self.recording.wire_path())?;
        if let (Some(wire), Some((flow, _))) = (self.recording.wire_path(), &plan.gate) {
            crate::govern::write_flow_beside(wire, flow)?;
        }
        if let Some((path, mode)) = plan.live_cassette.take() {
            let cassette = self
                .llm
                .open(&path, mode)
                .map_err(|source| ConnectError::Cassette { path, source })?;
            plan.cassette = Some(cassette.interceptor());
        }
        // With conversation control the initial phase's context goes first, then the
        // greeting: `wait_until_live` returns once that context is queued or sent, so the
        // order on the wire is the same every time (decision 0050).
        let steers = plan.steers();
        let session = plan.session_builder(endpoint, recorders);
        if let Some(link) = &studio {
            link.forward_notes(session.subscribe());
        }
        let handle = session.spawn().await?;
        let mut greeting = self.greeting;
        if !steers && let Some(greeting) = greeting.take() {
            // Waits in the transport until the setup is accepted, then leaves first. A
            // failure means the session already ended, which is reported just below.
            let _ = handle.send_text(greeting);
        }
        handle.wait_until_live().await?;
        if let Some(greeting) = greeting {
            // Live: a failure means the session ended already; `join` says why.
            let _ = handle.send_text(greeting);
        }
        Ok(handle)
    }

    /// [`connect`](LiveBuilder::connect) to Google AI with an API key.
    ///
    /// ```no_run
    /// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
    /// use reel_fluent::Live;
    /// let key = std::env::var("GEMINI_API_KEY")?;
    /// let handle = Live::builder().text_only().connect_google_ai(key).await?;
    /// # drop(handle);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn connect_google_ai(
        self,
        api_key: impl Into<Secret>,
    ) -> Result<LiveHandle, ConnectError> {
        self.connect(ApiEndpoint::google_ai(api_key)).await
    }

    /// [`connect`](LiveBuilder::connect) to Vertex AI in `project` and `location`
    /// (`global` included) with an OAuth2 access token.
    ///
    /// ```no_run
    /// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
    /// use reel_fluent::Live;
    /// let token = std::env::var("GOOGLE_ACCESS_TOKEN")?;
    /// let handle = Live::builder().connect_vertex("my-project", "us-central1", token).await?;
    /// # drop(handle);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn connect_vertex(
        self,
        project: impl Into<String>,
        location: impl Into<String>,
        token: impl Into<Secret>,
    ) -> Result<LiveHandle, ConnectError> {
        self.connect(ApiEndpoint::vertex(project, location, token))
            .await
    }

    /// [`connect`](LiveBuilder::connect) where the environment says: Google AI with
    /// `GEMINI_API_KEY` (or `GOOGLE_GENAI_API_KEY` / `GOOGLE_API_KEY`), or Vertex AI when
    /// `GOOGLE_GENAI_USE_VERTEXAI=true` (`GOOGLE_CLOUD_PROJECT`, `GOOGLE_CLOUD_LOCATION`,
    /// `GOOGLE_ACCESS_TOKEN`). A missing variable is a [`ConnectError::Endpoint`] naming it;
    /// the chain is checked first.
    ///
    /// ```no_run
    /// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
    /// use reel_fluent::Live;
    /// let handle = Live::builder().text_only().greeting("Hello!").connect_from_env().await?;
    /// # drop(handle);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn connect_from_env(self) -> Result<LiveHandle, ConnectError> {
        // A mistake in the chain is reported even where no credentials are set.
        self.validate()?;
        let endpoint = ApiEndpoint::from_env()?;
        self.connect(endpoint).await
    }
}
