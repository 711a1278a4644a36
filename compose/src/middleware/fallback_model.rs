//! `M::fallback_model`: a failed call asked again of another model.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use reel_llm::{BaseLlm, LlmError, LlmRequest, LlmResponse, LlmStream};

/// A model that, when a call fails, makes it again with the request's model replaced by
/// `fallback` (through the same `BaseLlm`, so a cassette records and replays both calls).
pub struct FallbackModelLlm {
    inner: Arc<dyn BaseLlm>,
    fallback: String,
}

impl FallbackModelLlm {
    /// `inner`, falling back to the model `fallback`.
    pub fn new(inner: Arc<dyn BaseLlm>, fallback: impl Into<String>) -> Self {
        FallbackModelLlm {
            inner,
            fallback: fallback.into(),
        }
    }
}

impl BaseLlm for FallbackModelLlm {
    fn model_id(&self) -> &str {
        self.inner.model_id()
    }

    fn generate_stream(&self, request: LlmRequest) -> BoxFuture<'_, Result<LlmStream, LlmError>> {
        Box::pin(async move {
            let mut again = request.clone();
            match self.inner.generate_stream(request).await {
                Ok(stream) => Ok(stream),
                Err(error) => {
                    tracing::warn!(target: "reel_compose", %error, fallback = %self.fallback, "model call failed; asking the fallback model");
                    again.model.clone_from(&self.fallback);
                    self.inner.generate_stream(again).await
                }
            }
        })
    }

    fn generate(&self, request: LlmRequest) -> BoxFuture<'_, Result<LlmResponse, LlmError>> {
        Box::pin(async move {
            let mut again = request.clone();
            match self.inner.generate(request).await {
                Ok(response) => Ok(response),
                Err(error) => {
                    tracing::warn!(target: "reel_compose", %error, fallback = %self.fallback, "model call failed; asking the fallback model");
                    again.model.clone_from(&self.fallback);
                    self.inner.generate(again).await
                }
            }
        })
    }
}
