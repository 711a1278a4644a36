//! The two macros every wire type is written with, and the pieces they share.
//!
//! The Live protocol is protobuf rendered as JSON, so every field is optional, names arrive in
//! lowerCamelCase *or* snake_case (the official Python SDK mixes both), and the server adds
//! fields faster than any client learns them. Serde's derive covers the aliases but keeps
//! unknown fields only through `#[serde(flatten)]`, which buffers the whole object and costs
//! more than the frame budget allows. So every message struct is declared with
//! [`wire_struct!`], which writes a direct map visitor: each key is matched against its two
//! spellings, anything else lands in [`Extra`] verbatim, and encoding writes lowerCamelCase,
//! then the extras. Decode → encode → decode therefore loses nothing.
//!
//! String enums are declared with [`wire_enum!`]: known values become variants, an unknown one
//! is kept in `Other(String)`, so a value added to the API tomorrow still decodes.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{
    self, Deserialize, DeserializeOwned, DeserializeSeed, Deserializer, SeqAccess, Visitor,
};
use serde_json::Value;

use crate::field_error::Found;
use crate::lenient::{Expected, Lenient};

pub use crate::extra::Extra;

/// A map key, borrowed from the input when it can be (no escapes), owned otherwise.
///
/// `Cow<str>`'s own `Deserialize` always allocates; this one does not, which matters when
/// every frame has a handful of keys.
pub(crate) struct Key<'de>(pub(crate) Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        borrowed_str(deserializer, "a field name").map(Key)
    }
}

/// Reads a string, borrowing it from the input when possible; `expecting` names what was
/// wanted, for the error when something else is there.
pub(crate) fn borrowed_str<'de, D: Deserializer<'de>>(
    deserializer: D,
    expecting: &'static str,
) -> Result<Cow<'de, str>, D::Error> {
    struct StrVisitor(&'static str);
    impl<'de> Visitor<'de> for StrVisitor {
        type Value = Cow<'de, str>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str(self.0)
        }
        fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Cow<'de, str>, E> {
            Ok(Cow::Borrowed(v))
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<Cow<'de, str>, E> {
            Ok(Cow::Owned(v.to_owned()))
        }
        fn visit_string<E: de::Error>(self, v: String) -> Result<Cow<'de, str>, E> {
            Ok(Cow::Owned(v))
        }
    }
    deserializer.deserialize_str(StrVisitor(expecting))
}

/// A message type declared with [`wire_struct!`], which can be read into a value that already
/// exists instead of being returned.
///
/// Messages are large (a `Part` is over 1 KB, a `ServerMessage` over 2 KB, because every field
/// is held inline) and returning them by value through the layers of `Result` and `Option`
/// that serde goes through copies them at each layer; copies were half the cost of decoding
/// a short text frame. Reading in place builds each message where it will live.
pub(crate) trait WireStruct: Default {
    /// What a valid value is, for a [`FieldError`](crate::FieldError): `a JSON object (Blob)`.
    const EXPECTED: &'static str;

    /// Reads a JSON object into `place`, which must be `Self::default()`.
    fn read_into<'de, D: Deserializer<'de>>(
        deserializer: D,
        place: &mut Self,
    ) -> Result<(), D::Error>;

    /// Reads an already parsed JSON object into `place` (`Self::default()`), leaving every
    /// field that does not read absent and reporting it to `at` (see [`crate::lenient`]).
    fn read_lenient(object: &serde_json::Map<String, Value>, place: &mut Self, at: &mut Lenient);
}

/// A field type read in place: the wire structs, and vectors of them.
pub(crate) trait InPlace: Sized {
    /// Reads a present (not `null`) value into `place`, which is `None`.
    fn read_some<'de, D: Deserializer<'de>>(
        deserializer: D,
        place: &mut Option<Self>,
    ) -> Result<(), D::Error>;

    /// Reads a parsed value into `place` (`None`) leniently: what does not read is reported
    /// to `at` and left out (see [`crate::lenient`]). `null` leaves `place` absent.
    fn read_lenient(value: &Value, place: &mut Option<Self>, at: &mut Lenient);
}

impl<T: WireStruct> InPlace for T {
    fn read_some<'de, D: Deserializer<'de>>(
        deserializer: D,
        place: &mut Option<Self>,
    ) -> Result<(), D::Error> {
        T::read_into(deserializer, place.insert(T::default()))
    }

    fn read_lenient(value: &Value, place: &mut Option<Self>, at: &mut Lenient) {
        match value {
            Value::Null => {}
            Value::Object(object) => T::read_lenient(object, place.insert(T::default()), at),
            other => at.error(T::EXPECTED, Found::of(other)),
        }
    }
}

impl<T: WireStruct> InPlace for Vec<T> {
    fn read_some<'de, D: Deserializer<'de>>(
        deserializer: D,
        place: &mut Option<Self>,
    ) -> Result<(), D::Error> {
        struct SeqVisitor<'a, T>(&'a mut Vec<T>);
        impl<'de, T: WireStruct> Visitor<'de> for SeqVisitor<'_, T> {
            type Value = ();
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a sequence")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
                loop {
                    // `resize_with` builds the default where it goes; `push` would copy it.
                    self.0.resize_with(self.0.len() + 1, T::default);
                    let Some(last) = self.0.last_mut() else {
                        return Ok(());
                    };
                    if seq.next_element_seed(StructSeed(last))?.is_none() {
                        self.0.pop();
                        return Ok(());
                    }
                }
            }
        }
        deserializer.deserialize_seq(SeqVisitor(place.insert(Vec::new())))
    }

    fn read_lenient(value: &Value, place: &mut Option<Self>, at: &mut Lenient) {
        let items = match value {
            Value::Null => return,
            Value::Array(items) => items,
            other => return at.error("an array", Found::of(other)),
        };
        let out = place.insert(Vec::with_capacity(items.len()));
        for (index, item) in items.iter().enumerate() {
            at.in_index(index, |at| match item {
                Value::Object(object) => {
                    // An item is one unit (a part, a call): one with a bad field is left
                    // out whole, so that no half of one becomes an event.
                    let before = at.errors.len();
                    let mut read = T::default();
                    T::read_lenient(object, &mut read, at);
                    if at.errors.len() == before {
                        out.push(read);
                    }
                }
                other => at.error(T::EXPECTED, Found::of(other)),
            });
        }
    }
}

/// Reads a wire struct into the (default) value it borrows.
struct StructSeed<'a, T>(&'a mut T);

impl<'de, T: WireStruct> DeserializeSeed<'de> for StructSeed<'_, T> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        T::read_into(deserializer, self.0)
    }
}

/// Reads an `Option` field of an [`InPlace`] type where it lives; `null` reads as `None`,
/// as `Option`'s own `Deserialize` does.
pub(crate) struct InPlaceSeed<'a, T>(&'a mut Option<T>);

impl<'de, T: InPlace> DeserializeSeed<'de> for InPlaceSeed<'_, T> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_option(self)
    }
}

impl<'de, T: InPlace> Visitor<'de> for InPlaceSeed<'_, T> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("option")
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        *self.0 = None;
        Ok(())
    }
    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        *self.0 = None;
        Ok(())
    }
    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        T::read_some(deserializer, self.0)
    }
}

/// Reads an `Option` field of any other type by value, with its own `Deserialize`.
pub(crate) struct ByValueSeed<'a, T>(&'a mut Option<T>);

impl<'de, T: Deserialize<'de>> DeserializeSeed<'de> for ByValueSeed<'_, T> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        *self.0 = Option::<T>::deserialize(deserializer)?;
        Ok(())
    }
}

/// Picks, for a field of type `T`, the seed that reads it: [`InPlaceSeed`] when `T` is
/// [`InPlace`], [`ByValueSeed`] otherwise. `wire_struct!` calls
/// `(&&FieldTag::<T>::new()).seed(place)`: method lookup tries `&FieldTag<T>` (the
/// [`ReadInPlace`] impl, which needs `T: InPlace`) before `FieldTag<T>` ([`ReadByValue`]),
/// so every field type that deserializes works, and no field type needs to opt in.
pub(crate) struct FieldTag<T>(PhantomData<T>);

impl<T> FieldTag<T> {
    pub(crate) fn new() -> Self {
        FieldTag(PhantomData)
    }
}

/// See [`FieldTag`].
pub(crate) trait ReadInPlace {
    type Field;
    fn seed<'a>(&self, place: &'a mut Option<Self::Field>) -> InPlaceSeed<'a, Self::Field>;
    fn lenient(&self, value: &Value, place: &mut Option<Self::Field>, at: &mut Lenient);
}

impl<T: InPlace> ReadInPlace for &FieldTag<T> {
    type Field = T;
    fn seed<'a>(&self, place: &'a mut Option<T>) -> InPlaceSeed<'a, T> {
        InPlaceSeed(place)
    }
    fn lenient(&self, value: &Value, place: &mut Option<T>, at: &mut Lenient) {
        T::read_lenient(value, place, at);
    }
}

/// See [`FieldTag`].
pub(crate) trait ReadByValue {
    type Field;
    fn seed<'a>(&self, place: &'a mut Option<Self::Field>) -> ByValueSeed<'a, Self::Field>;
    fn lenient(&self, value: &Value, place: &mut Option<Self::Field>, at: &mut Lenient)
    where
        Self::Field: DeserializeOwned + Expected;
}

impl<T> ReadByValue for FieldTag<T> {
    type Field = T;
    fn seed<'a>(&self, place: &'a mut Option<T>) -> ByValueSeed<'a, T> {
        ByValueSeed(place)
    }
    fn lenient(&self, value: &Value, place: &mut Option<T>, at: &mut Lenient)
    where
        T: DeserializeOwned + Expected,
    {
        at.by_value(value, place);
    }
}

/// Declares a protocol message: a struct whose fields are all `Option`s, plus `extra`.
///
/// ```text
/// wire_struct! {
///     /// Doc of the struct.
///     pub struct Blob {
///         /// Doc of the field.
///         mime_type: String = "mimeType" | "mime_type",
///         data: Base64Data = "data",
///     }
/// }
/// ```
///
/// The first name is the one written; any further names are accepted when reading.
/// A key given twice is an error (as in serde's derive); `null` reads as absent.
macro_rules! wire_struct {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $(
                $(#[$fmeta:meta])*
                $field:ident : $ty:ty = $wire:literal $(| $alias:literal)*,
            )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Default, PartialEq)]
        pub struct $name {
            $(
                $(#[$fmeta])*
                pub $field: Option<$ty>,
            )*
            /// Fields this version of reel does not know, kept so that nothing is lost.
            pub extra: $crate::wire::Extra,
        }

        impl $name {
            /// The wire names (lowerCamelCase) of the fields this type knows.
            pub const FIELDS: &'static [&'static str] = &[$($wire),*];
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                use serde::ser::SerializeMap;
                let mut map = serializer.serialize_map(None)?;
                $(
                    if let Some(value) = &self.$field {
                        map.serialize_entry($wire, value)?;
                    }
                )*
                for (key, value) in &self.extra {
                    map.serialize_entry(key, value)?;
                }
                map.end()
            }
        }

        impl $crate::wire::WireStruct for $name {
            const EXPECTED: &'static str = concat!("a JSON object (", stringify!($name), ")");

            // A struct without fields leaves `at` unused.
            #[allow(unused_variables)]
            fn read_lenient(
                object: &serde_json::Map<String, serde_json::Value>,
                place: &mut Self,
                at: &mut $crate::lenient::Lenient,
            ) {
                #[allow(unused_imports)]
                use $crate::wire::{ReadByValue as _, ReadInPlace as _};
                for (key, value) in object {
                    match key.as_str() {
                        $(
                            $wire $(| $alias)* => at.in_key(key, |at| {
                                if place.$field.is_some() {
                                    // As the fast path, but reported: the first is kept.
                                    at.error(
                                        "the field once",
                                        $crate::field_error::Found::Duplicate,
                                    );
                                } else {
                                    (&&$crate::wire::FieldTag::<$ty>::new())
                                        .lenient(value, &mut place.$field, at);
                                }
                            }),
                        )*
                        _ => {
                            place.extra.insert(key.clone(), value.clone());
                        }
                    }
                }
            }

            fn read_into<'de, D: serde::Deserializer<'de>>(
                deserializer: D,
                place: &mut Self,
            ) -> Result<(), D::Error> {
                struct PlaceVisitor<'a>(&'a mut $name);
                impl<'de> serde::de::Visitor<'de> for PlaceVisitor<'_> {
                    type Value = ();
                    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                        f.write_str(concat!("a JSON object (", stringify!($name), ")"))
                    }
                    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
                        #[allow(unused_imports)]
                        use $crate::wire::{ReadByValue as _, ReadInPlace as _};
                        let out = self.0;
                        while let Some(key) = map.next_key::<$crate::wire::Key<'de>>()? {
                            match key.0.as_ref() {
                                $(
                                    $wire $(| $alias)* => {
                                        if out.$field.is_some() {
                                            return Err(serde::de::Error::duplicate_field($wire));
                                        }
                                        map.next_value_seed(
                                            (&&$crate::wire::FieldTag::<$ty>::new()).seed(&mut out.$field),
                                        )?;
                                    }
                                )*
                                _ => {
                                    let value = map.next_value::<serde_json::Value>()?;
                                    out.extra.insert(key.0.into_owned(), value);
                                }
                            }
                        }
                        Ok(())
                    }
                }
                deserializer.deserialize_map(PlaceVisitor(place))
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let mut out = $name::default();
                <$name as $crate::wire::WireStruct>::read_into(deserializer, &mut out)?;
                Ok(out)
            }
        }
    };
}

/// Declares a protocol enum carried as a string, with an `Other` variant for values this
/// version of reel does not know.
macro_rules! wire_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $(
                $(#[$vmeta:meta])*
                $variant:ident = $wire:literal,
            )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name {
            $(
                $(#[$vmeta])*
                #[doc = ""]
                #[doc = concat!("On the wire: `", $wire, "`.")]
                $variant,
            )*
            /// A value this version of reel does not know, kept verbatim.
            Other(String),
        }

        impl $name {
            /// The value as it is written on the wire.
            pub fn as_str(&self) -> &str {
                match self {
                    $( $name::$variant => $wire, )*
                    $name::Other(other) => other,
                }
            }
        }

        impl std::str::FromStr for $name {
            type Err = std::convert::Infallible;
            fn from_str(value: &str) -> Result<Self, Self::Err> {
                Ok(match value {
                    $( $wire => $name::$variant, )*
                    other => $name::Other(other.to_owned()),
                })
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl $crate::lenient::Expected for $name {
            const EXPECTED: &'static str = concat!("a string (", stringify!($name), ")");
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let value = $crate::wire::borrowed_str(
                    deserializer,
                    concat!("a string (", stringify!($name), ")"),
                )?;
                Ok(match value.as_ref() {
                    $( $wire => $name::$variant, )*
                    _ => $name::Other(value.into_owned()),
                })
            }
        }
    };
}

pub(crate) use {wire_enum, wire_struct};
