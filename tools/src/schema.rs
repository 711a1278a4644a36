//! JSON Schema (as schemars writes it) → the schema the Live API takes for a function's
//! `parameters`.
//!
//! The Live API takes an OpenAPI 3.0 subset, not JSON Schema: it does not resolve `$ref`,
//! rejects keywords it does not know (`additionalProperties`, `$schema`, `const`, …), wants
//! `nullable: true` rather than a `"null"` type, accepts only a few `format`s, and rejects
//! an object schema with no properties. [`live_schema`] rewrites a JSON Schema into that
//! form; [`parameters_for`] does it for a Rust type.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value, json};

/// The keywords kept, in the order they are written. Everything else is dropped; a fixed
/// order keeps the setup frame's bytes independent of how the input was ordered.
const KEPT: &[&str] = &[
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "default",
    "example",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "items",
    "minProperties",
    "maxProperties",
    "properties",
    "required",
    "propertyOrdering",
    "anyOf",
];

/// How deep `$ref`s are followed before giving up (a guard against pathological input;
/// recursion itself is caught exactly, see [`Converter::resolve`]).
const MAX_DEPTH: usize = 64;

/// The parameters schema for `T` in the Live API's form, or `None` when `T` has no
/// properties (the API rejects an object schema with empty `properties`).
///
/// Doc comments become descriptions; `Option` and `#[serde(default)]` fields are not
/// required; properties keep their declaration order.
///
/// ```
/// use reel_tools::parameters_for;
/// use schemars::JsonSchema;
/// use serde::Deserialize;
///
/// #[derive(Deserialize, JsonSchema)]
/// struct Args {
///     /// The city.
///     city: String,
///     days: Option<u8>,
/// }
///
/// let schema = parameters_for::<Args>().unwrap_or_default();
/// assert_eq!(
///     schema.to_string(),
///     r#"{"type":"object","properties":{"city":{"type":"string","description":"The city."},"days":{"type":"integer","nullable":true,"minimum":0,"maximum":255}},"required":["city"]}"#
/// );
/// ```
pub fn parameters_for<T: JsonSchema>() -> Option<Value> {
    let generator = SchemaSettings::draft2020_12()
        .with(|settings| {
            settings.meta_schema = None;
            settings.inline_subschemas = true;
        })
        .into_generator();
    let schema = live_schema(generator.into_root_schema_for::<T>().as_value());
    let has_properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|properties| !properties.is_empty());
    has_properties.then_some(schema)
}

/// Rewrites a JSON Schema into the OpenAPI-style form the Live API takes.
///
/// - `$ref`s into `$defs`/`definitions` are inlined (a recursive reference becomes
///   `{"type":"object"}`, since the API cannot express recursion); the definitions go.
/// - `"type": [T, "null"]`, `null` in `enum` and a `{"type":"null"}` branch of
///   `anyOf`/`oneOf` become `"nullable": true`.
/// - `oneOf` becomes `anyOf`; an `anyOf` left with one branch, and `allOf`, are merged into
///   the schema; branches that are all string constants become one `enum`, their
///   descriptions appended to the schema's description.
/// - `const` becomes a one-value `enum`.
/// - `format` is kept only where the API accepts it (`int32`/`int64` on integers,
///   `float`/`double` on numbers, `enum`/`date-time` on strings).
/// - Only the keywords the API knows are kept (`$schema`, `additionalProperties`, … go),
///   in a fixed order, and the root's `title` goes; property order is kept.
///
/// ```
/// use reel_tools::live_schema;
/// use serde_json::json;
///
/// let schema = json!({
///     "$schema": "https://json-schema.org/draft/2020-12/schema",
///     "title": "Args",
///     "type": "object",
///     "properties": {
///         "seating": { "$ref": "#/$defs/Seating" },
///         "note": { "type": ["string", "null"] }
///     },
///     "additionalProperties": false,
///     "$defs": { "Seating": { "type": "string", "enum": ["indoor", "outdoor"] } }
/// });
/// assert_eq!(
///     live_schema(&schema).to_string(),
///     r#"{"type":"object","properties":{"seating":{"type":"string","enum":["indoor","outdoor"]},"note":{"type":"string","nullable":true}}}"#
/// );
/// ```
pub fn live_schema(schema: &Value) -> Value {
    let mut definitions = Map::new();
    if let Value::Object(root) = schema {
        for key in ["definitions", "$defs"] {
            if let Some(Value::Object(defs)) = root.get(key) {
                for (name, def) in defs {
                    definitions.insert(format!("#/{key}/{name}"), def.clone());
                }
            }
        }
    }
    let converter = Converter {
        definitions: &definitions,
    };
    let mut converted = converter.convert(schema, &mut Vec::new());
    if let Value::Object(root) = &mut converted {
        root.shift_remove("title");
    }
    converted
}

/// One pass over a schema, with the definitions its `$ref`s point at.
struct Converter<'a> {
    /// `#/$defs/Name` (or `#/definitions/Name`) → the definition.
    definitions: &'a Map<String, Value>,
}

impl Converter<'_> {
    /// Converts `schema`; `refs` holds the `$ref`s being expanded above this point.
    fn convert(&self, schema: &Value, refs: &mut Vec<String>) -> Value {
        let Value::Object(input) = schema else {
            // `true` / `false` schemas (anything / nothing) have no OpenAPI form.
            return Value::Object(Map::new());
        };
        let mut node = input.clone();
        let Some(Value::String(reference)) = node.remove("$ref") else {
            return self.convert_node(node, refs);
        };
        if refs.contains(&reference) || refs.len() >= MAX_DEPTH {
            // Recursion: the API cannot express it, so the inner level is a plain object.
            node.entry("type").or_insert_with(|| json!("object"));
            return self.convert_node(node, refs);
        }
        let Some(Value::Object(definition)) = self.definitions.get(&reference) else {
            return self.convert_node(node, refs);
        };
        // The reference's siblings (e.g. a field's description) win over the definition's.
        merge_missing(&mut node, definition.clone());
        refs.push(reference);
        let converted = self.convert(&Value::Object(node), refs);
        refs.pop();
        converted
    }

    /// Converts a schema that has no `$ref` left at its top.
    fn convert_node(&self, mut node: Map<String, Value>, refs: &mut Vec<String>) -> Value {
        normalize_nullability(&mut node);
        if let Some(constant) = node.remove("const") {
            node.entry("enum").or_insert_with(|| json!([constant]));
        }
        self.convert_children(&mut node, refs);
        fold_branches(&mut node);
        keep_valid_format(&mut node);
        reorder(node)
    }

    /// Converts `properties`, `items` and the branches of `anyOf`/`oneOf`/`allOf`.
    fn convert_children(&self, node: &mut Map<String, Value>, refs: &mut Vec<String>) {
        if let Some(Value::Object(properties)) = node.get_mut("properties") {
            for property in properties.values_mut() {
                *property = self.convert(property, refs);
            }
        }
        match node.get("items") {
            Some(items @ Value::Object(_)) => {
                let items = self.convert(items, refs);
                node.insert("items".into(), items);
            }
            Some(_) => {
                // Tuple forms (`items: false` with `prefixItems`): take the first element's
                // schema, the closest the API can express.
                let first = node
                    .get("prefixItems")
                    .and_then(Value::as_array)
                    .and_then(|items| items.first())
                    .map(|item| self.convert(item, refs));
                node.remove("items");
                if let Some(first) = first {
                    node.insert("items".into(), first);
                }
            }
            None => {}
        }
        for key in ["anyOf", "oneOf", "allOf"] {
            if let Some(Value::Array(branches)) = node.get_mut(key) {
                for branch in branches.iter_mut() {
                    *branch = self.convert(branch, refs);
                }
            }
        }
    }
}

/// Merges `allOf`, turns `oneOf` into `anyOf`, drops `null` branches (→ `nullable`),
/// and simplifies what is left.
fn fold_branches(node: &mut Map<String, Value>) {
    if let Some(Value::Array(all)) = node.remove("allOf") {
        for branch in all {
            if let Value::Object(branch) = branch {
                merge_missing(node, branch);
            }
        }
    }
    let mut branches = Vec::new();
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(list)) = node.remove(key) {
            branches.extend(list);
        }
    }
    if branches.is_empty() {
        return;
    }
    let before = branches.len();
    branches.retain(|branch| branch.get("type") != Some(&json!("null")));
    if branches.len() < before {
        node.insert("nullable".into(), Value::Bool(true));
    }
    if let Some(merged) = string_constants(&branches, node.get("description")) {
        merge_over(node, merged);
    } else if branches.len() == 1 {
        if let Some(Value::Object(only)) = branches.pop() {
            merge_missing(node, only);
        }
    } else if !branches.is_empty() {
        node.insert("anyOf".into(), Value::Array(branches));
    }
}

/// `"type": [T, "null"]` → `"type": T, "nullable": true`; `null` in `enum` → `nullable`.
fn normalize_nullability(node: &mut Map<String, Value>) {
    if let Some(Value::Array(types)) = node.get("type") {
        let nullable = types.iter().any(|t| t == "null");
        let mut rest: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
        match rest.len() {
            0 => {
                node.remove("type");
            }
            1 => {
                node.insert("type".into(), rest.remove(0));
            }
            _ => {
                // Several types: one `anyOf` branch per type.
                node.remove("type");
                let branches = rest.into_iter().map(|t| json!({ "type": t })).collect();
                node.insert("anyOf".into(), Value::Array(branches));
            }
        }
        if nullable {
            node.insert("nullable".into(), Value::Bool(true));
        }
    }
    if let Some(Value::Array(values)) = node.get_mut("enum") {
        let before = values.len();
        values.retain(|value| !value.is_null());
        if values.len() < before {
            node.insert("nullable".into(), Value::Bool(true));
        }
    }
}

/// Branches that are all string constants (`enum` of strings, as unit enum variants with
/// doc comments come out) → one `{"type":"string","enum":[…]}`, the variants' descriptions
/// appended to `description` as "`A`: doc; `B`: doc".
fn string_constants(branches: &[Value], description: Option<&Value>) -> Option<Map<String, Value>> {
    if branches.len() < 2 {
        return None;
    }
    let mut values = Vec::new();
    let mut notes = Vec::new();
    for branch in branches {
        let branch = branch.as_object()?;
        if branch.get("type").is_some_and(|t| t != "string")
            || branch
                .keys()
                .any(|key| !matches!(key.as_str(), "type" | "enum" | "description"))
        {
            return None;
        }
        let variants = branch.get("enum")?.as_array()?;
        for variant in variants {
            let name = variant.as_str()?;
            if let Some(Value::String(doc)) = branch.get("description") {
                notes.push(format!("`{name}`: {doc}"));
            }
            values.push(variant.clone());
        }
    }
    let mut merged = Map::new();
    merged.insert("type".into(), json!("string"));
    merged.insert("enum".into(), Value::Array(values));
    if !notes.is_empty() {
        let notes = notes.join("; ");
        let text = match description.and_then(Value::as_str) {
            Some(own) => format!("{own} ({notes})"),
            None => notes,
        };
        merged.insert("description".into(), Value::String(text));
    }
    Some(merged)
}

/// Drops a `format` the API would reject for the schema's type.
fn keep_valid_format(node: &mut Map<String, Value>) {
    let Some(Value::String(format)) = node.get("format") else {
        node.remove("format");
        return;
    };
    let accepted = match node.get("type").and_then(Value::as_str) {
        Some("integer") => matches!(format.as_str(), "int32" | "int64"),
        Some("number") => matches!(format.as_str(), "float" | "double"),
        Some("string") => matches!(format.as_str(), "enum" | "date-time"),
        _ => false,
    };
    if !accepted {
        node.remove("format");
    }
}

/// Adds `from`'s keywords that `into` lacks; `properties` are unioned (`into`'s win) and
/// `required` lists concatenated without repeats.
fn merge_missing(into: &mut Map<String, Value>, from: Map<String, Value>) {
    for (key, value) in from {
        match (key.as_str(), into.get_mut(&key), value) {
            ("properties", Some(Value::Object(own)), Value::Object(more)) => {
                for (name, schema) in more {
                    own.entry(name).or_insert(schema);
                }
            }
            ("required", Some(Value::Array(own)), Value::Array(more)) => {
                for name in more {
                    if !own.contains(&name) {
                        own.push(name);
                    }
                }
            }
            (_, Some(_), _) => {}
            (_, None, value) => {
                into.insert(key, value);
            }
        }
    }
}

/// Sets every keyword of `from` on `into`, replacing what was there.
fn merge_over(into: &mut Map<String, Value>, from: Map<String, Value>) {
    for (key, value) in from {
        into.insert(key, value);
    }
}

/// The kept keywords of `node`, in [`KEPT`] order.
fn reorder(mut node: Map<String, Value>) -> Value {
    let mut out = Map::new();
    for key in KEPT {
        if let Some(value) = node.remove(*key) {
            out.insert((*key).to_owned(), value);
        }
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use schemars::JsonSchema;
    use serde::Deserialize;

    use super::*;

    fn text(value: &Value) -> String {
        value.to_string()
    }

    #[test]
    fn nullable_forms_become_nullable_true() {
        let schema = json!({
            "type": "object",
            "properties": {
                "a": { "type": ["integer", "null"], "format": "int64" },
                "b": { "anyOf": [{ "type": "string", "enum": ["x", "y"] }, { "type": "null" }], "description": "B." },
                "c": { "type": ["string", "null"], "enum": ["x", null] }
            }
        });
        assert_eq!(
            text(&live_schema(&schema)),
            r#"{"type":"object","properties":{"a":{"type":"integer","format":"int64","nullable":true},"b":{"type":"string","description":"B.","nullable":true,"enum":["x","y"]},"c":{"type":"string","nullable":true,"enum":["x"]}}}"#
        );
    }

    #[test]
    fn refs_are_inlined_with_the_field_description_winning() {
        let schema = json!({
            "type": "object",
            "properties": {
                "inner": { "$ref": "#/$defs/Inner", "description": "Field doc." },
                "old": { "$ref": "#/definitions/Old" }
            },
            "$defs": { "Inner": { "description": "Type doc.", "type": "object", "properties": { "x": { "type": "integer" } }, "required": ["x"] } },
            "definitions": { "Old": { "type": "boolean" } }
        });
        assert_eq!(
            text(&live_schema(&schema)),
            r#"{"type":"object","properties":{"inner":{"type":"object","description":"Field doc.","properties":{"x":{"type":"integer"}},"required":["x"]},"old":{"type":"boolean"}}}"#
        );
    }

    #[test]
    fn recursive_refs_stop_at_a_plain_object() {
        let schema = json!({
            "$ref": "#/$defs/Node",
            "$defs": { "Node": { "type": "object", "properties": { "next": { "$ref": "#/$defs/Node" } } } }
        });
        assert_eq!(
            text(&live_schema(&schema)),
            r#"{"type":"object","properties":{"next":{"type":"object"}}}"#
        );
    }

    #[test]
    fn unit_variants_with_docs_fold_into_one_enum() {
        let schema = json!({
            "description": "Where to sit.",
            "oneOf": [
                { "type": "string", "const": "indoor", "description": "Inside." },
                { "type": "string", "const": "outdoor", "description": "On the terrace." }
            ]
        });
        assert_eq!(
            text(&live_schema(&schema)),
            r#"{"type":"string","description":"Where to sit. (`indoor`: Inside.; `outdoor`: On the terrace.)","enum":["indoor","outdoor"]}"#
        );
    }

    #[test]
    fn object_branches_stay_any_of_and_const_becomes_enum() {
        let schema = json!({
            "oneOf": [
                { "type": "object", "properties": { "kind": { "type": "string", "const": "a" } }, "required": ["kind"] },
                { "type": "object", "properties": { "kind": { "type": "string", "const": "b" } }, "required": ["kind"], "additionalProperties": false }
            ]
        });
        assert_eq!(
            text(&live_schema(&schema)),
            r#"{"anyOf":[{"type":"object","properties":{"kind":{"type":"string","enum":["a"]}},"required":["kind"]},{"type":"object","properties":{"kind":{"type":"string","enum":["b"]}},"required":["kind"]}]}"#
        );
    }

    #[test]
    fn unsupported_formats_and_keywords_are_dropped() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "Root",
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "n": { "type": "integer", "format": "uint32", "minimum": 0, "title": "N" },
                "f": { "type": "number", "format": "float" },
                "d": { "type": "string", "format": "date-time", "examples": ["x"] },
                "u": { "type": "string", "format": "uri", "readOnly": true },
                "l": { "type": "array", "items": { "type": "integer", "format": "int32" }, "uniqueItems": true }
            },
            "allOf": [{ "required": ["n"] }]
        });
        assert_eq!(
            text(&live_schema(&schema)),
            r#"{"type":"object","properties":{"n":{"type":"integer","title":"N","minimum":0},"f":{"type":"number","format":"float"},"d":{"type":"string","format":"date-time"},"u":{"type":"string"},"l":{"type":"array","items":{"type":"integer","format":"int32"}}},"required":["n"]}"#
        );
    }

    #[test]
    fn tuples_take_the_first_element_schema() {
        let schema = json!({ "type": "array", "prefixItems": [{ "type": "number" }, { "type": "string" }], "items": false });
        assert_eq!(
            text(&live_schema(&schema)),
            r#"{"type":"array","items":{"type":"number"}}"#
        );
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct NoArgs {}

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Nested {
        /// The stop.
        stop: Stop,
        stops: Vec<Stop>,
        later: Option<Stop>,
    }

    /// A stop on the way.
    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Stop {
        name: String,
        #[serde(default)]
        minutes: u32,
    }

    #[test]
    fn a_type_without_properties_has_no_parameters() {
        assert_eq!(parameters_for::<NoArgs>(), None);
    }

    #[test]
    fn nested_structs_are_inlined() {
        let schema = parameters_for::<Nested>().unwrap_or_default();
        assert_eq!(
            text(&schema),
            concat!(
                r#"{"type":"object","properties":{"#,
                r#""stop":{"type":"object","description":"The stop.","properties":{"name":{"type":"string"},"minutes":{"type":"integer","default":0,"minimum":0}},"required":["name"]},"#,
                r#""stops":{"type":"array","items":{"type":"object","description":"A stop on the way.","properties":{"name":{"type":"string"},"minutes":{"type":"integer","default":0,"minimum":0}},"required":["name"]}},"#,
                r#""later":{"type":"object","description":"A stop on the way.","nullable":true,"properties":{"name":{"type":"string"},"minutes":{"type":"integer","default":0,"minimum":0}},"required":["name"]}"#,
                r#"},"required":["stop","stops"]}"#
            )
        );
    }
}
