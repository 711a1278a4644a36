//! [`ChildStart`]: how the supervisor starts one child of the session, and starts it again —
//! one per child, built where the session is spawned, so the supervisor holds one table of
//! them ([`Children`]) and knows no child's actor type or arguments.
//!
//! A start carries what the supervisor needs of its child besides starting it: which child
//! it is and its mailbox's [`Door`] (clear the slot, count what waits, install a fault
//! hook). For an inbox-driven child both come from its [`Consumer`] (`Consumer::CHILD`,
//! `Consumer::mailbox`), so its start is built from its arguments alone.

use std::collections::BTreeMap;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use ractor::{Actor, ActorCell, ActorProcessingErr};

use crate::child::Child;
use crate::fault::FaultHook;
use crate::mailbox::{Consumer, Door, InboxActor};

/// Starts an instance of a child, linked to the supervisor it is given (an inbox-driven
/// instance points its mailbox's slot at itself before it drains); returns its cell. Called once per instance: at the start of the
/// session, and for each restart.
type StartFn =
    Box<dyn FnMut(ActorCell) -> BoxFuture<'static, Result<ActorCell, ActorProcessingErr>> + Send>;

/// How the supervisor starts one child, and what it reaches of it without its types.
pub struct ChildStart {
    child: Child,
    door: Arc<dyn Door>,
    start: StartFn,
}

impl ChildStart {
    /// Starts an instance linked to `supervisor` (see [`StartFn`]).
    pub fn start(
        &mut self,
        supervisor: ActorCell,
    ) -> BoxFuture<'static, Result<ActorCell, ActorProcessingErr>> {
        (self.start)(supervisor)
    }
}

/// A restartable inbox-driven child: every instance starts from a clone of the same
/// arguments (what must outlive an instance is shared behind them, or waits in the child's
/// inbox). Its name and mailbox are its consumer's.
pub fn restartable<C>(args: C::Args) -> ChildStart
where
    C: Consumer,
    C::Args: Clone + Sync,
{
    let mailbox = C::mailbox(&args).clone();
    ChildStart {
        child: C::CHILD,
        door: Arc::new(mailbox),
        start: Box::new(move |supervisor| {
            let args = args.clone();
            Box::pin(async move {
                let actor = InboxActor::<C>::new();
                // The instance points its mailbox's slot at itself (in `pre_start`).
                let (instance, _) = Actor::spawn_linked(None, actor, args, supervisor).await?;
                Ok(instance.get_cell())
            })
        }),
    }
}

/// An inbox-driven child started once: its failure ends the session, so a second start is
/// an error that names it.
pub fn once<C: Consumer>(args: C::Args) -> ChildStart {
    let mailbox = C::mailbox(&args).clone();
    let mut first = Some(args);
    ChildStart {
        child: C::CHILD,
        door: Arc::new(mailbox),
        start: Box::new(move |supervisor| {
            let first = first.take();
            Box::pin(async move {
                let args = first.ok_or_else(|| started_twice(C::CHILD))?;
                let actor = InboxActor::<C>::new();
                // The instance points its mailbox's slot at itself (in `pre_start`).
                let (instance, _) = Actor::spawn_linked(None, actor, args, supervisor).await?;
                Ok(instance.get_cell())
            })
        }),
    }
}

/// A child started once by `start` (the transport, through its factory), reached through
/// `door`.
pub fn once_with<F>(child: Child, door: Arc<dyn Door>, start: F) -> ChildStart
where
    F: FnOnce(ActorCell) -> BoxFuture<'static, Result<ActorCell, ActorProcessingErr>>
        + Send
        + 'static,
{
    // Boxed apart from the start function the supervisor keeps for the session's life:
    // what it captures (the transport's arguments, over a kilobyte) is freed once it ran.
    let mut start = Some(Box::new(start));
    ChildStart {
        child,
        door,
        start: Box::new(move |supervisor| match start.take() {
            Some(start) => (*start)(supervisor),
            None => Box::pin(async move { Err(started_twice(child)) }),
        }),
    }
}

fn started_twice(child: Child) -> ActorProcessingErr {
    format!("the {child} is started once: it is not restarted").into()
}

/// The session's children as the supervisor holds them: one start per child, by child. A
/// session that does not record has no recorder.
#[derive(Default)]
pub struct Children(BTreeMap<Child, ChildStart>);

impl Children {
    /// Adds `start` under its child (replacing an earlier start of the same child).
    pub fn add(&mut self, start: ChildStart) {
        self.0.insert(start.child, start);
    }

    /// Whether the session has `child`.
    pub fn contains(&self, child: Child) -> bool {
        self.0.contains_key(&child)
    }

    /// The start of `child`, if the session has it.
    pub fn get_mut(&mut self, child: Child) -> Option<&mut ChildStart> {
        self.0.get_mut(&child)
    }

    /// Child `child`'s mailbox, whatever its types, if the session has it.
    pub fn door(&self, child: Child) -> Option<&dyn Door> {
        self.0.get(&child).map(|start| &*start.door)
    }

    /// Installs `hook` on every child's inbox, each speaking for its child.
    pub fn set_fault_hook(&self, hook: &Arc<dyn FaultHook>) {
        for (child, start) in &self.0 {
            start.door.set_fault_hook(*child, Arc::clone(hook));
        }
    }
}
