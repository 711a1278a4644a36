//! [`Args`]: a function call's arguments, kept as the JSON text the frame carried and read
//! into a [`Value`] only when something asks for one (decision 0073).

use std::fmt;
use std::sync::OnceLock;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// The arguments of a [`FunctionCall`](crate::FunctionCall): one JSON value (an object, as
/// the model sends them).
///
/// A `toolCall` frame's arguments are kept as the text the frame carried: decoding builds no
/// value tree. A typed tool reads its struct straight from that text
/// ([`Args::deserialize`]); [`Args::value`] builds the [`Value`] the first time something
/// asks for one and keeps it. Everything else behaves as the `Value` does: equality (of the
/// values, whatever the spacing of the text), `Debug`, `Display`, and serde, which reads
/// and writes the JSON itself, so a re-encoded frame or a recorded event is byte for byte
/// what it was when `args` was a `Value` (key order kept: decision 0001).
///
/// ```
/// use reel_protocol::Args;
/// use serde::Deserialize;
/// use serde_json::json;
///
/// let args = Args::parse(r#"{"city": "Lisbon", "days": 3}"#)?;
/// assert_eq!(args.value(), &json!({ "city": "Lisbon", "days": 3 }));
/// assert_eq!(args.to_string(), r#"{"city":"Lisbon","days":3}"#);
/// assert_eq!(args, Args::from(json!({ "city": "Lisbon", "days": 3 })));
///
/// #[derive(Deserialize)]
/// struct Weather {
///     city: String,
///     days: u8,
/// }
/// let weather: Weather = args.deserialize()?;
/// assert_eq!((weather.city.as_str(), weather.days), ("Lisbon", 3));
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone)]
pub struct Args {
    /// One JSON value serde_json's `Value` reader accepts, nested at most 100 levels
    /// (`tool_call_frame::MAX_ARGS_DEPTH`), so that reading it again cannot fail; or, when
    /// `value` was given (`From<Value>`, serde), that value as serde_json writes it.
    json: Box<str>,
    /// The value of `json`, once something asked for it (or given at construction); boxed
    /// so that `Args` (32 bytes) is smaller than the `Value` (72 bytes) it replaced, not
    /// larger (96 bytes unboxed): the frames and events that carry it stay small.
    value: OnceLock<Box<Value>>,
}

impl Args {
    /// Arguments from JSON text, kept as given: an error (serde_json's, with its line and
    /// column) when the text is not one JSON value.
    pub fn parse(json: &str) -> Result<Args, serde_json::Error> {
        let value: Value = serde_json::from_str(json)?;
        Ok(Args {
            json: json.into(),
            value: OnceLock::from(Box::new(value)),
        })
    }

    /// No arguments: `{}`.
    pub fn empty() -> Args {
        Args::from(Value::Object(serde_json::Map::new()))
    }

    /// `null`: what a call without arguments is recorded with.
    pub fn null() -> Args {
        Args::from(Value::Null)
    }

    /// Arguments from text a short reader checked: one JSON value of at most
    /// `MAX_ARGS_DEPTH` levels that serde_json's `Value` reader reads without error.
    pub(crate) fn from_checked(json: &str) -> Args {
        Args {
            json: json.into(),
            value: OnceLock::new(),
        }
    }

    /// Whether the value was built (or given): tests check that decoding builds none.
    #[cfg(test)]
    pub(crate) fn value_built(&self) -> bool {
        self.value.get().is_some()
    }

    /// The JSON text: as the frame carried it (spacing included) when the arguments came
    /// from a `toolCall` frame, otherwise as serde_json writes the value.
    pub fn json(&self) -> &str {
        &self.json
    }

    /// The arguments as a JSON value: built from the text the first time, then kept.
    pub fn value(&self) -> &Value {
        self.value.get_or_init(|| {
            // The text is one JSON value serde_json reads (see `json`), so this never
            // falls back; `null` would be the value of nothing, not a panic.
            Box::new(serde_json::from_str(&self.json).unwrap_or(Value::Null))
        })
    }

    /// The arguments as a JSON value, owned (built from the text unless one is kept).
    pub fn into_value(self) -> Value {
        match self.value.into_inner() {
            Some(value) => *value,
            // As in `value`: the text always reads.
            None => serde_json::from_str(&self.json).unwrap_or(Value::Null),
        }
    }

    /// The arguments read into `T` straight from the text, with no value tree in between
    /// (from the kept value when there is one). On an error the message is the one
    /// `serde_json::from_value(args.value().clone())` gives, which names no line or column.
    ///
    /// The same `T` as `serde_json::from_value` would make: the text holds no key twice
    /// (a frame with one is read through the value), and serde_json reads numbers and
    /// strings the same way from text as into a value.
    pub fn deserialize<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        if let Some(value) = self.value.get() {
            return T::deserialize(&**value);
        }
        serde_json::from_str(&self.json).or_else(|_| T::deserialize(self.value()))
    }
}

impl From<Value> for Args {
    fn from(value: Value) -> Args {
        Args {
            json: value.to_string().into(),
            value: OnceLock::from(Box::new(value)),
        }
    }
}

impl From<Args> for Value {
    fn from(args: Args) -> Value {
        args.into_value()
    }
}

impl PartialEq for Args {
    /// Equal when their values are: the same text needs no value built.
    fn eq(&self, other: &Args) -> bool {
        self.json == other.json || self.value() == other.value()
    }
}

impl PartialEq<Value> for Args {
    fn eq(&self, other: &Value) -> bool {
        self.value() == other
    }
}

impl<I: serde_json::value::Index> std::ops::Index<I> for Args {
    type Output = Value;

    /// `args["city"]`, `args[0]`: the value's indexing (`Value::Null` for what is not there).
    fn index(&self, index: I) -> &Value {
        &self.value()[index]
    }
}

impl fmt::Debug for Args {
    /// The value's `Debug` (`Object {"city": String("Lisbon")}`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.value(), f)
    }
}

impl fmt::Display for Args {
    /// The value's `Display`: compact JSON (`{:#}`: indented).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.value(), f)
    }
}

impl Serialize for Args {
    /// The JSON value itself, as the `Value` writes it.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.value().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Args {
    /// Any JSON value.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Value::deserialize(deserializer).map(Args::from)
    }
}

impl crate::lenient::Expected for Args {
    const EXPECTED: &'static str = "any JSON value";
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn behaves_as_its_value() {
        let text = r#"{ "b": [1, 2.5, "x\n"], "a": {"z": null, "y": true} }"#;
        let kept = Args::from_checked(text);
        let given = Args::from(serde_json::from_str::<Value>(text).unwrap());
        assert_eq!(kept, given);
        assert_eq!(kept.json(), text);
        assert_eq!(
            given.json(),
            r#"{"b":[1,2.5,"x\n"],"a":{"z":null,"y":true}}"#
        );
        assert_eq!(kept.to_string(), given.json());
        assert_eq!(serde_json::to_string(&kept).unwrap(), given.json());
        assert_eq!(
            format!("{kept:?}"),
            format!("{:?}", serde_json::from_str::<Value>(text).unwrap())
        );
        assert_ne!(kept, Args::from(json!({"b": [1, 2.5, "x\n"]})));
        let back: Args = serde_json::from_str(text).unwrap();
        assert_eq!(back, kept);
        assert_eq!(Value::from(kept.clone()), *given.value());
        assert_eq!(Args::empty().json(), "{}");
        assert_eq!(Args::null().json(), "null");
        // Smaller than the `Value` it replaced (72 bytes with `preserve_order`).
        assert_eq!(std::mem::size_of::<Args>(), 32);
        assert!(std::mem::size_of::<Args>() < std::mem::size_of::<Value>());
        assert!(Args::parse("{").is_err());
    }

    #[test]
    fn deserializes_from_the_text_with_the_value_s_errors() {
        #[derive(Debug, PartialEq, serde::Deserialize)]
        struct Booking {
            party: u8,
            tags: Vec<String>,
        }
        let args = Args::from_checked(r#"{"party": 4, "tags": ["quiet"]}"#);
        assert_eq!(
            args.deserialize::<Booking>().unwrap(),
            Booking {
                party: 4,
                tags: vec!["quiet".to_owned()]
            }
        );
        assert!(args.value.get().is_none(), "no value was built");
        let bad = Args::from_checked(r#"{"party": "four", "tags": []}"#);
        assert_eq!(
            bad.deserialize::<Booking>().unwrap_err().to_string(),
            serde_json::from_value::<Booking>(bad.value().clone())
                .unwrap_err()
                .to_string()
        );
        assert_eq!(
            bad.deserialize::<Booking>().unwrap_err().to_string(),
            "invalid type: string \"four\", expected u8"
        );
    }
}
