//! The text of a caught panic, for the reports of the places that catch one (a tool's
//! task, a disk write, an extractor).

use std::any::Any;

/// The text of a panic payload (`panic!("…")` carries a `&str` or a `String`).
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "the panic carried no message".to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::panic_message;

    #[test]
    fn panic_messages_of_every_payload_kind() {
        assert_eq!(panic_message(&"static"), "static");
        assert_eq!(panic_message(&String::from("owned")), "owned");
        assert_eq!(panic_message(&42_u8), "the panic carried no message");
    }
}
