//! [`BargeIn`]: what a tool's running calls do when the user interrupts the model.

/// What happens to a tool's running calls when the server reports `interrupted` (the user
/// barged in).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BargeIn {
    /// Keep running; the call is answered as usual. The default: the server names the
    /// calls it no longer wants with `toolCallCancellation`, and those are cancelled then.
    #[default]
    Keep,
    /// Cancel the call as a `toolCallCancellation` would: its task is aborted, its state
    /// writes are rolled back, and no response is sent for it. For tools whose result is
    /// only worth having for the turn that asked (a lookup to read out), not for tools
    /// with effects the model must hear about (a booking).
    Cancel,
}
