//! The OTLP/JSON document: the OpenTelemetry protocol's JSON encoding of spans
//! (`resourceSpans` → `scopeSpans` → `spans`), as an OTLP/HTTP collector accepts it.
//!
//! Encoding rules the types follow: ids are lowercase hex (not base64), 64-bit integers
//! (times in nanoseconds, `intValue`) are strings, enums (`kind`, `status.code`) are
//! integers, and fields at their default are left out.

use serde::Serialize;

/// A whole export: `{"resourceSpans":[…]}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OtlpTraces {
    /// The spans, grouped by the resource that produced them.
    pub resource_spans: Vec<ResourceSpans>,
}

/// Spans of one resource.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceSpans {
    /// What produced them.
    pub resource: Resource,
    /// The spans, grouped by instrumentation scope.
    pub scope_spans: Vec<ScopeSpans>,
}

/// A resource: attributes such as `service.name`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Resource {
    /// Its attributes.
    pub attributes: Vec<KeyValue>,
}

/// Spans of one instrumentation scope.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScopeSpans {
    /// The instrumentation that made them.
    pub scope: Scope,
    /// The spans.
    pub spans: Vec<Span>,
}

/// An instrumentation scope.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scope {
    /// Its name.
    pub name: String,
    /// Its version.
    pub version: String,
}

/// What a span measures, as OTLP numbers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpanKind {
    /// Work inside the application (`SPAN_KIND_INTERNAL`, 1).
    Internal = 1,
    /// A call to a remote service (`SPAN_KIND_CLIENT`, 3).
    Client = 3,
}

impl Serialize for SpanKind {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u8(*self as u8)
    }
}

/// One span.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Span {
    /// 32 hex digits.
    pub trace_id: String,
    /// 16 hex digits.
    pub span_id: String,
    /// The parent's span id; absent on the root span.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_span_id: Option<String>,
    /// `chat gemini-live-2.5-flash`, `execute_tool get_weather`, …
    pub name: String,
    /// What it measures.
    pub kind: SpanKind,
    /// Start, epoch nanoseconds, as a string.
    pub start_time_unix_nano: String,
    /// End, epoch nanoseconds, as a string.
    pub end_time_unix_nano: String,
    /// Its attributes.
    pub attributes: Vec<KeyValue>,
    /// How it ended.
    pub status: Status,
}

/// How a span ended: unset (`{}`), or an error with a message.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct Status {
    /// 2 (`STATUS_CODE_ERROR`) for an error; absent when unset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<u8>,
    /// What went wrong.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl Status {
    /// `STATUS_CODE_ERROR` with `message`.
    pub fn error(message: impl Into<String>) -> Self {
        Status {
            code: Some(2),
            message: Some(message.into()),
        }
    }
}

/// One attribute.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KeyValue {
    /// Its name, e.g. `gen_ai.request.model`.
    pub key: String,
    /// Its value.
    pub value: AnyValue,
}

/// An attribute's value.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum AnyValue {
    /// A string.
    StringValue(String),
    /// A 64-bit integer, written as a string.
    IntValue(String),
    /// A double.
    DoubleValue(f64),
    /// A boolean.
    BoolValue(bool),
    /// A list of values.
    ArrayValue(ArrayValue),
}

/// `{"values":[…]}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ArrayValue {
    /// The values.
    pub values: Vec<AnyValue>,
}

impl KeyValue {
    /// A string attribute.
    pub fn string(key: &str, value: impl Into<String>) -> Self {
        KeyValue {
            key: key.to_owned(),
            value: AnyValue::StringValue(value.into()),
        }
    }

    /// An integer attribute.
    pub fn int(key: &str, value: u64) -> Self {
        KeyValue {
            key: key.to_owned(),
            value: AnyValue::IntValue(value.to_string()),
        }
    }

    /// A double attribute.
    pub fn double(key: &str, value: f64) -> Self {
        KeyValue {
            key: key.to_owned(),
            value: AnyValue::DoubleValue(value),
        }
    }

    /// A boolean attribute.
    pub fn bool(key: &str, value: bool) -> Self {
        KeyValue {
            key: key.to_owned(),
            value: AnyValue::BoolValue(value),
        }
    }

    /// A list-of-strings attribute.
    pub fn strings(key: &str, values: impl IntoIterator<Item = String>) -> Self {
        KeyValue {
            key: key.to_owned(),
            value: AnyValue::ArrayValue(ArrayValue {
                values: values.into_iter().map(AnyValue::StringValue).collect(),
            }),
        }
    }
}
