//! [`Extra`]: the fields of a message this version of reel does not know.
//!
//! Every wire struct carries one, and almost every one is empty: the server adds fields
//! rarely, and a frame has a handful of messages. A `serde_json::Map` is 72 bytes even when
//! empty, and a [`crate::Part`] nests seven wire structs, so an empty map in each made a part
//! 1.3 KB: past the allocator's per-thread cache for every `Vec<Part>` a frame decodes into,
//! and copied whole at every move. `Extra` is one pointer, and allocates its map at the first
//! unknown field. Reading it is reading a map (it dereferences to one, empty when nothing
//! was kept); writing it allocates the map if needed.

use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::LazyLock;

use serde_json::{Map, Value};

/// Fields of a message that this version of reel does not know, kept verbatim in the order
/// they arrived and written back after the known fields when the message is encoded.
///
/// Dereferences to a `serde_json::Map` (empty when nothing was kept), so it reads and writes
/// like one: `extra.is_empty()`, `extra["futureField"]`, `extra.insert(key, value)`.
#[derive(Clone, Default)]
pub struct Extra(Option<Box<Map<String, Value>>>);

/// What an empty [`Extra`] dereferences to.
static EMPTY: LazyLock<Map<String, Value>> = LazyLock::new(Map::new);

impl Extra {
    /// No fields.
    pub fn new() -> Self {
        Extra(None)
    }

    /// The fields as a map, taken out (empty when there were none).
    pub fn into_map(self) -> Map<String, Value> {
        self.0.map(|map| *map).unwrap_or_default()
    }
}

impl Deref for Extra {
    type Target = Map<String, Value>;

    fn deref(&self) -> &Map<String, Value> {
        self.0.as_deref().unwrap_or(&EMPTY)
    }
}

impl DerefMut for Extra {
    fn deref_mut(&mut self) -> &mut Map<String, Value> {
        self.0.get_or_insert_with(Box::default)
    }
}

impl PartialEq for Extra {
    /// Equal when they hold the same fields (an empty map and none are the same).
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl fmt::Debug for Extra {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl From<Map<String, Value>> for Extra {
    fn from(map: Map<String, Value>) -> Self {
        if map.is_empty() {
            Extra(None)
        } else {
            Extra(Some(Box::new(map)))
        }
    }
}

impl FromIterator<(String, Value)> for Extra {
    fn from_iter<I: IntoIterator<Item = (String, Value)>>(iter: I) -> Self {
        Extra::from(Map::from_iter(iter))
    }
}

impl IntoIterator for Extra {
    type Item = (String, Value);
    type IntoIter = serde_json::map::IntoIter;

    fn into_iter(self) -> Self::IntoIter {
        self.into_map().into_iter()
    }
}

impl<'a> IntoIterator for &'a Extra {
    type Item = (&'a String, &'a Value);
    type IntoIter = serde_json::map::Iter<'a>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<'a> IntoIterator for &'a mut Extra {
    type Item = (&'a String, &'a mut Value);
    type IntoIter = serde_json::map::IterMut<'a>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter_mut()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_empty_extra_is_one_pointer_and_reads_as_an_empty_map() {
        assert_eq!(std::mem::size_of::<Extra>(), std::mem::size_of::<usize>());
        let extra = Extra::new();
        assert!(extra.is_empty());
        assert_eq!(extra.get("x"), None);
        assert_eq!((&extra).into_iter().count(), 0);
    }

    #[test]
    fn writing_keeps_the_fields_in_arrival_order() {
        let mut extra = Extra::new();
        extra.insert("b".into(), json!(1));
        extra.insert("a".into(), json!(2));
        assert_eq!(extra["b"], json!(1));
        let keys: Vec<String> = extra.into_iter().map(|(key, _)| key).collect();
        assert_eq!(keys, ["b", "a"]);
    }

    #[test]
    fn none_and_an_emptied_map_are_equal() {
        let mut emptied = Extra::new();
        emptied.insert("x".into(), json!(true));
        emptied.remove("x");
        assert_eq!(emptied, Extra::new());
        assert_eq!(format!("{emptied:?}"), "{}");
        let kept: Extra = [("x".to_owned(), json!(true))].into_iter().collect();
        assert_ne!(kept, Extra::new());
        assert_eq!(format!("{kept:?}"), r#"{"x": Bool(true)}"#);
    }
}
