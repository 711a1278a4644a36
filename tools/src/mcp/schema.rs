//! An MCP tool's input schema (JSON Schema) → the declaration's `parameters`.
//!
//! The Live API's `parameters` is an OpenAPI-style subset, which is what the official
//! Gen AI SDKs send for MCP tools too; [`live_schema`] does the rewriting (references
//! inlined, unknown keywords dropped). A tool without properties declares no parameters
//! (the API rejects an object schema with empty `properties`).

use serde_json::Value;

use crate::live_schema;

/// The `parameters` for an MCP input schema, or `None` for a tool without parameters.
pub(crate) fn parameters(input_schema: &Value) -> Option<Value> {
    let schema = live_schema(input_schema);
    let has_properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|properties| !properties.is_empty());
    has_properties.then_some(schema)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn json_schema_becomes_live_parameters() {
        let schema = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {
                "timezone": {"type": "string", "description": "IANA zone"},
                "hour": {"type": ["integer", "null"]}
            },
            "required": ["timezone"],
            "additionalProperties": false
        });
        assert_eq!(
            parameters(&schema),
            Some(json!({
                "type": "object",
                "properties": {
                    "timezone": {"type": "string", "description": "IANA zone"},
                    "hour": {"type": "integer", "nullable": true}
                },
                "required": ["timezone"]
            }))
        );
        assert_eq!(
            parameters(&json!({"type": "object", "properties": {}})),
            None
        );
        assert_eq!(parameters(&json!({"type": "object"})), None);
    }
}
