//! [`Mailbox`]: a child's inbox and the slot of its current instance, together; [`Door`]:
//! what the supervisor does to any child's mailbox without knowing its types.

use std::sync::Arc;

use crate::child::Child;
use crate::fault::FaultHook;
use crate::inbox::{Bound, Doorbell, Inbox};
use crate::mailbox::InstanceSlot;
use crate::slot::Slot;

/// A restartable child's typed mailbox: the [`Inbox`] its items wait in (which outlives each
/// instance) and the [`InstanceSlot`] of its current instance (which the inbox's doorbell
/// rings and the runner points at each new instance), whose own messages are `M`. It reads
/// as its inbox (`Deref`).
pub struct Mailbox<I, L, M: Send + 'static> {
    /// Where its items wait.
    pub inbox: Arc<Inbox<I, L>>,
    /// Its current instance.
    pub actor: Arc<InstanceSlot<M>>,
}

impl<I, L, M: Send + 'static> Mailbox<I, L, M> {
    /// An empty mailbox called `name` (in logs), bounded by `bound`, labelling a taken item
    /// with `label`; a push rings the current instance's doorbell.
    pub fn new(name: &'static str, bound: Bound, label: fn(&I) -> L) -> Self {
        let actor: Arc<InstanceSlot<M>> = Arc::default();
        let inbox = Inbox::new(name, bound, label, doorbell(&actor));
        Mailbox {
            inbox: Arc::new(inbox),
            actor,
        }
    }

    /// A mailbox around an inbox built elsewhere (its doorbell must ring `actor`).
    pub fn from_parts(inbox: Arc<Inbox<I, L>>, actor: Arc<InstanceSlot<M>>) -> Self {
        Mailbox { inbox, actor }
    }
}

impl<I, L, M: Send + 'static> Clone for Mailbox<I, L, M> {
    fn clone(&self) -> Self {
        Mailbox {
            inbox: Arc::clone(&self.inbox),
            actor: Arc::clone(&self.actor),
        }
    }
}

impl<I, L, M: Send + 'static> std::ops::Deref for Mailbox<I, L, M> {
    type Target = Inbox<I, L>;

    fn deref(&self) -> &Inbox<I, L> {
        &self.inbox
    }
}

impl<I, L, M: Send + 'static> std::fmt::Debug for Mailbox<I, L, M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mailbox")
            .field("inbox", &self.inbox)
            .field("actor", &self.actor)
            .finish()
    }
}

/// A doorbell that rings whatever instance `slot` holds (a flag and a wake-up: no message).
pub fn doorbell<M: Send + 'static>(slot: &Arc<InstanceSlot<M>>) -> Doorbell {
    let slot = Arc::clone(slot);
    Box::new(move || slot.ring())
}

/// What the supervisor does to a child's mailbox, whatever its item and message types.
pub trait Door: Send + Sync {
    /// Empties the slot: the instance failed or stopped, nothing is sent to it any more.
    fn clear(&self);
    /// Items waiting (0 for a child without an inbox).
    fn waiting(&self) -> usize;
    /// Installs a fault injector on the inbox, speaking for `child` (nothing for a child
    /// without an inbox).
    fn set_fault_hook(&self, child: Child, hook: Arc<dyn FaultHook>);
}

impl<I: Send + 'static, L: Send + 'static, M: Send + 'static> Door for Mailbox<I, L, M> {
    fn clear(&self) {
        self.actor.clear();
    }

    fn waiting(&self) -> usize {
        self.inbox.len()
    }

    fn set_fault_hook(&self, child: Child, hook: Arc<dyn FaultHook>) {
        self.inbox.set_fault_hook(child, hook);
    }
}

impl<A: Send + 'static> Door for Slot<A> {
    fn clear(&self) {
        Slot::clear(self);
    }

    fn waiting(&self) -> usize {
        0
    }

    fn set_fault_hook(&self, _child: Child, _hook: Arc<dyn FaultHook>) {}
}
