//! The second, lenient reading of a frame whose first reading met a field of the wrong type.
//!
//! The fast path reads a frame in one pass and stops at the first bad value: serde_json's
//! deserializer cannot go on after an error. So when that happens, and only then, the frame
//! is parsed into a [`serde_json::Value`] and read again field by field with
//! `WireStruct::read_lenient` (written by `wire_struct!`): a field whose value does not read
//! is left absent and reported as a [`FieldError`] at its JSON path, and everything beside
//! it is kept. An item of an array of messages (a part, a function call) is one unit: an
//! item that is not an object, or that has a bad field anywhere inside, is left out whole
//! (a part's audio without its data, or a call without its id, would be a wrong event),
//! and the items after it move up one place.
//!
//! A good frame never comes here, so this costs nothing on the hot path.

use std::fmt::Write as _;

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::field_error::{FieldError, Found};

/// Where the lenient reader is in the frame, and the field errors met so far.
#[derive(Debug, Default)]
pub(crate) struct Lenient {
    /// The JSON path of the value being read, e.g. `serverContent.modelTurn.parts[0]`.
    path: String,
    /// The field errors, in the order of the frame.
    pub(crate) errors: Vec<FieldError>,
}

impl Lenient {
    /// Reads the value under `key` of the current object with `read`.
    pub(crate) fn in_key(&mut self, key: &str, read: impl FnOnce(&mut Lenient)) {
        let len = self.path.len();
        if !self.path.is_empty() {
            self.path.push('.');
        }
        self.path.push_str(key);
        read(self);
        self.path.truncate(len);
    }

    /// Reads item `index` of the current array with `read`.
    pub(crate) fn in_index(&mut self, index: usize, read: impl FnOnce(&mut Lenient)) {
        let len = self.path.len();
        // Writing to a String cannot fail.
        let _ = write!(self.path, "[{index}]");
        read(self);
        self.path.truncate(len);
    }

    /// Reports the current value: it should have been `expected`, and was `found`.
    pub(crate) fn error(&mut self, expected: &'static str, found: Found) {
        let path = if self.path.is_empty() {
            ".".to_owned()
        } else {
            self.path.clone()
        };
        self.errors.push(FieldError {
            path,
            expected,
            found,
        });
    }

    /// Reads a field read by value (a scalar, a string enum, an array of those) from
    /// `value` into `place`; on failure, `place` stays absent and the error is reported at
    /// the field or, inside an array, at its item.
    pub(crate) fn by_value<T: DeserializeOwned + Expected>(
        &mut self,
        value: &Value,
        place: &mut Option<T>,
    ) {
        match serde_path_to_error::deserialize::<_, Option<T>>(value) {
            Ok(read) => *place = read,
            Err(error) => match inner_index(error.path()) {
                Some(index) => {
                    let found = value
                        .as_array()
                        .and_then(|items| items.get(index))
                        .map_or(Found::Null, Found::of);
                    self.in_index(index, |at| at.error(T::ITEM, found));
                }
                None => self.error(T::EXPECTED, Found::of(value)),
            },
        }
    }
}

/// The index of an array item, when the error is at one (the only depth a by-value field
/// has: arrays of strings).
fn inner_index(path: &serde_path_to_error::Path) -> Option<usize> {
    match path.iter().next() {
        Some(serde_path_to_error::Segment::Seq { index }) => Some(*index),
        _ => None,
    }
}

/// What a field type holds, said for a [`FieldError`].
pub(crate) trait Expected {
    /// What a valid value of the field is: `a boolean`, `base64 text`.
    const EXPECTED: &'static str;
    /// For an array, what each item is; otherwise the same as [`Expected::EXPECTED`].
    const ITEM: &'static str = Self::EXPECTED;
}

impl Expected for String {
    const EXPECTED: &'static str = "a string";
}

impl Expected for bool {
    const EXPECTED: &'static str = "a boolean";
}

impl Expected for i64 {
    const EXPECTED: &'static str = "an integer";
}

impl Expected for i32 {
    const EXPECTED: &'static str = "a 32-bit integer";
}

impl Expected for f64 {
    const EXPECTED: &'static str = "a number";
}

impl Expected for Value {
    const EXPECTED: &'static str = "any JSON value";
}

impl Expected for Vec<String> {
    const EXPECTED: &'static str = "an array of strings";
    const ITEM: &'static str = "a string";
}

impl Expected for crate::scalars::Base64Data {
    const EXPECTED: &'static str = "base64 text";
}

impl Expected for crate::scalars::Int64 {
    const EXPECTED: &'static str = "an int64 as a number or a decimal string";
}

impl Expected for crate::scalars::Int64Number {
    const EXPECTED: &'static str = "an int64 as a number or a decimal string";
}

impl Expected for crate::scalars::ProtoDuration {
    const EXPECTED: &'static str = "a duration string like \"9.5s\"";
}

impl Expected for Vec<crate::setup::Modality> {
    const EXPECTED: &'static str = "an array of strings (Modality)";
    const ITEM: &'static str = "a string (Modality)";
}
